// SPDX-License-Identifier: GPL-2.0-only
/*
 * offcpu push --to URL [--auth-file F] [--label K=V]... [--name APP]
 *             [--spool DIR] [--timeout T] LANE_DIR...
 *
 * Sends existing capture directories to a Pyroscope server through the same
 * spool and sender as record's --push (push/pusher.h), then waits until they
 * are accepted, refused, or the time is up.
 */
#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "lane/lane.h"
#include "parse/summary_json.h"
#include "push/pusher.h"

#define MAX_LABELS 64

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: offcpu push --to URL [--auth-file FILE] [--label KEY=VALUE]... [--name "
		"APP]\n"
		"                   [--spool DIR] [--timeout T] [--request-timeout T] "
		"LANE_DIR...\n\n"
		"Send capture directories (record -o DIR, or periods of record --every) to a\n"
		"Grafana Pyroscope server (docs/push.md).\n\n"
		"  --to URL          the server, e.g. http://pyroscope:4040 (required)\n"
		"  --auth-file FILE  the credential: 'Bearer TOKEN', 'Basic USER:PASSWORD' or a\n"
		"                    token, on the first line; neither group nor others may\n"
		"                    read the file\n"
		"  --label KEY=VALUE a label on the series (repeatable); host=HOSTNAME is added\n"
		"  --name APP        the application name (service_name); default offcpu\n"
		"  --spool DIR       the queue to go through, kept afterwards: what is not sent\n"
		"                    stays there for the next run, and what was sent is not sent\n"
		"                    again by a later run on it; default: a temporary one\n"
		"  --timeout T       how long to keep trying (e.g. 30s, 2m); default 60s\n"
		"  --request-timeout T  one request's limit; default 30s\n"
		"  -h, --help        this help\n\n"
		"Exit status 0 when every directory was accepted (or had been, by this spool),\n"
		"1 when some were refused or are still queued, 2 usage, 3 a directory cannot be\n"
		"read.\n");
}

/* A whole number of ms, s (the default) or m. */
static int parse_timeout(const char *s, int *ms)
{
	char *end;
	unsigned long v;
	unsigned long mul = 1000;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	if (!strcmp(end, "ms"))
		mul = 1;
	else if (!strcmp(end, "m"))
		mul = 60000;
	else if (*end && strcmp(end, "s"))
		return -EINVAL;
	if (v > INT32_MAX / mul)
		return -ERANGE;
	*ms = (int)(v * mul);
	return 0;
}

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	remove(path);
	return 0;
}

