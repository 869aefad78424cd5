// SPDX-License-Identifier: GPL-2.0-only
/*
 * The symbolizer on Debian's libc with its detached debug info (libc6-dbg):
 * static functions that libc.so.6's .dynsym lacks get their names from the
 * debug file, and the inlined functions at a libc address are those that
 * `perf script` shows for the same address. Both skip without libc6-dbg;
 * the second also without perf or the rights to record sched_switch.
 *
 * Addresses are looked up in this test program's own copy of libc: the same
 * file as the workload's, so the same address in the file is the same code.
 */

#include <elf.h>
#include <link.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "symbolize/symbolize.h"
#include "unit.h"

struct libc_info {
	uint64_t bias; /* load bias: runtime address = bias + address in the file */
	char path[256];
	char debug[320]; /* /usr/lib/debug/.build-id/XX/YYYY.debug */
};

static int find_libc(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct libc_info *l = arg;

	(void)size;
	if (!strstr(info->dlpi_name, "/libc.so.6"))
		return 0;
	l->bias = info->dlpi_addr;
	snprintf(l->path, sizeof(l->path), "%s", info->dlpi_name);
	/* The build id, from the GNU note in memory, names the debug file. */
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr), *end;

		if (ph->p_type != PT_NOTE)
			continue;
		for (end = p + ph->p_memsz; p + sizeof(ElfW(Nhdr)) <= end;) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			const unsigned char *desc =
				(const unsigned char *)p + sizeof(*nh) + ((nh->n_namesz + 3) & ~3u);
			size_t len;

			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(p + sizeof(*nh), "GNU", 4) && nh->n_descsz > 1) {
				len = snprintf(l->debug, sizeof(l->debug),
					       "/usr/lib/debug/.build-id/%02x/", desc[0]);
				for (size_t j = 1; j < nh->n_descsz && len + 3 < sizeof(l->debug);
				     j++)
					len += snprintf(l->debug + len, sizeof(l->debug) - len,
							"%02x", desc[j]);
				snprintf(l->debug + len, sizeof(l->debug) - len, ".debug");
				return 1;
			}
			p += sizeof(*nh) + ((nh->n_namesz + 3) & ~3u) + ((nh->n_descsz + 3) & ~3u);
		}
	}
	return 1;
}

/* libc and its debug file; a reason to skip in *why when there is none. */
static bool libc_with_debug(struct libc_info *l, const char **why)
{
	struct stat st;

	memset(l, 0, sizeof(*l));
	if (!dl_iterate_phdr(find_libc, l) || !l->path[0]) {
		*why = "this program does not map libc.so.6";
		return false;
	}
	if (!l->debug[0] || stat(l->debug, &st)) {
		*why = "no debug file for libc.so.6 (Debian: libc6-dbg)";
		return false;
	}
	return true;
}

/* The output of a shell command, malloc'ed; NULL when it fails. */
static char *run(const char *cmd)
{
	FILE *f = popen(cmd, "r");
	char *out = NULL, buf[4096];
	size_t len = 0, n;
	FILE *m;

	if (!f)
		return NULL;
	m = open_memstream(&out, &len);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, m);
	fclose(m);
	if (pclose(f)) {
		free(out);
		return NULL;
	}
	return out;
}

/* Whether the line list (one NAME a line) holds name. */
static bool has_line(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; (p = strstr(p, name)); p += n)
		if ((p == list || p[-1] == '\n') && p[n] == '\n')
			return true;
	return false;
}

struct nsym {
	uint64_t addr, size;
	char type;
	char name[128];
};

/*
 * libc's static functions are in the debug file's .symtab only. Pick some
 * that are not in .dynsym under any name: text, local, of their own address
 * (no alias) and name, and look up their first instruction.
 */
