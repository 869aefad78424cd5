// SPDX-License-Identifier: GPL-2.0-only
/*
 * The symbolizer on real processes: this test program itself, forked children
 * (alive and exited), and tests/data/symbolize/fpdemo.c compiled at run time
 * with and without frame pointers, PIE and not, stripped, deleted.
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <gelf.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "symbolize/symbolize.h"
#include "unit.h"

#define FPDEMO_SRC "tests/data/symbolize/fpdemo.c"

/* ---- functions of this program to resolve ---- */

__attribute__((noinline, used)) int symtest_target(int x)
{
	return x * 7 + 1;
}

__attribute__((noinline, used)) int symtest_other(int x)
{
	return symtest_target(x) ^ 0x55;
}

/* A C++-mangled name without a C++ compiler: offcpu::test::target() */
void symtest_mangled(void) __asm__("_ZN6offcpu4test6targetEv");
__attribute__((noinline, used)) void symtest_mangled(void)
{
	__asm__ volatile("" ::: "memory");
}

/* Hand-written assembly often has no symbol size. */
__asm__(".text\n"
	".globl symtest_sizeless\n"
	".type symtest_sizeless, @function\n"
	"symtest_sizeless:\n"
	"\tnop\n"
	"\tnop\n"
	"\tret\n");
void symtest_sizeless(void);

static void *volatile symtest_captured;
static volatile int symtest_sink;

