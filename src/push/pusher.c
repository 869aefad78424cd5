// SPDX-License-Identifier: GPL-2.0-only
/*
 * The sender thread and its queue. One mutex guards the spool and the
 * counters; the network is only ever used without it, so pusher__enqueue
 * never waits for a request.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "push/pusher.h"
#include "push/pyroscope.h"
#include "push/spool.h"

struct pusher {
	pthread_mutex_t mu;
	pthread_cond_t wake; /* to the sender: work, or stop */
	pthread_cond_t done; /* from the sender: it ended */
	pthread_t thread;
	bool started, stopping, ended;
	uint64_t deadline_ms; /* monotonic; when stopping */
	volatile int abort;   /* read by libcurl's progress callback */
	struct spool *spool;
	struct pyroscope_target target;
	char *url;
	char auth[4096];
	char series[SPOOL_SERIES_MAX];
	int backoff_min_ms, backoff_max_ms;
	unsigned int seed;
	struct push_stats st;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void wait_until(struct pusher *p, pthread_cond_t *c, uint64_t ms)
{
	struct timespec ts = {.tv_sec = (time_t)(ms / 1000),
			      .tv_nsec = (long)(ms % 1000) * 1000000};

	pthread_cond_timedwait(c, &p->mu, &ts);
}

/* A pause of about d: between three quarters and five quarters of it. */
static uint64_t jitter(struct pusher *p, uint64_t d)
{
	return d - d / 4 + (d / 2 ? (uint64_t)rand_r(&p->seed) % (d / 2 + 1) : 0);
}

/*
 * Wait before the next try (mutex held): a pause that doubles from the
 * minimum to the maximum. New periods do not cut it short; stopping does.
 */
static void back_off(struct pusher *p, uint64_t *backoff)
{
	uint64_t until;

	*backoff = *backoff ? *backoff * 2 : (uint64_t)p->backoff_min_ms;
	if (*backoff > (uint64_t)p->backoff_max_ms)
		*backoff = (uint64_t)p->backoff_max_ms;
	for (until = now_ms() + jitter(p, *backoff); now_ms() < until;) {
		if (p->stopping && (p->abort || now_ms() >= p->deadline_ms))
			break;
		wait_until(p, &p->wake,
			   p->stopping && p->deadline_ms < until ? p->deadline_ms : until);
	}
}

static void *sender(void *arg)
{
	struct pusher *p = arg;
	uint64_t backoff = 0;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		char name[SPOOL_NAME_MAX], why[sizeof(p->st.last_error) - 64];
		struct spool_meta m;
		uint8_t *body;
		size_t len;
		int err;

		if (p->stopping && (p->abort || now_ms() >= p->deadline_ms))
			break;
		err = spool__oldest(p->spool, &m, &body, &len, name);
		if (err == -ENOENT) {
			if (p->stopping)
				break;
			pthread_cond_wait(&p->wake, &p->mu);
			continue;
		}
		if (err) {
			/* Out of memory, or the spool unreadable for now: try again later. */
			snprintf(p->st.last_error, sizeof(p->st.last_error),
				 "cannot read the push spool: %s", strerror(-err));
			back_off(p, &backoff);
			continue;
		}
		pthread_mutex_unlock(&p->mu);
		err = pyroscope__ingest(&p->target, m.series, m.from_ns, m.until_ns, body, len, why,
					sizeof(why));
		free(body);
		pthread_mutex_lock(&p->mu);
		if (!err) {
			backoff = 0;
			p->st.sent++;
			err = spool__sent(p->spool, name);
			if (err)
				snprintf(p->st.last_error, sizeof(p->st.last_error),
					 "cannot record %s as sent: %s", name, strerror(-err));
			continue;
		}
		if (err == -ECANCELED)
			break;
		snprintf(p->st.last_error, sizeof(p->st.last_error), "%s: %s", name, why);
		if (err != -EAGAIN) {
			spool__reject(p->spool, name);
			continue;
		}
		p->st.retries++;
		back_off(p, &backoff);
	}
	p->ended = true;
	pthread_cond_broadcast(&p->done);
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

static int cond_init(pthread_cond_t *c)
{
	pthread_condattr_t a;
	int err;

	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	err = pthread_cond_init(c, &a);
	pthread_condattr_destroy(&a);
	return err;
}

struct pusher *pusher__new(const struct push_opts *o, char *why, size_t whylen)
{
	struct spool_opts so = {
		.dir = o->spool_dir,
		.max_bytes = o->spool_max_bytes,
		.max_entries = o->spool_max_entries,
	};
	char host[256] = "";
	struct pusher *p;
	int err = 0;