TEST(libc_static_functions_are_named_from_the_debug_file)
{
	struct libc_info l;
	struct symbolizer *s = NULL;
	char cmd[1024], *syms = NULL, *dyn = NULL, *line, *save = NULL;
	static struct nsym all[65536];
	size_t nall = 0, picks[512], n = 0, tried = 0;
	struct symbolizer_stats st;
	const char *why;

	if (!libc_with_debug(&l, &why))
		SKIP("%s", why);
	snprintf(cmd, sizeof(cmd), "nm -n -S --defined-only %s 2>/dev/null", l.debug);
	syms = run(cmd);
	snprintf(cmd, sizeof(cmd),
		 "nm -D --defined-only %s 2>/dev/null | awk '{ sub(/@.*/, \"\", $NF); print $NF }'",
		 l.path);
	dyn = run(cmd);
	if (!syms || !dyn) {
		free(syms);
		free(dyn);
		SKIP("nm could not read libc and its debug file (Debian: binutils)");
	}
	/* "ADDR SIZE TYPE NAME" or, without a size, "ADDR TYPE NAME"; sorted by address. */
	for (line = strtok_r(syms, "\n", &save); line && nall < 65536;
	     line = strtok_r(NULL, "\n", &save)) {
		struct nsym *y = &all[nall];
		unsigned long long a, z;

		if (sscanf(line, "%llx %llx %c %127s", &a, &z, &y->type, y->name) == 4) {
			y->addr = a, y->size = z;
			nall++;
		} else if (sscanf(line, "%llx %c %127s", &a, &y->type, y->name) == 3) {
			y->addr = a, y->size = 0;
			nall++;
		}
	}
	for (size_t i = 0; i < nall && n < 512; i++) {
		const struct nsym *y = &all[i];
		bool alone = (!i || all[i - 1].addr != y->addr) &&
			     (i + 1 == nall || all[i + 1].addr != y->addr);

		if (y->type != 't' || y->size < 32 || !alone || strchr(y->name, '.') ||
		    has_line(dyn, y->name))
			continue;
		for (size_t j = 0; j < nall && alone; j++)
			alone = j == i || strcmp(all[j].name, y->name);
		if (alone)
			picks[n++] = i;
	}
	if (n < 8) {
		UNIT_FAIL("only %zu static functions found in %s", n, l.debug);
		goto cleanup;
	}
	s = symbolizer__new(NULL);
	CHECK(s);
	/* Eight of them, spread over the library. */
	for (size_t i = 0; i < n && tried < 8; i += n / 8, tried++) {
		const struct nsym *y = &all[picks[i]];
		struct sym_frame f[1];
		int k = symbolizer__user(s, getpid(), l.bias + y->addr, f, 1);

		if (k != 1 || strcmp(f[0].name, y->name)) {
			UNIT_FAIL("libc+0x%" PRIx64 ": \"%s\", expected the static %s", y->addr,
				  k == 1 ? f[0].name : "(nothing)", y->name);
			goto cleanup;
		}
	}
	CHECK_INT(tried, 8);
	/*
	 * The pages the tables were read from were given back after the first
	 * lookup (util/filepages.h); the seven after it named their functions
	 * from pages read again.
	 */
	symbolizer__stats(s, &st);
	if (st.file_bytes_dropped < 64 * 1024)
		UNIT_FAIL("%" PRIu64 " bytes of libc's mapped files given back",
			  st.file_bytes_dropped);
cleanup:
	symbolizer__free(s);
	free(syms);
	free(dyn);
}

/* A frame of perf script's output: its address in the file, name, and what follows. */
struct pframe {
	uint64_t addr;
	char name[128];
	bool inlined; /* "(inlined)" */
	bool libc;    /* the dso is libc.so.6 */
};

/* "\tADDR NAME (DSO)" lines of perf script -F ip,sym,dso; returns how many (max at most). */
static size_t perf_frames(char *text, struct pframe *out, size_t max)
{
	char *save = NULL, *line;
	size_t n = 0;

	for (line = strtok_r(text, "\n", &save); line && n < max;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long long addr;
		char name[128], dso[256];

		if (sscanf(line, " %llx %127s (%255[^)])", &addr, name, dso) != 3)
			continue;
		out[n].addr = addr;
		snprintf(out[n].name, sizeof(out[n].name), "%s", name);
		out[n].inlined = !strcmp(dso, "inlined");
		out[n].libc = strstr(dso, "/libc.so.6") != NULL;
		n++;
	}
	return n;
}