__attribute__((noinline)) void symtest_capture(void)
{
	symtest_captured = __builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

static inline __attribute__((always_inline)) void symtest_inlined(void)
{
	symtest_capture();
	symtest_sink++; /* keeps the call out of tail position */
}

__attribute__((noinline)) void symtest_inline_host(void)
{
	symtest_inlined();
	symtest_sink++;
}

/* ---- helpers ---- */

static const char *tmpdir(void)
{
	const char *t = getenv("TMPDIR");

	return t && *t ? t : "/tmp";
}

static uint64_t addr_of(const void *fn)
{
	return (uint64_t)(uintptr_t)fn;
}

/* Compile fpdemo.c with flags into $TMPDIR/name; the path goes to out. */
static int compile(const char *name, const char *flags, char *out, size_t len)
{
	char cmd[1024];

	snprintf(out, len, "%s/%s", tmpdir(), name);
	snprintf(cmd, sizeof(cmd), "cc -std=gnu11 %s -o '%s' %s 2>&1", flags, out, FPDEMO_SRC);
	return system(cmd) == 0 ? 0 : -1;
}

/* A child that sleeps until killed. */
static pid_t fork_sleeper(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		for (;;)
			pause();
	}
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/*
 * Run an fpdemo binary; it prints where fpdemo_target is at run time and in
 * the file, then waits. Returns the pid, or -1.
 */
static pid_t spawn_fpdemo(const char *path, uint64_t *runtime, uint64_t *vaddr)
{
	unsigned long rt = 0, va = 0;
	int fds[2];
	pid_t pid;
	FILE *f;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	if (!f || fscanf(f, "%lx %lx", &rt, &va) != 2) {
		if (f)
			fclose(f);
		else
			close(fds[0]);
		if (pid > 0)
			reap(pid);
		return -1;
	}
	fclose(f);
	*runtime = rt;
	*vaddr = va;
	return pid;
}

static int resolve1(struct symbolizer *s, int pid, uint64_t addr, char *name, size_t len)
{
	struct sym_frame f[8];
	int n = symbolizer__user(s, pid, addr, f, 8);

	if (n > 0)
		snprintf(name, len, "%s", f[n - 1].name);
	return n;
}

/* path among the binaries s lists: those with an address resolved (symbolize.h). */
static const struct sym_binary *find_binary(struct symbolizer *s, const char *path)
{
	size_t n;
	const struct sym_binary *b = symbolizer__binaries(s, &n);

	for (size_t i = 0; b && i < n; i++)
		if (!strcmp(b[i].path, path))
			return &b[i];
	return NULL;
}

/* ---- what looking for debug information loads ---- */

/*
 * First of all tests, before anything could have loaded it: elfutils'
 * standard search loads libdebuginfod (and libcurl, TLS) when it finds no
 * debug file, which a capture must not pay for without --debuginfod.
 */
TEST(no_debuginfod_library_without_debuginfod)
{
	struct symbolizer_opts o = {.inlines = true};
	char path[512], name[256];
	uint64_t rt, va;
	int status = -1;
	pid_t pid, child;

	if (dlopen("libdebuginfod.so.1", RTLD_LAZY | RTLD_NOLOAD))
		SKIP("libdebuginfod is loaded already");
	if (compile("nodbg", "-O2 -Wl,--build-id", path, sizeof(path)))
		SKIP("cannot compile %s", FPDEMO_SRC);
	pid = spawn_fpdemo(path, &rt, &va);
	CHECK(pid > 0);
	child = fork();
	if (child == 0) {
		struct symbolizer *s = symbolizer__new(&o);
		size_t n;

		if (!s || symbolizer__track(s, pid) || resolve1(s, pid, rt, name, sizeof(name)) < 1)
			_exit(2);
		symbolizer__binaries(s, &n);
		symbolizer__free(s);
		_exit(dlopen("libdebuginfod.so.1", RTLD_LAZY | RTLD_NOLOAD) ? 1 : 0);
	}
	waitpid(child, &status, 0);
	reap(pid);
	CHECK(WIFEXITED(status));
	CHECK_INT(WEXITSTATUS(status), 0);
}

/* A debug file found through .gnu_debuglink beside the binary gives its inline frames. */
TEST(user_finds_debug_file_by_debuglink)
{
	struct symbolizer_opts o = {.inlines = true};
	struct symbolizer *s;
	char path[512], dbg[600], cmd[4096], name[256];
	const struct sym_binary *b;
	uint64_t rt, va;
	pid_t pid;

	if (compile("linked", "-O2 -g -Wl,--build-id=none", path, sizeof(path)))
		SKIP("cannot compile %s", FPDEMO_SRC);
	snprintf(dbg, sizeof(dbg), "%s.debug", path);
	snprintf(cmd, sizeof(cmd),
		 "objcopy --only-keep-debug '%s' '%s' && objcopy --strip-debug "
		 "--add-gnu-debuglink='%s' '%s' 2>&1",
		 path, dbg, dbg, path);
	if (system(cmd))
		SKIP("objcopy could not split the debug information");
	s = symbolizer__new(&o);
	CHECK(s);
	pid = spawn_fpdemo(path, &rt, &va);
	CHECK(pid > 0);
	CHECK_INT(symbolizer__track(s, pid), 0);
	/* found through /proc/PID/root: while the process lives */
	CHECK(resolve1(s, pid, rt, name, sizeof(name)) >= 1);
	b = find_binary(s, path);
	reap(pid);
	unlink(dbg);
	CHECK(b);
	CHECK(b->has_debuginfo);
	symbolizer__free(s);
}

/* ---- live processes ---- */

TEST(user_resolves_functions_of_a_live_child)
{
	struct symbolizer *s = symbolizer__new(NULL);
	pid_t pid = fork_sleeper();
	char name[256];

	CHECK(s && pid > 0);
	CHECK_INT(symbolizer__track(s, pid), 0);
	/* a forked child has the parent's layout */
	CHECK_INT(resolve1(s, pid, addr_of(symtest_target), name, sizeof(name)), 1);
	CHECK_STR(name, "symtest_target");
	CHECK_INT(resolve1(s, pid, addr_of(symtest_target) + 3, name, sizeof(name)), 1);
	CHECK_STR(name, "symtest_target");
	CHECK_INT(resolve1(s, pid, addr_of(symtest_other), name, sizeof(name)), 1);
	CHECK_STR(name, "symtest_other");
	CHECK_INT(resolve1(s, pid, addr_of(symtest_sizeless) + 1, name, sizeof(name)), 1);
	CHECK_STR(name, "symtest_sizeless");
	/* a libc function, through the shared object's own load bias */
	CHECK_INT(resolve1(s, pid, addr_of(pause), name, sizeof(name)), 1);
	CHECK(strstr(name, "pause"));
	reap(pid);
	symbolizer__free(s);
}

TEST(user_resolves_after_the_process_exited)
{
	struct symbolizer *s = symbolizer__new(NULL);
	pid_t pid = fork_sleeper();
	struct stat st;
	char name[256], proc[64];

	CHECK(s && pid > 0);
	CHECK_INT(symbolizer__track(s, pid), 0);
	reap(pid);
	snprintf(proc, sizeof(proc), "/proc/%d", pid);
	CHECK(stat(proc, &st) != 0);
	/* nothing was looked up before the exit: the snapshot alone must do */
	CHECK_INT(resolve1(s, pid, addr_of(symtest_other) + 1, name, sizeof(name)), 1);
	CHECK_STR(name, "symtest_other");
	CHECK_INT(resolve1(s, pid, addr_of(symtest_target), name, sizeof(name)), 1);
	CHECK_STR(name, "symtest_target");
	symbolizer__free(s);
}

/*
 * Long runs: a process gone is forgotten at the second call that finds it
 * gone, then the binaries nobody maps are closed; a later process mapping
 * them has them opened again and resolves as before.
 */
TEST(forget_gone_frees_exited_processes_and_reopens_their_binaries)
{
	struct symbolizer *s = symbolizer__new(NULL);
	struct symbolizer_stats st;
	pid_t pid = fork_sleeper(), again;
	char name[256];

	CHECK(s && pid > 0);
	CHECK_INT(symbolizer__track(s, pid), 0);
	CHECK_INT(resolve1(s, pid, addr_of(symtest_target), name, sizeof(name)), 1);
	CHECK_INT(symbolizer__forget_gone(s), 0); /* alive: kept */
	reap(pid);
	CHECK_INT(symbolizer__forget_gone(s), 0); /* gone once: kept for late rows */
	CHECK_INT(resolve1(s, pid, addr_of(symtest_other), name, sizeof(name)), 1);
	CHECK_STR(name, "symtest_other");
	CHECK_INT(symbolizer__forget_gone(s), 1);
	symbolizer__stats(s, &st);
	CHECK(st.binaries_closed >= 2); /* this test program and libc at least */
	again = fork_sleeper();
	CHECK(again > 0);
	CHECK_INT(symbolizer__track(s, again), 0);
	CHECK_INT(resolve1(s, again, addr_of(symtest_target), name, sizeof(name)), 1);
	CHECK_STR(name, "symtest_target");
	CHECK_INT(resolve1(s, again, addr_of(pause), name, sizeof(name)), 1);
	CHECK(strstr(name, "pause"));
	reap(again);
	symbolizer__free(s);
}

TEST(user_tracks_an_unknown_pid_at_its_first_lookup)
{
	struct symbolizer *s = symbolizer__new(NULL);
	struct symbolizer_stats st;
	char name[256];

	CHECK(s);
	CHECK_INT(resolve1(s, getpid(), addr_of(symtest_target), name, sizeof(name)), 1);
	CHECK_STR(name, "symtest_target");
	symbolizer__stats(s, &st);
	CHECK_INT(st.processes, 1);
	CHECK(st.binaries >= 2); /* this program and libc at least */
	/* tracking again changes nothing */
	CHECK_INT(symbolizer__track(s, getpid()), 0);
	symbolizer__stats(s, &st);
	CHECK_INT(st.processes, 1);
	symbolizer__free(s);
}

TEST(user_gone_untracked_pid_resolves_to_hex)
{
	struct symbolizer *s = symbolizer__new(NULL);
	pid_t pid = fork_sleeper();
	char name[256];

	CHECK(s && pid > 0);
	reap(pid);
	CHECK_INT(symbolizer__track(s, pid), -ESRCH);
	CHECK_INT(resolve1(s, pid, 0x401000, name, sizeof(name)), 1);
	CHECK_STR(name, "0x401000");
	symbolizer__free(s);
}

TEST(user_repeated_lookups_come_from_the_cache)
{
	struct symbolizer *s = symbolizer__new(NULL);
	struct symbolizer_stats st;
	struct sym_frame f[4];
	struct timespec t0, t1;
	uint64_t a = addr_of(symtest_other);

	CHECK(s);
	CHECK_INT(symbolizer__track(s, getpid()), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < 100000; i++) {
		int n = symbolizer__user(s, getpid(), a + (i & 7), f, 4);

		CHECK_INT(n, 1);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK_STR(f[0].name, "symtest_other");
	symbolizer__stats(s, &st);
	CHECK_U64(st.user_lookups, 100000);
	CHECK_U64(st.user_cache_hits, 100000 - 8);
	fprintf(stderr, "cached lookup: %.0f ns\n",
		((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / 100000);
	symbolizer__free(s);
}

TEST(user_finds_libraries_loaded_after_tracking)
{
	struct symbolizer *s = symbolizer__new(NULL);
	char lib[512], cmd[1024], name[256];
	int (*fn)(int);
	void *h;

	CHECK(s);
	snprintf(lib, sizeof(lib), "%s/libdlib-test.so", tmpdir());
	snprintf(cmd, sizeof(cmd), "cc -O2 -shared -fPIC -o '%s' tests/data/symbolize/dlib.c", lib);
	if (system(cmd)) {
		symbolizer__free(s);
		SKIP("cannot compile tests/data/symbolize/dlib.c");
	}
	CHECK_INT(symbolizer__track(s, getpid()), 0);
	h = dlopen(lib, RTLD_NOW);
	CHECK(h);
	fn = (int (*)(int))dlsym(h, "dlib_function");
	CHECK(fn);
	/* maps are re-read on a miss at most every 100 ms */
	usleep(150 * 1000);
	CHECK_INT(resolve1(s, getpid(), addr_of(fn) + 1, name, sizeof(name)), 1);
	CHECK_STR(name, "dlib_function");
	dlclose(h);
	symbolizer__free(s);
}

TEST(track_raises_the_open_file_limit_when_needed)
{
	int status = -1;
	pid_t pid = fork();

	if (pid == 0) {
		struct symbolizer *s;
		struct rlimit rl;
		char name[256];
		int next = dup(0);

		/* one descriptor left: enough for this program, not for its libraries */
		close(next);
		if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_max < (rlim_t)next + 64)
			_exit(3);
		rl.rlim_cur = next + 1;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			_exit(3);
		s = symbolizer__new(NULL);
		if (!s || resolve1(s, getpid(), addr_of(pause), name, sizeof(name)) != 1)
			_exit(1);
		_exit(strstr(name, "pause") ? 0 : 2);
	}
	CHECK(pid > 0);
	CHECK_INT(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	if (WEXITSTATUS(status) == 3)
		SKIP("the hard limit on open files leaves no room to raise");
	CHECK_INT(WEXITSTATUS(status), 0);
}

TEST(user_addresses_outside_any_file_are_hex)
{
	struct symbolizer *s = symbolizer__new(NULL);
	struct sym_frame f[2];
	char name[256];

	CHECK(s);
	CHECK_INT(resolve1(s, getpid(), 0x10, name, sizeof(name)), 1);
	CHECK_STR(name, "0x10");
	/* the stack is no file */
	CHECK_INT(resolve1(s, getpid(), addr_of(&f), name, sizeof(name)), 1);
	CHECK(!strncmp(name, "0x", 2));
	CHECK_INT(symbolizer__user(s, getpid(), 0x10, f, 0), -EINVAL);
	symbolizer__free(s);
}

TEST(user_demangles_cxx_names_unless_told_not_to)
{
	struct symbolizer_opts o = {.no_demangle = true};
	struct symbolizer *s = symbolizer__new(NULL), *raw = symbolizer__new(&o);
	char name[256];

	CHECK(s && raw);
	CHECK_INT(resolve1(raw, getpid(), addr_of(symtest_mangled), name, sizeof(name)), 1);
	CHECK_STR(name, "_ZN6offcpu4test6targetEv");
	CHECK_INT(resolve1(s, getpid(), addr_of(symtest_mangled), name, sizeof(name)), 1);
	symbolizer__free(s);
	symbolizer__free(raw);
	if (!strcmp(name, "_ZN6offcpu4test6targetEv"))
		SKIP("no C++ demangler on this system");
	CHECK_STR(name, "offcpu::test::target()");
}

TEST(user_expands_inlined_functions)
{
	struct symbolizer_opts o = {.inlines = true};
	struct symbolizer *s = symbolizer__new(&o), *flat = symbolizer__new(NULL);
	struct sym_frame f[8];
	uint64_t ra;
	int n;

	CHECK(s && flat);
	symtest_inline_host();
	/* the call site, inside the inlined body */
	ra = addr_of(symtest_captured) - 1;
	n = symbolizer__user(flat, getpid(), ra, f, 8);
	CHECK_INT(n, 1);
	CHECK_STR(f[0].name, "symtest_inline_host");
	CHECK(!f[0].is_inline);
	n = symbolizer__user(s, getpid(), ra, f, 8);
	symbolizer__free(s);
	symbolizer__free(flat);
	if (n == 1)
		SKIP("no DWARF in this test program (built without -g?)");
	CHECK_INT(n, 2);
	CHECK_STR(f[0].name, "symtest_inline_host");
	CHECK(!f[0].is_inline);
	CHECK_STR(f[1].name, "symtest_inlined");
	CHECK(f[1].is_inline);
}

/* The vdso exists only in memory; find __vdso_clock_gettime in our own copy. */
static uint64_t vdso_clock_gettime(void)
{
	uintptr_t base = getauxval(AT_SYSINFO_EHDR);
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;
	uint64_t found = 0, first_vaddr = 0;
	Elf_Scn *scn = NULL;
	size_t size, phnum;
	Elf *elf;

	if (!base || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return 0;
	size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	elf_version(EV_CURRENT);
	elf = elf_memory((char *)base, size);
	if (!elf)
		return 0;
	elf_getphdrnum(elf, &phnum);
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD) {
			first_vaddr = ph.p_vaddr;
			break;
		}
	}
	while (!found && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *nm;

			if (!gelf_getsym(d, i, &sym))
				continue;
			nm = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (nm && !strcmp(nm, "__vdso_clock_gettime")) {
				found = base + (sym.st_value - first_vaddr);
				break;
			}
		}
	}
	elf_end(elf);
	return found;
}

TEST(user_resolves_the_vdso)
{
	struct symbolizer *s = symbolizer__new(NULL);
	uint64_t at = vdso_clock_gettime();
	char name[256];

	CHECK(s);
	if (!at) {
		symbolizer__free(s);
		SKIP("no vdso with __vdso_clock_gettime here");
	}
	CHECK_INT(resolve1(s, getpid(), at + 1, name, sizeof(name)), 1);
	CHECK(strstr(name, "clock_gettime"));
	/* the vdso is no binary the user could rebuild */
	CHECK(!find_binary(s, "[vdso]"));
	symbolizer__free(s);
}

/* ---- JIT maps, through a made-up /proc ---- */

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

/*
 * A made-up /proc under tmpdir()/NAME (into root) whose process pid has the
 * mappings of tests/data/symbolize/maps.txt; its maps file's path into maps.
 */
static int fake_proc(char *root, size_t rootlen, const char *name, int pid, char *maps,
		     size_t mapslen)
{
	char *text = unit_slurp("tests/data/symbolize/maps.txt");
	int err;

	if (!text)
		return -1;
	snprintf(root, rootlen, "%s/%s", tmpdir(), name);
	snprintf(maps, mapslen, "%s/%d", root, pid);
	mkdir(root, 0755);
	mkdir(maps, 0755);
	snprintf(maps, mapslen, "%s/%d/maps", root, pid);
	err = write_file(maps, text);
	free(text);
	return err;
}

TEST(user_resolves_jit_code_from_the_perf_map)
{
	char root[512], path[700], name[256];
	struct symbolizer_opts o = {.proc_root = root, .perf_map_dir = "tests/data/symbolize"};
	struct symbolizer *s;

	CHECK_INT(fake_proc(root, sizeof(root), "fakeproc", 4242, path, sizeof(path)), 0);
	s = symbolizer__new(&o);
	CHECK(s);
	CHECK_INT(symbolizer__track(s, 4242), 0);
	/* the anonymous rwx mapping is JIT code */
	CHECK_INT(resolve1(s, 4242, 0x7f1e30400010, name, sizeof(name)), 1);
	CHECK_STR(name, "LazyCompile:*handleRequest /srv/app/server.js:42");
	CHECK_INT(resolve1(s, 4242, 0x7f1e30400485, name, sizeof(name)), 1);
	CHECK_STR(name, "inner_newer");
	/* files that cannot be opened still name their frames, in ELF terms */
	CHECK_INT(resolve1(s, 4242, 0x55d0c8a02010, name, sizeof(name)), 1);
	CHECK_STR(name, "[sleep+0x2010]");
	CHECK_INT(resolve1(s, 4242, 0x7f1e31c00100, name, sizeof(name)), 1);
	CHECK_STR(name, "[tool+0x100]");
	/* and JIT code may sit in a file mapping that is no ELF */
	CHECK_INT(resolve1(s, 4242, 0x7f1e31c00210, name, sizeof(name)), 1);
	CHECK_STR(name, "jit_in_memfd");
	CHECK_INT(resolve1(s, 4242, 0x7f1e30500000, name, sizeof(name)), 1);
	CHECK_STR(name, "0x7f1e30500000");
	symbolizer__free(s);
}

/* A process on its way out shows an empty maps file: what was read before is kept. */
TEST(user_maps_survive_the_exit_of_their_process)
{
	char root[512], path[700], name[256];
	struct symbolizer_opts o = {.proc_root = root};
	struct symbolizer *s;

	CHECK_INT(fake_proc(root, sizeof(root), "exitproc", 4244, path, sizeof(path)), 0);
	s = symbolizer__new(&o);
	CHECK(s);
	CHECK_INT(symbolizer__track(s, 4244), 0);
	CHECK_INT(write_file(path, ""), 0);
	CHECK_INT(symbolizer__track(s, 4244), -ESRCH);
	CHECK_INT(resolve1(s, 4244, 0x55d0c8a02010, name, sizeof(name)), 1);
	CHECK_STR(name, "[sleep+0x2010]");
	symbolizer__free(s);
}

TEST(user_jit_map_outlives_its_process)
{
	char root[512], name[256];
	struct symbolizer_opts o = {.proc_root = root, .perf_map_dir = "tests/data/symbolize"};
	struct symbolizer *s;

	/* no /proc entry at all: the process is long gone, its map stays in /tmp */
	snprintf(root, sizeof(root), "%s/emptyproc", tmpdir());
	mkdir(root, 0755);
	s = symbolizer__new(&o);
	CHECK(s);
	CHECK_INT(resolve1(s, 4242, 0x7f1e30400230, name, sizeof(name)), 1);
	CHECK_STR(name, "stub_old");
	symbolizer__free(s);
}

TEST(user_finds_the_jit_map_of_a_container)
{
	char root[512], path[700], name[256];
	struct symbolizer_opts o = {.proc_root = root};
	struct symbolizer *s;

	/* inside its pid namespace the process is pid 7 and writes its own /tmp */
	snprintf(root, sizeof(root), "%s/ctrproc", tmpdir());
	snprintf(path, sizeof(path), "mkdir -p '%s/4343/root/tmp'", root);
	CHECK_INT(system(path), 0);
	snprintf(path, sizeof(path), "%s/4343/status", root);
	CHECK_INT(write_file(path, "Name:\tnode\nPid:\t4343\nNSpid:\t4343\t7\n"), 0);
	snprintf(path, sizeof(path), "%s/4343/root/tmp/perf-7.map", root);
	CHECK_INT(write_file(path, "7f0000001000 100 LazyCompile:*inContainer app.js:1\n"), 0);
	s = symbolizer__new(&o);
	CHECK(s);
	CHECK_INT(resolve1(s, 4343, 0x7f0000001080, name, sizeof(name)), 1);
	CHECK_STR(name, "LazyCompile:*inContainer app.js:1");
	symbolizer__free(s);
}

/* ---- compiled programs: layouts, stripped, deleted ---- */

/* An fpdemo built with flags resolves fpdemo_target, or "[FILE+0xVADDR]" when stripped. */
static void check_fpdemo(const char *name, const char *flags, bool stripped)
{
	struct symbolizer *s = symbolizer__new(NULL);
	char path[512], want[128], got[128];
	uint64_t rt, va;
	pid_t pid;

	CHECK(s);
	if (compile(name, flags, path, sizeof(path))) {
		symbolizer__free(s);
		SKIP("cannot compile %s with cc %s", FPDEMO_SRC, flags);
	}
	pid = spawn_fpdemo(path, &rt, &va);
	CHECK(pid > 0);
	CHECK_INT(symbolizer__track(s, pid), 0);
	reap(pid);
	CHECK_INT(resolve1(s, pid, rt + 2, got, sizeof(got)), 1);
	if (stripped)
		snprintf(want, sizeof(want), "[%s+0x%llx]", name, (unsigned long long)va + 2);
	else
		snprintf(want, sizeof(want), "fpdemo_target");
	CHECK_STR(got, want);
	symbolizer__free(s);
}

TEST(user_resolves_a_pie_executable)
{
	check_fpdemo("fpdemo-pie", "-O2 -pie -fPIE", false);
}

TEST(user_resolves_a_non_pie_executable)
{
	check_fpdemo("fpdemo-nopie", "-O2 -no-pie -fno-PIE", false);
}

TEST(user_stripped_binary_gives_module_and_offset)
{
	check_fpdemo("fpdemo-stripped", "-O2 -s", true);
}

TEST(user_resolves_a_deleted_binary)
{
	struct symbolizer *s = symbolizer__new(NULL);
	char path[512], got[256], maps[64], *text;
	uint64_t rt, va;
	pid_t pid;

	CHECK(s);
	if (compile("fpdemo-deleted", "-O2", path, sizeof(path))) {
		symbolizer__free(s);
		SKIP("cannot compile %s", FPDEMO_SRC);
	}
	pid = spawn_fpdemo(path, &rt, &va);
	CHECK(pid > 0);
	/* replaced under the same name, as a package upgrade does */
	CHECK_INT(unlink(path), 0);
	CHECK_INT(write_file(path, "not an ELF file\n"), 0);
	snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
	text = unit_slurp(maps);
	CHECK(text);
	CHECK(strstr(text, "fpdemo-deleted (deleted)"));
	free(text);
	CHECK_INT(symbolizer__track(s, pid), 0);
	reap(pid);
	CHECK_INT(resolve1(s, pid, rt, got, sizeof(got)), 1);
	CHECK_STR(got, "fpdemo_target");
	symbolizer__free(s);
}

TEST(user_track_again_after_exec_picks_up_the_new_image)
{
	struct symbolizer *s = symbolizer__new(NULL);
	char path[512], got[256], go = 'x';
	unsigned long rt = 0, va = 0;
	int gate[2], out[2];
	pid_t pid;
	FILE *f;

	CHECK(s);
	if (compile("fpdemo-exec", "-O2", path, sizeof(path))) {
		symbolizer__free(s);
		SKIP("cannot compile %s", FPDEMO_SRC);
	}
	CHECK(!pipe(gate) && !pipe(out));
	pid = fork();
	if (pid == 0) {
		/* first this test program, then, on a byte from the parent, fpdemo */
		if (read(gate[0], &go, 1) != 1)
			_exit(1);
		dup2(out[1], 1);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	close(gate[0]);
	close(out[1]);
	CHECK(pid > 0);
	CHECK_INT(symbolizer__track(s, pid), 0);
	CHECK_INT(resolve1(s, pid, addr_of(symtest_target), got, sizeof(got)), 1);
	CHECK_STR(got, "symtest_target");
	CHECK_INT(write(gate[1], &go, 1), 1);
	f = fdopen(out[0], "r");
	CHECK(f && fscanf(f, "%lx %lx", &rt, &va) == 2);
	fclose(f);
	close(gate[1]);
	CHECK_INT(symbolizer__track(s, pid), 0);
	reap(pid);
	CHECK_INT(resolve1(s, pid, rt, got, sizeof(got)), 1);
	CHECK_STR(got, "fpdemo_target");
	symbolizer__free(s);
}

/*
 * A child that runs this test program until the parent writes a byte to
 * *gate, then execs fpdemo at path, which prints to *out where its
 * fpdemo_target is (runtime, then file address). -1 on failure.
 */
static pid_t exec_child(const char *path, int *gate, FILE **out)
{
	int g[2], o[2];
	char go;
	pid_t pid;

	if (pipe(g) || pipe(o))
		return -1;
	pid = fork();
	if (pid == 0) {
		/* fpdemo waits to be killed: not past this test program, whatever fails */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (read(g[0], &go, 1) != 1)
			_exit(1);
		dup2(o[1], 1);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	close(g[0]);
	close(o[1]);
	*gate = g[1];
	*out = fdopen(o[0], "r");
	return pid;
}

static int resolve1_at(struct symbolizer *s, int pid, uint64_t seq, uint64_t addr, char *name,
		       size_t len)
{
	struct sym_frame f[8];
	int n = symbolizer__user_at(s, pid, seq, addr, f, 8);

	if (n > 0)
		snprintf(name, len, "%s", f[n - 1].name);
	return n;
}

/* A child from exec_child() that became fpdemo, and its notice given at seq 10. */
struct exec_case {
	struct symbolizer *s;
	pid_t pid;
	int gate;
	FILE *out;
	unsigned long rt; /* fpdemo_target in the new image */
};

/*
 * Run the case: its mappings read before the exec, or only once it is done
 * (read_before false), then symbolizer__exec() at seq 10 with the time the
 * child was let go and ppid as its parent (0: unknown). 0, -1 on failure, or
 * -2 when fpdemo cannot be compiled.
 */
static int exec_case_run(struct exec_case *c, const char *name, bool read_before, int ppid)
{
	char path[512], go = 'x';
	struct timespec at;
	unsigned long va;

	*c = (struct exec_case){.pid = -1, .gate = -1};
	if (compile(name, "-O2", path, sizeof(path)))
		return -2;
	c->s = symbolizer__new(NULL);
	c->pid = c->s ? exec_child(path, &c->gate, &c->out) : -1;
	if (c->pid <= 0 || !c->out || (read_before && symbolizer__track(c->s, c->pid)) ||
	    write(c->gate, &go, 1) != 1)
		return -1;
	/* No later than the exec: mappings read before it are the old image's. */
	clock_gettime(CLOCK_MONOTONIC, &at);
	if (fscanf(c->out, "%lx %lx", &c->rt, &va) != 2 ||
	    (!read_before && symbolizer__track(c->s, c->pid)))
		return -1;
	return symbolizer__exec(c->s, c->pid, 10, at.tv_sec * 1000000000ULL + at.tv_nsec, ppid);
}

static void exec_case_end(struct exec_case *c)
{
	if (c->pid > 0)
		reap(c->pid);
	if (c->out)
		fclose(c->out);
	if (c->gate >= 0)
		close(c->gate);
	symbolizer__free(c->s);
}

/*
 * A process that execs: the stacks seen before the exec's notice (seq 10)
 * are named with the image it had (this test program, read before), the
 * ones after with the new one (fpdemo), whichever is asked for first, and
 * after the process is gone.
 */
TEST(exec_keeps_the_old_image_for_what_came_before)
{
	struct exec_case c;
	char got[256];
	int err = exec_case_run(&c, "fpdemo-exec2", true, getpid());
	pid_t pid = c.pid;

	if (err == -2)
		SKIP("cannot compile %s", FPDEMO_SRC);
	/* the new image's first stack has its mappings read (the collector's track request) */
	if (!err)
		err = symbolizer__track(c.s, pid);
	if (pid > 0)
		reap(pid);
	c.pid = -1;
	if (err)
		UNIT_FAIL("the exec case did not run");
	else if (resolve1_at(c.s, pid, 20, c.rt, got, sizeof(got)) != 1 ||
		 strcmp(got, "fpdemo_target"))
		UNIT_FAIL("after the exec: %s", got);
	else if (resolve1_at(c.s, pid, 5, addr_of(symtest_target), got, sizeof(got)) != 1 ||
		 strcmp(got, "symtest_target"))
		UNIT_FAIL("before the exec: %s", got);
	else if (resolve1(c.s, pid, c.rt, got, sizeof(got)) != 1 || strcmp(got, "fpdemo_target"))
		UNIT_FAIL("now: %s", got);
	else if (!symbolizer__binary_name_at(c.s, pid, 20, c.rt) ||
		 strcmp(symbolizer__binary_name_at(c.s, pid, 20, c.rt), "fpdemo-exec2"))
		UNIT_FAIL("the binary after the exec is not fpdemo-exec2");
	else if (symbolizer__binary_name_at(c.s, pid, 5, c.rt) &&
		 !strcmp(symbolizer__binary_name_at(c.s, pid, 5, c.rt), "fpdemo-exec2"))
		UNIT_FAIL("the binary before the exec is fpdemo-exec2");
	exec_case_end(&c);
}

/*
 * A long run's pass over the processes (symbolizer__forget_gone()) closes
 * the binaries no process maps; an image before an exec still counts.
 */
TEST(exec_old_image_keeps_its_binaries_open_over_a_forget_pass)
{
	struct exec_case c;
	char got[256] = "";
	int err = exec_case_run(&c, "fpdemo-exec4", true, 0);

	if (err == -2)
		SKIP("cannot compile %s", FPDEMO_SRC);
	if (err)
		UNIT_FAIL("the exec case did not run");
	else if (symbolizer__forget_gone(c.s) < 0)
		UNIT_FAIL("symbolizer__forget_gone() failed");
	else if (resolve1_at(c.s, c.pid, 5, addr_of(symtest_target), got, sizeof(got)) != 1 ||
		 strcmp(got, "symtest_target"))
		UNIT_FAIL("before the exec, after a forget pass: %s", got);
	exec_case_end(&c);
}

/*
 * The mappings were read once the exec had happened but before its notice
 * came (a stack's request handled late): they are the new image's, and
 * never name what came before; that is left as an address.
 */
TEST(exec_never_names_the_old_image_with_the_new_ones_mappings)
{
	struct exec_case c;
	char got[256] = "";
	int err = exec_case_run(&c, "fpdemo-exec3", false, 0);

	if (err == -2)
		SKIP("cannot compile %s", FPDEMO_SRC);
	if (err)
		UNIT_FAIL("the exec case did not run");
	else if (resolve1_at(c.s, c.pid, 5, c.rt, got, sizeof(got)) != 1 || strncmp(got, "0x", 2))
		UNIT_FAIL("before the exec: %s", got);
	else if (symbolizer__binary_name_at(c.s, c.pid, 5, c.rt))
		UNIT_FAIL("a binary before the exec");
	else if (resolve1_at(c.s, c.pid, 20, c.rt, got, sizeof(got)) != 1 ||
		 strcmp(got, "fpdemo_target"))
		UNIT_FAIL("after the exec: %s", got);
	exec_case_end(&c);
}

/*
 * The same, with the parent known: a forked child whose own mappings were
 * never read before its exec ran in a copy of its parent's (this test
 * program), which name what came before; the new image's still name what
 * came after.
 */
TEST(exec_names_a_forked_childs_old_image_with_its_parents_mappings)
{
	struct exec_case c;
	char got[256] = "";
	int err = exec_case_run(&c, "fpdemo-exec5", false, getpid());

	if (err == -2)
		SKIP("cannot compile %s", FPDEMO_SRC);
	if (err)
		UNIT_FAIL("the exec case did not run");
	else if (resolve1_at(c.s, c.pid, 5, addr_of(symtest_target), got, sizeof(got)) != 1 ||
		 strcmp(got, "symtest_target"))
		UNIT_FAIL("before the exec: %s", got);
	else if (resolve1_at(c.s, c.pid, 20, c.rt, got, sizeof(got)) != 1 ||
		 strcmp(got, "fpdemo_target"))
		UNIT_FAIL("after the exec: %s", got);
	exec_case_end(&c);
}

/* ---- frame pointers ---- */

/* Compile fpdemo with flags, optionally strip all but DWARF, and ask for the verdict. */
static void check_fp(const char *name, const char *flags, bool dwarf_only, enum fp_verdict want)
{
	char path[512], cmd[1024];
	enum fp_verdict v;

	if (compile(name, flags, path, sizeof(path)))
		SKIP("cannot compile %s with cc %s", FPDEMO_SRC, flags);
	if (dwarf_only) {
		snprintf(
			cmd, sizeof(cmd),
			"strip --strip-all --keep-section=.debug_info --keep-section=.debug_abbrev "
			"--keep-section=.debug_str --keep-section=.debug_line '%s'",
			path);
		if (system(cmd))
			SKIP("strip cannot keep only DWARF here");
	}
	CHECK_INT(sym_binary__frame_pointers(path, &v), 0);
	CHECK_INT(v, want);
}

/* the unwind tables decide */
TEST(fp_present_with_no_omit_frame_pointer)
{
	check_fp("fp-yes", "-O2 -fno-omit-frame-pointer", false, FP_PRESENT);
}

TEST(fp_absent_with_omit_frame_pointer)
{
	check_fp("fp-no", "-O2 -fomit-frame-pointer", false, FP_ABSENT);
}

/* without unwind tables, the code of the functions decides */
#define NO_UNWIND "-fno-asynchronous-unwind-tables -fno-unwind-tables"

TEST(fp_present_from_prologues_without_unwind_tables)
{
	check_fp("fp-yes-nocfi", "-O2 -fno-omit-frame-pointer " NO_UNWIND, false, FP_PRESENT);
}

TEST(fp_absent_from_prologues_without_unwind_tables)
{
	check_fp("fp-no-nocfi", "-O2 -fomit-frame-pointer " NO_UNWIND, false, FP_ABSENT);
}

/* with neither unwind tables nor symbols, the compiler's recorded flags decide */
TEST(fp_present_from_dwarf_producer)
{
	check_fp("fp-yes-dwarf", "-O2 -g -fno-omit-frame-pointer " NO_UNWIND, true, FP_PRESENT);
}

TEST(fp_absent_from_dwarf_producer)
{
	check_fp("fp-no-dwarf", "-O2 -g -fomit-frame-pointer " NO_UNWIND, true, FP_ABSENT);
}

/* Go always keeps frame pointers, whatever its unwind tables say */
TEST(fp_present_in_go_programs)
{
	check_fp("fp-go", "-O2 -fomit-frame-pointer -DFPDEMO_GO", false, FP_PRESENT);
}

TEST(fp_unknown_without_any_witness)
{
	check_fp("fp-none", "-O2 -fno-omit-frame-pointer -s " NO_UNWIND, false, FP_UNKNOWN);
}

TEST(fp_of_a_missing_file_is_an_error)
{
	enum fp_verdict v = FP_PRESENT;

	CHECK_INT(sym_binary__frame_pointers("/nonexistent/binary", &v), -ENOENT);
	CHECK_INT(v, FP_UNKNOWN);
}

TEST(binaries_report_frame_pointers_of_tracked_programs)
{
	struct symbolizer *s = symbolizer__new(NULL);
	char yes[512], no[512], name[256];
	const struct sym_binary *b;
	uint64_t rt1, rt2, va;
	pid_t p1, p2;

	CHECK(s);
	if (compile("bin-fp", "-O2 -g -fno-omit-frame-pointer", yes, sizeof(yes)) ||
	    compile("bin-nofp", "-O2 -s -fomit-frame-pointer", no, sizeof(no))) {
		symbolizer__free(s);
		SKIP("cannot compile %s", FPDEMO_SRC);
	}
	p1 = spawn_fpdemo(yes, &rt1, &va);
	p2 = spawn_fpdemo(no, &rt2, &va);
	CHECK(p1 > 0 && p2 > 0);
	CHECK_INT(symbolizer__track(s, p1), 0);
	CHECK_INT(symbolizer__track(s, p2), 0);
	/* a binary is listed once an address in it was resolved */
	CHECK(!find_binary(s, yes));
	CHECK(resolve1(s, p1, rt1, name, sizeof(name)) >= 1);
	CHECK(resolve1(s, p2, rt2, name, sizeof(name)) >= 1);
	reap(p1);
	reap(p2);
	b = find_binary(s, yes);
	CHECK(b);
	CHECK_INT(b->frame_pointers, FP_PRESENT);
	CHECK(b->has_symbols && b->has_debuginfo);
	b = find_binary(s, no);
	CHECK(b);
	CHECK_INT(b->frame_pointers, FP_ABSENT);
	CHECK(!b->has_debuginfo);
	symbolizer__free(s);
}

/* The summary's debuginfo fact comes from section headers; DWARF is read for inline frames only. */
TEST(binaries_say_debuginfo_without_reading_dwarf)
{
	struct symbolizer_opts o = {.inlines = true};
	struct symbolizer *s = symbolizer__new(NULL);
	struct symbolizer_stats st;
	const struct sym_binary *b;
	char path[512], name[256];
	uint64_t rt, va;
	pid_t pid;

	CHECK(s);
	if (compile("bin-gz", "-O2 -g -gz", path, sizeof(path))) {
		symbolizer__free(s);
		SKIP("cannot compile %s", FPDEMO_SRC);
	}
	pid = spawn_fpdemo(path, &rt, &va);
	CHECK(pid > 0);
	CHECK_INT(symbolizer__track(s, pid), 0);
	/* without inline frames: the binary is listed after a lookup that needs no DWARF */
	CHECK(resolve1(s, pid, rt, name, sizeof(name)) >= 1);
	b = find_binary(s, path);
	CHECK(b && b->has_debuginfo && b->has_symbols);
	symbolizer__stats(s, &st);
	CHECK_INT(st.dwarf_reads, 0);
	symbolizer__free(s);
	s = symbolizer__new(&o);
	CHECK(s);
	CHECK_INT(symbolizer__track(s, pid), 0);
	CHECK(resolve1(s, pid, rt, name, sizeof(name)) >= 1);
	reap(pid);
	CHECK_STR(name, "fpdemo_target");
	symbolizer__stats(s, &st);
	CHECK_INT(st.dwarf_reads, 1);
	symbolizer__free(s);
}

/* ---- debuginfod ---- */

/* A debuginfod stand-in that counts connections and hangs up at once. */
struct counting_server {
	int fd;
	int connections;
	pthread_t thread;
};

static void *count_connections(void *arg)
{
	struct counting_server *srv = arg;
	int c;

	while ((c = accept(srv->fd, NULL, NULL)) >= 0) {
		__atomic_add_fetch(&srv->connections, 1, __ATOMIC_SEQ_CST);
		close(c);
	}
	return NULL;
}

static int server_start(struct counting_server *srv, char *url, size_t len)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sa);

	srv->connections = 0;
	srv->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (srv->fd < 0 || bind(srv->fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(srv->fd, 16) || getsockname(srv->fd, (struct sockaddr *)&sa, &sl) ||
	    pthread_create(&srv->thread, NULL, count_connections, srv)) {
		if (srv->fd >= 0)
			close(srv->fd);
		return -1;
	}
	snprintf(url, len, "http://127.0.0.1:%d", ntohs(sa.sin_port));
	return 0;
}

static int server_stop(struct counting_server *srv)
{
	shutdown(srv->fd, SHUT_RDWR); /* wakes accept() */
	pthread_join(srv->thread, NULL);
	close(srv->fd);
	return srv->connections;
}

/* Track an fpdemo without debuginfo while DEBUGINFOD_URLS points at a counting server. */
static void track_with_debuginfod_server(bool allow, int *connections)
{
	struct symbolizer_opts o = {.debuginfod = allow};
	struct symbolizer *s = symbolizer__new(&o);
	char path[512], url[64], cache[512];
	struct counting_server srv;
	struct timespec now;
	uint64_t rt, va;
	pid_t pid;

	CHECK(s);
	if (compile(allow ? "dbgd-yes" : "dbgd-no", "-O2 -Wl,--build-id", path, sizeof(path))) {
		symbolizer__free(s);
		SKIP("cannot compile %s", FPDEMO_SRC);
	}
	CHECK_INT(server_start(&srv, url, sizeof(url)), 0);
	/* a fresh cache: a cached failure would keep the client from asking again */
	clock_gettime(CLOCK_REALTIME, &now);
	snprintf(cache, sizeof(cache), "%s/debuginfod-cache-%d-%ld%09ld", tmpdir(), (int)getpid(),
		 (long)now.tv_sec, now.tv_nsec);
	setenv("DEBUGINFOD_URLS", url, 1);
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	pid = spawn_fpdemo(path, &rt, &va);
	if (pid > 0) {
		size_t n;

		char name[256];

		symbolizer__track(s, pid);
		/* Debug information is looked for at its first need: a lookup. */
		resolve1(s, pid, rt, name, sizeof(name));
		reap(pid);
		symbolizer__binaries(s, &n);
	}
	unsetenv("DEBUGINFOD_URLS");
	*connections = server_stop(&srv);
	symbolizer__free(s);
	CHECK(pid > 0);
}

TEST(debuginfod_is_not_asked_by_default)
{
	int connections = -1;

	track_with_debuginfod_server(false, &connections);
	CHECK_INT(connections, 0);
}

TEST(debuginfod_is_asked_when_allowed)
{
	void *h = dlopen("libdebuginfod.so.1", RTLD_LAZY);
	int connections = 0;

	if (!h)
		SKIP("no libdebuginfod.so.1: elfutils cannot ask servers here");
	dlclose(h);
	track_with_debuginfod_server(true, &connections);
	CHECK(connections > 0);
}

int main(void)
{
	return unit_run();
}
