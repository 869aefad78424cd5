// SPDX-License-Identifier: GPL-2.0-only
/*
 * A process whose stacks come from two images, as a wrapper's do (a shell
 * running its last command with exec, a version manager's shim):
 *   it forks a child that sleeps 200 ms * SCALE, waits for it in
 *   await_child(), then execs itself again with --after, which sleeps
 *   100 ms * SCALE in after_exec().
 * The same binary twice, each time at another base (PIE, randomized): the
 * first image's return addresses mean something else, or nothing, in the
 * second's mappings.
 */
#include <limits.h>
#include <sys/wait.h>

#include "workload.h"

static double scale;

static void __attribute__((noinline)) await_child(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			wl_die("waitpid: %s", strerror(errno));
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		wl_die("the child (pid %d) failed", (int)pid);
}

static int __attribute__((noinline)) after_exec(void)
{
	wl_sleep_ns(100 * NSEC_PER_MSEC * scale);
	return 0;
}

int main(int argc, char **argv)
{
	char self[PATH_MAX], scale_arg[32];
	pid_t pid;

	if (argc == 3 && !strcmp(argv[1], "--after")) {
		wl_prog = "execwait";
		scale = wl_parse_num(argv[2], "SCALE");
		return after_exec();
	}
	scale = wl_scale(argc, argv,
			 "[SCALE]\n  waits 200 ms * SCALE for a child, then execs itself to "
			 "sleep 100 ms * SCALE");
	wl_self(self, sizeof(self));
	snprintf(scale_arg, sizeof(scale_arg), "%.17g", scale);
	wl_start();
	pid = fork();
	if (pid < 0)
		wl_die("fork: %s", strerror(errno));
	if (pid == 0) {
		wl_sleep_ns(200 * NSEC_PER_MSEC * scale);
		_exit(0);
	}
	await_child(pid);
	execl(self, "execwait", "--after", scale_arg, (char *)NULL);
	wl_die("exec %s: %s", self, strerror(errno));
}
