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
#include "collect/proc.h"
#include "lane/record.h"
#include "output/summary.h"

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

static void human_ns(char *buf, size_t len, uint64_t ns)
{
	if (ns >= 10000000000ull)
		snprintf(buf, len, "%.1f s", ns / 1e9);
	else if (ns >= 1000000000ull)
		snprintf(buf, len, "%.2f s", ns / 1e9);
	else if (ns >= 1000000)
		snprintf(buf, len, "%.1f ms", ns / 1e6);
	else if (ns >= 1000)
		snprintf(buf, len, "%.1f us", ns / 1e3);
	else
		snprintf(buf, len, "%" PRIu64 " ns", ns);
}

static void print_human(const struct lane *l, const struct lane_result *res)
{
	const struct profile *p = res->profile;
	char t[32];

	if (!p || !profile__nr_rows(p)) {
		fprintf(stderr, "offcpu: no capture (%s: %s): %s; see %s\n", res->outcome.state,
			res->outcome.caveat_kind ? res->outcome.caveat_kind : "-",
			res->outcome.caveat_message, l->diagnostics_path);
		return;
	}
	human_ns(t, sizeof(t), profile__totals(p)->all.off_ns);
	fprintf(stderr, "offcpu: %s off-CPU in %zu stacks, %zu threads; capture %s -> %s\n", t,
		profile__nr_stacks(p), profile__nr_threads(p),
		integrity_status__name(res->integrity.status), l->summary_path);
	if (res->outcome.caveat_kind)
		fprintf(stderr, "offcpu: %s: %s\n", res->outcome.caveat_kind,
			res->outcome.caveat_message);
}

static int exit_status(const struct proc_end *w)
{
	if (!w->started)
		return w->exec_errno == ENOENT ? 127 : 126;
	if (w->signal)
		return 128 + w->signal;
	return w->exit_code;
}

/* Stop an external collector: SIGINT, then SIGTERM, then SIGKILL. */
static void stop_collector(struct proc *c, int timeout_ms, struct lane_evidence *ev)
{
	if (c->pid <= 0 || c->end.exited)
		return;
	proc__kill(c, SIGINT);
	ev->collector_stopped = true;
	while (proc__wait(c, nr_signals >= 2 ? 0 : timeout_ms) == -EINTR)
		;
	if (c->end.exited)
		return;
	ev->collector_timed_out = true;
	proc__kill(c, SIGTERM);
	if (proc__wait(c, 1000) == 0)
		return;
	proc__kill(c, SIGKILL);
	proc__wait(c, -1);
}

/* The seed's defaults until the native collector lands. */
static const char *default_tool(enum lane_mode m)
{
	return m == LANE_STACKS ? "bpftrace" : "offcputime-bpfcc";
}

int record__run(const struct record_opts *o)
{
	struct lane l;
	struct lane_evidence ev = {};
	struct lane_result res = {};
	struct summary_run run = { .target = "command" };
	struct proc work = { .pid = -1, .go_fd = -1, .err_fd = -1, .pidfd = -1 };
	struct proc coll = { .pid = -1, .go_fd = -1, .err_fd = -1, .pidfd = -1 };
	struct proc_opts wopts = { .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1, .held = true };
	char tool_path[PATH_MAX];
	char **cargv = NULL, **cenv = NULL;
	int cap_fd = -1, diag_fd = -1, err, status = EXIT_OFFCPU_FAILED;
	struct timespec rt;
	uint64_t t0;

	err = lane__plan(&l, o->out_dir, o->mode, o->tool ? o->tool : default_tool(o->mode));
	if (!err)
		err = mkdir_p(o->out_dir);
	if (err) {
		fprintf(stderr, "offcpu: cannot create output directory %s: %s\n", o->out_dir,
			strerror(-err));
		return EXIT_OFFCPU_FAILED;
	}
	diag_fd = open_out(l.diagnostics_path);
	cap_fd = diag_fd < 0 ? diag_fd : open_out(l.capture_path);
	if (diag_fd < 0 || cap_fd < 0) {
		fprintf(stderr, "offcpu: cannot write in %s: %s\n", o->out_dir,
			strerror(-(diag_fd < 0 ? diag_fd : cap_fd)));
		goto cleanup;
	}
	install_handlers();
	run.argv = o->argv;

	ev.tool_available = !proc__resolve_exe(l.tool, tool_path, sizeof(tool_path));
	err = proc__spawn(&work, o->argv, &wopts);
	if (err) {
		fprintf(stderr, "offcpu: cannot start the workload: %s\n", strerror(-err));
		goto cleanup;
	}
	run.pid = work.pid;
	forward_pid = work.pid;

	if (ev.tool_available) {
		struct proc_opts copts = { .stdin_fd = -1, .stdout_fd = cap_fd, .stderr_fd = diag_fd };

		cargv = external__argv(&l, tool_path, work.pid);
		cenv = external__envp(&l);
		if (!cargv || !cenv) {
			fprintf(stderr, "offcpu: out of memory\n");
			goto cleanup;
		}
		copts.envp = cenv;
		run.collector_argv = cargv;
		err = proc__spawn(&coll, cargv, &copts);
		if (err) {
			ev.collector.exec_errno = -err;
		} else {
			ev.collector.started = true;
			ev.collector_ready = proc__wait_attached(&coll, o->ready_timeout_ms) == 1;
			if (!ev.collector_ready && proc__wait(&coll, 0) == -ETIMEDOUT && !o->quiet)
				fprintf(stderr, "offcpu: the collector did not attach within %d ms; "
						"running the workload anyway\n",
					o->ready_timeout_ms);
		}
	}
	/* bpftrace writes through -o itself; its stdout must not be the capture too. */
	close(cap_fd);
	cap_fd = -1;

	clock_gettime(CLOCK_REALTIME, &rt);
	run.started_unix_ns = (int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec;
	t0 = proc__now_ns();
	proc__release(&work);
	while (proc__wait(&work, -1) == -EINTR)
		;
	run.wall_ns = proc__now_ns() - t0;
	forward_pid = 0;
	ev.workload = work.end;
	run.workload = work.end;
	ev.interrupted = got_signal != 0;

	if (coll.pid > 0) {
		stop_collector(&coll, o->stop_timeout_ms, &ev);
		ev.collector = coll.end;
		ev.collector.started = true;
	}
	err = lane__summarize(&l, &ev, &run, NULL, 0, &res);
	if (err) {
		fprintf(stderr, "offcpu: cannot write %s: %s\n", l.summary_path, strerror(-err));
		status = exit_status(&work.end);
		goto cleanup;
	}
	if (!o->quiet)
		print_human(&l, &res);
	if (o->json) {
		struct summary_input si = { .lane = &l, .outcome = &res.outcome,
					    .integrity = &res.integrity, .run = &run };

		summary__write_record(stdout, &si);
		fflush(stdout);
	}
	status = exit_status(&work.end);
cleanup:
	if (work.pid > 0 && !work.end.exited) {
		proc__kill(&work, SIGKILL);
		proc__wait(&work, -1);
	}
	if (coll.pid > 0 && !coll.end.exited) {
		proc__kill(&coll, SIGKILL);
		proc__wait(&coll, -1);
	}
	proc__close(&work);
	proc__close(&coll);
	if (cap_fd >= 0)
		close(cap_fd);
	if (diag_fd >= 0)
		close(diag_fd);
	external__argv_free(cargv);
	external__envp_free(cenv);
	lane_result__free(&res);
	return status;
}
