// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/filepages.h"

/* pagemap entry bits (Documentation/admin-guide/mm/pagemap.rst) */
#define PM_PRESENT (1ULL << 63)
#define PM_SWAP (1ULL << 62) /* swapped out: a private copy */
#define PM_FILE (1ULL << 61) /* a file page or shared anonymous: not a private copy */

/* Entries read from pagemap at once. */
#define PM_BATCH 512

/* The private file mapping [*start, *end) of this process holding a; 0 or -errno. */
static int find_mapping(uintptr_t a, uintptr_t *start, uintptr_t *end)
{
	char line[4096 + 128], perms[8];
	FILE *f = fopen("/proc/self/maps", "re");
	int err = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		uintptr_t s, e;
		unsigned long long ino;
		int path = 0;

		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %7s %*x %*x:%*x %llu %n", &s, &e, perms,
			   &ino, &path) < 4 ||
		    a < s || a >= e)
			continue;
		/* a file (inode, path) mapped privately, not code this process runs */
		if (ino && path && line[path] == '/' && perms[3] == 'p' && perms[2] != 'x') {
			*start = s;
			*end = e;
			err = 0;
		}
		break;
	}
	fclose(f);
	return err;
}

/* Drop [from, to) when it holds file pages (*file bytes of them): counted in *dropped. */
static int drop(uintptr_t from, uintptr_t to, long *file, long *dropped)
{
	if (!*file)
		return 0;
	if (madvise((void *)from, to - from, MADV_DONTNEED))
		return -1;
	*dropped += *file;
	*file = 0;
	return 0;
}

long filepages__drop(const void *addr, size_t len)
{
	long page = sysconf(_SC_PAGESIZE), dropped = 0, file = 0;
	uintptr_t start = 0, end = 0, run = 0;
	uint64_t pm[PM_BATCH];
	int fd, err;

	if (!addr || page <= 0)
		return 0;
	if (len) {
		start = (uintptr_t)addr & ~((uintptr_t)page - 1);
		end = ((uintptr_t)addr + len + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
	} else if ((err = find_mapping((uintptr_t)addr, &start, &end))) {
		return err == -ENOENT ? 0 : err;
	}
	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/*
	 * Runs between private copies (present or swapped), dropped a run at
	 * a time: pages not present go in with the file's, so that a mapping
	 * this process never wrote takes one madvise(), one TLB flush on every
	 * CPU that ran one of its threads, and not one per run of resident
	 * pages (see BENCHMARKS.md, "Real services", round 7).
	 */
	for (uintptr_t p = start; p < end;) {
		size_t n = (end - p) / page, k;
		ssize_t got;

		if (n > PM_BATCH)
			n = PM_BATCH;
		got = pread(fd, pm, n * sizeof(*pm), (off_t)(p / page * sizeof(*pm)));
		if (got <= 0) {
			err = got < 0 ? -errno : -EIO;
			break;
		}
		n = (size_t)got / sizeof(*pm);
		for (k = 0; k < n; k++, p += page) {
			bool copy =
				((pm[k] & PM_PRESENT) && !(pm[k] & PM_FILE)) || (pm[k] & PM_SWAP);

			if (pm[k] & PM_PRESENT && !copy)
				file += page;
			if (!copy && !run)
				run = p;
			if (copy && run) {
				err = drop(run, p, &file, &dropped) ? -errno : err;
				run = 0;
			}
		}
	}
	if (run && !err)
		err = drop(run, end, &file, &dropped) ? -errno : err;
	close(fd);
	return err ? err : dropped;
}
