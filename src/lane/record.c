// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "collect/external.h"
#include "collect/identity.h"
#include "collect/proc.h"
#include "lane/record.h"
#include "lane/record_priv.h"
#include "output/timeline.h"
#include "output/folded.h"
#include "output/profile_text.h"
#include "output/stacks_dump.h"
#include "output/summary.h"
#include "output/term.h"
#include "util/atomic_file.h"
#include "util/vec.h"

static volatile sig_atomic_t got_signal, nr_signals;
static volatile sig_atomic_t hup_reloads, got_hup; /* continuous mode: SIGHUP reloads */
static volatile pid_t forward_pgid;
/* The descriptor of a drawn status line, erased before offcpu stops on ^Z; -1: none. */
static volatile sig_atomic_t status_fd = -1;

/*
 * The workload leads its own process group, outside the terminal's
 * foreground group (until it needs the terminal, see share_terminal), so
 * every signal that asks offcpu to stop, a terminal's ^C included, is passed
 * on to the whole group; a second one kills it.
 */
static void on_signal(int sig)
{
	int saved = errno;

	if (sig == SIGHUP && hup_reloads) {
		got_hup = 1;
		return;
	}
	got_signal = sig;
	nr_signals++;
	if (forward_pgid > 0)
		kill(-forward_pgid, nr_signals >= 2 ? SIGKILL : sig);
	errno = saved;
}

/* ^Z stops the workload's group with offcpu; fg or bg continues both. */
static void on_job_control(int sig)
{
	int saved = errno;

	if (forward_pgid > 0)
		kill(-forward_pgid, sig);
	/* The shell's "Stopped" line must not land on the status line. */
	if (sig == SIGTSTP && status_fd >= 0 && write(status_fd, "\r\033[K", 4) < 0)
		status_fd = -1;
	if (sig == SIGTSTP)
		raise(SIGSTOP);
	errno = saved;
}

static void install_handlers(void)
{
	struct sigaction sa = {};
	int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

	sa.sa_handler = on_signal;
	sa.sa_flags = 0; /* no SA_RESTART: waits must see the signal */
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	sa.sa_handler = on_job_control;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGTSTP, &sa, NULL);
	sigaction(SIGCONT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* Inherited SIG_IGN would reap children unseen: their status is the result. */
	signal(SIGCHLD, SIG_DFL);
}

int rec__stop_signal(void)
{
	return got_signal;
}

bool rec__take_hup(void)
{
	bool hup = got_hup;

	got_hup = 0;
	return hup;
}

void rec__hup_reloads(void)
{
	hup_reloads = 1;
}

static void print_human(const struct lane *l, const struct lane_result *res)
{
	const struct profile *p = res->profile;
	const struct integrity *in = &res->integrity;
	char t[32], ns[48], nt[48], edges[96] = "", nr[48] = "";
	const struct integrity_loss *never;
	uint64_t n, e_ns;

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
	/* Edges and an interrupt are facts about the window, said once, never as a loss. */
	integrity__sum(in, INTEGRITY_EDGE, &n, &e_ns);
	/* A wait through the whole window is at both edges: one wait. */
	never = integrity__loss(in, "threads_never_ran");
	if (never && never->count <= n)
		n -= never->count;
	if (n)
		snprintf(edges, sizeof(edges), " (%s in progress at the edges counted)",
			 term__count(n, "wait", "waits", nt, sizeof(nt)));
	term__ns(profile__totals(p)->all.off_ns, t, sizeof(t));
	if (never && never->count)
		snprintf(nr, sizeof(nr), " (%llu never ran)", (unsigned long long)never->count);
	fprintf(stderr, "offcpu: %s off-CPU in %s, %s%s; capture %s%s%s -> %s\n", t,
		term__count(profile__nr_stacks(p), "stack", "stacks", ns, sizeof(ns)),
		term__count(profile__nr_threads(p), "thread", "threads", nt, sizeof(nt)), nr,
		integrity_status__name(in->status), edges,
		integrity__loss(in, "interrupted") && integrity__loss(in, "interrupted")->count
			? ", interrupted"
			: "",
		l->summary_path);
	if (res->outcome.caveat_kind)
		fprintf(stderr, "offcpu: %s: %s\n", res->outcome.caveat_kind,
			res->outcome.caveat_message);
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

static int exit_status(const struct record_opts *o, const struct rec *r)
{
	const struct proc_end *w = &r->run.workload;

	if (o->target != TARGET_COMMAND)
		return 0;
	/* Interrupted before it ran: the shell's answer to the signal, not 126. */
	if (!w->started && w->exec_errno == EINTR)
		return 128 + (r->interrupted_by ? r->interrupted_by : SIGINT);
	if (!w->started)
		return w->exec_errno == ENOENT ? 127 : 126;
	if (w->signal)
		return 128 + w->signal;
	return w->exit_code;
}

static int spawn_workload(struct rec *r)
{
	struct proc_opts wo = {.stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1, .held = true};
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
	wo.own_group = true;
	err = proc__spawn(&r->work, r->o->argv, &wo);
	if (err) {
		fprintf(stderr, "offcpu: cannot start the workload: %s\n", strerror(-err));
		return err;
	}
	r->run.pid = r->work.pid;
	forward_pgid = r->work.pid;
	return 0;
}

static int start_native(struct rec *r)
{
	struct native_opts *no = &r->o->native;
	/* Inlined functions where debug info has them: the frames a reader knows. */
	struct symbolizer_opts so = {.inlines = !r->o->no_inline};

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
		no->pids = r->o->pids;
		no->nr_pids = r->o->nr_pids;
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
			fprintf(stderr,
				"offcpu: the native collector could not start: %s; see %s\n",
				strerror(r->ev.collector_errno), r->l.diagnostics_path);
	} else {
		r->ev.collector.started = true;
		r->ev.collector_ready = true;
		r->ev.native_attached = true;
	}
	return 0;
}

