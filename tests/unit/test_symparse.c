// SPDX-License-Identifier: GPL-2.0-only
/* The symbolizer's small parsers: /proc/PID/maps, perf JIT maps, demangling. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "symbolize/demangle.h"
#include "symbolize/perfmap.h"
#include "symbolize/procmaps.h"
#include "unit.h"

static int parse_maps_fixture(struct proc_map **maps, size_t *n)
{
	FILE *f = fopen("tests/data/symbolize/maps.txt", "r");
	int err;

	if (!f)
		return -1;
	err = procmaps__parse(f, maps, n);
	fclose(f);
	return err;
}

TEST(procmaps_parses_every_mapping_line)
{
	struct proc_map *m;
	size_t n;

	CHECK_INT(parse_maps_fixture(&m, &n), 0);
	CHECK_INT(n, 12); /* 13 lines, one of them garbage */
	CHECK_U64(m[1].start, 0x55d0c8a02000);
	CHECK_U64(m[1].end, 0x55d0c8a06000);
	CHECK_U64(m[1].offset, 0x2000);
	CHECK_U64(m[1].inode, 1310746);
	CHECK_INT(m[1].dev_major, 8);
	CHECK_INT(m[1].dev_minor, 1);
	CHECK(m[1].readable && !m[1].writable && m[1].executable && !m[1].shared);
	CHECK_STR(m[1].path, "/usr/bin/sleep");
	CHECK(!m[1].deleted);
	CHECK_STR(m[3].path, "[heap]");
	procmaps__free(m, n);
}

TEST(procmaps_anonymous_mappings_have_empty_paths)
{
	struct proc_map *m;
	size_t n;

	CHECK_INT(parse_maps_fixture(&m, &n), 0);
	/* the line ends in a space after the inode */
	CHECK_STR(m[4].path, "");
	CHECK_STR(m[5].path, "");
	CHECK(m[5].executable && m[5].writable);
	procmaps__free(m, n);
}

TEST(procmaps_keeps_spaces_and_notes_deleted_files)
{
	struct proc_map *m;
	size_t n;

	CHECK_INT(parse_maps_fixture(&m, &n), 0);
	CHECK_STR(m[8].path, "/opt/my app/bin/tool");
	CHECK(m[8].deleted);
	CHECK_INT(m[8].dev_minor, 0x1f);
	CHECK_STR(m[9].path, "/dev/shm/ring buffer");
	CHECK(m[9].shared && !m[9].deleted);
	CHECK_STR(m[10].path, "[vdso]");
	CHECK_STR(m[11].path, "[vsyscall]");
	CHECK_U64(m[11].start, 0xffffffffff600000);
	CHECK(!m[11].readable && m[11].executable);
	procmaps__free(m, n);
}

TEST(procmaps_empty_input_is_no_mappings)
{
	FILE *f = unit_memfile("");
	struct proc_map *m = (void *)1;
	size_t n = 5;

	CHECK_INT(procmaps__parse(f, &m, &n), 0);
	fclose(f);
	CHECK_INT(n, 0);
	procmaps__free(m, n);
}

/* A live process's mappings by pid, under /proc or another root; a gone one is -ESRCH. */
TEST(procmaps_read_finds_a_process_by_pid_and_says_when_it_is_gone)
{
	char self[4096];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	struct proc_map *m = NULL;
	size_t n = 0;
	bool found = false;

	CHECK(len > 0);
	self[len] = '\0';
	CHECK_INT(procmaps__read(NULL, (int)getpid(), &m, &n), 0);
	for (size_t i = 0; i < n; i++)
		found |= m[i].executable && !strcmp(m[i].path, self);
	CHECK(found);
	procmaps__free(m, n);
	CHECK_INT(procmaps__read("/proc", (int)getpid(), &m, &n), 0);
	CHECK(n > 0);
	procmaps__free(m, n);
	CHECK_INT(procmaps__read("/nonexistent-proc", (int)getpid(), &m, &n), -ESRCH);
}

/* put_file PATH TEXT: for a PROC_ROOT tree. */
static void put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CHECK(f);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/*
 * A process on its way out (PF_EXITING, a zombie) may show its mappings half
 * torn down: nothing is returned, as for a process that is gone. One in an
 * exec that has not mapped its program yet (startcode 0) shows part of
 * either image: nothing either. A tree without stat says nothing.
 */
