// SPDX-License-Identifier: GPL-2.0-only
/*
 * The unwinder's tables over a long run (collect/unwind.h): a binary no
 * process maps any more gives its rows back to binaries seen later, and the
 * rows the kernel then holds are the tables the files give.
 *
 * The maps are created here as the collector's are (cfi_files, umaps), with
 * no program: root only. The processes are copies of /bin/sleep, each a new
 * file (its own inode, so its own table).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpf/offcpu.h"
#include "collect/cfi.h"
#include "collect/unwind.h"
#include "symbolize/procmaps.h"
#include "unit.h"

struct maps {
	int umaps, files;
};

static int maps_make(struct maps *m)
{
	LIBBPF_OPTS(bpf_map_create_opts, inner_o, .map_flags = BPF_F_INNER_MAP | BPF_F_MMAPABLE);
	LIBBPF_OPTS(bpf_map_create_opts, outer_o);
	LIBBPF_OPTS(bpf_map_create_opts, hash_o, .map_flags = BPF_F_NO_PREALLOC);
	int inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_rows", sizeof(uint32_t),
				   sizeof(struct offcpu_cfi_row), 1, &inner_o);

	if (inner < 0)
		return -errno;
	outer_o.inner_map_fd = inner;
	m->files = bpf_map_create(BPF_MAP_TYPE_HASH_OF_MAPS, "t_files", sizeof(uint32_t),
				  sizeof(uint32_t), OFFCPU_MAX_CFI_FILES, &outer_o);
	close(inner);
	m->umaps = bpf_map_create(BPF_MAP_TYPE_HASH, "t_umaps", sizeof(uint32_t),
				  sizeof(struct offcpu_umaps), 64, &hash_o);
	if (m->files < 0 || m->umaps < 0)
		return -EPERM;
	return 0;
}

static void maps_close(struct maps *m)
{
	close(m->files);
	close(m->umaps);
}

/* path running "sleep 60", exec done; it dies with the test, which a failed check may end early. */
static pid_t sleeper_at(const char *path)
{
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		int null = open("/dev/null", O_WRONLY);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(null, 1);
		dup2(null, 2);
		execl(path, path, "60", (char *)NULL);
		_exit(127);
	}
	/*
	 * The exe link is set before the image is mapped, and the loader maps
	 * libc after it: wait for the code of both (a table sized by an image
	 * read before libc came made the budgets below wrong, one run in 15).
	 */
	for (int tries = 0; tries < 2000; tries++) {
		char maps[64], line[PATH_MAX + 128];
		bool exe = false, libc = false;
		FILE *in;

		snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
		in = fopen(maps, "re");
		while (in && !(exe && libc) && fgets(line, sizeof(line), in)) {
			if (!strstr(line, " r-xp "))
				continue;
			exe = exe || strstr(line, path);
			libc = libc || strstr(line, "/libc.so.6");
		}
		if (in)
			fclose(in);
		if (exe && libc)
			return pid;
		usleep(1000);
	}
	return -1;
}

