// SPDX-License-Identifier: GPL-2.0-only
/*
 * Ends with a chosen exit status or signal, for tests that a profiler running a
 * command passes its fate on:
 *   exitcode [--after MS] CODE            exit(CODE)
 *   exitcode [--after MS] --signal SIG    die by SIG (name like SEGV or SIGSEGV, or a number)
 * --after sleeps first, so the command is seen running. No core file is written.
 */
#include <sys/resource.h>

#include "workload.h"

static int parse_signal(const char *s)
{
	char *end;
	long n;

	if (!strncmp(s, "SIG", 3))
		s += 3;
	n = strtol(s, &end, 10);
	if (end != s && !*end)
		return n > 0 && n < NSIG ? (int)n : -1;
	for (int i = 1; i < NSIG; i++) {
		const char *abbrev = sigabbrev_np(i);

		if (abbrev && !strcmp(abbrev, s))
			return i;
	}
	return -1;
}

int main(int argc, char **argv)
{
	static const char usage[] =
		"[--after MS] CODE | [--after MS] --signal SIG\n"
		"  exit with status CODE (0-255), or die by signal SIG (SEGV, SIGTERM, 9, ...)\n";
	struct rlimit no_core = {0, 0};
	const char *code = NULL, *sig = NULL;
	double after_ms = 0;
	sigset_t all;
	char *end;
	long n;
	int signo;

	wl_prog = "exitcode";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("usage: exitcode %s", usage);
			return 0;
		} else if (!strcmp(argv[i], "--after") && i + 1 < argc) {
			after_ms = wl_parse_num(argv[++i], "MS");
		} else if (!strcmp(argv[i], "--signal") && i + 1 < argc) {
			sig = argv[++i];
		} else if (argv[i][0] != '-' && !code) {
			code = argv[i];
		} else {
			wl_die("unexpected argument '%s'; see --help", argv[i]);
		}
	}
	if (!code == !sig)
		wl_die("give either CODE or --signal SIG; see --help");
	if (after_ms > 0)
		wl_sleep_ns(after_ms * NSEC_PER_MSEC);
	if (code) {
		n = strtol(code, &end, 10);
		if (end == code || *end || n < 0 || n > 255)
			wl_die("CODE must be 0-255, not '%s'", code);
		return (int)n;
	}
	signo = parse_signal(sig);
	if (signo < 0)
		wl_die("unknown signal '%s'; give a name like SEGV or a number", sig);
	setrlimit(RLIMIT_CORE, &no_core);
	signal(signo, SIG_DFL);
	sigemptyset(&all);
	sigaddset(&all, signo);
	sigprocmask(SIG_UNBLOCK, &all, NULL);
	raise(signo);
	wl_die("signal %s did not end the process (its default action is not to)", sig);
}
