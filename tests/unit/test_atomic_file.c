// SPDX-License-Identifier: GPL-2.0-only
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util/atomic_file.h"
#include "unit.h"

static int put_text(FILE *f, const void *arg)
{
	return fputs(arg, f) < 0 ? -EIO : 0;
}

static int put_half_then_fail(FILE *f, const void *arg)
{
	fputs(arg, f);
	return -ENOSPC;
}

/* Entries in dir besides . and .. (a leftover temporary file would show). */
static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

TEST(atomic_write_replaces_whole_or_not_at_all)
{
	char dir[] = "/tmp/offcpu-atomic.XXXXXX", path[64];
	char *text;

	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out.txt", dir);
	CHECK_INT(atomic_file__write(path, put_text, "old\n"), 0);
	/* A writer that fails leaves the old file and no temporary behind. */
	CHECK_INT(atomic_file__write(path, put_half_then_fail, "new, but half"), -ENOSPC);
	text = unit_slurp(path);
	CHECK_STR(text, "old\n");
	free(text);
	CHECK_INT(entries(dir), 1);
	CHECK_INT(atomic_file__write(path, put_text, "new\n"), 0);
	text = unit_slurp(path);
	CHECK_STR(text, "new\n");
	free(text);
	CHECK_INT(entries(dir), 1);
	/* A directory that does not exist: the error, nothing else. */
	snprintf(path, sizeof(path), "%s/no/out.txt", dir);
	CHECK_INT(atomic_file__write(path, put_text, "x"), -ENOENT);
	snprintf(path, sizeof(path), "%s/out.txt", dir);
	unlink(path);
	rmdir(dir);
}

/* A big text: more than stdio buffers, so writes happen while the writer runs. */
static int put_big(FILE *f, const void *arg)
{
	(void)arg;
	for (int i = 0; i < 4096; i++)
		if (fputs("0123456789abcdef0123456789abcdef\n", f) < 0)
			return -EIO;
	return ferror(f) ? -EIO : 0;
}

/* -o /dev/null as root must never turn /dev/null into a regular file. */
TEST(atomic_write_refuses_targets_that_are_not_regular_files)
{
	char dir[] = "/tmp/offcpu-atomic.XXXXXX", path[64], victim[64];
	struct stat st;
	char *text;

	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/fifo", dir);
	CHECK_INT(mkfifo(path, 0600), 0);
	CHECK_INT(atomic_file__write(path, put_text, "x"), -ATOMIC_FILE_ENOTREG);
	CHECK(!lstat(path, &st) && S_ISFIFO(st.st_mode));
	unlink(path);

	/* A symlink (to /proc/self/fd/1, to a file) is refused, not replaced. */
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	CHECK_INT(atomic_file__write(victim, put_text, "precious\n"), 0);
	snprintf(path, sizeof(path), "%s/link", dir);
	CHECK_INT(symlink(victim, path), 0);
	CHECK_INT(atomic_file__write(path, put_text, "x"), -ATOMIC_FILE_ENOTREG);
	CHECK(!lstat(path, &st) && S_ISLNK(st.st_mode));
	text = unit_slurp(victim);
	CHECK_STR(text, "precious\n");
	free(text);
	unlink(path);

	snprintf(path, sizeof(path), "%s/sub", dir);
	CHECK_INT(mkdir(path, 0700), 0);
	CHECK_INT(atomic_file__write(path, put_text, "x"), -ATOMIC_FILE_ENOTREG);
	rmdir(path);

	/* A character device, made where it can do no harm (needs root). */
	snprintf(path, sizeof(path), "%s/null", dir);
	if (!mknod(path, S_IFCHR | 0666, makedev(1, 3))) {
		CHECK_INT(atomic_file__write(path, put_text, "x"), -ATOMIC_FILE_ENOTREG);
		CHECK(!lstat(path, &st) && S_ISCHR(st.st_mode));
		unlink(path);
	}
	CHECK(strstr(atomic_file__strerror(-ATOMIC_FILE_ENOTREG), "not a regular file"));
	/* Nothing was left beside the targets: only the victim. */
	CHECK_INT(entries(dir), 1);
	unlink(victim);
	rmdir(dir);
}

/* A target that turns into a FIFO while the new file is written is still not replaced. */
TEST(atomic_write_checks_the_target_again_before_the_rename)
{
	char dir[] = "/tmp/offcpu-atomic.XXXXXX", path[64];
	struct atomic_file af;
	struct stat st;
	FILE *f;

	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out", dir);
	f = atomic_file__open(&af, path);
	CHECK(f != NULL);
	fputs("new\n", f);
	CHECK_INT(mkfifo(path, 0600), 0);
	CHECK_INT(atomic_file__commit(&af), -ATOMIC_FILE_ENOTREG);
	CHECK(!lstat(path, &st) && S_ISFIFO(st.st_mode));
	CHECK_INT(entries(dir), 1);
	unlink(path);
	rmdir(dir);
}

/*
 * A write(2) that fails (here EFBIG from RLIMIT_FSIZE, as ENOSPC on a full
 * disk) is reported as itself, not as the writer's -EIO, and the old file
 * stays.
 */
TEST(atomic_write_reports_the_errno_of_the_failed_write)
{
	char dir[] = "/tmp/offcpu-atomic.XXXXXX", path[64];
	struct rlimit old, small = {4096, 4096};
	char *text;
	int err;

	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out.txt", dir);
	CHECK_INT(atomic_file__write(path, put_text, "old\n"), 0);
	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &old);
	small.rlim_max = old.rlim_max;
	CHECK_INT(setrlimit(RLIMIT_FSIZE, &small), 0);
	err = atomic_file__write(path, put_big, NULL);
	setrlimit(RLIMIT_FSIZE, &old);
	CHECK_INT(err, -EFBIG);
	text = unit_slurp(path);
	CHECK_STR(text, "old\n");
	free(text);
	CHECK_INT(entries(dir), 1);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	return unit_run();
}
