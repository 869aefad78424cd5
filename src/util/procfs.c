// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/procfs.h"

int procfs__parse_stat(const char *text, struct procfs_stat *st)
{
	const char *rp = strrchr(text, ')');
	unsigned long long t, code, stack;
	unsigned int flags;
	int n;

	memset(st, 0, sizeof(*st));
	if (!rp || rp[1] != ' ' || !rp[2])
		return -EINVAL;
	st->state = rp[2];
	/*
	 * 9 is the flags, 22 the start time, 26 and 28 where code and stack
	 * start; the rest are skipped.
	 */
	n = sscanf(rp + 1,
		   " %*c %*d %*d %*d %*d %*d %u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
		   "%*d %*d %*d %llu %*u %*d %*u %llu %*u %llu",
		   &flags, &t, &code, &stack);
	if (n >= 1)
		st->flags = flags;
	if (n >= 2)
		st->starttime = t;
	if (n == 4) {
		st->startcode = code;
		st->startstack = stack;
	}
	return 0;
}

int procfs__stat(const char *proc_root, int pid, struct procfs_stat *st)
{
	char path[4096], buf[1024];
	ssize_t n;
	int fd, err;

	memset(st, 0, sizeof(*st));
	snprintf(path, sizeof(path), "%s/%d/stat", proc_root ? proc_root : "/proc", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	err = n < 0 ? -errno : 0;
	close(fd);
	if (err)
		return err;
	buf[n] = '\0';
	return procfs__parse_stat(buf, st);
}