/* A copy of /bin/sleep at dir/sleep-<i> (its own inode, so its own table), run by sleeper_at(). */
static pid_t sleeper(const char *dir, int i, char *path, size_t len)
{
	char cmd[PATH_MAX + 64];

	snprintf(path, len, "%s/sleep-%d", dir, i);
	snprintf(cmd, sizeof(cmd), "cp /bin/sleep %s", path);
	if (system(cmd))
		return -1;
	return sleeper_at(path);
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* path's status among the binaries u knows, or -1. */
static int status_of(const struct unwinder *u, const char *path)
{
	size_t n;
	const struct unwind_binary *b = unwinder__binaries(u, &n);

	for (size_t i = 0; b && i < n; i++)
		if (!strcmp(b[i].path, path))
			return (int)b[i].status;
	return -1;
}

/*
 * Every table the kernel holds for pid's mappings has the rows a fresh
 * build of the mapped file gives, where the kernel says it put them.
 */
static bool rows_match(const struct maps *mp, pid_t pid)
{
	struct offcpu_umaps *um = calloc(1, sizeof(*um));
	struct proc_map *maps = NULL;
	uint32_t key = pid;
	size_t nr = 0, checked = 0;
	bool ok = um != NULL;
	char path[64];
	FILE *in;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	in = fopen(path, "re");
	if (!ok || !in || procmaps__parse(in, &maps, &nr) ||
	    bpf_map_lookup_elem(mp->umaps, &key, um))
		ok = false;
	if (in)
		fclose(in);
	for (uint32_t i = 0; ok && i < um->n; i++) {
		const struct offcpu_umap *m = &um->m[i];
		struct cfi_table t = {};
		uint32_t id, chunk = m->chunk;
		const struct proc_map *pm = NULL;
		struct offcpu_cfi_row *rows;
		size_t size;
		int fd, cfd;

		if (!m->chunk)
			continue;
		for (size_t j = 0; j < nr; j++)
			if (maps[j].start == m->start)
				pm = &maps[j];
		fd = pm ? open(pm->path, O_RDONLY | O_CLOEXEC) : -1;
		if (fd < 0 || cfi_table__build(fd, pm->path, &t) || t.n != m->nrows) {
			UNIT_FAIL("%s: %zu rows built, %u in the kernel", pm ? pm->path : "?", t.n,
				  m->nrows);
			ok = false;
		}
		if (fd >= 0)
			close(fd);
		if (!ok || bpf_map_lookup_elem(mp->files, &chunk, &id) ||
		    (cfd = bpf_map_get_fd_by_id(id)) < 0) {
			cfi_table__free(&t);
			ok = false;
			break;
		}
		size = (size_t)(m->first + m->nrows) * sizeof(*rows);
		size = (size + 4095) & ~(size_t)4095;
		rows = mmap(NULL, size, PROT_READ, MAP_SHARED, cfd, 0);
		if (rows == MAP_FAILED || memcmp(rows + m->first, t.rows, t.n * sizeof(*rows))) {
			UNIT_FAIL("%s: the kernel's rows at %u differ from the file's", pm->path,
				  m->first);
			ok = false;
		}
		if (rows != MAP_FAILED)
			munmap(rows, size);
		close(cfd);
		cfi_table__free(&t);
		checked++;
	}
	procmaps__free(maps, nr);
	free(um);
	return ok && checked >= 2; /* the sleep copy and libc at least */
}

TEST(forgotten_tables_give_their_rows_to_binaries_seen_later)
{
	char dir[] = "/tmp/offcpu-unwind-XXXXXX", pa[PATH_MAX], pb[PATH_MAX], pc[PATH_MAX],
	     pd[PATH_MAX], rm[PATH_MAX + 16];
	struct unwinder_opts o = {};
	struct unwinder_stats st;
	struct unwinder *u;
	struct maps mp = {-1, -1};
	pid_t a, b, c, d;
	uint64_t one, base;
	size_t n;
	const struct unwind_binary *bins;

	if (geteuid() != 0)
		SKIP("needs root: creates BPF maps");
	CHECK(mkdtemp(dir));
	CHECK_INT(maps_make(&mp), 0);
	o.umaps_fd = mp.umaps;
	o.files_fd = mp.files;

	/* A first run to learn the sizes: what A needs, and one copy's table. */
	a = sleeper(dir, 0, pa, sizeof(pa));
	CHECK(a > 0);
	u = unwinder__new(&o);
	CHECK(u);
	CHECK_INT(unwinder__track(u, a), 0);
	unwinder__stats(u, &st);
	base = st.rows_bytes;
	one = 0;
	bins = unwinder__binaries(u, &n);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(bins[i].path, pa))
			one = bins[i].bytes;
	unwinder__free(u);
	CHECK(one > 0 && base > one);
	bpf_map_delete_elem(mp.umaps, &(uint32_t){(uint32_t)a});

	/* Room for A, B and C, and half a copy more. */
	o.budget = base + 2 * one + one / 2;
	u = unwinder__new(&o);
	CHECK(u);
	b = sleeper(dir, 1, pb, sizeof(pb));
	c = sleeper(dir, 2, pc, sizeof(pc));
	CHECK(b > 0 && c > 0);
	CHECK_INT(unwinder__track(u, a), 0);
	CHECK_INT(unwinder__track(u, b), 0);
	CHECK_INT(unwinder__track(u, c), 0);
	CHECK_INT(status_of(u, pc), UNWIND_TABLE);

	/* B's table, between A's and C's, becomes a hole once B is gone twice. */
	reap(b);
	unwinder__forget_gone(u);
	unwinder__stats(u, &st);
	CHECK_INT(st.forgotten, 0);
	unwinder__forget_gone(u);
	unwinder__stats(u, &st);
	CHECK_INT(st.forgotten, 1);
	CHECK_INT(status_of(u, pb), -1);
	CHECK_INT(status_of(u, pa), UNWIND_TABLE);

	/* D's copy fits only in it. */
	d = sleeper(dir, 3, pd, sizeof(pd));
	CHECK(d > 0);
	CHECK_INT(unwinder__track(u, d), 0);
	CHECK_INT(status_of(u, pd), UNWIND_TABLE);
	CHECK(rows_match(&mp, d));
	CHECK(rows_match(&mp, c));
	CHECK(rows_match(&mp, a));
	reap(c);
	reap(d);
	unwinder__forget_gone(u);
	unwinder__forget_gone(u);
	unwinder__stats(u, &st);
	CHECK_INT(st.forgotten, 3);

	/* Thirty more, one at a time: each gets its table, within the budget. */
	for (int i = 4; i < 34; i++) {
		char pe[PATH_MAX];
		pid_t e = sleeper(dir, i, pe, sizeof(pe));

		CHECK(e > 0);
		CHECK_INT(unwinder__track(u, e), 0);
		if (status_of(u, pe) != UNWIND_TABLE) {
			UNIT_FAIL("copy %d: no table (status %d)", i, status_of(u, pe));
			reap(e);
			break;
		}
		reap(e);
		unwinder__forget_gone(u);
		unwinder__forget_gone(u);
	}
	unwinder__stats(u, &st);
	CHECK(st.bytes <= o.budget);
	CHECK_INT(st.over_budget, 0);
	CHECK_INT(st.forgotten, 33);
	CHECK(rows_match(&mp, a));

	reap(a);
	unwinder__forget_gone(u);
	unwinder__forget_gone(u);
	unwinder__stats(u, &st);
	CHECK_INT(st.tables, 0);
	CHECK_U64(st.rows_bytes, 0);
	unwinder__free(u);
	maps_close(&mp);
	snprintf(rm, sizeof(rm), "rm -rf %s", dir);
	CHECK_INT(system(rm), 0);
}

