// SPDX-License-Identifier: GPL-2.0-only
/*
 * The unwind table builder (collect/cfi.c) against binutils' own reading of
 * the same CFI: `readelf --debug-dump=frames-interp` prints every row of
 * every FDE (LOC, CFA, one column per register). Each row's start, middle
 * and last byte must find a table row that says the same thing, as far as
 * the row format can say it.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collect/cfi.h"
#include "unit.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"
#define PYTHON "/usr/bin/python3.11"

static char tmpdir[64];

static const char *tmp_path(const char *name)
{
	static char buf[8][256];
	static int k;
	char *b = buf[k++ % 8];

	if (!tmpdir[0]) {
		strcpy(tmpdir, "/tmp/test_cfi.XXXXXX");
		if (!mkdtemp(tmpdir))
			tmpdir[0] = '\0';
	}
	snprintf(b, 256, "%s/%s", tmpdir, name);
	return b;
}

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	int r;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	r = system(cmd);
	return WIFEXITED(r) ? WEXITSTATUS(r) : -1;
}

static bool have(const char *tool)
{
	return sh("command -v %s >/dev/null 2>&1", tool) == 0;
}

static int build_path(const char *path, const char *root, struct cfi_table *t)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	err = cfi_table__build_root(fd, path, root, t);
	close(fd);
	return err;
}

/* ---- readelf --debug-dump=frames-interp, parsed ---- */

struct rrow {
	uint64_t loc;
	char cfa[32], rbp[32], ra[32];
};

struct rfde {
	uint64_t start, end;
	bool signal;   /* its CIE's augmentation has 'S' */
	bool overlaps; /* another FDE covers some of it */
	struct rrow *rows;
	size_t n;
};

struct rcie {
	uint64_t off;
	bool signal;
	struct rrow row; /* its initial row: an FDE without instructions has only this */
};

struct readelf {
	struct rfde *f;
	size_t n;
	struct rcie *c;
	size_t nc;
	size_t rows;
};

static void readelf__free(struct readelf *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->f[i].rows);
	free(r->f);
	free(r->c);
	memset(r, 0, sizeof(*r));
}

/*
 * Split a row into columns: a register-valued cell prints as "r9 (r9)",
 * two words that are one column.
 */
static int split_cells(char *line, char **cell, int max)
{
	int n = 0;

	for (char *tok = strtok(line, " \t\n"); tok; tok = strtok(NULL, " \t\n")) {
		if (tok[0] == '(' && n > 0)
			continue;
		if (n < max)
			cell[n++] = tok;
	}
	return n;
}

static int cmp_rfde(const void *pa, const void *pb)
{
	const struct rfde *a = pa, *b = pb;

	return a->start < b->start ? -1 : a->start > b->start;
}

static int readelf__load(struct readelf *r, const char *path)
{
	char cmd[512], line[4096], *cols[64];
	int ncols = 0, icfa = -1, irbp = -1, ira = -1;
	struct rfde *cur = NULL;
	struct rcie *curc = NULL;
	FILE *p;

	memset(r, 0, sizeof(*r));
	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=frames-interp '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	if (!p)
		return -errno;
	while (fgets(line, sizeof(line), p)) {
		unsigned long long off, len, cptr, a, b;
		char aug[32];
		char *cell[64];
		int n;

		if (sscanf(line, "%llx %llx %llx", &off, &len, &cptr) == 3 &&
		    strstr(line, " CIE \"")) {
			const char *q = strstr(line, " CIE \"") + 6, *e = strchr(q, '"');

			snprintf(aug, sizeof(aug), "%.*s", e ? (int)(e - q) : 0, q);
			r->c = realloc(r->c, (r->nc + 1) * sizeof(*r->c));
			curc = &r->c[r->nc++];
			memset(curc, 0, sizeof(*curc));
			curc->off = off;
			curc->signal = strchr(aug, 'S') != NULL;
			strcpy(curc->row.cfa, "?");
			strcpy(curc->row.rbp, "u");
			strcpy(curc->row.ra, "u");
			cur = NULL;
			continue;
		}
		if (sscanf(line, "%llx %llx %llx FDE cie=%llx pc=%llx..%llx", &off, &len, &cptr,
			   &off, &a, &b) == 6) {
			r->f = realloc(r->f, (r->n + 1) * sizeof(*r->f));
			cur = &r->f[r->n++];
			memset(cur, 0, sizeof(*cur));
			cur->start = a;
			cur->end = b;
			for (size_t i = 0; i < r->nc; i++) {
				if (r->c[i].off == off) {
					cur->signal = r->c[i].signal;
					/* no table printed: the CIE's initial row */
					cur->rows = malloc(sizeof(*cur->rows));
					cur->rows[0] = r->c[i].row;
					cur->rows[0].loc = a;
					cur->n = 1;
				}
			}
			curc = NULL;
			continue;
		}
		if (strstr(line, "   LOC ")) {
			ncols = split_cells(line, cols, 64);
			icfa = irbp = ira = -1;
			for (int i = 0; i < ncols; i++) {
				if (!strcmp(cols[i], "CFA"))
					icfa = i;
				else if (!strcmp(cols[i], "rbp"))
					irbp = i;
				else if (!strcmp(cols[i], "ra"))
					ira = i;
			}
			/* a fresh table replaces the CIE's row */
			if (cur)
				cur->n = 0;
			continue;
		}
		n = split_cells(line, cell, 64);
		if (n < 2 || n != ncols || icfa < 0 || strlen(cell[0]) != 16 ||
		    sscanf(cell[0], "%llx", &a) != 1)
			continue;
		{
			struct rrow row = {.loc = a};

			snprintf(row.cfa, sizeof(row.cfa), "%s", cell[icfa]);
			snprintf(row.rbp, sizeof(row.rbp), "%s", irbp >= 0 ? cell[irbp] : "u");
			snprintf(row.ra, sizeof(row.ra), "%s", ira >= 0 ? cell[ira] : "u");
			if (curc) {
				curc->row = row;
			} else if (cur) {
				cur->rows = realloc(cur->rows, (cur->n + 1) * sizeof(*cur->rows));
				cur->rows[cur->n++] = row;
				r->rows++;
			}
		}
	}
	pclose(p);
	qsort(r->f, r->n, sizeof(*r->f), cmp_rfde);
	for (size_t i = 0; i + 1 < r->n; i++) {
		/* FDEs sorted by start: any later one starting before this end overlaps */
		for (size_t j = i + 1; j < r->n && r->f[j].start < r->f[i].end; j++) {
			if (r->f[j].end > r->f[j].start && r->f[i].end > r->f[i].start)
				r->f[i].overlaps = r->f[j].overlaps = true;
		}
	}
	return r->n ? 0 : -ENOENT;
}

