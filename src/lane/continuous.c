// SPDX-License-Identifier: GPL-2.0-only
/*
 * record --every: the collector stays attached for the whole run; at each
 * boundary (wall-clock multiples of the period, in UTC; the first period is
 * shorter) native__cut() hands over the period, which becomes a lane
 * directory BASE/<start>/ like any `record -o DIR` (summary, capture,
 * lossless profile, diagnostics), staged as BASE/.<start>.new and renamed
 * when whole. Then the period is queued for the push and the retention is
 * applied. SIGTERM or SIGINT (or -d) ends the run with a last, shorter
 * period written by native__stop(); SIGHUP reads the --config file again.
 * Docs: docs/continuous.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collect/native.h"
#include "collect/proc.h"
#include "lane/record_priv.h"
#include "lane/retention.h"
#include "output/folded.h"
#include "output/profile_text.h"
#include "push/pusher.h"
#include "util/atomic_file.h"

/* How long the last period's push may take at the end before it is left queued. */
#define FLUSH_AT_END_MS 5000

struct cont {
	struct rec *r;
	struct continuous_opts co; /* the options, or those SIGHUP read again */
	bool co_owned;		   /* co came from a reload: free it */
	struct pusher *push;
	char spool[4096];
	struct retention_cache *cache;
	long diag_off; /* run diagnostics already copied into a period */
	uint64_t written, failed;
};

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The realtime of a CLOCK_MONOTONIC instant (the collector's clock). */
static uint64_t mono_to_rt(uint64_t mono)
{
	uint64_t rt = realtime_ns(), now = proc__now_ns();

	return now >= mono ? rt - (now - mono) : rt + (mono - now);
}

/* The next boundary after rt: the next multiple of every since the epoch. */
static uint64_t next_boundary(uint64_t rt, uint64_t every)
{
	return (rt / every + 1) * every;
}

static void pusher_start(struct cont *c)
{
	struct push_opts po = {
		.url = c->co.push_url,
		.auth_file = c->co.push_auth,
		.spool_dir = c->spool,
		.labels = c->co.labels,
		.nr_labels = c->co.nr_labels,
	};
	char why[512];

	if (!c->co.push_url)
		return;
	if (c->co.push_spool)
		snprintf(c->spool, sizeof(c->spool), "%s", c->co.push_spool);
	else
		snprintf(c->spool, sizeof(c->spool), "%s/.push-spool", c->r->o->out_dir);
	c->push = pusher__new(&po, why, sizeof(why));
	if (!c->push) {
		fprintf(stderr, "offcpu record: --push %s: %s; periods are written, not pushed\n",
			c->co.push_url, why);
		fprintf(c->r->diag, "push: %s: %s\n", c->co.push_url, why);
	}
}

static void pusher_end(struct cont *c, int flush_ms)
{
	struct push_stats st;

	if (!c->push)
		return;
	if (pusher__stop(c->push, flush_ms) == -EAGAIN) {
		pusher__stats(c->push, &st);
		if (!c->r->o->quiet)
			fprintf(stderr,
				"offcpu: %zu periods left in %s for the next run to push (%s)\n",
				st.queued, c->spool, st.last_error[0] ? st.last_error : "not sent");
	}
	pusher__free(c->push);
	c->push = NULL;
}

static void opts_release(struct cont *c)
{
	if (c->co_owned && c->co.free_owner)
		c->co.free_owner(c->co.owner);
	c->co_owned = false;
}

/* SIGHUP: the --config file again; the collector and the periods go on. */
static void reload(struct cont *c)
{
	struct continuous_opts co = {0};
	char why[512] = "";
	int err;

	if (!c->r->o->reload) {
		fprintf(c->r->diag, "SIGHUP: no --config to read again\n");
		return;
	}
	err = c->r->o->reload(c->r->o, &co, why, sizeof(why));
	if (err) {
		fprintf(stderr, "offcpu record: SIGHUP: %s; the settings stay as they were\n", why);
		fprintf(c->r->diag, "SIGHUP: %s; the settings stay as they were\n", why);
		return;
	}
	/* What is queued stays in the spool; the new pusher sends it. */
	pusher_end(c, 0);
	opts_release(c);
	c->co = co;
	c->co_owned = true;
	pusher_start(c);
	fprintf(c->r->diag, "SIGHUP: %s read again\n", c->r->o->config);
}

/* The run's diagnostics written since the last period, into this one's. */
static int put_diag(FILE *f, const void *arg)
{
	struct cont *c = (struct cont *)arg;
	char buf[8192];
	size_t got;
	FILE *in;

	fflush(c->r->diag);
	in = fopen(c->r->st.diagnostics_path, "r");
	if (!in)
		return 0; /* nothing to copy is no failure */
	if (fseek(in, c->diag_off, SEEK_SET) == 0) {
		while ((got = fread(buf, 1, sizeof(buf), in)) > 0) {
			if (fwrite(buf, 1, got, f) != got)
				break;
			c->diag_off += (long)got;
		}
	}
	fclose(in);
	if (ferror(f))
		return -EIO;
	/* Copied: the run's log starts again, so that it does not grow for days. */
	if (!ftruncate(fileno(c->r->diag), 0) && !fseek(c->r->diag, 0, SEEK_SET))
		c->diag_off = 0;
	return 0;
}

static int put_folded(FILE *f, const void *arg)
{
	return folded__write(f, arg);
}

static int put_profile(FILE *f, const void *arg)
{
	return profile_text__write(f, arg);
}

/* Write one period's lane directory; its profile and integrity are in res. */
/*
 * [from_rt, until_rt): the period as cut; name_rt, push_until_rt: its
 * boundaries on the clock (the cut comes a little after a boundary), which
 * name it and place it for the push.
 */
static int period_write(struct cont *c, struct lane_result *res, uint64_t from_rt,
			uint64_t until_rt, uint64_t name_rt, uint64_t push_until_rt,
			const char *ended_by)
{
	struct rec *r = c->r;
	const struct sym_binary *bins = NULL;
	struct summary_run run = r->run;
	struct lane_evidence ev = r->ev;
	char name[64], staged[80], path[4096];
	size_t nr_bins = 0;
	struct lane l;
	int err;

	if ((err = period__name(name, sizeof(name), name_rt)))
		return err;
	snprintf(staged, sizeof(staged), ".%s.new", name);
	if (snprintf(path, sizeof(path), "%s/%s", r->o->out_dir, staged) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	if (mkdirat(r->dir_fd, staged, 0755) && errno != EEXIST)
		return -errno;
	if ((err = lane__plan(&l, path, LANE_TIME, "native")))
		return err;
	if ((err = atomic_file__write(l.diagnostics_path, put_diag, c)) ||
	    (err = atomic_file__write(l.capture_path, put_folded, res->profile)) ||
	    (err = atomic_file__write(l.profile_path, put_profile, res->profile)))
		return err;
	run.started_unix_ns = (int64_t)from_rt;
	run.wall_ns = until_rt - from_rt;
	run.ended_by = ended_by;
	ev.interrupted = ended_by && !strcmp(ended_by, "interrupt");
	if (r->sym)
		bins = symbolizer__binaries(r->sym, &nr_bins);
	if ((err = lane__summarize(&l, &ev, &run, bins, nr_bins, res)))
		return err;
	if (renameat(r->dir_fd, staged, r->dir_fd, name))
		return -errno;
	if (c->push && pusher__enqueue(c->push, res->profile, name_rt, push_until_rt) < 0) {
		struct push_stats ps;

		pusher__stats(c->push, &ps);
		fprintf(stderr, "offcpu record: %s is written but not queued for the push: %s\n",
			name, ps.last_error);
	}
	if (!r->o->quiet) {
		const struct profile_totals *t = profile__totals(res->profile);

		fprintf(stderr, "offcpu: %s/%s: %.3f s off the CPU in %zu threads, capture %s\n",
			r->o->out_dir, name, t->all.off_ns / 1e9, profile__nr_threads(res->profile),
			integrity_status__name(res->integrity.status));
	}
	return 0;
}

static void retention_apply(struct cont *c)
{
	struct retention ret = {
		.max_age_ns = c->co.keep_ns,
		.max_bytes = c->co.keep_bytes,
		.cache = c->cache,
	};

	if (ret.max_age_ns || ret.max_bytes)
		retention__prune(c->r->dir_fd, &ret, realtime_ns(),
				 c->r->o->quiet ? c->r->diag : stderr, NULL);
}

/*
 * The period that ends now: a cut (or the stop, last), written. A period
 * that cannot be written is said and counted; the run goes on.
 */
static void period_end(struct cont *c, uint64_t *from_rt, uint64_t *name_rt, uint64_t boundary,
		       bool last, const char *ended_by)
{
	struct rec *r = c->r;
	struct lane_result res = {0};
	uint64_t at = 0, until_rt;
	int err;

	res.profile = profile__new();
	if (!res.profile) {
		err = -ENOMEM;
		goto fail;
	}
	if (last)
		err = native__stop(r->native, res.profile, &res.integrity, r->sym);
	else
		err = native__cut(r->native, res.profile, &res.integrity, r->sym, &at);
	until_rt = last ? realtime_ns() : mono_to_rt(at);
	if (err) {
		fprintf(r->diag, "offcpu: reading the collector's maps failed: %s\n",
			strerror(-err));
		integrity__add_loss(&res.integrity, "drain_failed", 1, 0);
	}
	err = period_write(c, &res, *from_rt, until_rt, *name_rt, last ? until_rt : boundary,
			   ended_by);
	*from_rt = until_rt;
	*name_rt = boundary;
	if (!err) {
		c->written++;
		lane_result__free(&res);
		retention_apply(c);
		return;
	}
fail:
	c->failed++;
	fprintf(stderr, "offcpu record: cannot write the period in %s: %s\n", r->o->out_dir,
		atomic_file__strerror(err));
	lane_result__free(&res);
}

int continuous__run(struct rec *r)
{
	struct cont c = {.r = r, .co = r->o->cont};
	uint64_t every = r->o->every_ns, from_rt, name_rt, next, end = 0;
	const char *ended_by = NULL;

	rec__hup_reloads();
	c.cache = retention_cache__new();
	pusher_start(&c);
	r->t0 = proc__now_ns();
	from_rt = name_rt = realtime_ns();
	r->run.started_unix_ns = (int64_t)from_rt;
	if (r->o->duration_ns)
		end = r->t0 + r->o->duration_ns;
	next = next_boundary(from_rt, every);
	if (!r->o->quiet)
		fprintf(stderr, "offcpu: a period every %.3g s into %s/; stop with ^C or SIGTERM\n",
			every / 1e9, r->o->out_dir);
	for (;;) {
		uint64_t now = proc__now_ns(), rt = realtime_ns(), wait;

		if (rec__stop_signal()) {
			ended_by = "interrupt";
			break;
		}
		if (end && now >= end) {
			ended_by = "deadline";
			break;
		}
		if (rec__take_hup())
			reload(&c);
		if (rt >= next) {
			period_end(&c, &from_rt, &name_rt, next, false, NULL);
			next = next_boundary(realtime_ns(), every);
			continue;
		}
		wait = next - rt;
		if (end && end - now < wait)
			wait = end - now;
		/* The collector's events wake us; drains keep its maps bounded. */
		native__poll(r->native, (int)(wait / 1000000 < 200 ? wait / 1000000 + 1 : 200));
	}
	period_end(&c, &from_rt, &name_rt, 0, true, ended_by);
	pusher_end(&c, FLUSH_AT_END_MS);
	retention_cache__free(c.cache);
	opts_release(&c);
	if (!r->o->quiet)
		fprintf(stderr, "offcpu: %" PRIu64 " periods written in %s/%s\n", c.written,
			r->o->out_dir, c.failed ? ", some could not be" : "");
	return c.failed ? EXIT_OFFCPU_FAILED : 0;
}
