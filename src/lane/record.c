// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collect/external.h"
#include "collect/identity.h"
#include "collect/proc.h"
#include "lane/record.h"
#include "model/timeline.h"
#include "output/folded.h"
#include "output/profile_text.h"
#include "output/stacks_dump.h"
#include "output/summary.h"
#include "output/term.h"
#include "util/atomic_file.h"

#define EXIT_OFFCPU_FAILED 125

static volatile sig_atomic_t got_signal, nr_signals;
static volatile pid_t forward_pid;

/*
 * A terminal's ^C already reached the workload (same process group); a
 * signal sent to offcpu alone (kill, a supervisor) is passed on.
 */
static void on_signal(int sig, siginfo_t *si, void *uc)
{
	got_signal = sig;
	nr_signals++;
	if (forward_pid > 0 && si->si_code != SI_KERNEL)
		kill(forward_pid, sig);
}

static void install_handlers(void)
{
	struct sigaction sa = {};
	int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO; /* no SA_RESTART: waits must see the signal */
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static int mkdir_p(const char *dir)
{
	char buf[PATH_MAX];
	size_t len = strlen(dir);

	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, dir, len + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

/* Create (truncate) a lane file without following a planted symlink. */
static int open_out(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);

	return fd < 0 ? -errno : fd;
}

static void print_human(const struct lane *l, const struct lane_result *res)
{
	const struct profile *p = res->profile;
	char t[32];

	if (p && !profile__nr_rows(p) && !strcmp(res->outcome.state, "summary_written")) {
		fprintf(stderr, "offcpu: no off-CPU time: %s -> %s\n", res->outcome.caveat_message,
			l->summary_path);
		return;
	}
	if (!p || !profile__nr_rows(p)) {
		fprintf(stderr, "offcpu: no capture (%s: %s): %s; see %s\n", res->outcome.state,
			res->outcome.caveat_kind ? res->outcome.caveat_kind : "-",
			res->outcome.caveat_message, l->diagnostics_path);
		return;
	}
	term__ns(profile__totals(p)->all.off_ns, t, sizeof(t));
	fprintf(stderr, "offcpu: %s off-CPU in %zu stacks, %zu threads; capture %s -> %s\n", t,
		profile__nr_stacks(p), profile__nr_threads(p),
		integrity_status__name(res->integrity.status), l->summary_path);
	if (res->outcome.caveat_kind)
		fprintf(stderr, "offcpu: %s: %s\n", res->outcome.caveat_kind,
			res->outcome.caveat_message);
}

static int exit_status(const struct record_opts *o, const struct proc_end *w)
{
	if (o->target != TARGET_COMMAND)
		return 0;
	if (!w->started)
		return w->exec_errno == ENOENT ? 127 : 126;
	if (w->signal)
		return 128 + w->signal;
	return w->exit_code;
}

/* Stop an external collector: SIGINT, then SIGTERM, then SIGKILL. */
static void stop_external(struct proc *c, int timeout_ms, struct lane_evidence *ev)
{
	if (c->pid <= 0 || c->end.exited)
		return;
	proc__kill(c, SIGINT);
	ev->collector_stopped = true;
	while (proc__wait(c, nr_signals >= 2 ? 0 : timeout_ms) == -EINTR)
		;
	if (!c->end.exited) {
		ev->collector_timed_out = true;
		proc__kill(c, SIGTERM);
		if (proc__wait(c, 1000))
			proc__kill(c, SIGKILL), proc__wait(c, -1);
	}
	ev->collector = c->end;
	ev->collector.started = true;
}

/* Everything one run holds, so the steps below stay small. */
struct rec {
	struct record_opts *o;
	struct lane l;
	struct lane_evidence ev;
	struct lane_result res;
	struct summary_run run;
	struct identity id;
	struct proc work, coll;
	char **cargv, **cenv, **wenv;
	int cap_fd, diag_fd;
	FILE *diag;
	struct native *native;
	struct symbolizer *sym;
	struct timeline *timeline; /* record --timeline */
};

static int prepare(struct rec *r)
{
	struct record_opts *o = r->o;
	char msg[256] = "";
	int err;

	err = identity__resolve(&r->id, o->user, o->as_root, msg, sizeof(msg));
	if (err) {
		fprintf(stderr, "offcpu: %s\n", msg);
		return err;
	}
	err = lane__plan(&r->l, o->out_dir, o->mode, o->tool ? o->tool : "native");
	if (!err)
		err = mkdir_p(o->out_dir);
	if (err) {
		fprintf(stderr, "offcpu: cannot create output directory %s: %s\n", o->out_dir,
			strerror(-err));
		return err;
	}
	r->diag_fd = open_out(r->l.diagnostics_path);
	r->cap_fd = r->diag_fd < 0 ? r->diag_fd : open_out(r->l.capture_path);
	if (r->diag_fd < 0 || r->cap_fd < 0) {
		err = r->diag_fd < 0 ? r->diag_fd : r->cap_fd;
		fprintf(stderr, "offcpu: cannot write in %s: %s\n", o->out_dir, strerror(-err));
		return err;
	}
	/* A native lane's profile and timeline from an earlier run must not outlive it. */
	if ((unlink(r->l.profile_path) && errno != ENOENT) ||
	    (unlink(r->l.timeline_path) && errno != ENOENT)) {
		err = -errno;
		fprintf(stderr, "offcpu: cannot replace the files in %s: %s\n", o->out_dir,
			strerror(-err));
		return err;
	}
	return 0;
}

static int spawn_workload(struct rec *r)
{
	struct proc_opts wo = { .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1, .held = true };
	int err;

	if (r->id.drop) {
		wo.set_ids = true;
		wo.uid = r->id.uid;
		wo.gid = r->id.gid;
		wo.groups = r->id.groups;
		wo.nr_groups = (size_t)r->id.nr_groups;
	}
	r->wenv = identity__env(&r->id);
	if (!r->wenv)
		return -ENOMEM;
	wo.envp = r->wenv;
	err = proc__spawn(&r->work, r->o->argv, &wo);
	if (err) {
		fprintf(stderr, "offcpu: cannot start the workload: %s\n", strerror(-err));
		return err;
	}
	r->run.pid = r->work.pid;
	forward_pid = r->work.pid;
	return 0;
}

static int parse_pids(const char *s, int **out, size_t *n)
{
	size_t cap = 8;
	int *v = malloc(cap * sizeof(*v));
	char *end;

	*n = 0;
	if (!v)
		return -ENOMEM;
	while (*s) {
		long pid = strtol(s, &end, 10);

		if (end == s || pid <= 0 || pid > 0x3fffffff || (*end && *end != ',')) {
			free(v);
			return -EINVAL;
		}
		if (*n == cap) {
			int *nv = realloc(v, (cap *= 2) * sizeof(*v));

			if (!nv) {
				free(v);
				return -ENOMEM;
			}
			v = nv;
		}
		v[(*n)++] = (int)pid;
		s = *end ? end + 1 : end;
	}
	*out = v;
	return *n ? 0 : -EINVAL;
}

static int start_native(struct rec *r)
{
	struct native_opts *no = &r->o->native;
	struct symbolizer_opts so = {};
	int *pids = NULL;
	size_t nr = 0;
	int err = 0;

	r->ev.tool_available = true;
	r->diag = fdopen(r->diag_fd, "w");
	if (!r->diag)
		return -errno;
	r->diag_fd = -1;
	setvbuf(r->diag, NULL, _IOLBF, 0);
	no->diag = r->diag;
	switch (r->o->target) {
	case TARGET_COMMAND:
		no->follow_pid = r->work.pid;
		break;
	case TARGET_PIDS:
		err = parse_pids(r->o->target_arg, &pids, &nr);
		if (err)
			return err;
		no->pids = pids;
		no->nr_pids = nr;
		break;
	case TARGET_CGROUP:
		no->cgroup = r->o->target_arg;
		break;
	case TARGET_HOST:
		no->all = true;
		break;
	}
	r->sym = symbolizer__new(&so);
	/* Processes are tracked while they live, so those that exit still symbolize. */
	no->sym = r->sym;
	if (r->o->timeline) {
		r->timeline = timeline__new();
		if (!r->timeline)
			return -ENOMEM;
		no->timeline = r->timeline;
		no->timeline_min_ns = r->o->timeline_min_ns;
	}
	r->native = native__start(no);
	if (!r->native) {
		r->ev.collector_errno = errno ? errno : EINVAL;
		r->ev.collector.started = false;
		if (!r->o->quiet)
			fprintf(stderr, "offcpu: the native collector could not start: %s; see %s\n",
				strerror(r->ev.collector_errno), r->l.diagnostics_path);
	} else {
		r->ev.collector.started = true;
		r->ev.collector_ready = true;
		r->ev.native_attached = true;
	}
	free(pids);
	no->pids = NULL;
	return 0;
}

static int start_external(struct rec *r)
{
	struct proc_opts co = { .stdin_fd = -1, .stdout_fd = r->cap_fd, .stderr_fd = r->diag_fd };
	char tool_path[PATH_MAX];
	int err;

	if (r->o->target != TARGET_COMMAND) {
		fprintf(stderr, "offcpu: --tool %s follows a command; -p, -a and --cgroup need the "
				"native collector\n",
			r->l.tool);
		return -EINVAL;
	}
	r->ev.tool_available = !proc__resolve_exe(r->l.tool, tool_path, sizeof(tool_path));
	if (!r->ev.tool_available)
		return 0;
	r->cargv = external__argv(&r->l, tool_path, r->work.pid);
	r->cenv = external__envp(&r->l);
	if (!r->cargv || !r->cenv)
		return -ENOMEM;
	co.envp = r->cenv;
	r->run.collector_argv = r->cargv;
	/* bpftrace writes the capture through -o; its stdout must not share that file. */
	if (r->l.collector == COLLECTOR_BPFTRACE) {
		close(r->cap_fd);
		r->cap_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
		co.stdout_fd = r->cap_fd;
	}
	err = proc__spawn(&r->coll, r->cargv, &co);
	if (err) {
		r->ev.collector.exec_errno = -err;
		return 0;
	}
	r->ev.collector.started = true;
	r->ev.collector_ready = proc__wait_attached(&r->coll, r->o->ready_timeout_ms) == 1;
	if (!r->ev.collector_ready && proc__wait(&r->coll, 0) == -ETIMEDOUT && !r->o->quiet)
		fprintf(stderr, "offcpu: the collector did not attach within %d ms; running the "
				"workload anyway\n",
			r->o->ready_timeout_ms);
	return 0;
}

/* Release the workload (or start the clock) and wait for the end of the capture. */
static void run(struct rec *r)
{
	uint64_t t0, deadline;
	struct timespec rt;

	clock_gettime(CLOCK_REALTIME, &rt);
	r->run.started_unix_ns = (int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec;
	t0 = proc__now_ns();
	deadline = r->o->duration_ns ? t0 + r->o->duration_ns : 0;
	if (r->o->target == TARGET_COMMAND)
		proc__release(&r->work);
	for (;;) {
		int wait_ms = 200;

		if (deadline) {
			uint64_t now = proc__now_ns();

			if (now >= deadline)
				break;
			if ((deadline - now) / 1000000 < 200)
				wait_ms = (int)((deadline - now) / 1000000) + 1;
		}
		if (r->o->target == TARGET_COMMAND) {
			int err = proc__wait(&r->work, r->native ? wait_ms : -1);

			if (!err)
				break;
			/* A second interrupt aborts: stop waiting, but still leave a summary. */
			if (err == -EINTR && nr_signals >= 2)
				proc__kill(&r->work, SIGKILL);
		} else {
			if (got_signal)
				break;
			if (!r->native)
				break;
			native__poll(r->native, wait_ms);
		}
		if (r->native)
			native__poll(r->native, 0);
	}
	r->run.wall_ns = proc__now_ns() - t0;
	forward_pid = 0;
	r->ev.workload = r->work.end;
	r->run.workload = r->work.end;
	r->ev.interrupted = got_signal != 0;
}

/* The native lane's files, written atomically: a reader sees old or whole. */
struct lane_files {
	const struct profile *p;
	const struct timeline *t;
};

static int put_folded(FILE *f, const void *arg)
{
	return folded__write(f, ((const struct lane_files *)arg)->p);
}

static int put_stacks(FILE *f, const void *arg)
{
	return stacks_dump__write(f, ((const struct lane_files *)arg)->p);
}

static int put_profile(FILE *f, const void *arg)
{
	return profile_text__write(f, ((const struct lane_files *)arg)->p);
}

/* The timeline next to the profile whose stack ids it uses. */
static int put_timeline(FILE *f, const void *arg)
{
	const struct lane_files *lf = arg;

	return timeline__write(f, lf->t, lf->p);
}

static int stop_native(struct rec *r)
{
	struct lane_files lf;
	int err;

	r->res.profile = profile__new();
	if (!r->res.profile)
		return -ENOMEM;
	if (!r->native)
		return 0;
	err = native__stop(r->native, r->res.profile, &r->res.integrity, r->sym);
	if (err) {
		fprintf(r->diag, "offcpu: reading the collector's maps failed: %s\n", strerror(-err));
		integrity__add_loss(&r->res.integrity, "drain_failed", 1, 0);
	}
	r->ev.collector.exited = true;
	fflush(r->diag);
	lf = (struct lane_files){r->res.profile, r->timeline};
	err = atomic_file__write(r->l.capture_path,
				 r->o->mode == LANE_STACKS ? put_stacks : put_folded, &lf);
	if (!err)
		err = atomic_file__write(r->l.profile_path, put_profile, &lf);
	if (!err && r->timeline)
		err = atomic_file__write(r->l.timeline_path, put_timeline, &lf);
	if (err)
		fprintf(stderr, "offcpu: cannot write the capture in %s: %s\n", r->o->out_dir,
			strerror(-err));
	return err;
}

static void give_files_to_user(struct rec *r)
{
	const char *paths[] = { r->l.dir, r->l.capture_path, r->l.diagnostics_path,
				r->l.summary_path, r->l.profile_path, r->l.timeline_path };

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		identity__chown(&r->id, paths[i]);
}

static void cleanup(struct rec *r)
{
	if (r->work.pid > 0 && !r->work.end.exited) {
		proc__kill(&r->work, SIGKILL);
		proc__wait(&r->work, -1);
	}
	if (r->coll.pid > 0 && !r->coll.end.exited) {
		proc__kill(&r->coll, SIGKILL);
		proc__wait(&r->coll, -1);
	}
	proc__close(&r->work);
	proc__close(&r->coll);
	if (r->cap_fd >= 0)
		close(r->cap_fd);
	if (r->diag_fd >= 0)
		close(r->diag_fd);
	if (r->diag)
		fclose(r->diag);
	native__free(r->native);
	timeline__free(r->timeline);
	symbolizer__free(r->sym);
	external__argv_free(r->cargv);
	external__envp_free(r->cenv);
	identity__env_free(r->wenv);
	lane_result__free(&r->res);
}

static const char *const target_names[] = { "command", "pids", "cgroup", "host" };

int record__run(struct record_opts *o)
{
	struct rec r = { .o = o, .cap_fd = -1, .diag_fd = -1 };
	const struct sym_binary *bins = NULL;
	size_t nr_bins = 0;
	int status = EXIT_OFFCPU_FAILED, err;

	r.work = r.coll = (struct proc){ .pid = -1, .go_fd = -1, .err_fd = -1, .pidfd = -1 };
	r.run.target = target_names[o->target];
	r.run.target_arg = o->target_arg;
	r.run.argv = o->target == TARGET_COMMAND ? o->argv : NULL;
	if (prepare(&r))
		goto out;
	install_handlers();
	if (o->target == TARGET_COMMAND && spawn_workload(&r))
		goto out;
	err = r.l.collector == COLLECTOR_NATIVE ? start_native(&r) : start_external(&r);
	if (err) {
		if (err != -EINVAL)
			fprintf(stderr, "offcpu: cannot start the collector: %s\n", strerror(-err));
		goto out;
	}
	if (o->target != TARGET_COMMAND && r.native && !o->quiet) {
		char d[32] = "";

		if (o->duration_ns)
			snprintf(d, sizeof(d), " or after %.3g s", o->duration_ns / 1e9);
		fprintf(stderr, "offcpu: tracing %s%s%s; stop with ^C%s\n", r.run.target,
			o->target_arg ? " " : "", o->target_arg ? o->target_arg : "", d);
	}
	/* External collectors write the capture themselves (bpftrace through -o). */
	close(r.cap_fd);
	r.cap_fd = -1;
	run(&r);
	if (r.l.collector == COLLECTOR_NATIVE) {
		if (stop_native(&r))
			goto summary_failed;
		if (r.sym)
			bins = symbolizer__binaries(r.sym, &nr_bins);
	} else if (r.coll.pid > 0) {
		stop_external(&r.coll, o->stop_timeout_ms, &r.ev);
	}
	err = lane__summarize(&r.l, &r.ev, &r.run, bins, nr_bins, &r.res);
	if (err) {
		fprintf(stderr, "offcpu: cannot write %s: %s\n", r.l.summary_path, strerror(-err));
		goto summary_failed;
	}
	give_files_to_user(&r);
	if (!o->quiet)
		print_human(&r.l, &r.res);
	if (o->json) {
		struct summary_input si = { .lane = &r.l, .outcome = &r.res.outcome,
					    .integrity = &r.res.integrity, .run = &r.run };

		summary__write_record(stdout, &si);
		fflush(stdout);
	}
summary_failed:
	/* Whatever happened to the summary, the workload's result is kept. */
	status = exit_status(o, &r.work.end);
	/* Watching -p/--cgroup/-a with a collector that never attached recorded nothing. */
	if (o->target != TARGET_COMMAND && r.l.collector == COLLECTOR_NATIVE && !r.native)
		status = EXIT_OFFCPU_FAILED;
out:
	cleanup(&r);
	return status;
}