/* "rsp+16" -> reg "rsp", 16; false for "exp", "rdi+0" is true with reg "rdi". */
static bool parse_regoff(const char *s, char *reg, long *off)
{
	const char *plus = strpbrk(s, "+-");

	if (!plus || plus == s || plus - s > 7)
		return false;
	memcpy(reg, s, plus - s);
	reg[plus - s] = '\0';
	*off = strtol(plus, NULL, 10);
	return true;
}

/* What cfi_row__format must print for a readelf row, as the row format can say it. */
static void expect_row(const struct rfde *f, const struct rrow *row, bool in_plt, char *buf,
		       size_t len)
{
	char reg[8];
	long off;
	int n;

	if (f->signal) {
		snprintf(buf, len, "signal");
		return;
	}
	if (!strcmp(row->ra, "u")) {
		snprintf(buf, len, "end");
		return;
	}
	/* glibc's vfork: the return address in rdi (DWARF register 5) */
	if (!strcmp(row->ra, "r5")) {
		if (parse_regoff(row->cfa, reg, &off) && !strcmp(reg, "rsp") && off >= 0 &&
		    off % 8 == 0 && off / 8 <= 65535)
			snprintf(buf, len, "rsp+%ld ra=rdi", off);
		else
			snprintf(buf, len, "unsupported");
		return;
	}
	if (strcmp(row->ra, "c-8")) {
		snprintf(buf, len, "unsupported");
		return;
	}
	if (!strcmp(row->cfa, "exp")) {
		/* binutils' PLT stubs, the only expression the linker writes */
		snprintf(buf, len, in_plt ? "plt rsp+8 rip&15>=11" : "unsupported");
		return;
	}
	if (!parse_regoff(row->cfa, reg, &off) || (strcmp(reg, "rsp") && strcmp(reg, "rbp")) ||
	    off < 0 || off % 8 || off / 8 > 65535) {
		snprintf(buf, len, "unsupported");
		return;
	}
	n = snprintf(buf, len, "%s+%ld", reg, off);
	if (!strcmp(row->rbp, "u") || !strcmp(row->rbp, "s"))
		return;
	if (row->rbp[0] == 'c' && (row->rbp[1] == '-' || row->rbp[1] == '+')) {
		long k = strtol(row->rbp + 1, NULL, 10);

		if (k % 8 == 0 && k / 8 >= -128 && k / 8 <= 127) {
			snprintf(buf + n, len - n, " rbp=[cfa%+ld]", k);
			return;
		}
	}
	snprintf(buf + n, len - n, " rbp=?");
}

static bool in_exec(const struct cfi_table *t, uint64_t a)
{
	for (size_t i = 0; i < t->nsegs; i++)
		if ((t->segs[i].flags & PF_X) && a >= t->segs[i].vaddr &&
		    a < t->segs[i].vaddr + t->segs[i].memsz)
			return true;
	return false;
}

struct plt_range {
	uint64_t start, end;
};

/* The .plt* sections' address ranges (readelf -SW). */
static size_t plt_ranges(const char *path, struct plt_range *pr, size_t max)
{
	char cmd[512], line[512];
	size_t n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -SW '%s'", path);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p)) {
		char name[64], type[64];
		unsigned long long addr, off, size;
		char *b = strchr(line, ']');

		if (!b ||
		    sscanf(b + 1, "%63s %63s %llx %llx %llx", name, type, &addr, &off, &size) != 5)
			continue;
		if (!strncmp(name, ".plt", 4) && n < max)
			pr[n++] = (struct plt_range){addr, addr + size};
	}
	pclose(p);
	return n;
}

/* Rows sorted, pcs strictly increasing, no two neighbours with one rule, NONE last. */
static bool table_well_formed(const struct cfi_table *t, char *why, size_t len)
{
	for (size_t i = 1; i < t->n; i++) {
		const struct offcpu_cfi_row *a = &t->rows[i - 1], *b = &t->rows[i];

		if (a->pc >= b->pc) {
			snprintf(why, len, "row %zu pc %#x after %#x", i, b->pc, a->pc);
			return false;
		}
		if (a->rule == b->rule && a->cfa_off == b->cfa_off && a->fp_off == b->fp_off) {
			snprintf(why, len, "rows %zu and %zu not merged", i - 1, i);
			return false;
		}
	}
	if (!t->n || OFFCPU_CFI_CFA(t->rows[t->n - 1].rule) != OFFCPU_CFA_NONE) {
		snprintf(why, len, "the table does not end with a none row");
		return false;
	}
	return true;
}

