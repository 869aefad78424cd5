// SPDX-License-Identifier: GPL-2.0-only
/*
 * offcpu record: run a workload (or watch pids, a cgroup, the host) under an
 * off-CPU collector and leave a lane directory with capture, diagnostics and
 * summary. Exits with the workload's status (128+N for signal N), like time(1).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "collect/external.h"
#include "collect/proc.h"
#include "lane/lane.h"
#include "output/summary.h"
#include "lane/record.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: offcpu record [OPTIONS] -- COMMAND [ARGS...]\n"
		"\n"
		"Run COMMAND under an off-CPU collector; write DIR/offcpu.{time,stacks}.txt,\n"
		"DIR/offcpu.diagnostics.txt and DIR/offcpu.summary.json.\n"
		"\n"
		"  -o, --output DIR       lane directory (default: offcpu-out)\n"
		"      --mode time|stacks time: folded blocked time; stacks: bpftrace-style dump\n"
		"      --tool NAME|PATH   collector: native (default), offcputime-bpfcc, bpftrace,\n"
		"                         or a path to a compatible tool\n"
		"      --json             print the result record as one JSON line on stdout\n"
		"      --ready-timeout S  wait at most S seconds for the collector to attach (60)\n"
		"      --stop-timeout S   wait at most S seconds for it to flush at the end (10)\n"
		"  -q, --quiet            no summary on stderr\n"
		"  -h, --help             this help\n"
		"\n"
		"Exit status: the workload's (128+N if killed by signal N); 2 usage error;\n"
		"125 offcpu could not run; 126/127 the command could not be executed/found.\n");
}

static int parse_seconds(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0 || v > 86400 * 365)
		return -EINVAL;
	if (*end == 's' && !end[1])
		end++;
	else if (!strcmp(end, "ms"))
		v /= 1000, end += 2;
	else if (*end == 'm' && !end[1])
		v *= 60, end++;
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_args(int argc, char **argv, struct record_opts *o)
{
	enum { OPT_MODE = 256, OPT_TOOL, OPT_JSON, OPT_READY, OPT_STOP };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "mode", required_argument, NULL, OPT_MODE },
		{ "tool", required_argument, NULL, OPT_TOOL },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "ready-timeout", required_argument, NULL, OPT_READY },
		{ "stop-timeout", required_argument, NULL, OPT_STOP },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	double secs;
	int c;

	o->out_dir = "offcpu-out";
	o->ready_timeout_ms = 60000;
	o->stop_timeout_ms = 10000;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->out_dir = optarg;
			break;
		case OPT_MODE:
			if (lane_mode__parse(optarg, &o->mode)) {
				fprintf(stderr, "offcpu record: --mode is 'time' or 'stacks', not '%s'\n",
					optarg);
				return -EINVAL;
			}
			break;
		case OPT_TOOL:
			o->tool = optarg;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_READY:
		case OPT_STOP:
			if (parse_seconds(optarg, &secs)) {
				fprintf(stderr, "offcpu record: '%s' is not a duration (e.g. 10, 2.5s, 500ms)\n",
					optarg);
				return -EINVAL;
			}
			*(c == OPT_READY ? &o->ready_timeout_ms : &o->stop_timeout_ms) =
				(int)(secs * 1000);
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			fprintf(stderr, "offcpu record: try 'offcpu record --help'\n");
			return -EINVAL;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "offcpu record: no command to run; usage: offcpu record [OPTIONS] -- "
				"COMMAND [ARGS...]\n");
		return -EINVAL;
	}
	o->argv = argv + optind;
	return 0;
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o = {};
	int err = parse_args(argc, argv, &o);

	if (err)
		return err > 0 ? 0 : 2;
	return record__run(&o);
}
