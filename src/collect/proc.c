// SPDX-License-Identifier: GPL-2.0-only
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collect/proc.h"
#include "util/procfs.h"

uint64_t proc__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int proc__resolve_exe(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (!name || !*name)
		return -ENOENT;
	if (strchr(name, '/')) {
		if (access(name, X_OK))
			return -errno;
		if (!realpath(name, buf))
			return -errno;
		goto found;
	}
	if (!path)
		path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
	while (*path) {
		const char *end = strchrnul(path, ':');
		struct stat st;
		int n;

		n = snprintf(buf, sizeof(buf), "%.*s/%s", (int)(end - path),
			     end == path ? "." : path, name);
		if (n > 0 && (size_t)n < sizeof(buf) && !stat(buf, &st) && S_ISREG(st.st_mode) &&
		    !access(buf, X_OK))
			goto found;
		path = *end ? end + 1 : end;
	}
	return -ENOENT;
found:
	if (strlen(buf) >= len)
		return -ENAMETOOLONG;
	strcpy(out, buf);
	return 0;
}

static void child_fail(int err_fd, int err)
{
	ssize_t unused = write(err_fd, &err, sizeof(err));

	(void)unused;
	_exit(127);
}

static void child(char *const argv[], const struct proc_opts *o, int go_fd, int err_fd)
{
	sigset_t none;
	char c;

	/* The parent blocks some signals while it forks; the workload must not inherit that. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	signal(SIGTSTP, SIG_DFL);
	signal(SIGCONT, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	/* Both sides set the group, so it exists whichever runs first. */
	if (o->own_group)
		setpgid(0, 0);
	if (o->held && read(go_fd, &c, 1) != 1)
		_exit(127); /* the parent went away before releasing us */
	if (go_fd >= 0)
		close(go_fd);
	if (o->stdin_fd >= 0 && dup2(o->stdin_fd, 0) < 0)
		child_fail(err_fd, errno);
	if (o->stdout_fd >= 0 && dup2(o->stdout_fd, 1) < 0)
		child_fail(err_fd, errno);
	if (o->stderr_fd >= 0 && dup2(o->stderr_fd, 2) < 0)
		child_fail(err_fd, errno);
	if (o->set_ids) {
		if (setgroups(o->nr_groups, o->groups) || setresgid(o->gid, o->gid, o->gid) ||
		    setresuid(o->uid, o->uid, o->uid))
			child_fail(err_fd, errno);
	}
	if (o->envp)
		execvpe(argv[0], argv, o->envp);
	else
		execvp(argv[0], argv);
	child_fail(err_fd, errno);
}

int proc__spawn(struct proc *p, char *const argv[], const struct proc_opts *o)
{
	int go[2] = {-1, -1}, er[2];

	memset(p, 0, sizeof(*p));
	p->go_fd = p->err_fd = p->pidfd = -1;
	if (pipe2(er, O_CLOEXEC))
		return -errno;
	if (o->held && pipe2(go, O_CLOEXEC)) {
		int err = -errno;

		close(er[0]);
		close(er[1]);
		return err;
	}
	p->pid = fork();
	if (p->pid < 0) {
		int err = -errno;

		close(er[0]);
		close(er[1]);
		if (go[0] >= 0) {
			close(go[0]);
			close(go[1]);
		}
		return err;
	}
	if (p->pid == 0) {
		close(er[0]);
		if (go[1] >= 0)
			close(go[1]);
		child(argv, o, go[0], er[1]);
	}
	close(er[1]);
	if (go[0] >= 0)
		close(go[0]);
	if (o->own_group)
		setpgid(p->pid, p->pid);
	p->go_fd = go[1];
	p->err_fd = er[0];
	p->pidfd = (int)syscall(SYS_pidfd_open, p->pid, 0);
	if (!o->held)
		return proc__release(p);
	return 0;
}