TEST(procmaps_read_of_a_leaving_process_is_no_read)
{
#define STAT_TAIL " 1 0 0 0 0 0 0 0 20 0 1 0 5 1000 1 18446744073709551615 "
	char root[] = "/tmp/offcpu-procmaps-XXXXXX", path[128];
	const char *stat[] = {"77 (w) S 1 77 77 0 -1 4194560" STAT_TAIL "4194304 4198400 1407\n",
			      "77 (w) R 1 77 77 0 -1 4194564" STAT_TAIL "4194304 4198400 1407\n",
			      "77 (w) Z 1 77 77 0 -1 4227076" STAT_TAIL "0 0 0\n",
			      "77 (w) R 1 77 77 0 -1 4194560" STAT_TAIL "0 0 1407\n", NULL};
	int want[] = {0, -ESRCH, -ESRCH, -EAGAIN, 0};
	struct proc_map *m;
	size_t n;
#undef STAT_TAIL

	CHECK(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/77", root);
	CHECK_INT(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/77/maps", root);
	put_file(path, "00400000-00401000 r-xp 00000000 08:01 42 /usr/bin/w\n");
	snprintf(path, sizeof(path), "%s/77/stat", root);
	for (int i = 0; i < 5; i++) {
		m = NULL;
		n = 7;
		if (stat[i])
			put_file(path, stat[i]);
		else
			unlink(path);
		CHECK_INT(procmaps__read(root, 77, &m, &n), want[i]);
		CHECK_INT(n, want[i] ? 0 : 1);
		CHECK(want[i] ? !m : !!m);
		procmaps__free(m, n);
	}
	snprintf(path, sizeof(path), "%s/77/maps", root);
	unlink(path);
	snprintf(path, sizeof(path), "%s/77", root);
	rmdir(path);
	rmdir(root);
}

/* This process's own executable mapping, as procmaps__read() gives it; false when none. */
static bool self_exe_map(struct proc_map *out)
{
	char self[4096];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	struct proc_map *m = NULL;
	size_t n = 0;
	bool found = false;

	if (len <= 0 || procmaps__read(NULL, (int)getpid(), &m, &n))
		return false;
	self[len] = '\0';
	for (size_t i = 0; i < n && !found; i++) {
		if (m[i].executable && !strcmp(m[i].path, self)) {
			*out = m[i];
			out->path = strdup(m[i].path);
			found = out->path != NULL;
		}
	}
	procmaps__free(m, n);
	return found;
}

static bool fd_is(int fd, const struct proc_map *m)
{
	struct stat st;

	return fd >= 0 && !fstat(fd, &st) && st.st_ino == m->inode;
}

/*
 * A live process's file opens through its root, or its map_files; a gone
 * one's (no PID directory) at the same path in ours, only when that path
 * is still the mapped inode on the mapped device.
 */
TEST(procmaps_open_reaches_the_file_of_a_gone_process_only_when_it_is_the_same)
{
	struct proc_map m;
	char opened[512];
	int fd;

	CHECK(self_exe_map(&m));
	fd = procmaps__open(NULL, (int)getpid(), &m, NULL, opened, sizeof(opened));
	CHECK(fd_is(fd, &m));
	CHECK(strstr(opened, "/root/") != NULL);
	close(fd);
	fd = procmaps__open("/nonexistent-proc", 4242, &m, NULL, opened, sizeof(opened));
	CHECK(fd_is(fd, &m));
	CHECK_STR(opened, m.path);
	close(fd);
	m.inode++;
	fd = procmaps__open("/nonexistent-proc", 4242, &m, NULL, opened, sizeof(opened));
	CHECK(fd < 0);
	m.inode--;
	m.dev_minor++;
	fd = procmaps__open("/nonexistent-proc", 4242, &m, NULL, opened, sizeof(opened));
	CHECK(fd < 0);
	m.dev_minor--;
	m.deleted = true;
	fd = procmaps__open("/nonexistent-proc", 4242, &m, NULL, opened, sizeof(opened));
	CHECK(fd < 0);
	free(m.path);
}

static struct perfmap *load_perfmap(void)
{
	FILE *f = fopen("tests/data/symbolize/perf-4242.map", "r");
	struct perfmap *m;

	if (!f)
		return NULL;
	m = perfmap__load(f);
	fclose(f);
	return m;
}

TEST(perfmap_resolves_names_with_spaces)
{
	struct perfmap *m = load_perfmap();
	uint64_t off;

	CHECK(m);
	CHECK_INT(perfmap__count(m), 7); /* three bad lines skipped */
	CHECK_STR(perfmap__resolve(m, 0x7f1e30400000, &off),
		  "LazyCompile:*handleRequest /srv/app/server.js:42");
	CHECK_U64(off, 0);
	CHECK_STR(perfmap__resolve(m, 0x7f1e3040003f, &off),
		  "LazyCompile:*handleRequest /srv/app/server.js:42");
	CHECK_U64(off, 0x3f);
	/* the end is exclusive, and a gap resolves to nothing */
	CHECK(!perfmap__resolve(m, 0x7f1e30400040, NULL));
	CHECK(!perfmap__resolve(m, 0x7f1e303fffff, NULL));
	/* "0x" prefixes are accepted */
	CHECK_STR(perfmap__resolve(m, 0x7f1e30400150, NULL), "Builtin:ArgumentsAdaptorTrampoline");
	perfmap__free(m);
}

TEST(perfmap_newer_lines_win_where_entries_overlap)
{
	struct perfmap *m = load_perfmap();

	CHECK(m);
	/* stub_old [200,300) then stub_new [200,220) */
	CHECK_STR(perfmap__resolve(m, 0x7f1e30400210, NULL), "stub_new");
	CHECK_STR(perfmap__resolve(m, 0x7f1e30400230, NULL), "stub_old");
	/* outer_region [400,600) then inner_newer [480,490) */
	CHECK_STR(perfmap__resolve(m, 0x7f1e30400470, NULL), "outer_region");
	CHECK_STR(perfmap__resolve(m, 0x7f1e30400485, NULL), "inner_newer");
	CHECK_STR(perfmap__resolve(m, 0x7f1e304004a0, NULL), "outer_region");
	CHECK(!perfmap__resolve(m, 0x7f1e30400600, NULL));
	perfmap__free(m);
}

TEST(demangle_leaves_c_names_alone)
{
	char buf[64];

	CHECK(!sym_demangle("main", buf, sizeof(buf)));
	CHECK_STR(buf, "main");
	CHECK(!sym_demangle("_Zbogus", buf, sizeof(buf)));
	CHECK_STR(buf, "_Zbogus");
	/* truncates to the buffer */
	CHECK(!sym_demangle("a_rather_long_name", buf, 7));
	CHECK_STR(buf, "a_rath");
}

TEST(demangle_cxx_names)
{
	char buf[256];

	if (!sym_demangle_available())
		SKIP("no __cxa_demangle (libstdc++.so.6) on this system");
	CHECK(sym_demangle("_ZN3foo3barEi", buf, sizeof(buf)));
	CHECK_STR(buf, "foo::bar(int)");
	CHECK(sym_demangle("_ZNSt6vectorIiSaIiEE9push_backERKi", buf, sizeof(buf)));
	CHECK_STR(buf, "std::vector<int, std::allocator<int> >::push_back(int const&)");
}

TEST(demangle_legacy_rust_names)
{
	char buf[256];

	if (!sym_demangle_available())
		SKIP("no __cxa_demangle (libstdc++.so.6) on this system");
	CHECK(sym_demangle("_ZN4core3fmt5write17h0123456789abcdefE", buf, sizeof(buf)));
	CHECK_STR(buf, "core::fmt::write");
	CHECK(sym_demangle("_ZN58_$LT$alloc..string..String$u20$as$u20$core..fmt..Debug$GT$3fmt"
			   "17h7a9b1c2d3e4f5a6bE",
			   buf, sizeof(buf)));
	CHECK_STR(buf, "<alloc::string::String as core::fmt::Debug>::fmt");
}

int main(void)
{
	return unit_run();
}
