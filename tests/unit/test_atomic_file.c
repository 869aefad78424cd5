// SPDX-License-Identifier: GPL-2.0-only
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
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

int main(void)
{
	return unit_run();
}