/* glibc's names of one function: "__GI___clone3", "clone3", "pthread_cond_wait@@GLIBC_2.3.2". */
static const char *plain(const char *name, char *buf, size_t size)
{
	for (;;) {
		if (name[0] == '_')
			name++;
		else if (!strncmp(name, "GI_", 3))
			name += 3;
		else
			break;
	}
	snprintf(buf, size, "%s", name);
	buf[strcspn(buf, "@")] = '\0';
	return buf;
}

/*
 * Whether names a and b are symbols (aliases) starting at one address in the
 * debug file: glibc gives one function several (__GI___libc_open, __open,
 * open), and which one a tool prints is a choice, not a fact.
 */
static bool aliases(const char *debug, const char *a, const char *b)
{
	char cmd[1024], line[512], addr_a[32] = "", addr_b[32] = "";
	FILE *f;

	snprintf(cmd, sizeof(cmd), "nm --defined-only %s 2>/dev/null", debug);
	f = popen(cmd, "r");
	while (f && fgets(line, sizeof(line), f)) {
		char addr[32], type[8], name[400];

		if (sscanf(line, "%31s %7s %399s", addr, type, name) != 3)
			continue;
		name[strcspn(name, "@")] = '\0';
		if (!strcmp(name, a))
			snprintf(addr_a, sizeof(addr_a), "%s", addr);
		if (!strcmp(name, b))
			snprintf(addr_b, sizeof(addr_b), "%s", addr);
	}
	if (f)
		pclose(f);
	return addr_a[0] && !strcmp(addr_a, addr_b);
}

/*
 * perf shows, for an address, the inlined functions innermost first, each
 * "(inlined)", then the function the code is in; the symbolizer gives the
 * function first, then the inlined ones outermost first. perf names the
 * function by its DWARF name when it has inlines to show and by its symbol
 * otherwise, so the function is compared by its plain name, the inlined ones
 * exactly.
 */
