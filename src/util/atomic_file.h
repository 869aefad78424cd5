/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Write a file so that a reader sees the old file or the whole new one, never
 * half: write into a temporary file beside the target (created O_EXCL |
 * O_NOFOLLOW, so a planted symlink is never followed), fsync it, rename() it
 * over the target.
 *
 *     struct atomic_file af;
 *     FILE *f = atomic_file__open(&af, "dir/offcpu.summary.json");
 *     ... write to f ...
 *     err = atomic_file__commit(&af);   // or atomic_file__abort(&af)
 */
#ifndef OFFCPU_UTIL_ATOMIC_FILE_H
#define OFFCPU_UTIL_ATOMIC_FILE_H

#include <limits.h>
#include <stdio.h>

struct atomic_file {
	FILE *f;
	char path[PATH_MAX];
	char tmp[PATH_MAX];
};

/* NULL with errno set on failure. */
FILE *atomic_file__open(struct atomic_file *af, const char *path);
/* Flush, fsync, rename. On any error the target is untouched and the temp removed. */
int atomic_file__commit(struct atomic_file *af);
void atomic_file__abort(struct atomic_file *af);
/*
 * The whole cycle: open path, write(f, arg), commit, or abort when write
 * returns an error (which is returned). 0 or -errno.
 */
int atomic_file__write(const char *path, int (*write)(FILE *f, const void *arg),
		       const void *arg);

#endif