	if (!o->url || (strncmp(o->url, "http://", 7) && strncmp(o->url, "https://", 8))) {
		snprintf(why, whylen, "the push URL must start with http:// or https://");
		errno = EINVAL;
		return NULL;
	}
	if (!o->spool_dir) {
		snprintf(why, whylen, "no push spool directory");
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&p->mu, NULL);
	cond_init(&p->wake);
	cond_init(&p->done);
	if (o->host)
		snprintf(host, sizeof(host), "%s", o->host);
	else if (gethostname(host, sizeof(host) - 1))
		host[0] = 0;
	err = pyroscope__series(p->series, sizeof(p->series),
				o->app ? o->app : PYROSCOPE_DEFAULT_APP, host, o->labels,
				o->nr_labels, why, whylen);
	if (!err && o->auth_file)
		err = pyroscope__auth_read(o->auth_file, p->auth, sizeof(p->auth), why, whylen);
	if (err)
		goto cleanup;
	p->url = strdup(o->url);
	if (!p->url) {
		err = -ENOMEM;
		snprintf(why, whylen, "out of memory");
		goto cleanup;
	}
	p->target = (struct pyroscope_target){
		.url = p->url,
		.auth = o->auth_file ? p->auth : NULL,
		.connect_timeout_ms = o->connect_timeout_ms,
		.timeout_ms = o->timeout_ms,
		.abort = &p->abort,
	};
	p->backoff_min_ms = o->backoff_min_ms > 0 ? o->backoff_min_ms : 1000;
	p->backoff_max_ms = o->backoff_max_ms > 0 ? o->backoff_max_ms : 60000;
	if (p->backoff_max_ms < p->backoff_min_ms)
		p->backoff_max_ms = p->backoff_min_ms;
	p->seed = (unsigned int)(now_ms() ^ (uint64_t)getpid() << 16);
	p->spool = spool__open(&so, why, whylen);
	if (!p->spool) {
		err = -errno;
		goto cleanup;
	}
	err = -pthread_create(&p->thread, NULL, sender, p);
	if (err) {
		snprintf(why, whylen, "cannot start the push sender: %s", strerror(-err));
		goto cleanup;
	}
	p->started = true;
cleanup:
	if (err) {
		pusher__free(p);
		errno = -err;
		return NULL;
	}
	return p;
}

int pusher__enqueue(struct pusher *p, const struct profile *prof, uint64_t from_ns,
		    uint64_t until_ns)
{
	struct spool_meta m = {.from_ns = from_ns, .until_ns = until_ns};
	uint8_t *body = NULL;
	size_t len;
	int err;

	/* Encoded outside the lock: the sender is never held up by it. */
	err = pyroscope__encode(prof, from_ns, until_ns, &body, &len);
	pthread_mutex_lock(&p->mu);
	if (!err) {
		snprintf(m.series, sizeof(m.series), "%s", p->series);
		err = spool__put(p->spool, &m, body, len);
	}
	if (err < 0)
		snprintf(p->st.last_error, sizeof(p->st.last_error),
			 "period at %llu ns not queued: %s", (unsigned long long)from_ns,
			 err == -EFBIG ? "larger than the whole spool" : strerror(-err));
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->mu);
	free(body);
	return err;
}

void pusher__stats(struct pusher *p, struct push_stats *st)
{
	struct spool_stats ss;

	pthread_mutex_lock(&p->mu);
	*st = p->st;
	spool__stats(p->spool, &ss);
	pthread_mutex_unlock(&p->mu);
	st->queued = ss.queued;
	st->queued_bytes = ss.queued_bytes;
	st->dropped = ss.dropped;
	st->failed = ss.failed;
}

int pusher__stop(struct pusher *p, int flush_ms)
{
	struct spool_stats ss;

	if (!p->started)
		return 0;
	pthread_mutex_lock(&p->mu);
	p->stopping = true;
	p->deadline_ms = now_ms() + (uint64_t)(flush_ms > 0 ? flush_ms : 0);
	if (flush_ms <= 0)
		p->abort = 1;
	pthread_cond_broadcast(&p->wake);
	while (!p->ended && now_ms() < p->deadline_ms)
		wait_until(p, &p->done, p->deadline_ms);
	/* A request still in flight at the deadline is given up. */
	p->abort = 1;
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->thread, NULL);
	p->started = false;
	spool__stats(p->spool, &ss);
	return ss.queued ? -EAGAIN : 0;
}

void pusher__free(struct pusher *p)
{
	if (!p)
		return;
	if (p->started)
		pusher__stop(p, 0);
	spool__close(p->spool);
	pthread_cond_destroy(&p->wake);
	pthread_cond_destroy(&p->done);
	pthread_mutex_destroy(&p->mu);
	explicit_bzero(p->auth, sizeof(p->auth));
	free(p->url);
	free(p);
}
