/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The pusher: each period's profile to a Pyroscope server, through the spool,
 * by a sender thread of its own (docs/push.md).
 *
 * The caller (record's period loop, or `offcpu push`) does:
 *
 *     struct pusher *p = pusher__new(&opts, why, sizeof(why));   // NULL: why says
 *     for each period:
 *             pusher__enqueue(p, profile, from_ns, until_ns);    // after the lane is written
 *     pusher__stop(p, 5000);      // send what is queued for up to 5 s; the rest stays
 *     pusher__free(p);
 *
 * pusher__enqueue encodes the profile and writes it to the spool on the
 * caller's thread (a few ms for a large profile, never the network), then
 * wakes the sender, which sends the oldest entry first: a 2xx removes it;
 * no connection, a timeout, 5xx, 408 or 429 are retried after a pause that
 * doubles from backoff_min_ms to backoff_max_ms (each pause jittered by up to
 * a quarter of it, so a fleet that lost its server does not come back in
 * step); any other status moves the entry to the spool's failed/ and the
 * sender goes on with the next. Entries left in the spool when the process
 * ends are sent by the next pusher on the same spool, oldest first.
 *
 * The caller may free its profile as soon as pusher__enqueue returns. All
 * functions but pusher__free may be called from any thread.
 *
 * Options are fixed for a pusher's life. To change them (record's SIGHUP),
 * stop and free it and make a new one on the same spool: nothing queued is
 * lost, and each entry keeps the series (labels) it was queued with. Only one
 * pusher (one process) may use a spool at a time: the second gets EBUSY.
 */
#ifndef OFFCPU_PUSH_PUSHER_H
#define OFFCPU_PUSH_PUSHER_H

#include <stddef.h>
#include <stdint.h>

#include "model/profile.h"

struct push_opts {
	const char *url;	   /* the Pyroscope server, e.g. http://pyroscope:4040 */
	const char *auth_file;	   /* NULL: no credential (pyroscope__auth_read) */
	const char *spool_dir;	   /* required; created when missing */
	const char *app;	   /* NULL: PYROSCOPE_DEFAULT_APP */
	const char *const *labels; /* "K=V", checked by pusher__new */
	size_t nr_labels;
	const char *host;	  /* NULL: gethostname() */
	uint64_t spool_max_bytes; /* 0: the spool's default */
	size_t spool_max_entries; /* 0: the spool's default */
	int connect_timeout_ms;	  /* 0: 5 s */
	int timeout_ms;		  /* one request, whole; 0: 30 s */
	int backoff_min_ms;	  /* 0: 1 s */
	int backoff_max_ms;	  /* 0: 60 s */
};

struct push_stats {
	uint64_t sent;	  /* accepted by the server, by this pusher */
	uint64_t retries; /* requests that failed and will be tried again */
	uint64_t failed;  /* refused for good (failed/), ever (the spool's count) */
	uint64_t dropped; /* removed to keep the spool's bounds, ever */
	size_t queued;	  /* in the spool now */
	uint64_t queued_bytes;
	char last_error[320]; /* the last failure, "" when none yet */
};

struct pusher;

/*
 * Check the options (labels, name, the auth file), open the spool and start
 * the sender. NULL with errno set and a one-line reason in why.
 */
struct pusher *pusher__new(const struct push_opts *o, char *why, size_t whylen);
/*
 * Queue one period [from_ns, until_ns) (realtime). 0; 1 when the period was
 * already queued or sent; -errno (-EFBIG: larger than the whole spool) with
 * the reason in the stats' last_error.
 */
int pusher__enqueue(struct pusher *p, const struct profile *prof, uint64_t from_ns,
		    uint64_t until_ns);
void pusher__stats(struct pusher *p, struct push_stats *st);
/*
 * Try to send what is queued for up to flush_ms (0: not at all), then stop
 * the sender, abandoning a request in flight. 0 when the spool is empty,
 * -EAGAIN when entries are left for the next run.
 */
int pusher__stop(struct pusher *p, int flush_ms);
/* Stops the sender first if pusher__stop was not called. Accepts NULL. */
void pusher__free(struct pusher *p);

#endif