static bool check_at(const struct cfi_table *t, uint64_t a, const char *want, size_t *bad,
		     char *why, size_t len)
{
	const struct offcpu_cfi_row *r = cfi_table__find(t, a);
	char got[64];

	if (!r)
		snprintf(got, sizeof(got), "NULL");
	else
		cfi_row__format(r, got, sizeof(got));
	if (!strcmp(got, want))
		return true;
	if (!(*bad)++)
		snprintf(why, len, "at %#" PRIx64 ": table says \"%s\", readelf \"%s\"", a, got,
			 want);
	return false;
}

/*
 * Every readelf row against the table: at its first, middle and last byte.
 * Between FDEs the table must say "none". FDEs that overlap another are
 * skipped (the table keeps one of them, by a rule readelf does not show).
 */
static void compare_with_readelf(const char *path, const char *root, const char *cfi_file,
				 const char *want_source, size_t min_rows)
{
	struct cfi_table t;
	struct readelf re;
	struct plt_range plt[8];
	size_t nplt, checked = 0, bad = 0, skipped = 0;
	char why[256] = "", want[64];
	uint64_t prev_end = 0;
	int err;

	if (!have("readelf")) {
		SKIP("readelf (binutils) is not installed");
		return;
	}
	err = build_path(path, root, &t);
	if (err == -ENOENT && access(path, R_OK)) {
		SKIP("%s is not installed", path);
		return;
	}
	CHECK_INT(err, 0);
	CHECK_STR(t.source, want_source);
	if (!table_well_formed(&t, why, sizeof(why))) {
		UNIT_FAIL("%s: %s", path, why);
		cfi_table__free(&t);
		return;
	}
	if (readelf__load(&re, cfi_file ? cfi_file : path)) {
		UNIT_FAIL("readelf printed no FDEs for %s", path);
		cfi_table__free(&t);
		return;
	}
	nplt = plt_ranges(path, plt, 8);
	for (size_t i = 0; i < re.n; i++) {
		const struct rfde *f = &re.f[i];

		if (f->end <= f->start || !in_exec(&t, f->start))
			continue;
		if (f->overlaps) {
			skipped++;
			continue;
		}
		/* the gap before this FDE */
		if (prev_end && prev_end < f->start) {
			check_at(&t, prev_end, "none", &bad, why, sizeof(why));
			check_at(&t, f->start - 1, "none", &bad, why, sizeof(why));
			checked += 2;
		}
		if (f->end > prev_end)
			prev_end = f->end;
		for (size_t k = 0; k < f->n; k++) {
			uint64_t a = f->rows[k].loc, b = k + 1 < f->n ? f->rows[k + 1].loc : f->end;
			bool in_plt = false;

			if (b <= a)
				continue;
			for (size_t j = 0; j < nplt; j++)
				in_plt |= a >= plt[j].start && a < plt[j].end;
			expect_row(f, &f->rows[k], in_plt, want, sizeof(want));
			check_at(&t, a, want, &bad, why, sizeof(why));
			check_at(&t, a + (b - a) / 2, want, &bad, why, sizeof(why));
			check_at(&t, b - 1, want, &bad, why, sizeof(why));
			checked += 3;
		}
	}
	if (prev_end) {
		check_at(&t, prev_end, "none", &bad, why, sizeof(why));
		checked++;
	}
	printf("# %s: %zu rows, %zu FDEs, %zu readelf rows, %zu addresses checked, %zu "
	       "overlapping FDEs skipped, %zu unsupported\n",
	       path, t.n, t.stats.fdes, re.rows, checked, skipped, t.stats.unsupported);
	readelf__free(&re);
	cfi_table__free(&t);
	if (bad)
		UNIT_FAIL("%s: %zu of %zu addresses disagree; first %s", path, bad, checked, why);
	else if (checked < 3 * min_rows)
		UNIT_FAIL("%s: only %zu addresses checked", path, checked);
}

TEST(cfi_libc_matches_readelf)
{
	compare_with_readelf(LIBC, NULL, NULL, ".eh_frame", 20000);
}

TEST(cfi_python_matches_readelf)
{
	compare_with_readelf(PYTHON, NULL, NULL, ".eh_frame", 50000);
}

/* redis-server has CFA offsets of 512 KiB and 1 MiB: past what cfa_off holds. */
TEST(cfi_redis_matches_readelf)
{
	compare_with_readelf("/usr/bin/redis-server", NULL, NULL, ".eh_frame", 30000);
}

/* ---- small programs compiled here ---- */

static const char small_src[] =
	"#include <alloca.h>\n"
	"#include <stdio.h>\n"
	"#include <string.h>\n"
	"#include <unistd.h>\n"
	"__attribute__((noinline)) int leaf(int x) { return x * 3; }\n"
	"__attribute__((noinline)) int dynamic(int n)\n"
	"{ char *p = alloca(n); memset(p, 1, n); return leaf(p[n / 2]) + n; }\n"
	"__attribute__((noinline)) int many(int a, int b, int c, int d, int e, int f)\n"
	"{ int v[64]; for (int i = 0; i < 64; i++) v[i] = leaf(a + i) * b;\n"
	"  return v[c & 63] + v[d & 63] + dynamic(e + 16) + f; }\n"
	"int main(int argc, char **argv)\n"
	"{ char c; if (argc > 1) return read(0, &c, 1) < 0;\n"
	"  printf(\"%d\\n\", many(argc, 2, 3, 4, 5, 6)); return 0; }\n";

