// SPDX-License-Identifier: GPL-2.0-only
/* collect/mmstamp: when a track request re-reads a process's mappings. */
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect/mmstamp.h"
#include "unit.h"

static char root[64];

/* Writes ROOT/PID/stat with the fields mmstamp reads and plausible others. */
static void fake_stat(int pid, const char *comm, unsigned long long start, unsigned long long vsize,
		      unsigned long long code, unsigned long long stack)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d", root, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/stat", root, pid);
	f = fopen(path, "w");
	if (!f)
		return;
	fprintf(f,
		"%d (%s) S 1 %d %d 0 -1 4194304 100 0 0 0 5 3 0 0 20 0 1 0 %llu %llu 800 "
		"18446744073709551615 %llu %llu %llu 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n",
		pid, comm, pid, pid, start, vsize, code, code + 4096, stack);
	fclose(f);
}

TEST(mmstamp_unchanged_space_is_not_reread)
{
	struct mmstamps m = {0};

	CHECK(root[0]);
	m.proc_root = root;
	fake_stat(100, "postgres", 5000, 153370624, 0x400000, 0x7ffd0000);
	CHECK(mmstamps__changed(&m, 100)); /* never seen */
	CHECK(!mmstamps__changed(&m, 100));
	CHECK(!mmstamps__changed(&m, 100));
	CHECK_U64(m.same, 2);
	CHECK_U64(m.changed, 1);
	mmstamps__free(&m);
}

TEST(mmstamp_sees_mmap_exec_and_pid_reuse)
{
	struct mmstamps m = {0};

	CHECK(root[0]);
	m.proc_root = root;
	fake_stat(7, "x", 5000, 1000000, 0x400000, 0x7ffd0000);
	CHECK(mmstamps__changed(&m, 7));
	fake_stat(7, "x", 5000, 1200000, 0x400000, 0x7ffd0000); /* a library mapped */
	CHECK(mmstamps__changed(&m, 7));
	CHECK(!mmstamps__changed(&m, 7));
	fake_stat(7, "x", 5000, 1200000, 0x400000, 0x7ffe1000); /* exec: a new stack */
	CHECK(mmstamps__changed(&m, 7));
	fake_stat(7, "x", 5000, 1200000, 0x500000, 0x7ffe1000); /* exec: new code */
	CHECK(mmstamps__changed(&m, 7));
	fake_stat(7, "x", 9000, 1200000, 0x500000, 0x7ffe1000); /* another process, same pid */
	CHECK(mmstamps__changed(&m, 7));
	CHECK(!mmstamps__changed(&m, 7));
	mmstamps__free(&m);
}

TEST(mmstamp_reads_fields_after_an_odd_command_name)
{
	struct mmstamps m = {0};

	CHECK(root[0]);
	m.proc_root = root;
	/* a name with ") " in it: fields counted from the first ')' would shift */
	fake_stat(8, "a) 1 2 (b", 5000, 1000000, 0x400000, 0x7ffd0000);
	CHECK(mmstamps__changed(&m, 8));
	CHECK(!mmstamps__changed(&m, 8));
	fake_stat(8, "a) 1 2 (b", 5000, 1004096, 0x400000, 0x7ffd0000);
	CHECK(mmstamps__changed(&m, 8));
	mmstamps__free(&m);
}

TEST(mmstamp_unreadable_process_is_always_reread)
{
	struct mmstamps m = {0};

	CHECK(root[0]);
	m.proc_root = root;
	CHECK(mmstamps__changed(&m, 4242));
	CHECK(mmstamps__changed(&m, 4242));
	CHECK_U64(m.same, 0);
	mmstamps__free(&m);
}

/* The real /proc: this process's own mmap is seen. */
TEST(mmstamp_sees_own_mmap)
{
	struct mmstamps m = {0};
	void *p;

	CHECK(mmstamps__changed(&m, getpid()));
	CHECK(!mmstamps__changed(&m, getpid()));
	p = mmap(NULL, 1 << 20, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	CHECK(mmstamps__changed(&m, getpid()));
	munmap(p, 1 << 20);
	CHECK(mmstamps__changed(&m, getpid()));
	mmstamps__free(&m);
}

int main(void)
{
	char cmd[128];
	int rc;

	snprintf(root, sizeof(root), "/tmp/offcpu-mmstamp.XXXXXX");
	if (!mkdtemp(root))
		root[0] = '\0';
	rc = unit_run();
	if (root[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
		if (system(cmd))
			fprintf(stderr, "could not remove %s\n", root);
	}
	return rc;
}