int proc__release(struct proc *p)
{
	int err = 0;
	ssize_t n;

	if (p->go_fd >= 0) {
		char c = 'g';

		if (write(p->go_fd, &c, 1) != 1)
			err = -errno;
		close(p->go_fd);
		p->go_fd = -1;
	}
	if (err)
		return err;
	do {
		n = read(p->err_fd, &err, sizeof(err));
	} while (n < 0 && errno == EINTR);
	close(p->err_fd);
	p->err_fd = -1;
	if (n == (ssize_t)sizeof(err)) {
		p->end.started = false;
		p->end.exec_errno = err;
		proc__wait(p, -1);
		return -err;
	}
	p->end.started = true;
	return 0;
}

static void record_status(struct proc *p, int status)
{
	p->end.exited = true;
	if (WIFEXITED(status)) {
		p->end.exit_code = WEXITSTATUS(status);
		p->end.signal = 0;
	} else if (WIFSIGNALED(status)) {
		p->end.signal = WTERMSIG(status);
		p->end.exit_code = 128 + p->end.signal;
	}
}

int proc__wait(struct proc *p, int timeout_ms)
{
	uint64_t deadline = timeout_ms < 0 ? 0 : proc__now_ns() + (uint64_t)timeout_ms * 1000000;
	int status;
	pid_t r;

	if (p->end.exited || p->pid <= 0)
		return 0;
	for (;;) {
		r = waitpid(p->pid, &status, WNOHANG);
		if (r == p->pid) {
			record_status(p, status);
			return 0;
		}
		if (r < 0 && errno != EINTR)
			return -errno;
		if (timeout_ms >= 0 && proc__now_ns() >= deadline)
			return -ETIMEDOUT;
		if (p->pidfd >= 0) {
			struct pollfd pfd = {.fd = p->pidfd, .events = POLLIN};
			int ms = -1;

			if (timeout_ms >= 0)
				ms = (int)((deadline - proc__now_ns()) / 1000000) + 1;
			if (poll(&pfd, 1, ms) < 0 && errno == EINTR)
				return -EINTR;
		} else {
			r = waitpid(p->pid, &status, timeout_ms < 0 ? 0 : WNOHANG);
			if (r == p->pid) {
				record_status(p, status);
				return 0;
			}
			if (r < 0 && errno == EINTR)
				return -EINTR;
			usleep(2000);
		}
	}
}

int proc__wait_ended(struct proc *p, int timeout_ms)
{
	return proc__wait_ended_fd(p, timeout_ms, -1);
}

int proc__wait_ended_fd(struct proc *p, int timeout_ms, int fd)
{
	uint64_t deadline = timeout_ms < 0 ? 0 : proc__now_ns() + (uint64_t)timeout_ms * 1000000;

	if (p->end.exited || p->pid <= 0)
		return 0;
	for (;;) {
		siginfo_t si = {};
		int ms = -1;

		if (waitid(P_PID, (id_t)p->pid, &si, WEXITED | WNOHANG | WNOWAIT) && errno != EINTR)
			return -errno;
		if (si.si_pid == p->pid)
			return 0;
		if (timeout_ms >= 0 && proc__now_ns() >= deadline)
			return -ETIMEDOUT;
		if (timeout_ms >= 0)
			ms = (int)((deadline - proc__now_ns()) / 1000000) + 1;
		if (p->pidfd >= 0) {
			struct pollfd pfd[2] = {{.fd = p->pidfd, .events = POLLIN},
						{.fd = fd, .events = POLLIN}};

			if (poll(pfd, fd >= 0 ? 2 : 1, ms) < 0 && errno == EINTR)
				return -EINTR;
			if (fd >= 0 && (pfd[1].revents & POLLIN) && !(pfd[0].revents & POLLIN))
				return 1;
		} else if (usleep(2000) && errno == EINTR) {
			return -EINTR;
		}
	}
}