static const char *compile(const char *name, const char *flags)
{
	const char *src = tmp_path("small.c"), *out = tmp_path(name);
	FILE *f;

	if (!have("gcc"))
		return NULL;
	f = fopen(src, "w");
	if (!f)
		return NULL;
	fputs(small_src, f);
	fclose(f);
	if (sh("gcc %s -o '%s' '%s'", flags, out, src))
		return NULL;
	return out;
}

TEST(cfi_small_no_frame_pointer_matches_readelf)
{
	const char *bin = compile("nofp", "-O2 -fomit-frame-pointer");

	if (!bin) {
		SKIP("gcc could not build the test program");
		return;
	}
	compare_with_readelf(bin, NULL, NULL, ".eh_frame", 10);
}

TEST(cfi_small_frame_pointer_matches_readelf)
{
	const char *bin = compile("fp", "-O2 -fno-omit-frame-pointer");
	struct cfi_table t;
	size_t fp_rows = 0;

	if (!bin) {
		SKIP("gcc could not build the test program");
		return;
	}
	compare_with_readelf(bin, NULL, NULL, ".eh_frame", 10);
	CHECK_INT(build_path(bin, NULL, &t), 0);
	for (size_t i = 0; i < t.n; i++)
		fp_rows += OFFCPU_CFI_CFA(t.rows[i].rule) == OFFCPU_CFA_FP &&
			   OFFCPU_CFI_FP(t.rows[i].rule) == OFFCPU_FP_SAVED;
	cfi_table__free(&t);
	/* with frame pointers, the functions' bodies have CFA = rbp + 16, rbp saved */
	CHECK(fp_rows >= 3);
}

/* A program whose only CFI is .debug_frame (-g without unwind tables). */
static const char *compile_debug_frame_only(void)
{
	const char *bin = compile("dfg", "-O2 -g -fno-asynchronous-unwind-tables");
	const char *out = tmp_path("df");

	if (!bin || sh("objcopy -R .eh_frame -R .eh_frame_hdr '%s' '%s'", bin, out))
		return NULL;
	return out;
}

TEST(cfi_debug_frame_matches_readelf)
{
	const char *bin = compile_debug_frame_only();

	if (!bin) {
		SKIP("gcc/objcopy could not build the test program");
		return;
	}
	compare_with_readelf(bin, NULL, NULL, ".debug_frame", 5);
}

/* Debug sections are often compressed (SHF_COMPRESSED): Go binaries, some distros' debug files. */
TEST(cfi_compressed_debug_frame_matches_readelf)
{
	const char *bin = compile_debug_frame_only(), *out = tmp_path("dfz");
	char cmd[512], flags[16] = "";
	FILE *p;

	if (!bin || sh("objcopy --compress-debug-sections=zlib-gabi '%s' '%s'", bin, out))
		SKIP("gcc/objcopy could not build the test program");
	/* the section's flags column says C when it is compressed */
	snprintf(cmd, sizeof(cmd),
		 "readelf -SW '%s' | sed -n 's/.*\\] \\.debug_frame .* 00 *\\([A-Z]*\\) .*/\\1/p'",
		 out);
	p = popen(cmd, "r");
	CHECK(p);
	if (!fgets(flags, sizeof(flags), p))
		flags[0] = '\0';
	pclose(p);
	CHECK(strchr(flags, 'C'));
	compare_with_readelf(out, "/nonexistent", NULL, ".debug_frame", 5);
}

/* The file stripped of all CFI, its .debug_frame in a separate debug file. */
static const char *split_debug(const char *name, bool debuglink)
{
	const char *full = compile_debug_frame_only(), *dbg = tmp_path("df.debug");
	const char *out = tmp_path(name);

	if (!full || sh("objcopy --only-keep-debug '%s' '%s' 2>/dev/null", full, dbg) ||
	    sh("objcopy --strip-debug %s '%s' '%s'", "--remove-section=.gnu_debuglink", full, out))
		return NULL;
	if (debuglink && sh("cd '%s' && objcopy --add-gnu-debuglink=df.debug '%s'", tmpdir, out))
		return NULL;
	return out;
}

TEST(cfi_debug_file_by_debuglink)
{
	const char *bin = split_debug("linked", true);
	struct cfi_table t;

	if (!bin) {
		SKIP("gcc/objcopy could not build the test program");
		return;
	}
	/* the debug file is found next to the binary, and its table matches its readelf */
	CHECK_INT(build_path(bin, tmpdir, &t), 0);
	CHECK_STR(t.source, "debug file .debug_frame");
	cfi_table__free(&t);
	compare_with_readelf(bin, tmpdir, tmp_path("df.debug"), "debug file .debug_frame", 5);
	/* without the debug file: no CFI at all */
	CHECK_INT(rename(tmp_path("df.debug"), tmp_path("df.moved")), 0);
	CHECK_INT(build_path(bin, tmpdir, &t), -ENOENT);
	cfi_table__free(&t);
}

TEST(cfi_debug_file_by_build_id)
{
	const char *bin = split_debug("byid", false);
	char dir[512], file[600], hex[64] = "";
	struct cfi_table t;

	if (!bin) {
		SKIP("gcc/objcopy could not build the test program");
		return;
	}
	CHECK_INT(build_path(bin, tmpdir, &t), -ENOENT);
	CHECK(t.build_id_len >= 2);
	for (size_t i = 1; i < t.build_id_len; i++)
		sprintf(hex + 2 * (i - 1), "%02x", t.build_id[i]);
	snprintf(dir, sizeof(dir), "%s/.build-id/%02x", tmpdir, t.build_id[0]);
	snprintf(file, sizeof(file), "%s/%s.debug", dir, hex);
	cfi_table__free(&t);
	CHECK_INT(sh("mkdir -p '%s' && cp '%s' '%s'", dir, tmp_path("df.debug"), file), 0);
	CHECK_INT(build_path(bin, tmpdir, &t), 0);
	CHECK_STR(t.source, "debug file .debug_frame");
	CHECK(t.n > 3);
	cfi_table__free(&t);
	/* a debug file of another build is not taken for this one */
	CHECK_INT(sh("objcopy --only-keep-debug '%s' '%s' 2>/dev/null",
		     compile("other", "-O1 -g "
				      "-fno-asynchronous-unwind-tables"),
		     file),
		  0);
	CHECK_INT(build_path(bin, tmpdir, &t), -ENOENT);
	cfi_table__free(&t);
}