TEST(libc_inlined_frames_agree_with_perf_script)
{
	struct libc_info l;
	const char *why, *build = getenv("OFFCPU_BUILD"), *tmp = getenv("TMPDIR");
	char cmd[2048], data[512], *inl = NULL, *flat = NULL;
	static struct pframe pi[8192], pf[4096];
	struct symbolizer *s = NULL;
	struct symbolizer_opts o = {.inlines = true};
	size_t ni, nf, compared = 0, with_inlines = 0, not_returns = 0;

	if (!libc_with_debug(&l, &why))
		SKIP("%s", why);
	if (system("command -v perf >/dev/null 2>&1"))
		SKIP("perf is not installed (Debian: linux-perf)");
	snprintf(data, sizeof(data), "%s/inline-perf.data", tmp ? tmp : "/tmp");
	/* A workload that waits on a condition variable and sleeps, under perf. */
	snprintf(cmd, sizeof(cmd),
		 "perf record -q -e sched:sched_switch --call-graph dwarf -o %s -- "
		 "%s/tests/workloads/condvar >/dev/null 2>&1",
		 data, build ? build : "build");
	if (system(cmd)) {
		unlink(data);
		SKIP("perf record of sched:sched_switch failed (not root? no tracefs?)");
	}
	snprintf(cmd, sizeof(cmd), "perf script -i %s -F ip,sym,dso --inline 2>/dev/null", data);
	inl = run(cmd);
	snprintf(cmd, sizeof(cmd), "perf script -i %s -F ip,sym,dso --no-inline 2>/dev/null", data);
	flat = run(cmd);
	unlink(data);
	if (!inl || !flat) {
		UNIT_FAIL("perf script failed");
		goto cleanup;
	}
	ni = perf_frames(inl, pi, sizeof(pi) / sizeof(pi[0]));
	nf = perf_frames(flat, pf, sizeof(pf) / sizeof(pf[0]));
	s = symbolizer__new(&o);
	CHECK(s);
	/* Each frame without inlines is a run of frames of one address with them. */
	for (size_t i = 0, j = 0; i < nf; i++) {
		struct sym_frame f[8];
		char a[128], b[128];
		size_t first = j;
		int k;

		while (j < ni && pi[j].addr == pf[i].addr)
			j++;
		if (j == first) {
			UNIT_FAIL("perf's two outputs disagree at frame %zu (0x%" PRIx64 ")", i,
				  pf[i].addr);
			goto cleanup;
		}
		if (!pf[i].libc || !(pf[i].addr >> 12))
			continue;
		/* A return address: the call is the instruction before, as record looks up. */
		k = symbolizer__user(s, getpid(), l.bias + pf[i].addr - 1, f, 8);
		/*
		 * perf's unwinding of its stack copy sometimes gives a word that is
		 * no return address: the first byte of a function (perf names it by
		 * it), after padding that no function holds. No call ends there.
		 */
		if (k >= 1 && f[0].name[0] == '[') {
			struct sym_frame g[8];

			if (symbolizer__user(s, getpid(), l.bias + pf[i].addr, g, 8) >= 1 &&
			    (!strcmp(plain(g[0].name, a, sizeof(a)),
				     plain(pf[i].name, b, sizeof(b))) ||
			     aliases(l.debug, g[0].name, pf[i].name))) {
				not_returns++;
				continue;
			}
		}
		if (k < 1 ||
		    (strcmp(plain(f[0].name, a, sizeof(a)), plain(pf[i].name, b, sizeof(b))) &&
		     !aliases(l.debug, f[0].name, pf[i].name))) {
			UNIT_FAIL("libc+0x%" PRIx64 ": function \"%s\", perf says \"%s\"",
				  pf[i].addr, k >= 1 ? f[0].name : "(nothing)", pf[i].name);
			goto cleanup;
		}
		if ((size_t)k != j - first) {
			UNIT_FAIL("libc+0x%" PRIx64 ": %d inlined functions, perf shows %zu (%s)",
				  pf[i].addr, k - 1, j - first - 1, pi[first].name);
			goto cleanup;
		}
		for (int m = 1; m < k; m++) {
			/* ours outermost first, perf's innermost first */
			const struct pframe *p = &pi[first + (k - 1 - m)];

			if (!f[m].is_inline || !p->inlined || strcmp(f[m].name, p->name)) {
				UNIT_FAIL("libc+0x%" PRIx64 ": inlined \"%s\", perf says \"%s\"",
					  pf[i].addr, f[m].name, p->name);
				goto cleanup;
			}
		}
		compared++;
		with_inlines += k > 1;
	}
	if (not_returns * 20 > compared)
		UNIT_FAIL("%zu of perf's libc frames at a function's first byte, %zu compared",
			  not_returns, compared);
	/* The condition variable's wait is inlined into pthread_cond_wait in glibc. */
	if (!compared || !with_inlines)
		UNIT_FAIL("%zu libc frames compared, %zu with inlined functions: nothing to check",
			  compared, with_inlines);
cleanup:
	symbolizer__free(s);
	free(inl);
	free(flat);
}

/*
 * Inlined functions nest: at one address a function may be inlined into
 * another inlined function, and so on. addr2line -i lists the whole chain
 * from the debug file, innermost first, the containing function last; the
 * symbolizer must give the same chain, outermost first, at every address.
 */
