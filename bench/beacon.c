// SPDX-License-Identifier: GPL-2.0-only
/*
 * Measures how long a collector takes to start and to stop, from the outside and
 * with one clock (CLOCK_MONOTONIC), for any collector, even one that only prints an
 * aggregate at the end.
 *
 *   beacon launch [--ms N] OUT -- CMD [ARGS...]
 *       Forks CMD (every "{}" in ARGS becomes the beacon's own pid, for -p PID
 *       style collectors), then blocks in 1 ms sleeps for N ms (3000) while CMD
 *       starts and traces the beacon, then sends CMD SIGINT and waits for it.
 *       OUT gets "launch T", "sigint T", "exit T" and one "sleep BEFORE AFTER"
 *       line per sleep. A collector that attached at time A reports the beacon
 *       off the CPU for about the sum of the sleeps after A, so walking the sleeps
 *       back from the end until their sum reaches the reported total gives A
 *       (bench/startup.sh does it), to within one sleep.
 *   beacon launch --wait OUT -- CMD [ARGS...]
 *       Only starts CMD and waits for it to end on its own (offcpu record runs
 *       its workload itself): OUT gets "launch T" and "exit T".
 *   beacon mark OUT
 *       Writes "mark T" to OUT and exits: as offcpu record's workload, T is the
 *       first instruction that runs under the collector.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int usage(void)
{
	fprintf(stderr, "usage: beacon launch [--ms N|--wait] OUT -- CMD [ARGS...]\n"
			"       beacon mark OUT\n");
	return 2;
}

static int mark(const char *out)
{
	uint64_t t = now_ns();
	FILE *f = fopen(out, "w");

	if (!f || fprintf(f, "mark %llu\n", (unsigned long long)t) < 0 || fclose(f)) {
		fprintf(stderr, "beacon: cannot write %s: %s\n", out, strerror(errno));
		return 1;
	}
	return 0;
}

static char **substitute(char **argv, int argc)
{
	char **v = calloc(argc + 1, sizeof(*v));
	char pid[16];

	if (!v)
		return NULL;
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	for (int i = 0; i < argc; i++)
		v[i] = strcmp(argv[i], "{}") ? argv[i] : strdup(pid);
	return v;
}

int main(int argc, char **argv)
{
	uint64_t(*sleeps)[2] = NULL, t_launch, t_int = 0, t_exit, end;
	int ms = 3000, wait_only = 0, i, status;
	size_t n = 0, cap = 0;
	const char *out;
	char **cmd;
	pid_t child;
	FILE *f;

	if (argc == 3 && !strcmp(argv[1], "mark"))
		return mark(argv[2]);
	if (argc < 2 || strcmp(argv[1], "launch"))
		return usage();
	for (i = 2; i < argc && argv[i][0] == '-' && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--ms") && i + 1 < argc)
			ms = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--wait"))
			wait_only = 1;
		else
			return usage();
	}
	if (i + 2 >= argc || strcmp(argv[i + 1], "--"))
		return usage();
	out = argv[i];
	cmd = substitute(argv + i + 2, argc - i - 2);
	if (!cmd)
		return 1;

	t_launch = now_ns();
	child = fork();
	if (child < 0) {
		fprintf(stderr, "beacon: fork: %s\n", strerror(errno));
		return 1;
	}
	if (!child) {
		execvp(cmd[0], cmd);
		fprintf(stderr, "beacon: cannot run %s: %s\n", cmd[0], strerror(errno));
		_exit(127);
	}
	if (!wait_only) {
		struct timespec one_ms = {0, 1000000};

		end = t_launch + (uint64_t)ms * 1000000ULL;
		for (;;) {
			uint64_t before = now_ns();

			if (before >= end)
				break;
			nanosleep(&one_ms, NULL);
			if (n == cap) {
				cap = cap ? cap * 2 : 4096;
				sleeps = realloc(sleeps, cap * sizeof(*sleeps));
				if (!sleeps)
					return 1;
			}
			sleeps[n][0] = before;
			sleeps[n++][1] = now_ns();
		}
		t_int = now_ns();
		kill(child, SIGINT);
	}
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	t_exit = now_ns();

	f = fopen(out, "w");
	if (!f) {
		fprintf(stderr, "beacon: cannot write %s: %s\n", out, strerror(errno));
		return 1;
	}
	fprintf(f, "launch %llu\n", (unsigned long long)t_launch);
	if (!wait_only)
		fprintf(f, "sigint %llu\n", (unsigned long long)t_int);
	fprintf(f, "exit %llu\nstatus %d\n", (unsigned long long)t_exit,
		WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	for (size_t k = 0; k < n; k++)
		fprintf(f, "sleep %llu %llu\n", (unsigned long long)sleeps[k][0],
			(unsigned long long)sleeps[k][1]);
	free(sleeps);
	return fclose(f) ? 1 : 0;
}
