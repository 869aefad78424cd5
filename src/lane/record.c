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
#include "output/timeline.h"
#include "output/folded.h"
#include "output/profile_text.h"
#include "output/stacks_dump.h"
#include "output/summary.h"
#include "output/term.h"
#include "util/atomic_file.h"
#include "util/vec.h"

#define EXIT_OFFCPU_FAILED 125

static volatile sig_atomic_t got_signal, nr_signals;
static volatile pid_t forward_pgid;

/*
 * The workload leads its own process group, outside the terminal's
 * foreground group (until it needs the terminal, see share_terminal), so
 * every signal that asks offcpu to stop, a terminal's ^C included, is passed
 * on to the whole group; a second one kills it.
 */
static void on_signal(int sig)
{
	int saved = errno;

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
	if (sig == SIGTSTP)
		raise(SIGSTOP);
	errno = saved;
}

static void install_handlers(void)
{
	struct sigaction sa = {};
	int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

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

/*
 * Create dir and its missing parents, walking from / (or .) by directory fd,
 * and leave dir open in *dir_fd. Each directory made here is kept open in
 * made[] (opened O_NOFOLLOW right after mkdirat): only those may later be
 * given to the user, by fd, never a directory that existed before. Existing
 * components are followed as the user named them (symlinks included).
 */
static int mkdir_p(const char *dir, int *dir_fd, int **made, size_t *nr_made)
{
	char buf[PATH_MAX], *save = NULL, *comp;
	int fd, nfd, err = 0;

	if (strlen(dir) >= sizeof(buf))
		return -ENAMETOOLONG;
	strcpy(buf, dir);
	fd = open(*dir == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (comp = strtok_r(buf, "/", &save); comp; comp = strtok_r(NULL, "/", &save)) {
		bool created = false;

		nfd = openat(fd, comp, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (nfd < 0 && errno == ENOENT) {
			created = !mkdirat(fd, comp, 0755);
			if (!created && errno != EEXIST) {
				err = -errno;
				break;
			}
			nfd = openat(fd, comp,
				     (created ? O_RDONLY | O_NOFOLLOW : O_PATH) | O_DIRECTORY | O_CLOEXEC);
		}
		if (nfd < 0) {
			err = -errno;
			break;
		}
		close(fd);
		fd = nfd;
		if (created) {
			int *v = realloc(*made, (*nr_made + 1) * sizeof(**made));
			int kept = dup(fd);

			if (!v || kept < 0) {
				if (kept >= 0)
					close(kept);
				err = -ENOMEM;
				break;
			}
			*made = v;
			(*made)[(*nr_made)++] = kept;
		}
	}
	if (!err) {
		*dir_fd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (*dir_fd < 0)
			err = -errno;
	}
	close(fd);
	return err;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/*
 * Create a staged lane file in the (locked) lane directory: a planted
 * symlink or an old staged file is removed, never followed or truncated.
 */
static int open_out(int dir_fd, const char *path)
{
	int fd;

	if (unlinkat(dir_fd, base_name(path), 0) && errno != ENOENT)
		return -errno;
	fd = openat(dir_fd, base_name(path), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0644);
	return fd < 0 ? -errno : fd;
}

/* The pid holding an flock on the file open in fd, from /proc/locks; 0: unknown. */
static int lock_holder(int fd)
{
	unsigned int maj, min;
	unsigned long ino;
	struct stat st;
	char line[256];
	int pid, found = 0;
	FILE *f;

	if (fstat(fd, &st))
		return 0;
	f = fopen("/proc/locks", "re");
	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*d: FLOCK %*s %*s %d %x:%x:%lu", &pid, &maj, &min, &ino) == 4 &&
		    maj == major(st.st_dev) && min == minor(st.st_dev) && ino == st.st_ino)
			found = pid;
	fclose(f);
	return found;
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
	/*
	 * The lane directory, open and flocked for the whole run. The new
	 * capture is written under staged names (st: the lane's paths + ".new")
	 * and renamed into place only once it is whole (commit_files): a record
	 * that fails before leaves the directory's earlier capture as it was.
	 */
	int dir_fd;
	int *made_fds; /* directories mkdir_p created: the only ones given away */
	size_t nr_made;
	struct lane st;
	bool locked; /* the staged names are ours only while we hold the lock */
	bool committed;
	/* Why the record failed, for the --json record (NULL: it did not). */
	const char *fail_kind;
	char fail_msg[512];
	FILE *diag;
	struct native *native;
	struct symbolizer *sym;
	struct timeline *timeline; /* record --timeline */
	int interrupted_by;	   /* the first signal that asked offcpu to stop */
	int tty;		   /* offcpu's terminal, -1: none */
	bool gave_tty;		   /* the workload's group holds its foreground */
	uint64_t t0;		   /* when the workload was released */
};

/* Say on stderr why the record failed and keep it for the --json record. */
static void note_failure(struct rec *r, const char *kind, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->fail_msg, sizeof(r->fail_msg), fmt, ap);
	va_end(ap);
	r->fail_kind = kind;
	fprintf(stderr, "offcpu: %s\n", r->fail_msg);
}

/* The staged lane: the same files with ".new" appended, beside them. */
static int plan_staging(struct rec *r)
{
	char *paths[] = { r->st.capture_path, r->st.diagnostics_path, r->st.profile_path,
			  r->st.timeline_path };

	r->st = r->l;
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		size_t len = strlen(paths[i]);

		if (len + sizeof(".new") > PATH_MAX)
			return -ENAMETOOLONG;
		memcpy(paths[i] + len, ".new", sizeof(".new"));
	}
	return 0;
}

/* One record at a time per directory: the second would mix its files with the first's. */
static int lock_dir(struct rec *r)
{
	int pid;

	if (!flock(r->dir_fd, LOCK_EX | LOCK_NB)) {
		r->locked = true;
		return 0;
	}
	if (errno != EWOULDBLOCK) {
		note_failure(r, "start_failed", "cannot lock %s: %s", r->o->out_dir,
			     strerror(errno));
		return -errno;
	}
	pid = lock_holder(r->dir_fd);
	if (pid > 0)
		note_failure(r, "directory_busy",
			     "%s is in use by another offcpu record (pid %d); wait for it or "
			     "choose another -o",
			     r->o->out_dir, pid);
	else
		note_failure(r, "directory_busy",
			     "%s is in use by another offcpu record; wait for it or choose "
			     "another -o",
			     r->o->out_dir);
	return -EBUSY;
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

/*
 * The target must exist before anything is created or truncated: a process
 * or cgroup that is not there is a failed start (125), said in one line.
 */
static int check_target(struct rec *r)
{
	const struct record_opts *o = r->o;
	char why[PATH_MAX + 256];
	const char *s = o->target_arg;

	if (o->target == TARGET_CGROUP && native__check_cgroup(s, why, sizeof(why))) {
		note_failure(r, "start_failed", "%s; nothing was recorded", why);
		return -ENOENT;
	}
	for (; o->target == TARGET_PIDS && *s; s += strspn(s, ",")) {
		long pid = strtol(s, (char **)&s, 10);

		if (kill((pid_t)pid, 0) && errno == ESRCH) {
			note_failure(r, "start_failed", "-p %ld: no such process; nothing was recorded",
				     pid);
			return -ESRCH;
		}
	}
	return 0;
}

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
		err = plan_staging(r);
	if (!err && check_target(r))
		return -ESRCH;
	if (!err)
		err = mkdir_p(o->out_dir, &r->dir_fd, &r->made_fds, &r->nr_made);
	if (err) {
		note_failure(r, "start_failed", "cannot create output directory %s: %s",
			     o->out_dir, strerror(-err));
		return err;
	}
	err = lock_dir(r);
	if (err)
		return err;
	r->diag_fd = open_out(r->dir_fd, r->st.diagnostics_path);
	r->cap_fd = r->diag_fd < 0 ? r->diag_fd : open_out(r->dir_fd, r->st.capture_path);
	if (r->diag_fd < 0 || r->cap_fd < 0) {
		err = r->diag_fd < 0 ? r->diag_fd : r->cap_fd;
		note_failure(r, "start_failed", "cannot write in %s: %s", o->out_dir,
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
		if (vec_reserve(v, cap, *n + 1)) {
			free(v);
			return -ENOMEM;
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
		fprintf(stderr, "offcpu: the collector did not attach within %d ms; running the "
				"workload anyway\n",
			r->o->ready_timeout_ms);
	return 0;
}

/* Wait up to ms for the capture's end, reading the native collector meanwhile. */
static void pause_ms(struct rec *r, int ms)
{
	if (r->native)
		native__poll(r->native, ms);
	else
		usleep((useconds_t)ms * 1000);
}

/* -p, -a, --cgroup: nothing to wait for but the duration or a signal. */
static void watch(struct rec *r, uint64_t deadline)
{
	while (!got_signal && r->native) {
		uint64_t now = proc__now_ns();

		if (deadline && now >= deadline)
			break;
		pause_ms(r, ms_until(now, deadline, 200));
	}
}

/*
 * Release the held workload, with the stopping signals held so that one
 * arriving now finds it either still held (it never runs) or running (it is
 * passed on). False when offcpu was interrupted while starting.
 */
static bool release_workload(struct rec *r)
{
	int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
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
		r->run.workload = (struct proc_end){ .exec_errno = EINTR };
		return;
	}
	for (;;) {
		int wait_ms, err;

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
		wait_ms = ms_until(now, deadline_hit ? (killed ? 0 : kill_at) : deadline, 200);
		err = proc__wait_ended(&r->work, wait_ms);
		if (err != -ETIMEDOUT && err != -EINTR)
			break;
		share_terminal(r);
		if (r->native)
			native__poll(r->native, 0);
	}
	r->run.wall_ns = proc__now_ns() - r->t0;
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

/* Writes failed with what ferror() cannot tell: a full disk is said as such. */
static bool disk_full(const struct rec *r)
{
	struct statvfs sv;

	return !fstatvfs(r->dir_fd, &sv) && (sv.f_bavail == 0 || (sv.f_files && !sv.f_favail));
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
		fprintf(r->diag, "offcpu: reading the collector's maps failed: %s\n", strerror(-err));
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
	if (err == -EIO && disk_full(r))
		err = -ENOSPC;
	if (err)
		note_failure(r, "write_failed",
			     "cannot write %s: %s; nothing in %s was replaced", failed,
			     atomic_file__strerror(err), r->o->out_dir);
	return err;
}

/*
 * Put the staged capture in place. The old summary goes first: from here
 * until the new one is written, a summary would describe the wrong files.
 * Each lane file is the staged one or nothing, so no file of an earlier
 * capture (the other mode's, a profile an external collector does not
 * write, a timeline not asked for) is left for summarize to read.
 */
static int commit_files(struct rec *r)
{
	const char *final[] = { r->l.capture_path, r->l.diagnostics_path, r->l.profile_path,
				r->l.timeline_path };
	const char *staged[] = { r->st.capture_path, r->st.diagnostics_path, r->st.profile_path,
				 r->st.timeline_path };
	const char *other = r->o->mode == LANE_STACKS ? "offcpu.time.txt" : "offcpu.stacks.txt";
	const char *failed = r->l.summary_path;
	int err = 0;

	if (unlinkat(r->dir_fd, base_name(r->l.summary_path), 0) && errno != ENOENT)
		err = -errno;
	for (size_t i = 0; !err && i < sizeof(final) / sizeof(final[0]); i++) {
		failed = final[i];
		if (!renameat(r->dir_fd, base_name(staged[i]), r->dir_fd, base_name(final[i])))
			continue;
		if (errno != ENOENT || (unlinkat(r->dir_fd, base_name(final[i]), 0) &&
					errno != ENOENT))
			err = -errno;
	}
	r->committed = true;
	if (!err && unlinkat(r->dir_fd, other, 0) && errno != ENOENT) {
		failed = other;
		err = -errno;
	}
	if (err)
		note_failure(r, "write_failed", "cannot replace %s: %s", failed, strerror(-err));
	return err;
}

/*
 * Under sudo (or --user) the files this record wrote and the directories it
 * created belong to the user; nothing that existed before changes owner.
 * Files are opened O_NOFOLLOW relative to the locked directory and given
 * away by fd only when they are still what offcpu wrote: a regular file of
 * ours with one link (a hard link planted to another file has two).
 */
static void give_files_to_user(struct rec *r)
{
	const char *paths[] = { r->l.capture_path, r->l.diagnostics_path, r->l.summary_path,
				r->l.profile_path, r->l.timeline_path };
	struct stat st;

	if (!r->id.drop || !r->locked)
		return;
	for (size_t i = 0; i < r->nr_made; i++)
		if (!fstat(r->made_fds[i], &st) && st.st_uid == geteuid() &&
		    fchown(r->made_fds[i], r->id.uid, r->id.gid))
			fprintf(stderr, "offcpu: cannot give a directory to uid %u: %s\n",
				(unsigned int)r->id.uid, strerror(errno));
	for (size_t i = 0; r->committed && i < sizeof(paths) / sizeof(paths[0]); i++) {
		int fd = openat(r->dir_fd, base_name(paths[i]),
				O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

		if (fd < 0)
			continue;
		if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_nlink == 1 &&
		    st.st_uid == geteuid() && fchown(fd, r->id.uid, r->id.gid))
			fprintf(stderr, "offcpu: cannot give %s to uid %u: %s\n", paths[i],
				(unsigned int)r->id.uid, strerror(errno));
		close(fd);
	}
}

/* Staged files of a record that did not commit; nothing else is removed. */
static void remove_staged(struct rec *r)
{
	const char *staged[] = { r->st.capture_path, r->st.diagnostics_path, r->st.profile_path,
				 r->st.timeline_path };

	if (!r->locked)
		return;
	for (size_t i = 0; i < sizeof(staged) / sizeof(staged[0]); i++)
		unlinkat(r->dir_fd, base_name(staged[i]), 0);
}

static void cleanup(struct rec *r)
{
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
	remove_staged(r);
	give_files_to_user(r);
	for (size_t i = 0; i < r->nr_made; i++)
		close(r->made_fds[i]);
	free(r->made_fds);
	if (r->dir_fd >= 0)
		close(r->dir_fd); /* releases the lock */
	native__free(r->native);
	timeline__free(r->timeline);
	symbolizer__free(r->sym);
	external__argv_free(r->cargv);
	external__envp_free(r->cenv);
	identity__env_free(r->wenv);
	lane_result__free(&r->res);
}

static int put_record(FILE *f, const void *si)
{
	return summary__write_record(f, si);
}

/*
 * A dup of the descriptor that /dev/stdout, /dev/stderr, /dev/fd/N or
 * /proc/self/fd/N names; -ENOENT when path names none, -EBADF when it is
 * not open. The descriptor is used, the path never opened: nothing is
 * followed that someone else could have planted.
 */
static int path_fd(const char *path)
{
	const char *n = NULL;
	char *end;
	long v = 0;
	int fd;

	if (!strcmp(path, "/dev/stdout"))
		v = 1;
	else if (!strcmp(path, "/dev/stderr"))
		v = 2;
	else if (!strncmp(path, "/dev/fd/", 8))
		n = path + 8;
	else if (!strncmp(path, "/proc/self/fd/", 14))
		n = path + 14;
	else
		return -ENOENT;
	if (n) {
		v = strtol(n, &end, 10);
		if (!*n || *end || v < 0 || v > INT32_MAX)
			return -ENOENT;
	}
	fd = fcntl((int)v, F_DUPFD_CLOEXEC, 3);
	return fd < 0 ? -EBADF : fd;
}

/*
 * The --json record: always one, after the workload ended. When no summary
 * was written, its state is "record_failed" and the caveat says why.
 */
static void print_record(struct rec *r)
{
	struct outcome failed = { .state = "record_failed", .caveat_kind = r->fail_kind };
	struct integrity unknown = { .status = INTEGRITY_UNKNOWN };
	struct summary_input si = { .lane = &r->l, .outcome = &r->res.outcome,
				    .integrity = &r->res.integrity, .run = &r->run };
	const char *path = r->o->json_path;
	struct stat st;
	bool existed;
	int err, fd;

	if (r->fail_kind || !r->res.outcome.state) {
		if (!r->fail_kind) {
			failed.caveat_kind = "start_failed";
			snprintf(r->fail_msg, sizeof(r->fail_msg),
				 "offcpu could not start the record (exit 125)");
		}
		snprintf(failed.caveat_message, sizeof(failed.caveat_message), "%s", r->fail_msg);
		si.outcome = &failed;
		si.integrity = &unknown;
	}
	if (!path || !strcmp(path, "-")) {
		summary__write_record(stdout, &si);
		fflush(stdout);
		return;
	}
	/* A descriptor named as a file (/dev/fd/3, /dev/stderr) is written to, never replaced. */
	fd = path_fd(path);
	if (fd == -EBADF) {
		fprintf(stderr, "offcpu: cannot write %s: the descriptor is not open\n", path);
		return;
	}
	if (fd >= 0) {
		FILE *f = fdopen(fd, "w");

		if (!f)
			close(fd);
		err = f ? summary__write_record(f, &si) : -errno;
		if (f && fclose(f) && !err)
			err = -errno;
		if (err)
			fprintf(stderr, "offcpu: cannot write %s: %s\n", path, strerror(-err));
		return;
	}
	existed = !lstat(path, &st);
	err = atomic_file__write(path, put_record, &si);
	if (err) {
		fprintf(stderr, "offcpu: cannot write %s: %s\n", path, atomic_file__strerror(err));
		return;
	}
	/* A record file offcpu created is the user's, like the lane's files. */
	fd = existed || !r->id.drop ? -1 : open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && !fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_nlink == 1 &&
	    st.st_uid == geteuid() && fchown(fd, r->id.uid, r->id.gid))
		fprintf(stderr, "offcpu: cannot give %s to uid %u: %s\n", path,
			(unsigned int)r->id.uid, strerror(errno));
	if (fd >= 0)
		close(fd);
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

static const char *const target_names[] = { "command", "pids", "cgroup", "host" };

int record__run(struct record_opts *o)
{
	struct rec r = { .o = o, .cap_fd = -1, .diag_fd = -1, .dir_fd = -1, .tty = terminal_fd() };
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
	/* External collectors write the capture themselves (bpftrace through -o). */
	close(r.cap_fd);
	r.cap_fd = -1;
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
		if (disk_full(&r)) {
			note_failure(&r, "write_failed",
				     "cannot write %s: %s (the collector's capture may be cut "
				     "short); nothing in %s was replaced",
				     r.l.capture_path, strerror(ENOSPC), o->out_dir);
			goto summary_failed;
		}
	}
	if (commit_files(&r))
		goto summary_failed;
	err = lane__summarize(&r.l, &r.ev, &r.run, bins, nr_bins, &r.res);
	if (err) {
		if (err == -EIO && disk_full(&r))
			err = -ENOSPC;
		note_failure(&r, "write_failed",
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
		print_record(&r);
	cleanup(&r);
	return status;
}
