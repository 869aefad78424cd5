// SPDX-License-Identifier: GPL-2.0-only
/*
 * Three processes, one thread each, all reporting truth:
 *   "parent"      forks "child" and waits for it in waitpid() (1 wait)
 *   "child"       fork+execs "grandchild", sleeps 100 ms, then waits for it in
 *                 waitpid() (2 waits; the grandchild outlives the sleep)
 *   "grandchild"  this same program run again with --grandchild: sleeps 150 ms
 * Durations are times SCALE. The grandchild is exec'd by its real path, not by
 * /proc/self/exe, so that between exec and renaming itself its comm is "forkexec"
 * and not "exe".
 */
#include <limits.h>
#include <sys/wait.h>

#include "workload.h"

static double scale;

static void wait_ok(pid_t pid, const char *who)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			wl_die("waitpid %s: %s", who, strerror(errno));
	if (WIFSIGNALED(status))
		wl_die("%s (pid %d) was killed by signal %d", who, (int)pid, WTERMSIG(status));
	if (WEXITSTATUS(status))
		wl_die("%s (pid %d) failed with exit status %d", who, (int)pid,
		       WEXITSTATUS(status));
}

static int grandchild(void)
{
	struct truth t;

	truth_begin(&t, "forkexec", "grandchild", "S");
	wl_sleep_ns(150 * NSEC_PER_MSEC * scale);
	truth_end(&t, 1);
	return 0;
}

static void child(const char *self, const char *scale_arg)
{
	struct truth t;
	pid_t pid;

	truth_begin(&t, "forkexec", "child", "S");
	pid = fork();
	if (pid < 0)
		wl_die("fork: %s", strerror(errno));
	if (pid == 0) {
		execl(self, "forkexec", "--grandchild", scale_arg, (char *)NULL);
		fprintf(stderr, "%s: exec %s: %s\n", wl_prog, self, strerror(errno));
		_exit(127);
	}
	wl_sleep_ns(100 * NSEC_PER_MSEC * scale);
	wait_ok(pid, "grandchild");
	truth_end(&t, 2);
	exit(0);
}

int main(int argc, char **argv)
{
	char self[PATH_MAX], scale_arg[32];
	struct truth t;
	pid_t pid;

	if (argc == 3 && !strcmp(argv[1], "--grandchild")) {
		wl_prog = "forkexec";
		scale = wl_parse_num(argv[2], "SCALE");
		return grandchild();
	}
	scale = wl_scale(argc, argv,
			 "[SCALE]\n  \"parent\" forks \"child\" (sleeps 100 ms * SCALE), which "
			 "fork+execs\n  \"grandchild\" (sleeps 150 ms * SCALE); each waits for its "
			 "child");
	wl_self(self, sizeof(self));
	snprintf(scale_arg, sizeof(scale_arg), "%.17g", scale);
	wl_start();

	truth_begin(&t, "forkexec", "parent", "S");
	pid = fork();
	if (pid < 0)
		wl_die("fork: %s", strerror(errno));
	if (pid == 0)
		child(self, scale_arg);
	wait_ok(pid, "child");
	truth_end(&t, 1);
	return 0;
}