TEST(libc_inline_chains_agree_with_addr2line)
{
	struct libc_info l;
	struct symbolizer_opts o = {.inlines = true};
	struct symbolizer *s = NULL;
	char cmd[1024], in[512], *syms = NULL, *a2l = NULL, *line, *save = NULL;
	char *names[64];
	static uint64_t addrs[512];
	size_t n = 0, compared = 0, deep = 0;
	unsigned long long lo = ~0ull, hi = 0;
	const char *why;
	FILE *f;

	if (!libc_with_debug(&l, &why))
		SKIP("%s", why);
	/* The span of libc's functions, from the debug file's symbols. */
	snprintf(cmd, sizeof(cmd), "nm -S --defined-only %s 2>/dev/null", l.debug);
	syms = run(cmd);
	if (!syms)
		SKIP("nm could not read %s (Debian: binutils)", l.debug);
	for (line = strtok_r(syms, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long a, z;
		char t;

		if (sscanf(line, "%llx %llx %c", &a, &z, &t) == 3 && (t == 't' || t == 'T')) {
			lo = a < lo ? a : lo;
			hi = a + z > hi ? a + z : hi;
		}
	}
	free(syms);
	CHECK(lo < hi);
	/* 512 addresses spread over it, as addr2line's input. */
	snprintf(in, sizeof(in), "%s/a2l.in", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	f = fopen(in, "w");
	CHECK(f);
	for (n = 0; n < 512; n++) {
		addrs[n] = lo + (hi - lo) / 512 * n + 13;
		fprintf(f, "0x%" PRIx64 "\n", addrs[n]);
	}
	fclose(f);
	/* "-a" starts each answer with the address: the chains can be told apart. */
	snprintf(cmd, sizeof(cmd), "addr2line -a -f -i -e %s < %s 2>/dev/null", l.debug, in);
	a2l = run(cmd);
	unlink(in);
	if (!a2l)
		SKIP("addr2line failed (Debian: binutils)");
	s = symbolizer__new(&o);
	CHECK(s);
	save = NULL;
	line = strtok_r(a2l, "\n", &save);
	for (size_t i = 0; i < n && line; i++) {
		struct sym_frame fr[16];
		size_t m = 0;
		int k;

		/* "0xADDR", then FUNCTION and FILE:LINE lines up to the next address */
		if (strtoull(line, NULL, 16) != addrs[i]) {
			UNIT_FAIL("addr2line's answers out of step at 0x%" PRIx64, addrs[i]);
			goto cleanup;
		}
		while ((line = strtok_r(NULL, "\n", &save)) && strncmp(line, "0x", 2)) {
			if (m < 64)
				names[m++] = line;
			line = strtok_r(NULL, "\n", &save); /* FILE:LINE */
			if (!line)
				break;
		}
		if (!m || !strcmp(names[0], "??"))
			continue; /* between functions */
		k = symbolizer__user(s, getpid(), l.bias + addrs[i], fr, 16);
		if (k < 1 || (size_t)k != m) {
			UNIT_FAIL("libc+0x%" PRIx64
				  ": %d inlined functions, addr2line -i shows %zu "
				  "(innermost %s)",
				  addrs[i], k - 1, m - 1, names[0]);
			goto cleanup;
		}
		for (int j = 1; j < k; j++) {
			if (!fr[j].is_inline || strcmp(fr[j].name, names[k - 1 - j])) {
				UNIT_FAIL("libc+0x%" PRIx64
					  ": inlined \"%s\" at depth %d, addr2line "
					  "says \"%s\"",
					  addrs[i], fr[j].name, j, names[k - 1 - j]);
				goto cleanup;
			}
		}
		compared++;
		deep += k > 2;
	}
	/* Chains of two and more inlined functions are common in libc. */
	if (compared < 256 || !deep)
		UNIT_FAIL("%zu addresses compared, %zu with nested inlined functions", compared,
			  deep);
cleanup:
	symbolizer__free(s);
	free(a2l);
}

/*
 * What one process resolved in a file is what another mapping the same file
 * gets, without a second lookup: the same frames, inlined ones included.
 */
TEST(libc_addresses_resolved_once_serve_every_process)
{
	struct libc_info l;
	struct symbolizer_opts o = {.inlines = true};
	struct symbolizer *s;
	struct symbolizer_stats st;
	struct sym_frame mine[8], its[8];
	const char *why;
	uint64_t at = 0;
	int n1, n2, found = 0;
	pid_t pid;

	if (!libc_with_debug(&l, &why))
		SKIP("%s", why);
	s = symbolizer__new(&o);
	CHECK(s);
	/* A libc address with inlined functions, in this process. */
	for (uint64_t off = 0x30000; off < 0x160000 && !found; off += 0x1000) {
		n1 = symbolizer__user(s, getpid(), l.bias + off + 0x40, mine, 8);
		if (n1 > 1 && mine[1].is_inline) {
			at = l.bias + off + 0x40;
			found = 1;
		}
	}
	if (!found) {
		symbolizer__free(s);
		UNIT_FAIL("no libc address with inlined functions found");
		return;
	}
	pid = fork();
	if (!pid) {
		for (;;)
			pause();
	}
	CHECK(pid > 0);
	CHECK_INT(symbolizer__track(s, pid), 0);
	symbolizer__stats(s, &st);
	CHECK_U64(st.file_cache_hits, 0);
	/* The child has our layout: the same address is the same code. */
	n2 = symbolizer__user(s, pid, at, its, 8);
	symbolizer__stats(s, &st);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	CHECK_U64(st.file_cache_hits, 1);
	CHECK_INT(n2, n1);
	for (int i = 0; i < n1; i++) {
		CHECK_STR(its[i].name, mine[i].name);
		CHECK_INT(its[i].is_inline, mine[i].is_inline);
	}
	symbolizer__free(s);
}

/* The span of libc's functions, from the debug file's symbols. */
static bool text_span(const char *debug, uint64_t *lo, uint64_t *hi)
{
	char cmd[512], *syms, *line, *save = NULL;

	snprintf(cmd, sizeof(cmd), "nm -S --defined-only %s 2>/dev/null", debug);
	syms = run(cmd);
	if (!syms)
		return false;
	*lo = ~0ull;
	*hi = 0;
	for (line = strtok_r(syms, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long a, z;
		char t;

		if (sscanf(line, "%llx %llx %c", &a, &z, &t) == 3 && (t == 't' || t == 'T')) {
			*lo = a < *lo ? a : *lo;
			*hi = a + z > *hi ? a + z : *hi;
		}
	}
	free(syms);
	return *lo < *hi;
}

/* The frames at libc+at, from the lazy and the whole reader: how many, or -1 when they differ. */
static int frames_agree(struct symbolizer *lazy, struct symbolizer *whole,
			const struct libc_info *l, uint64_t at)
{
	struct sym_frame fa[16], fb[16];
	int a = symbolizer__user(lazy, getpid(), l->bias + at, fa, 16);
	int b = symbolizer__user(whole, getpid(), l->bias + at, fb, 16);

	if (a != b) {
		UNIT_FAIL("libc+0x%" PRIx64 ": %d frames read lazily, %d whole", at, a, b);
		return -1;
	}
	for (int j = 0; j < a; j++) {
		if (strcmp(fa[j].name, fb[j].name) || fa[j].is_inline != fb[j].is_inline) {
			UNIT_FAIL("libc+0x%" PRIx64 ": frame %d \"%s\"%s lazily, \"%s\"%s whole",
				  at, j, fa[j].name, fa[j].is_inline ? " (inlined)" : "",
				  fb[j].name, fb[j].is_inline ? " (inlined)" : "");
			return -1;
		}
	}
	return a;
}

/*
 * libc's DWARF read only as far as the lookups need (symbolize/dwlazy.h)
 * gives every address the inlined frames libdwfl's whole reading gives, and
 * an address near the start of the text needs little of .debug_info.
 */
TEST(libc_lazy_dwarf_same_frames_as_whole)
{
	struct symbolizer_opts lazy_o = {.inlines = true},
			       whole_o = {.inlines = true, .dwarf_whole = true};
	struct symbolizer *lazy = NULL, *whole = NULL;
	struct symbolizer_stats st;
	struct libc_info l;
	const char *why;
	uint64_t lo, hi;
	size_t compared = 0, inlined = 0, n = 3000;

	if (!libc_with_debug(&l, &why))
		SKIP("%s", why);
	if (!text_span(l.debug, &lo, &hi))
		SKIP("nm could not read %s (Debian: binutils)", l.debug);
	lazy = symbolizer__new(&lazy_o);
	whole = symbolizer__new(&whole_o);
	CHECK(lazy && whole);
	for (size_t i = 0; i < n; i++) {
		int a = frames_agree(lazy, whole, &l, lo + (hi - lo) / n * i + 7);

		if (a < 0)
			goto cleanup;
		compared++;
		inlined += a > 1;
		if (i == 0) {
			/* the first CUs only */
			symbolizer__stats(lazy, &st);
			if (st.dwarf_lazy != 1 || !st.dwarf_info_read ||
			    st.dwarf_info_read * 2 > st.dwarf_info_size) {
				UNIT_FAIL("after one lookup near the start: %zu lazy, %" PRIu64
					  " of %" PRIu64 " bytes of .debug_info",
					  st.dwarf_lazy, st.dwarf_info_read, st.dwarf_info_size);
				goto cleanup;
			}
		}
	}
	symbolizer__stats(whole, &st);
	CHECK_INT(st.dwarf_lazy, 0);
	printf("# %zu addresses, %zu with inlined frames\n", compared, inlined);
	CHECK(inlined > 100);
cleanup:
	symbolizer__free(lazy);
	symbolizer__free(whole);
}

/*
 * libc's DWARF has no reference across CUs, so the lazy reader keeps only
 * the CUs looked up (dwlazy.h's compact layout): a lookup near the end of
 * the text keeps a small part of what it inflated, and lookups in any order
 * (back to a checkpoint, on from it) give the frames the whole reading gives.
 */
TEST(libc_lazy_dwarf_keeps_only_the_cus_used_in_any_order)
{
	struct symbolizer_opts lazy_o = {.inlines = true},
			       whole_o = {.inlines = true, .dwarf_whole = true};
	struct symbolizer *lazy = NULL, *whole = NULL;
	struct symbolizer_stats st;
	struct libc_info l;
	const char *why;
	uint64_t lo, hi, step;
	size_t n = 601; /* prime: i * 97 % n visits every i once, far apart */

	if (!libc_with_debug(&l, &why))
		SKIP("%s", why);
	if (!text_span(l.debug, &lo, &hi))
		SKIP("nm could not read %s (Debian: binutils)", l.debug);
	lazy = symbolizer__new(&lazy_o);
	whole = symbolizer__new(&whole_o);
	CHECK(lazy && whole);
	step = (hi - lo) / n;
	if (frames_agree(lazy, whole, &l, lo + step * (n - 1) + 7) < 0)
		goto cleanup;
	symbolizer__stats(lazy, &st);
	printf("# one lookup at the end: %" PRIu64 " of %" PRIu64 " bytes inflated, %" PRIu64
	       " kept\n",
	       st.dwarf_info_read, st.dwarf_info_size, st.dwarf_info_kept);
	if (st.dwarf_lazy != 1 || !st.dwarf_info_kept ||
	    st.dwarf_info_kept * 4 > st.dwarf_info_read) {
		UNIT_FAIL("after one lookup near the end: %zu lazy, %" PRIu64
			  " bytes of .debug_info "
			  "kept of %" PRIu64 " inflated",
			  st.dwarf_lazy, st.dwarf_info_kept, st.dwarf_info_read);
		goto cleanup;
	}
	for (size_t i = 0; i < n; i++)
		if (frames_agree(lazy, whole, &l, lo + step * (i * 97 % n) + 7) < 0)
			goto cleanup;
	symbolizer__stats(lazy, &st);
	printf("# %zu lookups out of order: %" PRIu64 " bytes kept\n", n, st.dwarf_info_kept);
	CHECK(st.dwarf_info_kept <= st.dwarf_info_size);
cleanup:
	symbolizer__free(lazy);
	symbolizer__free(whole);
}

int main(void)
{
	return unit_run();
}