/* The start of pid's executable mapping of a file whose path ends with tail, and that path. */
static uint64_t code_of(pid_t pid, const char *tail, char *path, size_t len)
{
	struct proc_map *maps = NULL;
	uint64_t at = 0;
	size_t nr = 0;
	char file[64];
	FILE *in;

	snprintf(file, sizeof(file), "/proc/%d/maps", pid);
	in = fopen(file, "re");
	if (!in || procmaps__parse(in, &maps, &nr))
		nr = 0;
	if (in)
		fclose(in);
	for (size_t i = 0; i < nr && !at; i++) {
		size_t pl = strlen(maps[i].path), tl = strlen(tail);

		if (maps[i].executable && pl >= tl && !strcmp(maps[i].path + pl - tl, tail)) {
			at = maps[i].start;
			snprintf(path, len, "%s", maps[i].path);
		}
	}
	procmaps__free(maps, nr);
	return at;
}

/* The kernel's mapping of pid at addr, by value; nrows 0 when there is none. */
static struct offcpu_umap kernel_umap(const struct maps *mp, pid_t pid, uint64_t addr)
{
	struct offcpu_umaps *um = calloc(1, sizeof(*um));
	struct offcpu_umap found = {};
	uint32_t key = pid;

	if (um && !bpf_map_lookup_elem(mp->umaps, &key, um))
		for (uint32_t i = 0; i < um->n && i < OFFCPU_MAX_UMAPS; i++)
			if (um->m[i].start <= addr && addr < um->m[i].end)
				found = um->m[i];
	free(um);
	return found;
}

