// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/atomic_file.h"

FILE *atomic_file__open(struct atomic_file *af, const char *path)
{
	int fd, n;

	memset(af, 0, sizeof(*af));
	n = snprintf(af->path, sizeof(af->path), "%s", path);
	if (n < 0 || (size_t)n >= sizeof(af->path))
		goto toolong;
	n = snprintf(af->tmp, sizeof(af->tmp), "%s.tmp.%d", path, (int)getpid());
	if (n < 0 || (size_t)n >= sizeof(af->tmp))
		goto toolong;
	/* A stale temp of a crashed run with our pid is ours to replace. */
	unlink(af->tmp);
	fd = open(af->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return NULL;
	af->f = fdopen(fd, "w");
	if (!af->f) {
		int err = errno;

		close(fd);
		unlink(af->tmp);
		errno = err;
	}
	return af->f;
toolong:
	errno = ENAMETOOLONG;
	return NULL;
}

int atomic_file__commit(struct atomic_file *af)
{
	int err = 0;

	if (!af->f)
		return -EBADF;
	if (fflush(af->f) || ferror(af->f) || fsync(fileno(af->f)))
		err = -(errno ? errno : EIO);
	if (fclose(af->f) && !err)
		err = -(errno ? errno : EIO);
	af->f = NULL;
	if (!err && rename(af->tmp, af->path))
		err = -errno;
	if (err)
		unlink(af->tmp);
	return err;
}

void atomic_file__abort(struct atomic_file *af)
{
	if (!af || !af->f)
		return;
	fclose(af->f);
	af->f = NULL;
	unlink(af->tmp);
}

int atomic_file__write(const char *path, int (*write)(FILE *f, const void *arg),
		       const void *arg)
{
	struct atomic_file af;
	FILE *f = atomic_file__open(&af, path);
	int err;

	if (!f)
		return -errno;
	err = write(f, arg);
	if (err) {
		atomic_file__abort(&af);
		return err;
	}
	return atomic_file__commit(&af);
}