TEST(cfi_libc_plt_rows)
{
	struct plt_range plt[8];
	size_t n = plt_ranges(LIBC, plt, 8), nplt = 0;
	struct cfi_table t;
	char s[64];

	CHECK(n >= 1);
	CHECK_INT(build_path(LIBC, NULL, &t), 0);
	for (size_t i = 0; i < n; i++) {
		/* past the first 16-byte stub (PLT0), every stub byte has the PLT rule */
		for (uint64_t a = plt[i].start + 16; a + 16 <= plt[i].end; a += 5) {
			const struct offcpu_cfi_row *r = cfi_table__find(&t, a);

			if (!r || OFFCPU_CFI_CFA(r->rule) != OFFCPU_CFA_PLT)
				continue;
			cfi_row__format(r, s, sizeof(s));
			if (strcmp(s, "plt rsp+8 rip&15>=11")) {
				UNIT_FAIL("%#" PRIx64 ": %s", a, s);
				cfi_table__free(&t);
				return;
			}
			nplt++;
		}
	}
	cfi_table__free(&t);
	/* libc's .plt has dozens of stubs */
	CHECK(nplt >= 100);
}

TEST(cfi_libc_signal_frame)
{
	struct readelf re;
	struct cfi_table t;
	size_t nsig = 0;
	char s[64];

	if (readelf__load(&re, LIBC)) {
		SKIP("readelf printed nothing for libc");
		return;
	}
	CHECK_INT(build_path(LIBC, NULL, &t), 0);
	for (size_t i = 0; i < re.n; i++) {
		if (!re.f[i].signal)
			continue;
		nsig++;
		/* __restore_rt: its FDE starts one byte early, so return address - 1 hits it */
		for (uint64_t a = re.f[i].start; a < re.f[i].end; a++) {
			const struct offcpu_cfi_row *r = cfi_table__find(&t, a);

			CHECK(r);
			cfi_row__format(r, s, sizeof(s));
			if (strcmp(s, "signal")) {
				UNIT_FAIL("%#" PRIx64 " in the signal FDE: %s", a, s);
				break;
			}
		}
	}
	readelf__free(&re);
	cfi_table__free(&t);
	CHECK_INT(nsig, 1);
}

static uint64_t entry_point(const char *path)
{
	char cmd[512];
	unsigned long long e = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -h '%s' | sed -n 's/.*Entry point address: *//p'",
		 path);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	if (fscanf(p, "%llx", &e) != 1)
		e = 0;
	pclose(p);
	return e;
}

TEST(cfi_python_start_is_end)
{
	uint64_t e = entry_point(PYTHON);
	const struct offcpu_cfi_row *r;
	struct cfi_table t;

	CHECK(e != 0);
	CHECK_INT(build_path(PYTHON, NULL, &t), 0);
	/* python3.11 is not PIE: rows are relative to 0x400000, not 0 */
	CHECK(t.base >= 0x400000);
	r = cfi_table__find(&t, e);
	CHECK(r);
	CHECK_INT(OFFCPU_CFI_CFA(r->rule), OFFCPU_CFA_END);
	r = cfi_table__find(&t, e + 4);
	CHECK(r);
	CHECK_INT(OFFCPU_CFI_CFA(r->rule), OFFCPU_CFA_END);
	CHECK(!cfi_table__find(&t, t.base + t.rows[0].pc - 1));
	cfi_table__free(&t);
}

TEST(cfi_no_cfi_is_enoent)
{
	const char *bin = compile("nocfi0", "-O2"), *out = tmp_path("nocfi");
	struct cfi_table t;

	if (!bin || sh("objcopy --strip-debug -R .eh_frame -R .eh_frame_hdr '%s' '%s'", bin, out)) {
		SKIP("gcc/objcopy could not build the test program");
		return;
	}
	CHECK_INT(build_path(out, NULL, &t), -ENOENT);
	CHECK_INT(t.n, 0);
	/* the segments and the build id are still there, for the caller's maps */
	CHECK(t.nsegs >= 2);
	CHECK(t.build_id_len == 20);
	cfi_table__free(&t);
	cfi_table__free(NULL);
}

TEST(cfi_not_x86_64_elf_is_enoexec)
{
	const char *txt = tmp_path("text"), *arm = tmp_path("arm"), *obj = tmp_path("obj.o");
	struct cfi_table t;
	uint16_t machine = 183; /* EM_AARCH64 */
	FILE *f = fopen(txt, "w");
	int fd;

	CHECK(f);
	fputs("#!/bin/sh\necho not an ELF file\n", f);
	fclose(f);
	CHECK_INT(build_path(txt, NULL, &t), -ENOEXEC);
	CHECK_INT(build_path("/dev/null", NULL, &t), -ENOEXEC);
	/* libc with another machine in its header */
	CHECK_INT(sh("cp " LIBC " '%s'", arm), 0);
	fd = open(arm, O_WRONLY);
	CHECK(fd >= 0);
	CHECK_INT(pwrite(fd, &machine, 2, 18), 2);
	close(fd);
	CHECK_INT(build_path(arm, NULL, &t), -ENOEXEC);
	/* a relocatable object is not what a process maps */
	if (have("gcc") && !sh("echo 'int f(void){return 1;}' | gcc -x c -c -o '%s' -", obj))
		CHECK_INT(build_path(obj, NULL, &t), -ENOEXEC);
}

