// SPDX-License-Identifier: GPL-2.0-only
/*
 * A parent that waits in glibc's __vfork, as python's subprocess and
 * posix_spawn do: vfork_parent() calls vfork(), and the child sleeps
 * 1 s * SCALE before it exits (a vfork child may only exec or _exit; a
 * sleep before is what a slow exec looks like). __vfork keeps its return
 * address in rdi across the system call, as its CFI says: an unwinder must
 * take it from the saved registers to reach vfork_parent() and main().
 */
#include <sys/wait.h>
#include <unistd.h>

#include "workload.h"

static pid_t __attribute__((noinline)) vfork_parent(double scale)
{
	struct timespec ts;
	uint64_t ns = (uint64_t)(NSEC_PER_SEC * scale);
	pid_t pid;

	/* set up before: the child touches nothing of the parent's but ts */
	ts.tv_sec = (time_t)(ns / NSEC_PER_SEC);
	ts.tv_nsec = (long)(ns % NSEC_PER_SEC);
	pid = vfork();
	if (pid == 0) {
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
		_exit(0);
	}
	return pid;
}

int main(int argc, char **argv)
{
	double scale = wl_scale(argc, argv,
				"[SCALE]\n  waits in vfork() 1 s * SCALE for a child that sleeps, "
				"then exits");
	int status;
	pid_t pid;

	wl_start();
	pid = vfork_parent(scale);
	if (pid < 0)
		wl_die("vfork: %s", strerror(errno));
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		wl_die("the child (pid %d) failed", (int)pid);
	return 0;
}
