// SPDX-License-Identifier: GPL-2.0-only
/*
 * The unwind table builder (collect/cfi.h: cfi_table__build) on arbitrary
 * bytes as an ELF file (a memfd): it must return an error or a well-formed
 * table (pcs strictly increasing, equal neighbours merged, a "none" row
 * last, stats that count the rows), and every lookup must answer with the
 * last row at or below the address. Debug files are looked for under a
 * directory that does not exist, so the input alone decides.
 * fuzz-needs: src/collect/cfi.c
 */
#include <sys/mman.h>
#include <unistd.h>

#include "collect/cfi.h"
#include "fuzz.h"

static void check_table(const struct cfi_table *t)
{
	size_t unsupported = 0;
	char buf[64];

	FUZZ_CHECK(t->n > 0 && t->rows && t->source);
	FUZZ_CHECK(t->stats.rows == t->n);
	FUZZ_CHECK(OFFCPU_CFI_CFA(t->rows[t->n - 1].rule) == OFFCPU_CFA_NONE);
	for (size_t i = 0; i < t->n; i++) {
		const struct offcpu_cfi_row *r = &t->rows[i];
		uint64_t addr = t->base + r->pc;

		FUZZ_CHECK(OFFCPU_CFI_CFA(r->rule) <= OFFCPU_CFA_RA_RDI);
		FUZZ_CHECK(OFFCPU_CFI_FP(r->rule) <= OFFCPU_FP_UNKNOWN);
		FUZZ_CHECK(cfi_row__format(r, buf, sizeof(buf)) == 0);
		unsupported += OFFCPU_CFI_CFA(r->rule) == OFFCPU_CFA_UNSUPPORTED;
		if (i) {
			const struct offcpu_cfi_row *p = &t->rows[i - 1];

			FUZZ_CHECK(p->pc < r->pc);
			FUZZ_CHECK(p->rule != r->rule || p->cfa_off != r->cfa_off ||
				   p->fp_off != r->fp_off);
			FUZZ_CHECK(cfi_table__find(t, addr - 1) == p);
		}
		FUZZ_CHECK(cfi_table__find(t, addr) == r);
	}
	FUZZ_CHECK(unsupported == t->stats.unsupported);
	FUZZ_CHECK(!cfi_table__find(t, t->base + t->rows[0].pc - 1) || t->rows[0].pc == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz-cfi", MFD_CLOEXEC);
	struct cfi_table t;
	uint64_t bias;
	int err;

	FUZZ_CHECK(fd >= 0);
	FUZZ_CHECK(write(fd, data, size) == (ssize_t)size);
	err = cfi_table__build_root(fd, NULL, "/nonexistent-debug-root", &t);
	close(fd);
	FUZZ_CHECK(err == 0 || err == -ENOENT || err == -ENOEXEC || err == -EIO || err == -ENOMEM);
	if (err && err != -ENOENT) {
		FUZZ_CHECK(!t.rows && !t.segs);
		return 0;
	}
	if (!err)
		check_table(&t);
	else
		FUZZ_CHECK(t.n == 0 && !t.rows);
	for (size_t i = 0; i < t.nsegs; i++)
		(void)cfi_table__bias(&t, 0x7f0000000000, t.segs[i].offset & ~4095ULL, &bias);
	cfi_table__free(&t);
	return 0;
}
