// SPDX-License-Identifier: GPL-2.0-only
/*
 * THIS IS A FAKE COLLECTOR, FOR TESTS ONLY. It measures nothing.
 *
 * It stands in for collectors whose output format offcpu reads but which cannot run
 * on the test machine (BCC's offcputime needs kernel headers and kprobes). Run in
 * place of the real tool and with the real tool's arguments, it looks attached the
 * way a real collector does (it holds a perf_event fd and sleeps in S), and when
 * stopped with SIGINT it replays a recorded capture, as the real tool would print
 * it. Its arguments are otherwise ignored.
 *
 * Environment:
 *   OFFCPU_FAKE_ARGV_LOG=FILE  write the arguments (without argv[0]) to FILE, one per
 *                              line, so a test can check what the tool was asked
 *   OFFCPU_FAKE_STDOUT=FILE    replayed to stdout when stopped: the capture
 *   OFFCPU_FAKE_STDERR=FILE    replayed to stderr when stopped: the diagnostics
 *   OFFCPU_FAKE_DELAY_MS=N     for crash and slowflush (default 1000)
 *   OFFCPU_FAKE_MODE=
 *     normal      attach, wait for SIGINT, replay stdout then stderr, exit 0
 *     exit-early  replay stderr and exit 1 at once, before attaching
 *     crash       attach, then die by SIGSEGV after DELAY_MS or at SIGINT,
 *                 whichever is first, replaying nothing
 *     hang        attach, then ignore SIGINT and SIGTERM (only SIGKILL ends it)
 *     noattach    like normal but never opens the perf_event fd
 *     slowflush   like normal but sleeps DELAY_MS between SIGINT and the replay
 * SIGTERM ends it at once without output in every mode but hang, as it ends the
 * real (Python) tool. A replay file that cannot be read is an error (exit 2) at start.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void __attribute__((noreturn)) die(const char *what, const char *arg)
{
	fprintf(stderr, "fake_collector: %s%s%s\n", what, arg ? ": " : "", arg ? arg : "");
	exit(2);
}

static void log_argv(int argc, char **argv)
{
	const char *path = getenv("OFFCPU_FAKE_ARGV_LOG");
	FILE *f;

	if (!path || !*path)
		return;
	f = fopen(path, "w");
	if (!f)
		die("cannot write OFFCPU_FAKE_ARGV_LOG", strerror(errno));
	for (int i = 1; i < argc; i++)
		fprintf(f, "%s\n", argv[i]);
	if (fclose(f))
		die("cannot write OFFCPU_FAKE_ARGV_LOG", strerror(errno));
}

/* Copies the file named by the environment variable env to out_fd, if it is set. */
/* A test that names a missing file learns it at start, not after SIGINT. */
static void check_readable(const char *env)
{
	const char *path = getenv(env);

	if (path && *path && access(path, R_OK)) {
		fprintf(stderr, "fake_collector: cannot read %s=%s: %s\n", env, path,
			strerror(errno));
		exit(2);
	}
}

static void replay(const char *env, int out_fd)
{
	const char *path = getenv(env);
	char buf[65536];
	ssize_t n, w;
	int fd;

	if (!path || !*path)
		return;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "fake_collector: cannot open %s=%s: %s\n", env, path,
			strerror(errno));
		exit(2);
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < n; off += w) {
			w = write(out_fd, buf + off, n - off);
			if (w < 0 && errno == EINTR)
				w = 0;
			else if (w < 0)
				exit(2);
		}
	}
	close(fd);
}

/* What a readiness check looks for: an fd that links to anon_inode:[perf_event]. */
static void attach(void)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_DUMMY,
		.disabled = 1,
		.exclude_kernel = 1, /* allowed unprivileged at perf_event_paranoid 2 */
		.exclude_hv = 1,
	};

	if (syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC) < 0)
		die("perf_event_open (to look attached) failed", strerror(errno));
}

static void sleep_ms(long ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000L};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int main(int argc, char **argv)
{
	const char *mode = getenv("OFFCPU_FAKE_MODE");
	const char *delay_env = getenv("OFFCPU_FAKE_DELAY_MS");
	long delay_ms = delay_env && *delay_env ? atol(delay_env) : 1000;
	struct rlimit no_core = {0, 0};
	struct timespec timeout;
	sigset_t sigint;

	if (!mode || !*mode)
		mode = "normal";
	log_argv(argc, argv);
	check_readable("OFFCPU_FAKE_STDOUT");
	check_readable("OFFCPU_FAKE_STDERR");

	if (!strcmp(mode, "exit-early")) {
		replay("OFFCPU_FAKE_STDERR", STDERR_FILENO);
		return 1;
	}
	if (!strcmp(mode, "hang")) {
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		attach();
		for (;;)
			pause();
	}
	if (strcmp(mode, "normal") && strcmp(mode, "crash") && strcmp(mode, "noattach") &&
	    strcmp(mode, "slowflush"))
		die("unknown OFFCPU_FAKE_MODE (normal, exit-early, crash, hang, noattach, "
		    "slowflush)",
		    mode);

	/* Blocked, so that it is taken by sigwait and never lost before we wait. */
	sigemptyset(&sigint);
	sigaddset(&sigint, SIGINT);
	sigprocmask(SIG_BLOCK, &sigint, NULL);
	if (strcmp(mode, "noattach"))
		attach();

	if (!strcmp(mode, "crash")) {
		timeout.tv_sec = delay_ms / 1000;
		timeout.tv_nsec = delay_ms % 1000 * 1000000L;
		while (sigtimedwait(&sigint, NULL, &timeout) < 0 && errno == EINTR)
			;
		setrlimit(RLIMIT_CORE, &no_core);
		signal(SIGSEGV, SIG_DFL);
		raise(SIGSEGV);
		die("SIGSEGV did not end the process", NULL);
	}

	while (sigwaitinfo(&sigint, NULL) < 0)
		if (errno != EINTR)
			die("sigwaitinfo", strerror(errno));
	if (!strcmp(mode, "slowflush"))
		sleep_ms(delay_ms);
	replay("OFFCPU_FAKE_STDOUT", STDOUT_FILENO);
	replay("OFFCPU_FAKE_STDERR", STDERR_FILENO);
	return 0;
}
