// SPDX-License-Identifier: GPL-2.0-only
/*
 * kallsyms (symbolize/symbolize.h: ksyms__load), read from /proc/kallsyms or
 * a file a test or `doctor` names. Every line's address is looked up, and
 * its neighbours: an answer names a symbol that starts at addr - offset, so
 * looking that address up gives the same symbol at offset 0.
 * fuzz-needs: src/symbolize/kallsyms.c
 */
#include "fuzz.h"
#include "symbolize/symbolize.h"

static void probe(const struct ksyms *k, uint64_t addr)
{
	uint64_t off = UINT64_MAX, off2 = UINT64_MAX;
	const char *name = ksyms__resolve(k, addr, &off), *again;

	if (!name)
		return;
	FUZZ_CHECK(name[0] && off <= addr);
	again = ksyms__resolve(k, addr - off, &off2);
	FUZZ_CHECK(again == name && off2 == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *f = fuzz_open(data, size);
	struct ksyms *k = ksyms__load(f);
	const char *s = (const char *)data, *end = s + size;
	size_t lines = 0;

	fclose(f);
	FUZZ_CHECK(k);
	for (; s < end; lines++) {
		const char *nl = memchr(s, '\n', end - s);
		uint64_t addr = 0;

		/* The parser's own reading of an address: hex digits at the line's start. */
		for (const char *p = s; p < (nl ? nl : end) && p - s < 16; p++) {
			int d = *p >= '0' && *p <= '9' ? *p - '0' : (*p | 0x20) - 'a' + 10;

			if (d < 0 || d > 15)
				break;
			addr = addr << 4 | (uint64_t)d;
		}
		probe(k, addr);
		probe(k, addr - 1);
		probe(k, addr + 1);
		probe(k, addr + 4096);
		s = nl ? nl + 1 : end;
	}
	probe(k, 0);
	probe(k, UINT64_MAX);
	FUZZ_CHECK(ksyms__count(k) <= lines);
	ksyms__free(k);
	return 0;
}