TEST(cfi_truncated_elf_fails_cleanly)
{
	int src = open(LIBC, O_RDONLY), fd;
	struct stat st;
	static char buf[1 << 16];
	off_t cuts[] = {0, 16, 63, 64, 100, 4096, 65536, 0x1a9000, 0x1b0000, -4096, -1};
	size_t ok = 0;

	CHECK(src >= 0);
	CHECK(!fstat(src, &st));
	fd = memfd_create("cfi-truncated", MFD_CLOEXEC);
	CHECK(fd >= 0);
	for (off_t o = 0; o < st.st_size;) {
		ssize_t n = pread(src, buf, sizeof(buf), o);

		CHECK(n > 0);
		CHECK_INT(pwrite(fd, buf, n, o), n);
		o += n;
	}
	close(src);
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		off_t len = cuts[i] < 0 ? st.st_size + cuts[i] : cuts[i];
		struct cfi_table t;
		char why[128];
		int err;

		CHECK(!ftruncate(fd, len));
		err = cfi_table__build(fd, NULL, &t);
		if (err == 0) {
			if (!table_well_formed(&t, why, sizeof(why))) {
				UNIT_FAIL("cut at %lld: %s", (long long)len, why);
				break;
			}
			ok++;
		} else {
			CHECK(err == -ENOEXEC || err == -ENOENT || err == -EIO);
			CHECK(!t.rows);
		}
		cfi_table__free(&t);
	}
	close(fd);
	/* the section headers are at the end: no cut leaves a readable .eh_frame */
	CHECK_INT(ok, 0);
}

/* ---- load bias ---- */

struct mapping {
	uint64_t start, offset;
	char perms[8];
};

/* The mappings of path in /proc/PID/maps. */
static size_t mappings_of(pid_t pid, const char *path, struct mapping *m, size_t max)
{
	char fn[64], line[1024], real[4096];
	size_t n = 0;
	FILE *f;

	if (!realpath(path, real))
		return 0;
	snprintf(fn, sizeof(fn), "/proc/%d/maps", (int)pid);
	f = fopen(fn, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e, off;
		char perms[8], file[4096] = "";

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095s", &s, &e, perms, &off, file) <
		    4)
			continue;
		if (strcmp(file, real) || n >= max)
			continue;
		m[n].start = s;
		m[n].offset = off;
		snprintf(m[n].perms, sizeof(m[n].perms), "%s", perms);
		n++;
	}
	fclose(f);
	return n;
}

/* Every mapping of the file gives the bias dladdr knows, and code finds a row. */
static void check_bias(pid_t pid, const char *path, uint64_t want_bias, uint64_t code_addr)
{
	struct mapping m[16];
	size_t n = mappings_of(pid, path, m, 16), nx = 0;
	struct cfi_table t;
	const struct offcpu_cfi_row *r;

	CHECK(n >= 2);
	CHECK_INT(build_path(path, NULL, &t), 0);
	for (size_t i = 0; i < n; i++) {
		uint64_t bias = 1;

		if (cfi_table__bias(&t, m[i].start, m[i].offset, &bias)) {
			UNIT_FAIL("%s mapping at %#" PRIx64 " off %#" PRIx64 ": no segment", path,
				  m[i].start, m[i].offset);
			break;
		}
		if (bias != want_bias) {
			UNIT_FAIL("%s mapping %s at %#" PRIx64 ": bias %#" PRIx64
				  ", dladdr %#" PRIx64,
				  path, m[i].perms, m[i].start, bias, want_bias);
			break;
		}
		nx += m[i].perms[2] == 'x';
	}
	if (code_addr) {
		r = cfi_table__find(&t, code_addr - want_bias);
		CHECK(r);
		CHECK(OFFCPU_CFI_CFA(r->rule) == OFFCPU_CFA_SP);
	}
	/* an offset past every segment has no bias */
	CHECK_INT(cfi_table__bias(&t, 0x1000, 1ULL << 40, &(uint64_t){0}), -ENOENT);
	cfi_table__free(&t);
	CHECK(nx >= 1);
}

__attribute__((noinline)) static int in_test_binary(int x)
{
	return x + 1;
}

TEST(cfi_bias_pie)
{
	Dl_info self, libc;
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	CHECK(n > 0);
	exe[n] = '\0';
	CHECK(dladdr((void *)in_test_binary, &self));
	CHECK(dladdr((void *)malloc, &libc));
	/* a PIE and a shared library: the bias is where their vaddr 0 landed */
	check_bias(getpid(), exe, (uint64_t)(uintptr_t)self.dli_fbase,
		   (uint64_t)(uintptr_t)in_test_binary);
	if (unit_failed_now)
		return;
	check_bias(getpid(), libc.dli_fname, (uint64_t)(uintptr_t)libc.dli_fbase,
		   (uint64_t)(uintptr_t)malloc);
	CHECK(in_test_binary(1) == 2);
}