/* Milliseconds from now until t (rounded up), at most max; max when t is 0 (never). */
static int ms_until(uint64_t now, uint64_t t, int max)
{
	if (!t)
		return max;
	if (t <= now)
		return 0;
	return (t - now) / 1000000 < (uint64_t)max ? (int)((t - now) / 1000000) + 1 : max;
}

/* proc__wait_attached in short steps, so that an interrupt ends the wait. */
static int wait_attached(struct rec *r)
{
	uint64_t end = proc__now_ns() + (uint64_t)r->o->ready_timeout_ms * 1000000;
	int ret;

	do {
		uint64_t now = proc__now_ns();

		ret = proc__wait_attached(&r->coll, now < end ? ms_until(now, end, 100) : 0);
	} while (ret == -ETIMEDOUT && !got_signal && proc__now_ns() < end);
	return ret;
}

static int start_external(struct rec *r)
{
	struct proc_opts co = {.stdin_fd = -1, .stdout_fd = r->cap_fd, .stderr_fd = r->diag_fd};
	char tool_path[PATH_MAX];
	int err;

	if (r->o->target != TARGET_COMMAND) {
		fprintf(stderr,
			"offcpu: --tool %s follows a command; -p, -a and --cgroup need the "
			"native collector\n",
			r->l.tool);
		return -EINVAL;
	}
	r->ev.tool_available = !proc__resolve_exe(r->l.tool, tool_path, sizeof(tool_path));
	if (!r->ev.tool_available)
		return 0;
	/* bpftrace -o writes the staged capture, renamed into place at the end. */
	r->cargv = external__argv(&r->st, tool_path, r->work.pid);
	r->cenv = external__envp(&r->l);
	if (!r->cargv || !r->cenv)
		return -ENOMEM;
	co.envp = r->cenv;
	r->run.collector_argv = r->cargv;
	/* bpftrace writes the capture through -o; its stdout must not share that file. */
	if (collector__get(r->l.collector)->writes_capture) {
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
	r->ev.collector_ready = wait_attached(r) == 1;
	if (!r->ev.collector_ready && !got_signal && proc__wait(&r->coll, 0) == -ETIMEDOUT &&
	    !r->o->quiet)
		fprintf(stderr,
			"offcpu: the collector did not attach within %d ms; running the "
			"workload anyway\n",
			r->o->ready_timeout_ms);
	return 0;
}

/* The status line's redraws: a few a second. */
#define STATUS_EVERY_NS 250000000ull

/* Redraw the status line when it is due (never while the workload holds the terminal). */
static void status_tick(struct rec *r)
{
	struct status_counters c = {};
	struct native_live lv;
	uint64_t now = proc__now_ns();

	if (!r->status || now < r->next_draw || r->gave_tty)
		return;
	r->next_draw = now + STATUS_EVERY_NS;
	c.elapsed_ns = now - r->t0;
	if (r->native && !native__live(r->native, &lv)) {
		c.counted = true;
		c.switches = lv.switches;
		c.threads = lv.threads;
		c.stacks = lv.stacks;
		c.lost = lv.lost;
	}
	status_line__draw(r->status, &c);
	status_fd = status_line__drawn_fd(r->status);
}

/* Erase the status line: before any other message, and at the end of the capture. */
static void status_clear(struct rec *r)
{
	status_fd = -1;
	status_line__clear(r->status);
}

/* How long a wait may last: up to max ms, to the deadline, or to the next redraw. */
static int wait_ms(struct rec *r, uint64_t now, uint64_t until, int max)
{
	int ms = ms_until(now, until, max);

	if (r->status && !r->gave_tty && ms_until(now, r->next_draw, max) < ms)
		ms = ms_until(now, r->next_draw, max);
	return ms;
}

/* Wait up to ms for the capture's end, reading the native collector meanwhile. */
static void pause_ms(struct rec *r, int ms)
{
	if (r->native)
		native__poll(r->native, ms);
	else
		usleep((useconds_t)ms * 1000);
}

/*
 * -p, -a, --cgroup: until the duration, a signal, or, with -p, the end of
 * every process followed (the ones given and those they forked since), as
 * perf record -p does.
 */
static void watch(struct rec *r, uint64_t deadline)
{
	uint64_t gone = 0;

	while (!got_signal && r->native) {
		uint64_t now = proc__now_ns();

		if (deadline && now >= deadline)
			break;
		/*
		 * A process is gone from the collector's map at its exit
		 * tracepoint; its threads' last switch-out, which reports their
		 * ground truth, comes after: trace a little longer.
		 */
		if (r->o->target == TARGET_PIDS && !gone && native__targets_alive(r->native) == 0)
			gone = now;
		if (gone && now - gone >= 200000000ULL) {
			status_clear(r);
			fprintf(r->diag,
				"offcpu: every traced process has exited after %.3f s: tracing "
				"stopped\n",
				(gone - r->t0) / 1e9);
			if (!r->o->quiet)
				fprintf(stderr, "offcpu: every traced process has exited\n");
			break;
		}
		status_tick(r);
		pause_ms(r, gone ? 20 : wait_ms(r, now, deadline, 200));
	}
}

/*
 * Release the held workload, with the stopping signals held so that one
 * arriving now finds it either still held (it never runs) or running (it is
 * passed on). False when offcpu was interrupted while starting.
 */
static bool release_workload(struct rec *r)
{
	int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
	sigset_t set, old;
	bool go;

	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&set, sigs[i]);
	sigprocmask(SIG_BLOCK, &set, &old);
	go = !got_signal;
	if (go)
		proc__release(&r->work);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return go;
}

