// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/atomic_file.h"

/*
 * The stream writes through here so that the first failed write(2) keeps its
 * errno: writers only see ferror() and report -EIO, which on a full disk
 * would hide the ENOSPC that tells the user what to do.
 */
static ssize_t af_write(void *cookie, const char *buf, size_t len)
{
	struct atomic_file *af = cookie;
	size_t done = 0;

	while (done < len) {
		ssize_t n = write(af->fd, buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!af->err)
				af->err = n < 0 ? errno : EIO;
			errno = af->err;
			return done ? (ssize_t)done : -1;
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static int af_close(void *cookie)
{
	struct atomic_file *af = cookie;
	int err = close(af->fd);

	af->fd = -1;
	return err;
}

int atomic_file__check_target(const char *path)
{
	struct stat st;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : -errno;
	return S_ISREG(st.st_mode) ? 0 : -ATOMIC_FILE_ENOTREG;
}

FILE *atomic_file__open(struct atomic_file *af, const char *path)
{
	cookie_io_functions_t io = {.write = af_write, .close = af_close};
	int n, err;

	memset(af, 0, sizeof(*af));
	af->fd = -1;
	n = snprintf(af->path, sizeof(af->path), "%s", path);
	if (n < 0 || (size_t)n >= sizeof(af->path))
		goto toolong;
	n = snprintf(af->tmp, sizeof(af->tmp), "%s.tmp.%d", path, (int)getpid());
	if (n < 0 || (size_t)n >= sizeof(af->tmp))
		goto toolong;
	/*
	 * rename() would replace a device, a FIFO or a symlink with a regular
	 * file: as root, -o /dev/null would destroy /dev/null.
	 */
	err = atomic_file__check_target(path);
	if (err) {
		errno = -err;
		return NULL;
	}
	/* A stale temp of a crashed run with our pid is ours to replace. */
	unlink(af->tmp);
	af->fd = open(af->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (af->fd < 0)
		return NULL;
	af->f = fopencookie(af, "w", io);
	if (!af->f) {
		err = errno;
		close(af->fd);
		af->fd = -1;
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
	errno = 0;
	if (fflush(af->f) || ferror(af->f))
		err = -(af->err ? af->err : errno ? errno : EIO);
	if (!err && fsync(af->fd))
		err = -errno;
	if (fclose(af->f) && !err)
		err = -(af->err ? af->err : errno ? errno : EIO);
	af->f = NULL;
	/* The target may have become a device or a FIFO while we wrote. */
	if (!err)
		err = atomic_file__check_target(af->path);
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

int atomic_file__write(const char *path, int (*write)(FILE *f, const void *arg), const void *arg)
{
	struct atomic_file af;
	FILE *f = atomic_file__open(&af, path);
	int err;

	if (!f)
		return -errno;
	err = write(f, arg);
	if (err) {
		/* Flush what is buffered: the write that fails names the cause. */
		fflush(f);
		err = atomic_file__error(&af, err);
		atomic_file__abort(&af);
		return err;
	}
	return atomic_file__commit(&af);
}

int atomic_file__error(const struct atomic_file *af, int err)
{
	return err == -EIO && af->err ? -af->err : err;
}

const char *atomic_file__strerror(int err)
{
	if (err == -ATOMIC_FILE_ENOTREG)
		return "exists and is not a regular file (only a regular file is replaced; "
		       "'-o -' writes to standard output)";
	return strerror(-err);
}