TEST(cfi_bias_non_pie)
{
	const char *bin = compile("nopie", "-O2 -no-pie");
	int in[2];
	pid_t pid;

	if (!bin) {
		SKIP("gcc could not build the test program");
		return;
	}
	CHECK(!pipe(in));
	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		dup2(in[0], 0);
		close(in[1]);
		execl(bin, bin, "wait", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	/* wait for the exec: the mappings name the program */
	for (int i = 0; i < 200; i++) {
		struct mapping m[4];

		if (mappings_of(pid, bin, m, 4) >= 2)
			break;
		usleep(10000);
	}
	check_bias(pid, bin, 0, 0);
	close(in[1]);
	waitpid(pid, NULL, 0);
}

/*
 * Inputs tests/fuzz/fuzz_cfi.c found to break the builder (the fuzzer runs
 * them first too). no-fdes-qsort-null: a mutated tiny static executable
 * from which no FDE is kept; qsort was called with NULL (UBSan, `make
 * check-asan`). It is a file without usable CFI.
 */
TEST(cfi_fuzz_regressions)
{
	struct cfi_table t;

	CHECK_INT(build_path("tests/fuzz/regressions/cfi/no-fdes-qsort-null", "/nonexistent", &t),
		  -ENOENT);
	CHECK_INT(t.n, 0);
	cfi_table__free(&t);
}

/*
 * register-255588543: an FDE saying "DW_CFA_same_value r255588543". libdw
 * grows and clears its register array up to the number: 2 GB allocated and
 * touched, 7.5 s. The section is refused as corrupt before libdw runs it.
 */
TEST(cfi_fuzz_regression_huge_register)
{
	struct cfi_table t;

	CHECK_INT(build_path("tests/fuzz/regressions/cfi/register-255588543", "/nonexistent", &t),
		  -ENOENT);
	CHECK_INT(t.n, 0);
	CHECK_INT(t.stats.corrupt, 1);
	cfi_table__free(&t);
}

/* ---- the one-pass row builder against libdw asked row by row ---- */

/*
 * Hand-written CFI with every instruction the one-pass builder plays out
 * itself, and some it leaves to libdw: remember/restore_state around an
 * epilogue, restore, same_value, undefined, register, val_offset, a CFA
 * from another register, an offset too large for a row, an expression.
 */
static const char cfi_asm[] =
	"\t.text\n"
	"\t.globl f1\n\t.type f1,@function\nf1:\n\t.cfi_startproc\n"
	"\tpush %rbp\n\t.cfi_def_cfa_offset 16\n\t.cfi_offset %rbp, -16\n"
	"\tmov %rsp, %rbp\n\t.cfi_def_cfa_register %rbp\n"
	"\ttest %rdi, %rdi\n\tje 1f\n"
	"\t.cfi_remember_state\n"
	"\tpop %rbp\n\t.cfi_def_cfa %rsp, 8\n\t.cfi_restore %rbp\n\tret\n"
	"1:\t.cfi_restore_state\n\tnop\n"
	"\t.cfi_same_value %rbp\n\tnop\n"
	"\t.cfi_register %rbp, %rbx\n\tnop\n"
	"\t.cfi_val_offset %rbp, -24\n\tnop\n"
	"\t.cfi_offset %rbp, -4096\n\tnop\n"
	"\t.cfi_undefined %rbp\n\tnop\n"
	"\t.cfi_def_cfa %r10, 0\n\tnop\n"
	"\t.cfi_def_cfa %rsp, 12\n\tnop\n"
	"\t.cfi_def_cfa %rsp, 1048576\n\tnop\n"
	"\t.cfi_def_cfa %rsp, 8\n\tleave\n\tret\n"
	"\t.cfi_endproc\n"
	"\t.globl f2\n\t.type f2,@function\nf2:\n\t.cfi_startproc\n"
	"\tnop\n\t.cfi_undefined %rip\n\tnop\n\t.cfi_register %rip, %rbx\n\tnop\n"
	"\t.cfi_val_offset %rip, -8\n\tnop\n\t.cfi_offset %rip, -16\n\tnop\n"
	"\t.cfi_same_value %rip\n\tnop\n\t.cfi_offset %rip, -8\n\tret\n"
	"\t.cfi_endproc\n"
	"\t.globl f3\n\t.type f3,@function\nf3:\n\t.cfi_startproc\n"
	"\tsub $24, %rsp\n\t.cfi_adjust_cfa_offset 24\n"
	"\t.cfi_escape 0x0f,0x03,0x77,0x20,0x06\n\tnop\n" /* CFA = [rsp + 32]: an expression */
	"\t.cfi_def_cfa %rsp, 32\n\tadd $24, %rsp\n\t.cfi_adjust_cfa_offset -24\n\tret\n"
	"\t.cfi_endproc\n"
	"\t.globl f4\n\t.type f4,@function\nf4:\n\t.cfi_startproc\n\t.cfi_signal_frame\n"
	"\tnop\n\tret\n\t.cfi_endproc\n"
	"\t.section .note.GNU-stack,\"\",@progbits\n";

static const char *compile_cfi_asm(void)
{
	const char *src = tmp_path("cfi.s"), *out = tmp_path("cfi.so");
	FILE *f;

	if (!have("gcc"))
		return NULL;
	f = fopen(src, "w");
	if (!f)
		return NULL;
	fputs(cfi_asm, f);
	fclose(f);
	if (sh("gcc -shared -nostdlib -o '%s' '%s'", out, src))
		return NULL;
	return out;
}

/* The table of path made in one pass and by libdw row by row: the same rows. */
static bool same_as_libdw(const char *path, size_t *fdes, size_t *via_libdw)
{
	struct cfi_table a, b;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ea, eb;
	char x[64], y[64];
	bool same = true;

	if (fd < 0) {
		UNIT_FAIL("%s: %s", path, strerror(errno));
		return false;
	}
	ea = cfi_table__build_opts(fd, path, &(struct cfi_build_opts){0}, &a);
	eb = cfi_table__build_opts(fd, path, &(struct cfi_build_opts){.libdw_rows = true}, &b);
	close(fd);
	if (ea || eb) {
		if (ea == -ENOENT)
			cfi_table__free(&a);
		if (eb == -ENOENT)
			cfi_table__free(&b);
		if (ea != eb)
			UNIT_FAIL("%s: one pass %d, libdw %d", path, ea, eb);
		return ea == eb;
	}
	if (b.stats.fdes_libdw || a.n != b.n) {
		UNIT_FAIL("%s: one pass %zu rows, libdw %zu rows (%zu FDEs its own)", path, a.n,
			  b.n, b.stats.fdes_libdw);
		same = false;
	}
	for (size_t i = 0; same && i < a.n; i++) {
		if (!memcmp(&a.rows[i], &b.rows[i], sizeof(a.rows[i])))
			continue;
		cfi_row__format(&a.rows[i], x, sizeof(x));
		cfi_row__format(&b.rows[i], y, sizeof(y));
		UNIT_FAIL("%s: row %zu: one pass pc %#x '%s', libdw pc %#x '%s'", path, i,
			  a.rows[i].pc, x, b.rows[i].pc, y);
		same = false;
	}
	printf("# %s: %zu rows, %zu FDEs, %zu of them via libdw\n", path, a.n, a.stats.fdes,
	       a.stats.fdes_libdw);
	*fdes += a.stats.fdes;
	*via_libdw += a.stats.fdes_libdw;
	cfi_table__free(&a);
	cfi_table__free(&b);
	return same;
}

TEST(cfi_one_pass_same_as_libdw_handwritten)
{
	const char *so = compile_cfi_asm();
	struct cfi_table t;
	size_t fdes = 0, via = 0, saved = 0, unknown = 0, unsup = 0, end = 0;

	if (!so) {
		SKIP("gcc could not assemble the test CFI");
		return;
	}
	if (!same_as_libdw(so, &fdes, &via))
		return;
	/* f3's expression and f4's signal frame go to libdw, f1 and f2 do not */
	CHECK_INT(fdes, 4);
	CHECK_INT(via, 2);
	CHECK_INT(build_path(so, NULL, &t), 0);
	for (size_t i = 0; i < t.n; i++) {
		unsigned int cfa = OFFCPU_CFI_CFA(t.rows[i].rule),
			     fp = OFFCPU_CFI_FP(t.rows[i].rule);

		saved += (cfa == OFFCPU_CFA_SP || cfa == OFFCPU_CFA_FP) && fp == OFFCPU_FP_SAVED;
		unknown +=
			(cfa == OFFCPU_CFA_SP || cfa == OFFCPU_CFA_FP) && fp == OFFCPU_FP_UNKNOWN;
		unsup += cfa == OFFCPU_CFA_UNSUPPORTED;
		end += cfa == OFFCPU_CFA_END;
	}
	cfi_table__free(&t);
	/* the instructions above make each kind of row at least once */
	CHECK(saved >= 2);
	CHECK(unknown >= 2);
	CHECK(unsup >= 3);
	CHECK(end >= 1);
}

TEST(cfi_one_pass_same_as_libdw_real_binaries)
{
	const char *paths[] = {LIBC,
			       PYTHON,
			       "/usr/bin/redis-server",
			       "/usr/lib/postgresql/15/bin/postgres",
			       "/lib64/ld-linux-x86-64.so.2",
			       compile("nofp1", "-O2 -fomit-frame-pointer"),
			       compile("fp1", "-O2 -fno-omit-frame-pointer"),
			       compile_debug_frame_only()};
	size_t fdes = 0, via = 0, files = 0;

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		if (!paths[i] || access(paths[i], R_OK))
			continue;
		if (!same_as_libdw(paths[i], &fdes, &via))
			return;
		files++;
	}
	if (!files) {
		SKIP("no binary to compare");
		return;
	}
	/* nearly every FDE in one pass (libc: PLT and signal frames are libdw's) */
	CHECK(via * 50 < fdes);
}