int proc__stopped(struct proc *p)
{
	siginfo_t si = {};

	if (p->end.exited || p->pid <= 0)
		return 0;
	if (waitid(P_PID, (id_t)p->pid, &si, WSTOPPED | WNOHANG) || si.si_pid != p->pid)
		return 0;
	return si.si_code == CLD_STOPPED ? si.si_status : 0;
}

int proc__kill(struct proc *p, int sig)
{
	if (p->pid <= 0 || p->end.exited)
		return 0;
	return kill(p->pid, sig) ? -errno : 0;
}

int proc__kill_group(struct proc *p, int sig)
{
	if (p->pid <= 0 || p->end.exited)
		return 0;
	if (!kill(-p->pid, sig))
		return 0;
	/* A group that never formed (setpgid failed): the leader alone. */
	return errno == ESRCH ? proc__kill(p, sig) : -errno;
}

int proc__group_has_others(const struct proc *p)
{
	struct dirent *de;
	int found = 0;
	DIR *d;

	if (p->pid <= 0)
		return 0;
	d = opendir("/proc");
	if (!d)
		return -errno;
	while (!found && (de = readdir(d))) {
		char path[64], buf[512], *rp;
		long pid = strtol(de->d_name, &rp, 10);
		int pgrp = 0, fd;
		char st = 0;
		ssize_t n;

		if (*rp || pid <= 0 || pid == p->pid)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		/* After comm (which may hold anything): state, ppid, pgrp. */
		rp = strrchr(buf, ')');
		if (!rp || sscanf(rp + 1, " %c %*d %d", &st, &pgrp) != 2)
			continue;
		/* A zombie can do nothing more; its parent reaps it. */
		found = pgrp == p->pid && st != 'Z' && st != 'X';
	}
	closedir(d);
	return found;
}

void proc__close(struct proc *p)
{
	if (!p)
		return;
	if (p->go_fd >= 0)
		close(p->go_fd);
	if (p->err_fd >= 0)
		close(p->err_fd);
	if (p->pidfd >= 0)
		close(p->pidfd);
	p->go_fd = p->err_fd = p->pidfd = -1;
}

/* The scheduler state letter of pid from /proc/PID/stat, or 0. */
static char proc_state(pid_t pid)
{
	struct procfs_stat st;

	procfs__stat(NULL, (int)pid, &st);
	return st.state;
}

int proc__collector_attached(pid_t pid)
{
	char path[64], link[384], target[128];
	struct dirent *de;
	bool attached = false;
	char st;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return -ESRCH;
	while (!attached && (de = readdir(d))) {
		ssize_t n;

		if (de->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "%s/%s", path, de->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		attached = !strcmp(target, "anon_inode:[perf_event]") ||
			   !strcmp(target, "anon_inode:bpf_link") ||
			   !strcmp(target, "anon_inode:bpf-link");
	}
	closedir(d);
	st = proc_state(pid);
	if (!st || st == 'Z' || st == 'X')
		return -ESRCH;
	/* Attached and waiting for events, not still loading the next program. */
	return attached && (st == 'S' || st == 'D');
}

int proc__wait_attached(struct proc *p, int timeout_ms)
{
	uint64_t deadline = proc__now_ns() + (uint64_t)timeout_ms * 1000000;
	unsigned int delay_us = 500;
	int stable = 0;

	for (;;) {
		int r = proc__wait(p, 0);

		if (r == 0)
			return 0; /* it ended */
		r = proc__collector_attached(p->pid);
		if (r < 0)
			return 0;
		/*
		 * A collector attaches its probes one by one: wait until it has been
		 * attached and asleep for two consecutive looks, a few ms apart.
		 */
		stable = r ? stable + 1 : 0;
		if (stable >= 2)
			return 1;
		if (proc__now_ns() >= deadline)
			return -ETIMEDOUT;
		usleep(delay_us);
		if (delay_us < 8000)
			delay_us *= 2;
	}
}
