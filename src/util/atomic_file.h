/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Write a file so that a reader sees the old file or the whole new one, never
 * half: write into a temporary file beside the target (created O_EXCL |
 * O_NOFOLLOW, so a planted symlink is never followed), fsync it, rename() it
 * over the target.
 *
 * Only a regular file (or nothing) is ever replaced: a target that exists as
 * a device, a FIFO, a directory or a symlink (/dev/null, /dev/stdout) is
 * refused with -ATOMIC_FILE_ENOTREG before anything is written, and again
 * just before the rename. A failed write(2) keeps its errno, so a full disk
 * is -ENOSPC, not the -EIO a writer sees through ferror().
 *
 *     struct atomic_file af;
 *     FILE *f = atomic_file__open(&af, "dir/offcpu.summary.json");
 *     ... write to f; on a writer's error e: e = atomic_file__error(&af, e) ...
 *     err = atomic_file__commit(&af);   // or atomic_file__abort(&af)
 *
 * The stream is not backed by a file descriptor of its own: fileno(f) is -1.
 */
#ifndef OFFCPU_UTIL_ATOMIC_FILE_H
#define OFFCPU_UTIL_ATOMIC_FILE_H

#include <errno.h>
#include <limits.h>
#include <stdio.h>

/* The target exists and is not a regular file (as a positive errno). */
#define ATOMIC_FILE_ENOTREG EEXIST

struct atomic_file {
	FILE *f;
	int fd;	 /* the temporary file's */
	int err; /* errno of the first failed write(2), 0 if none */
	char path[PATH_MAX];
	char tmp[PATH_MAX];
};

/* 0 when path is missing or a regular file, -ATOMIC_FILE_ENOTREG, or -errno of lstat. */
int atomic_file__check_target(const char *path);
/* NULL with errno set on failure (ATOMIC_FILE_ENOTREG: see above). */
FILE *atomic_file__open(struct atomic_file *af, const char *path);
/* Flush, fsync, rename. On any error the target is untouched and the temp removed. */
int atomic_file__commit(struct atomic_file *af);
void atomic_file__abort(struct atomic_file *af);
/* A writer's error made precise: -EIO becomes the errno of the write(2) that failed. */
int atomic_file__error(const struct atomic_file *af, int err);
/* strerror() for these errors, with -ATOMIC_FILE_ENOTREG spelled out. */
const char *atomic_file__strerror(int err);
/*
 * The whole cycle: open path, write(f, arg), commit, or abort when write
 * returns an error (which is returned). 0 or -errno.
 */
int atomic_file__write(const char *path, int (*write)(FILE *f, const void *arg), const void *arg);

#endif