TEST(cfi_row_format)
{
	struct offcpu_cfi_row r = {.cfa_off = 2,
				   .rule = OFFCPU_CFI_RULE(OFFCPU_CFA_SP, OFFCPU_FP_SAVED),
				   .fp_off = -2};
	char s[64];

	CHECK_INT(cfi_row__format(&r, s, sizeof(s)), 0);
	CHECK_STR(s, "rsp+16 rbp=[cfa-16]");
	r.rule = OFFCPU_CFI_RULE(OFFCPU_CFA_FP, OFFCPU_FP_SAME);
	CHECK_INT(cfi_row__format(&r, s, sizeof(s)), 0);
	CHECK_STR(s, "rbp+16");
	r.rule = OFFCPU_CFI_RULE(OFFCPU_CFA_SP, OFFCPU_FP_UNKNOWN);
	CHECK_INT(cfi_row__format(&r, s, sizeof(s)), 0);
	CHECK_STR(s, "rsp+16 rbp=?");
	r.rule = OFFCPU_CFI_RULE(OFFCPU_CFA_NONE, 0);
	CHECK_INT(cfi_row__format(&r, s, sizeof(s)), 0);
	CHECK_STR(s, "none");
	CHECK_INT(cfi_row__format(&r, s, 3), -ENOSPC);
}

int main(void)
{
	int r = unit_run();

	if (tmpdir[0])
		sh("rm -rf '%s'", tmpdir);
	return r;
}