/* Ask the whole group to end, like timeout(1): the signal, and SIGCONT for stopped members. */
static void end_group(struct rec *r, int sig)
{
	proc__kill_group(&r->work, sig);
	if (sig != SIGKILL && sig != SIGCONT)
		proc__kill_group(&r->work, SIGCONT);
}

/*
 * The leader ended after offcpu asked the group to end (deadline, interrupt):
 * what is left of the group gets until grace_end, then SIGKILL. The leader is
 * still unreaped, so the group id is still the workload's.
 */
static void finish_group(struct rec *r, uint64_t grace_end)
{
	uint64_t now = proc__now_ns(), kill_end = 0;

	while (proc__group_has_others(&r->work) == 1) {
		if (!kill_end && now >= grace_end) {
			proc__kill_group(&r->work, SIGKILL);
			/* SIGKILL is not refused; an uninterruptible sleep only delays it. */
			kill_end = now + 2000000000ull;
		}
		if (kill_end && now >= kill_end)
			break;
		pause_ms(r, 20);
		now = proc__now_ns();
	}
}

/* Back to offcpu's group, the terminal's foreground it had before the workload took it. */
static void take_terminal(struct rec *r)
{
	sigset_t set, old;

	if (!r->gave_tty)
		return;
	/* A background group asking for the terminal would be stopped by SIGTTOU. */
	sigemptyset(&set);
	sigaddset(&set, SIGTTOU);
	sigprocmask(SIG_BLOCK, &set, &old);
	tcsetpgrp(r->tty, getpgrp());
	sigprocmask(SIG_SETMASK, &old, NULL);
	r->gave_tty = false;
}

/*
 * offcpu keeps the terminal's foreground, so that ^C reaches it and it can
 * pass it on to the workload's group; that group gets the foreground only when
 * it needs it: when its leader was stopped for reading (or writing) the
 * terminal from the background. From then on the terminal's keys reach the
 * workload directly, as without offcpu; ^Z typed to it stops offcpu too, so
 * that the shell gets the terminal back (fg continues both).
 */
