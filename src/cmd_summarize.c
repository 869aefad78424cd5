// SPDX-License-Identifier: GPL-2.0-only
/*
 * offcpu summarize DIR: re-read a lane directory (capture, diagnostics, the
 * previous summary's record of the workload and of kernel-side losses) and
 * rewrite its summary. Useful after editing a capture, or for a directory a
 * harness filled by running a collector itself.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "lane/lane.h"
#include "output/summary.h"
#include "parse/summary_json.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: offcpu summarize [--mode time|stacks] [--tool NAME] [--json] DIR\n"
		     "\n"
		     "Rewrite DIR/offcpu.summary.json from the capture and diagnostics in DIR.\n"
		     "  --mode     which capture to read (default: the one present)\n"
		     "  --tool     the collector that wrote it (default: as the old summary says)\n"
		     "  --exit-code N  the collector's exit status (default 0)\n"
		     "  --json     print the result record as one JSON line on stdout\n"
		     "\n"
		     "Exit status: 0 rewritten, 2 usage error, 3 the capture or the old summary\n"
		     "cannot be used (a good summary is never replaced by a worse reading;\n"
		     "it is left unchanged), 4 the summary cannot be written.\n");
}

int cmd_summarize(int argc, char **argv)
{
	enum { OPT_MODE = 256, OPT_TOOL, OPT_JSON, OPT_EXIT };
	static const struct option longopts[] = {
		{"mode", required_argument, NULL, OPT_MODE},
		{"tool", required_argument, NULL, OPT_TOOL},
		{"json", no_argument, NULL, OPT_JSON},
		{"exit-code", required_argument, NULL, OPT_EXIT},
		{"help", no_argument, NULL, 'h'},
		{},
	};
	const char *tool = NULL, *dir;
	enum lane_mode mode = LANE_TIME;
	bool mode_given = false, json = false, have_meta = false;
	struct lane_evidence ev = {.tool_available = true, .collector_ready = true};
	struct summary_meta meta;
	struct summary_run run = {};
	struct lane_result res = {};
	struct lane l;
	struct lane_load ld = {};
	char probe[PATH_MAX], why[256] = "";
	int c, err, exit_code = 0, status = EXIT_INPUT;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_MODE:
			if (lane_mode__parse(optarg, &mode)) {
				fprintf(stderr, "offcpu summarize: --mode is 'time' or 'stacks'\n");
				return 2;
			}
			mode_given = true;
			break;
		case OPT_TOOL:
			tool = optarg;
			break;
		case OPT_JSON:
			json = true;
			break;
		case OPT_EXIT: {
			char *end;
			long v;

			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || v < 0 || v > 255) {
				fprintf(stderr,
					"offcpu summarize: --exit-code takes a status from 0 "
					"to 255, not '%s'\n",
					optarg);
				return EXIT_USAGE;
			}
			exit_code = (int)v;
			break;
		}
		case 'h':
			usage(stdout);
			return 0;
		default:
			fprintf(stderr, "offcpu summarize: try 'offcpu summarize --help'\n");
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr,
			"offcpu summarize: give one lane directory; usage: offcpu summarize "
			"[OPTIONS] DIR\n");
		return 2;
	}
	dir = argv[optind];
	if (access(dir, F_OK)) {
		fprintf(stderr, "offcpu summarize: %s: %s\n", dir, strerror(errno));
		return EXIT_INPUT;
	}
	if (!mode_given) {
		snprintf(probe, sizeof(probe), "%s/offcpu.stacks.txt", dir);
		if (!access(probe, F_OK)) {
			snprintf(probe, sizeof(probe), "%s/offcpu.time.txt", dir);
			if (access(probe, F_OK))
				mode = LANE_STACKS;
		}
	}
	err = lane__plan(&l, dir, mode, NULL);
	if (!err) {
		err = summary_json__read_path(l.summary_path, &meta, why, sizeof(why));
		have_meta = !err;
		/* Rewriting a summary of a schema we do not know would downgrade it. */
		if (err == -EPROTO) {
			fprintf(stderr, "offcpu summarize: %s: %s; left it unchanged\n",
				l.summary_path, why);
			return EXIT_INPUT;
		}
		if (err && err != -ENOENT)
			fprintf(stderr,
				"offcpu summarize: warning: %s: %s; summarizing without it\n",
				l.summary_path, err == -EINVAL ? why : strerror(-err));
		err = 0;
	}
	if (!tool)
		tool = have_meta && meta.tool[0] ? meta.tool : NULL;
	if (!tool)
		tool = mode == LANE_STACKS ? "bpftrace" : "offcputime-bpfcc";
	if (!err)
		err = lane__plan(&l, dir, mode, tool);
	if (err) {
		fprintf(stderr, "offcpu summarize: %s: %s\n", dir, strerror(-err));
		status = EXIT_INPUT;
		goto cleanup;
	}
	if (have_meta) {
		/* Kernel-side losses live only in the summary; keep them. */
		for (size_t i = 0; i < meta.integrity.nr_losses; i++) {
			const struct integrity_loss *x = &meta.integrity.losses[i];

			if (strcmp(x->name, "lost_stack_traces") && strcmp(x->name, "lost_events"))
				integrity__add_loss(&res.integrity, x->name, x->count,
						    x->affected_ns);
		}
		res.integrity.evidence = l.collector == COLLECTOR_NATIVE && meta.integrity.evidence;
		ev.tool_available = strcmp(meta.state, "tool_missing") != 0;
		/* A native lane summarized as written was attached: its empty profile is a result.
		 */
		ev.native_attached =
			l.collector == COLLECTOR_NATIVE && !strcmp(meta.state, "summary_written");
		if (meta.has_workload) {
			run.target = meta.target[0] ? meta.target : "command";
			run.argv = meta.argv;
			run.pid = meta.pid;
			run.workload = meta.workload;
			run.ended_by = meta.ended_by[0] ? meta.ended_by : NULL;
			run.wall_ns = meta.wall_ns;
			run.started_unix_ns = meta.started_unix_ns;
			ev.workload = meta.workload;
		}
	}
	ev.collector = (struct proc_end){.started = true, .exited = true, .exit_code = exit_code};
	if (ev.tool_available) {
		/* The one loader every subcommand uses: the same errors, named by file and line. */
		err = lane__load_planned(&l, &res.profile, &ld);
		if (err && err != -ENOENT) {
			fprintf(stderr, "offcpu summarize: %s; %s left unchanged\n", ld.error,
				l.summary_path);
			status = EXIT_INPUT;
			goto cleanup;
		}
		lane_load__warn(&ld, "summarize", stderr);
		res.parse = ld.parse;
		res.parsed = !err;
	}
	/* With nothing to parse, lane__decide must not look for a capture again. */
	if (!res.profile && ev.tool_available)
		res.profile = profile__new();
	err = res.profile || !ev.tool_available ? lane__decide(&l, &ev, &res) : -ENOMEM;
	if (err) {
		fprintf(stderr, "offcpu summarize: %s: %s\n", l.summary_path, strerror(-err));
		status = EXIT_INPUT;
		goto cleanup;
	}
	/*
	 * The same capture read again must not come out worse than the summary
	 * it replaces: a capture damaged since (or a collector that cannot be
	 * judged from the files alone) would turn a good summary into a failure.
	 */
	if (have_meta && !strcmp(meta.state, "summary_written") &&
	    strcmp(res.outcome.state, "summary_written")) {
		fprintf(stderr,
			"offcpu summarize: %s says summary_written, and this reading of %s gives "
			"%s (%s); left it unchanged\n",
			l.summary_path, ld.path[0] ? ld.path : l.capture_path, res.outcome.state,
			res.outcome.caveat_kind ? res.outcome.caveat_kind : "no caveat");
		status = EXIT_INPUT;
		goto cleanup;
	}
	err = lane__write_summary(&l, have_meta && meta.has_workload ? &run : NULL, NULL, 0, &res);
	if (err) {
		fprintf(stderr, "offcpu summarize: cannot write %s: %s\n", l.summary_path,
			strerror(-err));
		status = EXIT_OUTPUT;
		goto cleanup;
	}
	fprintf(stderr, "offcpu summarize: %s: %s%s%s\n", l.summary_path, res.outcome.state,
		res.outcome.caveat_kind ? ", " : "",
		res.outcome.caveat_kind ? res.outcome.caveat_kind : "");
	if (json) {
		struct summary_input si = {
			.lane = &l, .outcome = &res.outcome, .integrity = &res.integrity};

		summary__write_record(stdout, &si);
	}
	status = 0;
cleanup:
	if (have_meta)
		summary_meta__free(&meta);
	lane_result__free(&res);
	return status;
}
