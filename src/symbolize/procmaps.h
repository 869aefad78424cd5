/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * /proc/PID/maps, one struct per line:
 *
 *     START-END PERMS OFFSET MAJOR:MINOR INODE [PATH]
 *
 * PATH is what the process sees (inside its mount namespace), may contain
 * spaces, and ends in " (deleted)" when the file was unlinked or replaced
 * after it was mapped; that suffix is removed and recorded in `deleted`.
 * Pseudo-files keep their brackets ("[vdso]", "[heap]"); anonymous mappings
 * have an empty path.
 */
#ifndef OFFCPU_SYMBOLIZE_PROCMAPS_H
#define OFFCPU_SYMBOLIZE_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct proc_map {
	uint64_t start, end; /* [start, end) */
	uint64_t offset;     /* file offset of start */
	uint64_t inode;
	unsigned int dev_major, dev_minor;
	bool readable, writable, executable, shared;
	bool deleted;
	char *path; /* never NULL; "" when anonymous */
};

/* Parse every line of in; lines that are not mappings are skipped. Returns 0 or -errno. */
int procmaps__parse(FILE *in, struct proc_map **maps, size_t *nr);
void procmaps__free(struct proc_map *maps, size_t nr);
/*
 * Read and parse PROC_ROOT/PID/maps (NULL: /proc). 0 or -errno (-ESRCH: no
 * such process, or one on its way out by the end of the read, whose mappings
 * may have been read half torn down; -EAGAIN: an exec overlapped the read,
 * which may have seen part of either image: nothing is returned then).
 */
int procmaps__read(const char *proc_root, int pid, struct proc_map **maps, size_t *nr);

/*
 * Open the file behind mapping m of process pid (PROC_ROOT as above) with
 * open_fn (NULL: open(2) read-only), and write the path that worked to
 * opened. In order: the path in the process's root (containers), when it
 * is still the mapped inode; PROC_ROOT/PID/map_files (the mapped file
 * itself, even deleted or replaced); and, for a process already gone (a
 * short one exits before its mappings are read through), the same path in
 * this process's root when it is the same file (inode and device). A file
 * descriptor, or -errno of the last attempt.
 */
int procmaps__open(const char *proc_root, int pid, const struct proc_map *m,
		   int (*open_fn)(const char *path), char *opened, size_t len);

#endif