static void share_terminal(struct rec *r)
{
	int sig;

	if (r->tty < 0 || !(sig = proc__stopped(&r->work)))
		return;
	if ((sig == SIGTTIN || sig == SIGTTOU) && tcgetpgrp(r->tty) == getpgrp()) {
		status_clear(r);
		if (!tcsetpgrp(r->tty, r->work.pid)) {
			r->gave_tty = true;
			proc__kill_group(&r->work, SIGCONT);
		}
	} else if (r->gave_tty && sig != SIGTTIN && sig != SIGTTOU) {
		take_terminal(r);
		raise(SIGSTOP);
	}
}

/* The workload: wait for it, end its group at the deadline or on an interrupt. */
static void run_command(struct rec *r, uint64_t deadline)
{
	const struct record_opts *o = r->o;
	uint64_t kill_at = 0, now;
	bool deadline_hit = false, killed = false;

	if (!release_workload(r)) {
		proc__kill_group(&r->work, SIGKILL);
		forward_pgid = 0;
		proc__wait(&r->work, -1);
		r->run.ended_by = "interrupt";
		r->interrupted_by = got_signal;
		/* "Could not be started", and why. */
		r->run.workload = (struct proc_end){.exec_errno = EINTR};
		return;
	}
	for (;;) {
		int ms, err;

		now = proc__now_ns();
		if (got_signal && !r->run.ended_by) {
			r->run.ended_by = "interrupt";
			r->interrupted_by = got_signal;
		}
		if (deadline && now >= deadline && !deadline_hit) {
			deadline_hit = true;
			if (!r->run.ended_by)
				r->run.ended_by = "deadline";
			end_group(r, o->deadline_signal ? o->deadline_signal : SIGTERM);
			kill_at = now + o->kill_after_ns;
		}
		if (deadline_hit && !killed && now >= kill_at) {
			proc__kill_group(&r->work, SIGKILL);
			killed = true;
		}
		status_tick(r);
		ms = wait_ms(r, now, deadline_hit ? (killed ? 0 : kill_at) : deadline, 200);
		/* The collector's events (a process to track now, while it lives) wake us too. */
		err = proc__wait_ended_fd(&r->work, ms, r->native ? native__fd(r->native) : -1);
		if (err != -ETIMEDOUT && err != -EINTR && err != 1)
			break;
		share_terminal(r);
		if (r->native)
			native__poll(r->native, 0);
	}
	r->run.wall_ns = proc__now_ns() - r->t0;
	status_clear(r);
	take_terminal(r);
	if (nr_signals >= 2)
		killed = true;
	if (r->run.ended_by && !killed)
		finish_group(r, deadline_hit ? kill_at : proc__now_ns() + o->kill_after_ns);
	else if (r->run.ended_by)
		finish_group(r, 0);
	else if (r->work.end.started)
		r->run.ended_by = "exit";
	forward_pgid = 0;
	proc__wait(&r->work, -1);
	r->run.workload = r->work.end;
}