/* A lazy unwinder on maps made like the collector's (in *mp), or NULL. */
static struct unwinder *lazy_unwinder(struct maps *mp)
{
	struct unwinder_opts o = {.lazy = true};

	if (maps_make(mp))
		return NULL;
	o.umaps_fd = mp->umaps;
	o.files_fd = mp->files;
	return unwinder__new(&o);
}

/* The end of a test of lazy_unwinder(): 0, or the status of the removal of dir. */
static int lazy_done(struct unwinder *u, struct maps *mp, const char *dir)
{
	char rm[PATH_MAX + 16];

	unwinder__free(u);
	maps_close(mp);
	snprintf(rm, sizeof(rm), "rm -rf %s", dir);
	return system(rm);
}

/*
 * Lazy tables: after tracking, every binary is pending and the kernel's
 * mappings say so; the first need of one builds its table once, and points
 * the mappings of every process that maps it (libc in both sleepers) at
 * rows equal to the file's.
 */
TEST(lazy_tables_are_built_at_the_first_need_for_every_process)
{
	char dir[] = "/tmp/offcpu-unwind-XXXXXX", pa[PATH_MAX], pb[PATH_MAX], libc[PATH_MAX];
	struct unwinder_stats st;
	struct maps mp = {-1, -1};
	struct offcpu_umap km;
	struct unwinder *u;
	uint64_t ca, cb, la, lb;
	pid_t a, b;

	if (geteuid() != 0)
		SKIP("needs root: creates BPF maps");
	CHECK(mkdtemp(dir));
	u = lazy_unwinder(&mp);
	CHECK(u);
	a = sleeper(dir, 0, pa, sizeof(pa));
	b = sleeper(dir, 1, pb, sizeof(pb));
	CHECK(a > 0 && b > 0);
	CHECK_INT(unwinder__track(u, a), 0);
	CHECK_INT(unwinder__track(u, b), 0);
	ca = code_of(a, pa, pa, sizeof(pa));
	cb = code_of(b, pb, pb, sizeof(pb));
	la = code_of(a, "/libc.so.6", libc, sizeof(libc));
	lb = code_of(b, "/libc.so.6", libc, sizeof(libc));
	CHECK(ca && cb && la && lb);

	unwinder__stats(u, &st);
	CHECK_INT(st.tables, 0);
	CHECK(st.pending >= 3); /* two copies, libc, the loader */
	CHECK_INT(status_of(u, libc), UNWIND_PENDING);
	km = kernel_umap(&mp, b, lb);
	CHECK_INT(km.chunk, 0);
	CHECK_INT(km.nrows, OFFCPU_UMARK_PENDING);

	/* A's need of libc builds it for B as well; a second need builds nothing. */
	CHECK_INT(unwinder__need(u, a, la + 16), 1);
	CHECK_INT(unwinder__need(u, b, lb + 16), 0);
	CHECK_INT(status_of(u, libc), UNWIND_TABLE);
	CHECK_INT(status_of(u, pb), UNWIND_PENDING);
	km = kernel_umap(&mp, b, lb);
	CHECK(km.chunk != 0 && km.nrows > OFFCPU_UMARK_MAX);
	CHECK_INT(kernel_umap(&mp, b, cb).nrows, OFFCPU_UMARK_PENDING);

	CHECK_INT(unwinder__need(u, a, ca + 16), 1);
	CHECK_INT(unwinder__need(u, b, cb + 16), 1);
	CHECK_INT(unwinder__need(u, a, 16), -ENOENT);
	unwinder__stats(u, &st);
	CHECK(st.tables >= 3);
	CHECK(rows_match(&mp, a));
	CHECK(rows_match(&mp, b));

	reap(a);
	reap(b);
	CHECK_INT(lazy_done(u, &mp, dir), 0);
}

/*
 * A short process can be gone before its mappings' files are opened: its
 * file then has no table, but the next process that maps the same file
 * (inode and device) gets one, and every later one with it. Here the first
 * process's path no longer leads to the file (renamed), so nothing can
 * reach it through the first; the second runs it under the new name.
 */
