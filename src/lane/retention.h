/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Continuous mode's period directories under BASE, and their retention.
 *
 * A period is named by its start in UTC, to the second:
 * "2026-12-03T10:15:00Z" (period__name); it is staged as ".NAME.new" and
 * renamed to NAME when whole.
 *
 * retention__prune() removes, after each period:
 *   - period directories that started more than max_age_ns before now (the
 *     start, from the name: a period's length is not recorded in its name,
 *     so a period is judged by when it began, which errs towards keeping a
 *     period as long as max_age_ns after its start and never shorter);
 *   - then, oldest first, periods until those left total at most max_bytes
 *     (each period's size is the sum of st_blocks * 512 of the directory and
 *     what it holds: the disk it takes, not its files' lengths);
 *   - staged directories (".NAME.new") last modified more than an hour ago:
 *     left by a record that died while writing one.
 * The newest period is never removed, whatever the limits. Only an entry
 * whose name parses as a period (or a staged one) and that is a directory
 * holding a regular file offcpu.summary.json is a period: anything else
 * under BASE is not offcpu's and is left alone. Nothing is followed: a
 * symlink named like a period is left alone (and logged), and removal walks
 * by directory fd with O_NOFOLLOW, unlinking symlinks inside as links. A
 * period is renamed to ".NAME.new" before its files go: readers see it
 * whole or not at all, and a removal that fails halfway leaves a staged
 * directory that a call an hour later removes.
 *
 * Each removal, and each entry named like a period but left alone, is one
 * line on log (when not NULL).
 */
#ifndef OFFCPU_LANE_RETENTION_H
#define OFFCPU_LANE_RETENTION_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* "2026-12-03T10:15:00Z" and its NUL. */
#define PERIOD_NAME_LEN 21

/* Staged directories older than this are a dead record's leftovers. */
#define RETENTION_STAGED_MAX_AGE_NS (3600ULL * 1000000000ULL)

struct retention_cache;

struct retention {
	uint64_t max_age_ns; /* --keep; 0: no limit by age */
	uint64_t max_bytes;  /* --keep-size; 0: no limit by size */
	/*
	 * Optional (NULL: every period is measured at every call). The sizes
	 * measured by earlier calls, reused for a period directory whose
	 * device, inode, mtime and ctime have not changed: a written period
	 * does not change, and measuring a week of 15s periods (40,000
	 * directories) again after each one takes over a second.
	 */
	struct retention_cache *cache;
};

struct retention_stats {
	unsigned int periods;	     /* period directories seen, before removal */
	unsigned int removed_age;    /* removed as older than max_age_ns */
	unsigned int removed_size;   /* removed to get under max_bytes */
	unsigned int removed_staged; /* stale ".NAME.new" directories removed */
	unsigned int left_alone;     /* named like a period but not one (symlink, file, ...) */
	unsigned int errors;	     /* removals that failed (logged) */
	uint64_t bytes_kept;	     /* total of the periods left */
	uint64_t bytes_removed;
};

/* NULL with errno set. */
struct retention_cache *retention_cache__new(void);
void retention_cache__free(struct retention_cache *c);

/* The period name of a CLOCK_REALTIME time (seconds dropped below). 0 or -errno. */
int period__name(char *buf, size_t len, uint64_t realtime_ns);
/*
 * The start (ns since the epoch, a whole second) that name spells; exactly
 * the form period__name writes, a valid date: 0, or -EINVAL.
 */
int period__parse_name(const char *name, uint64_t *realtime_ns);
/* The same for a staged name, ".NAME.new". */
int period__parse_staged_name(const char *name, uint64_t *realtime_ns);

/*
 * Apply r to the periods in the directory open in base_fd (not closed) at
 * now_realtime_ns. st (may be NULL) is filled in. Returns 0, or the -errno
 * of the first failure (listing base, or a removal; the rest is still done).
 */
int retention__prune(int base_fd, const struct retention *r, uint64_t now_realtime_ns, FILE *log,
		     struct retention_stats *st);
/* The same on a path (opened O_DIRECTORY; symlinks in base itself are followed). */
int retention__prune_path(const char *base, const struct retention *r, uint64_t now_realtime_ns,
			  FILE *log, struct retention_stats *st);

#endif
