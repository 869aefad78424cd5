/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The push spool: a bounded on-disk queue of periods not yet accepted by the
 * server, which outlives offcpu (docs/push.md, "The spool").
 *
 *   DIR/lock                  flock()ed by the one process that uses DIR
 *   DIR/<from_ns>.push        one period: a text header (from_ns, until_ns,
 *                             series, size), an empty line, the body; the name
 *                             is the period's start, 20 digits, so names sort
 *                             oldest first and a period is one entry however
 *                             often it is put
 *   DIR/sent                  the names the server accepted, one a line (the
 *                             last SPOOL_SENT_KEEP): a period put again after
 *                             it was sent is not sent twice
 *   DIR/state                 counters kept across restarts: dropped, failed
 *   DIR/failed/<from_ns>.push entries the server refused for good, kept to read
 *   DIR/.tmp-*                an entry being written; one left by a crash is
 *                             removed at open
 *
 * Each entry is written whole (temporary file, fsync, rename, fsync of DIR)
 * before spool__put returns; spool__sent records the name in DIR/sent (fsync)
 * before it unlinks the entry, and an entry whose name is already there is
 * removed at open without being sent. What can still be sent twice is a
 * period the server accepted while offcpu died before DIR/sent was synced.
 *
 * Not thread-safe: the pusher serializes calls.
 */
#ifndef OFFCPU_PUSH_SPOOL_H
#define OFFCPU_PUSH_SPOOL_H

#include <stddef.h>
#include <stdint.h>

#define SPOOL_DEFAULT_MAX_BYTES (256ull << 20)
#define SPOOL_DEFAULT_MAX_ENTRIES 10000
#define SPOOL_SENT_KEEP 10000
#define SPOOL_SERIES_MAX 2048
#define SPOOL_NAME_MAX 32

struct spool_opts {
	const char *dir;    /* created (0700) when missing */
	uint64_t max_bytes; /* 0: SPOOL_DEFAULT_MAX_BYTES */
	size_t max_entries; /* 0: SPOOL_DEFAULT_MAX_ENTRIES */
};

struct spool_meta {
	uint64_t from_ns, until_ns; /* realtime */
	char series[SPOOL_SERIES_MAX];
};

struct spool_stats {
	size_t queued;
	uint64_t queued_bytes;
	uint64_t dropped; /* oldest entries removed to stay within the bounds, ever */
	uint64_t failed;  /* entries moved to failed/, ever */
};

struct spool;

/* NULL with errno and why: -EBUSY when another process holds DIR. */
struct spool *spool__open(const struct spool_opts *o, char *why, size_t whylen);
/*
 * Queue one period (durable when this returns 0). 1: the period is already
 * queued, or was sent: nothing written. The oldest entries are dropped (and
 * counted) to make room; -EFBIG when the body alone exceeds max_bytes (it is
 * counted as dropped). -errno on a write error.
 */
int spool__put(struct spool *s, const struct spool_meta *m, const void *body, size_t len);
/*
 * The oldest entry: its meta, a malloc()ed copy of its body and its name.
 * -ENOENT when empty. An entry that cannot be read back is moved to failed/
 * and the next one is returned.
 */
int spool__oldest(struct spool *s, struct spool_meta *m, uint8_t **body, size_t *len,
		  char name[SPOOL_NAME_MAX]);
/* The server accepted name: recorded as sent, then removed. */
int spool__sent(struct spool *s, const char *name);
/* The server refused name for good: moved to failed/ and counted. */
int spool__reject(struct spool *s, const char *name);
void spool__stats(const struct spool *s, struct spool_stats *st);
void spool__close(struct spool *s);

#endif