/* The period of a lane: its start and length as its summary has them. */
static int lane_window(const char *dir, uint64_t *from_ns, uint64_t *until_ns)
{
	struct summary_meta m = {0};
	char path[PATH_MAX], why[256] = "";
	int err;

	snprintf(path, sizeof(path), "%s/offcpu.summary.json", dir);
	err = summary_json__read_path(path, &m, why, sizeof(why));
	if (err) {
		fprintf(stderr, "offcpu push: %s: %s\n", path, why[0] ? why : strerror(-err));
		return err;
	}
	if (!m.has_workload || m.started_unix_ns <= 0) {
		fprintf(stderr,
			"offcpu push: %s has no start time (workload.started_unix_ns): it cannot "
			"be "
			"placed in time\n",
			path);
		summary_meta__free(&m);
		return -EINVAL;
	}
	*from_ns = (uint64_t)m.started_unix_ns;
	*until_ns = *from_ns + (m.wall_ns ? m.wall_ns : 1);
	summary_meta__free(&m);
	return 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int cmd_push(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"to", required_argument, NULL, 't'},
		{"auth-file", required_argument, NULL, 'A'},
		{"label", required_argument, NULL, 'l'},
		{"name", required_argument, NULL, 'n'},
		{"spool", required_argument, NULL, 'S'},
		{"timeout", required_argument, NULL, 'T'},
		{"request-timeout", required_argument, NULL, 'R'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *labels[MAX_LABELS];
	struct push_opts o = {.labels = labels};
	char tmp_spool[PATH_MAX] = "", why[512];
	struct sigaction sa = {.sa_handler = on_signal};
	struct pusher *p = NULL;
	struct push_stats st;
	uint64_t failed0, deadline;
	int c, timeout_ms = 60000, status = 0, already = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 't':
			o.url = optarg;
			break;
		case 'A':
			o.auth_file = optarg;
			break;
		case 'l':
			if (o.nr_labels == MAX_LABELS) {
				fprintf(stderr, "offcpu push: at most %d labels\n", MAX_LABELS);
				return EXIT_USAGE;
			}
			labels[o.nr_labels++] = optarg;
			break;
		case 'n':
			o.app = optarg;
			break;
		case 'S':
			o.spool_dir = optarg;
			break;
		case 'T':
			if (parse_timeout(optarg, &timeout_ms)) {
				fprintf(stderr,
					"offcpu push: --timeout takes a duration (e.g. 30s, 2m), "
					"not "
					"'%s'\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'R':
			if (parse_timeout(optarg, &o.timeout_ms) || !o.timeout_ms) {
				fprintf(stderr,
					"offcpu push: --request-timeout takes a positive duration "
					"(e.g. 10s), not '%s'\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (!o.url) {
		fprintf(stderr, "offcpu push: --to URL is required; try 'offcpu push --help'\n");
		return EXIT_USAGE;
	}
	if (optind == argc) {
		fprintf(stderr, "offcpu push: give one or more capture directories\n");
		return EXIT_USAGE;
	}
	if (!o.spool_dir) {
		const char *t = getenv("TMPDIR");

		snprintf(tmp_spool, sizeof(tmp_spool), "%s/offcpu-push.XXXXXX",
			 t && *t ? t : "/tmp");
		if (!mkdtemp(tmp_spool)) {
			fprintf(stderr, "offcpu push: cannot create a spool in %s: %s\n",
				t && *t ? t : "/tmp", strerror(errno));
			return EXIT_OUTPUT;
		}
		o.spool_dir = tmp_spool;
	}
	p = pusher__new(&o, why, sizeof(why));
	if (!p) {
		fprintf(stderr, "offcpu push: %s\n", why);
		status = errno == EINVAL || errno == EPERM || errno == ENAMETOOLONG ? EXIT_USAGE
										    : EXIT_OUTPUT;
		goto cleanup;
	}
	pusher__stats(p, &st);
	failed0 = st.failed;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	for (int i = optind; i < argc && !stop_signal; i++) {
		struct lane_load ld = {0};
		struct lane l = {0};
		struct profile *prof = NULL;
		uint64_t from, until;
		int err;

		if (lane_window(argv[i], &from, &until)) {
			status = EXIT_INPUT;
			continue;
		}
		err = lane__load(argv[i], &prof, &l, &ld);
		if (err) {
			fprintf(stderr, "offcpu push: %s\n", ld.error);
			status = EXIT_INPUT;
			continue;
		}
		lane_load__warn(&ld, "push", stderr);
		err = pusher__enqueue(p, prof, from, until);
		profile__free(prof);
		if (err == 1) {
			already++;
			fprintf(stderr, "offcpu push: %s: already sent or queued in %s\n", argv[i],
				o.spool_dir);
		} else if (err) {
			pusher__stats(p, &st);
			fprintf(stderr, "offcpu push: %s: %s\n", argv[i], st.last_error);
			status = status ? status : 1;
		}
	}

	/* Wait for the sender; a signal ends the wait, the spool keeps the rest. */
	deadline = now_ms() + (uint64_t)timeout_ms;
	for (;;) {
		pusher__stats(p, &st);
		if (!st.queued || stop_signal || now_ms() >= deadline)
			break;
		usleep(50 * 1000);
	}
	pusher__stop(p, 0);
	pusher__stats(p, &st);
	fprintf(stderr, "offcpu push: %llu accepted, %llu refused, %zu still queued",
		(unsigned long long)st.sent, (unsigned long long)(st.failed - failed0), st.queued);
	if (already)
		fprintf(stderr, ", %d sent before", already);
	if (st.last_error[0] && (st.queued || st.failed > failed0))
		fprintf(stderr, "; last error: %s", st.last_error);
	fputc('\n', stderr);
	if (st.queued && !tmp_spool[0])
		fprintf(stderr,
			"offcpu push: %s keeps the %zu not yet sent: run again with --spool "
			"%s\n",
			o.spool_dir, st.queued, o.spool_dir);
	if (stop_signal)
		fprintf(stderr, "offcpu push: interrupted by signal %d\n", (int)stop_signal);
	if ((st.queued || st.failed > failed0 || stop_signal) && !status)
		status = 1;
cleanup:
	pusher__free(p);
	if (tmp_spool[0])
		nftw(tmp_spool, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return status;
}