TEST(a_file_first_seen_in_a_gone_process_gets_its_table_from_the_next)
{
	char dir[] = "/tmp/offcpu-unwind-XXXXXX", pa[PATH_MAX], pb[PATH_MAX], libc[PATH_MAX];
	struct proc_map *maps = NULL;
	struct maps mp = {-1, -1};
	struct unwinder *u;
	size_t n = 0;
	uint64_t cb, lb;
	pid_t a, b;

	if (geteuid() != 0)
		SKIP("needs root: creates BPF maps");
	CHECK(mkdtemp(dir));
	u = lazy_unwinder(&mp);
	CHECK(u);
	a = sleeper(dir, 0, pa, sizeof(pa));
	CHECK(a > 0);
	CHECK_INT(procmaps__read(NULL, a, &maps, &n), 0);
	reap(a);
	snprintf(pb, sizeof(pb), "%s/renamed", dir);
	CHECK_INT(rename(pa, pb), 0);
	CHECK_INT(unwinder__track_maps(u, a, maps, n), 0);
	procmaps__free(maps, n);
	CHECK_INT(status_of(u, pa), UNWIND_ERROR);

	b = sleeper_at(pb);
	CHECK(b > 0);
	CHECK_INT(unwinder__track(u, b), 0);
	CHECK_INT(status_of(u, pa), UNWIND_PENDING);
	cb = code_of(b, pb, pb, sizeof(pb));
	CHECK(cb != 0);
	CHECK_INT(kernel_umap(&mp, b, cb).nrows, OFFCPU_UMARK_PENDING);
	CHECK_INT(unwinder__need(u, b, cb + 16), 1);
	CHECK_INT(status_of(u, pa), UNWIND_TABLE);
	lb = code_of(b, "/libc.so.6", libc, sizeof(libc));
	CHECK(lb != 0);
	/* libc too: rows_match() wants the sleep's table and libc's */
	CHECK(unwinder__need(u, b, lb + 16) >= 0);
	CHECK(rows_match(&mp, b));

	reap(b);
	CHECK_INT(lazy_done(u, &mp, dir), 0);
}

/*
 * perf maps 31 libraries, 2.7 MB of rows: more than the first chunk (1 MB)
 * holds. The rest go to the chunk made ahead in a thread; every table must
 * land whole where its mappings say.
 */
TEST(tables_past_the_first_chunk_land_whole_in_the_next)
{
	struct unwinder_opts o = {};
	struct unwinder_stats st;
	struct maps mp = {-1, -1};
	struct unwinder *u;
	pid_t pid;

	if (geteuid() != 0)
		SKIP("needs root: creates BPF maps");
	if (access("/usr/bin/perf", X_OK))
		SKIP("no /usr/bin/perf (many libraries) here");
	CHECK_INT(maps_make(&mp), 0);
	o.umaps_fd = mp.umaps;
	o.files_fd = mp.files;
	o.budget = 64 << 20;
	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		int null = open("/dev/null", O_WRONLY);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(null, 1);
		dup2(null, 2);
		execl("/usr/bin/perf", "perf", "stat", "--", "/bin/sleep", "60", (char *)NULL);
		_exit(127);
	}
	/* perf stat has mapped its libraries once it runs the command. */
	for (int tries = 0; tries < 2000; tries++) {
		char comm[64], path[64];
		FILE *in;

		snprintf(path, sizeof(path), "/proc/%d/task/%d/children", pid, pid);
		in = fopen(path, "re");
		comm[0] = 0;
		if (in && !fgets(comm, sizeof(comm), in))
			comm[0] = 0;
		if (in)
			fclose(in);
		if (comm[0])
			break;
		usleep(1000);
	}
	u = unwinder__new(&o);
	CHECK(u);
	CHECK_INT(unwinder__track(u, pid), 0);
	unwinder__stats(u, &st);
	CHECK(st.rows_bytes > (1u << 20));
	CHECK(st.bytes >= 3u << 20); /* the first chunk and one twice its size */
	CHECK(rows_match(&mp, pid));
	unwinder__free(u);
	reap(pid);
	maps_close(&mp);
}

int main(void)
{
	return unit_run();
}
