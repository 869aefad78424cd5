/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Child processes of record: the workload and external collectors.
 *
 * The workload is forked HELD: the child exists (its pid is known, so a
 * collector can be pointed at it and attach) but blocks before exec until
 * proc__release(). Exec failure travels back over a close-on-exec pipe, so
 * "the workload did not start" is known exactly, not guessed from exit 127.
 *
 * The workload leads a process group of its own (own_group), so that offcpu
 * can end it whole, children included, the way timeout(1) does; its group id
 * stays its pid for as long as the leader is not reaped (the kernel does not
 * reuse a pid that still names a group), so offcpu signals the group only
 * before it reaps the leader.
 *
 * Collectors are started with their stdout and stderr on given fds. Whether a
 * collector is attached is observed, not slept on: it is ready once it holds a
 * perf_event or BPF link/program fd and sleeps waiting for events.
 */
#ifndef OFFCPU_COLLECT_PROC_H
#define OFFCPU_COLLECT_PROC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "model/run.h"

struct proc {
	pid_t pid;
	int go_fd;  /* held child: write a byte to release it */
	int err_fd; /* reads the exec errno, EOF when exec succeeded */
	int pidfd;  /* for bounded waits; -1 when unavailable */
	struct proc_end end;
};

struct proc_opts {
	int stdin_fd;	   /* -1: inherit */
	int stdout_fd;	   /* -1: inherit */
	int stderr_fd;	   /* -1: inherit */
	bool held;	   /* wait for proc__release() before exec */
	bool own_group;	   /* lead a new process group (setpgid) */
	char *const *envp; /* NULL: inherit the environment */
	/* Drop to this identity before exec (uid/gid -1: keep). */
	uid_t uid;
	gid_t gid;
	const gid_t *groups;
	size_t nr_groups;
	bool set_ids;
};

/* Fork and (unless held) exec argv[0] searched in PATH. 0 or -errno. */
int proc__spawn(struct proc *p, char *const argv[], const struct proc_opts *o);
/*
 * Let a held child exec; returns 0 once exec succeeded, -errno of the failed
 * exec (p->end.exec_errno set, the child is reaped), or another -errno.
 */
int proc__release(struct proc *p);
/*
 * Wait up to timeout_ms (-1: forever) for the child to end; fills p->end.
 * Returns 0 when it ended, -ETIMEDOUT, -EINTR when a signal arrived first.
 */
int proc__wait(struct proc *p, int timeout_ms);
/*
 * Like proc__wait, but leave the ended child unreaped (a zombie keeps its pid
 * and so its group id): 0 when it ended, -ETIMEDOUT, -EINTR.
 */
int proc__wait_ended(struct proc *p, int timeout_ms);
/* The same, also returning 1 as soon as fd (when >= 0) is readable. */
int proc__wait_ended_fd(struct proc *p, int timeout_ms, int fd);
/* The signal that stopped the child since the last call (SIGTTIN, SIGTSTP, ...), or 0. */
int proc__stopped(struct proc *p);
/* Send sig (no-op once reaped). */
int proc__kill(struct proc *p, int sig);
/* Send sig to an own_group child's whole group (no-op once the leader is reaped). */
int proc__kill_group(struct proc *p, int sig);
/* Whether the group still has a live member besides the leader: 1, 0 or -errno. */
int proc__group_has_others(const struct proc *p);
void proc__close(struct proc *p);

/*
 * Collector readiness: 1 when pid holds a perf_event or BPF link/prog fd and
 * is sleeping, 0 when not yet, -ESRCH when it is gone.
 */
int proc__collector_attached(pid_t pid);
/* Poll proc__collector_attached until ready, gone or timeout: 1, 0 (gone), -ETIMEDOUT. */
int proc__wait_attached(struct proc *p, int timeout_ms);

/* The absolute path of an executable: as given when it has a '/', else searched in PATH. */
int proc__resolve_exe(const char *name, char *out, size_t len);

uint64_t proc__now_ns(void); /* CLOCK_MONOTONIC */

#endif
