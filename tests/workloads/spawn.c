// SPDX-License-Identifier: GPL-2.0-only
/*
 * What a shell or python's subprocess does, many times: fork COUNT children
 * one after another; each waits briefly in before_exec() (100 us * SCALE:
 * a forked child's wait between its fork and its exec) and then execs this
 * program again with --exit, which returns at once; the parent waits for
 * each in reap_child(). The child's wait is its first stack, and its exec
 * follows so soon that a recorder reads its mappings after the exec, or
 * after it is gone, more often than not: the wait was in the image it had
 * from the parent, and must be named with that one. With --vfork the
 * children are made by vfork (python's subprocess, posix_spawn): they wait
 * in the parent's own address space, and their stacks unwind with the
 * parent's mappings.
 */
#include <limits.h>
#include <stdbool.h>
#include <sys/wait.h>

#include "workload.h"

#define COUNT 20

static void __attribute__((noinline)) before_exec(const char *self, double scale)
{
	wl_sleep_ns(100000 * scale);
	execl(self, "spawn", "--exit", (char *)NULL);
	fprintf(stderr, "%s: exec %s: %s\n", wl_prog, self, strerror(errno));
	_exit(127);
}

static void __attribute__((noinline)) reap_child(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			wl_die("waitpid: %s", strerror(errno));
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		wl_die("the child (pid %d) failed", (int)pid);
}

int main(int argc, char **argv)
{
	char self[PATH_MAX];
	bool use_vfork = false;
	double scale;

	if (argc == 2 && !strcmp(argv[1], "--exit"))
		return 0;
	if (argc >= 2 && !strcmp(argv[1], "--vfork")) {
		use_vfork = true;
		argv[1] = argv[0];
		argc--;
		argv++;
	}
	scale = wl_scale(argc, argv,
			 "[--vfork] [SCALE]\n  forks 20 children one after another; each waits "
			 "100 us * SCALE in before_exec(), then execs");
	wl_self(self, sizeof(self));
	wl_start();
	for (int i = 0; i < COUNT; i++) {
		pid_t pid = use_vfork ? vfork() : fork();

		if (pid < 0)
			wl_die("fork: %s", strerror(errno));
		if (pid == 0)
			before_exec(self, scale);
		reap_child(pid);
	}
	return 0;
}