/* Release the workload (or start the clock) and wait for the end of the capture. */
static void run(struct rec *r)
{
	uint64_t deadline;
	struct timespec rt;

	clock_gettime(CLOCK_REALTIME, &rt);
	r->run.started_unix_ns = (int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec;
	r->t0 = proc__now_ns();
	deadline = r->o->duration_ns ? r->t0 + r->o->duration_ns : 0;
	if (r->o->target == TARGET_COMMAND) {
		run_command(r, deadline);
	} else {
		watch(r, deadline);
		r->run.wall_ns = proc__now_ns() - r->t0;
		status_clear(r);
	}
	if (r->native)
		native__poll(r->native, 0);
	forward_pgid = 0;
	r->ev.workload = r->run.workload;
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
	const char *failed;
	struct lane_files lf;
	int err;

	r->res.profile = profile__new();
	if (!r->res.profile)
		return -ENOMEM;
	if (!r->native)
		return 0;
	err = native__stop(r->native, r->res.profile, &r->res.integrity, r->sym);
	if (err) {
		fprintf(r->diag, "offcpu: reading the collector's maps failed: %s\n",
			strerror(-err));
		integrity__add_loss(&r->res.integrity, "drain_failed", 1, 0);
	}
	r->ev.collector.exited = true;
	fflush(r->diag);
	lf = (struct lane_files){r->res.profile, r->timeline};
	failed = r->l.diagnostics_path;
	err = ferror(r->diag) ? -EIO : 0;
	if (!err) {
		failed = r->l.capture_path;
		err = atomic_file__write(r->st.capture_path,
					 r->o->mode == LANE_STACKS ? put_stacks : put_folded, &lf);
	}
	if (!err) {
		failed = r->l.profile_path;
		err = atomic_file__write(r->st.profile_path, put_profile, &lf);
	}
	if (!err && r->timeline) {
		failed = r->l.timeline_path;
		err = atomic_file__write(r->st.timeline_path, put_timeline, &lf);
	}
	if (err == -EIO && rec__disk_full(r))
		err = -ENOSPC;
	if (err)
		rec__fail(r, "write_failed", "cannot write %s: %s; nothing in %s was replaced",
			  failed, atomic_file__strerror(err), r->o->out_dir);
	return err;
}

static void cleanup(struct rec *r)
{
	status_fd = -1;
	status_line__free(r->status);
	take_terminal(r);
	if (r->work.pid > 0 && !r->work.end.exited) {
		proc__kill_group(&r->work, SIGKILL);
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
	rec__close_dir(r);
	native__free(r->native);
	timeline__free(r->timeline);
	symbolizer__free(r->sym);
	external__argv_free(r->cargv);
	external__envp_free(r->cenv);
	identity__env_free(r->wenv);
	lane_result__free(&r->res);
}

/* offcpu's terminal, when one of its standard streams is one: -1 when none. */
static int terminal_fd(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		if (isatty(fd))
			return fd;
	}
	return -1;
}

static const char *const target_names[] = {"command", "pids", "cgroup", "host"};

int record__run(struct record_opts *o)
{
	struct rec r = {.o = o, .cap_fd = -1, .diag_fd = -1, .dir_fd = -1, .tty = terminal_fd()};
	const struct sym_binary *bins = NULL;
	size_t nr_bins = 0;
	int status = EXIT_OFFCPU_FAILED, err;

	r.work = r.coll = (struct proc){.pid = -1, .go_fd = -1, .err_fd = -1, .pidfd = -1};
	r.run.target = target_names[o->target];
	r.run.target_arg = o->target_arg;
	r.run.argv = o->target == TARGET_COMMAND ? o->argv : NULL;
	if (rec__prepare(&r))
		goto out;
	install_handlers();
	if (o->target == TARGET_COMMAND && spawn_workload(&r))
		goto out;
	err = collector__get(r.l.collector)->builtin ? start_native(&r) : start_external(&r);
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
	/* A terminal gets a live status line, unless -q; --progress asks for it anywhere. */
	if (o->progress || (!o->quiet && isatty(STDERR_FILENO)))
		r.status = status_line__new(STDERR_FILENO, o->duration_ns);
	/* External collectors write the capture themselves (bpftrace through -o). */
	close(r.cap_fd);
	r.cap_fd = -1;
	if (o->every_ns) {
		/* One lane directory per period under out_dir (lane/continuous.c). */
		status = r.native ? continuous__run(&r) : EXIT_OFFCPU_FAILED;
		goto out;
	}
	run(&r);
	if (collector__get(r.l.collector)->builtin) {
		if (stop_native(&r))
			goto summary_failed;
		if (r.sym)
			bins = symbolizer__binaries(r.sym, &nr_bins);
	} else if (r.coll.pid > 0) {
		stop_external(&r.coll, o->stop_timeout_ms, &r.ev);
		/*
		 * The collector's writes fail where we cannot see them: on a full
		 * disk its capture may be cut short, and is not put in place.
		 */
		if (rec__disk_full(&r)) {
			rec__fail(&r, "write_failed",
				  "cannot write %s: %s (the collector's capture may be cut "
				  "short); nothing in %s was replaced",
				  r.l.capture_path, strerror(ENOSPC), o->out_dir);
			goto summary_failed;
		}
	}
	if (rec__commit(&r))
		goto summary_failed;
	err = lane__summarize(&r.l, &r.ev, &r.run, bins, nr_bins, &r.res);
	if (err) {
		if (err == -EIO && rec__disk_full(&r))
			err = -ENOSPC;
		rec__fail(&r, "write_failed",
			  "cannot write %s: %s; the capture is in place, 'offcpu summarize %s' "
			  "writes the summary when there is room",
			  r.l.summary_path, atomic_file__strerror(err), o->out_dir);
		goto summary_failed;
	}
	if (!o->quiet)
		print_human(&r.l, &r.res);
summary_failed:
	/* Whatever happened to the summary, the workload's result is kept. */
	status = exit_status(o, &r);
	/* Watching -p/--cgroup/-a with a collector that never attached recorded nothing. */
	if (o->target != TARGET_COMMAND && r.l.collector == COLLECTOR_NATIVE && !r.native)
		status = EXIT_OFFCPU_FAILED;
out:
	if (o->json)
		rec__print_record(&r);
	cleanup(&r);
	return status;
}
