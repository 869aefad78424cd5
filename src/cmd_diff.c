// SPDX-License-Identifier: GPL-2.0-only
/* offcpu diff BASE NEW: what got slower between two captures, and CI gates on it. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analyze/diff.h"
#include "cmd.h"
#include "lane/lane.h"
#include "output/diff_report.h"
#include "output/flamegraph.h"
#include "output/term_opts.h"
#include "parse/summary_json.h"
#include "util/atomic_file.h"

#define MAX_GATES 32

static void usage(FILE *out)
{
	fprintf(out,
		"usage: offcpu diff [OPTIONS] BASE NEW\n"
		"\n"
		"Compare two captures: totals, blocked time by reason, threads (by comm) and\n"
		"stacks (matched by frame names), largest change first. BASE and NEW are\n"
		"capture directories or offcpu.summary.json files (a summary lists only its\n"
		"top stacks).\n"
		"\n"
		"  --normalize[=total|wall]  divide each side by its total off-CPU time\n"
		"                            (default) or by its wall time\n"
		"  --fail-on EXPR            a gate; repeatable. EXPR is METRIC>+THRESHOLD:\n"
		"                              METRIC     blocked, runq, off, count,\n"
		"                                         reason:NAME, stack:REGEX\n"
		"                              THRESHOLD  +N%% (relative growth),\n"
		"                                         +Nns/+Nus/+Nms/+Ns (time growth),\n"
		"                                         +N (count growth)\n"
		"                            e.g. --fail-on 'blocked>+10%%'\n"
		"                                 --fail-on 'stack:futex_wait>+5ms'\n"
		"                            stack:REGEX matches the frame names joined root\n"
		"                            first with ';' (POSIX extended regex)\n"
		"                            reason:NAME and stack:REGEX measure blocked\n"
		"                            time, as the stack rows split it from run-queue\n"
		"                            time (reason:runqueue: run-queue time)\n"
		"  --flamegraph OUT.svg      also draw a differential flame graph: NEW's\n"
		"                            layout, each frame red (grew) or blue (shrank)\n"
		"                            from BASE; needs capture directories\n"
		"  --top N                   threads and stacks to show (default 10)\n"
		"  --width N                 columns (default: the terminal's, else 80)\n"
		"  --color=WHEN              auto, always, never\n"
		"  --json                    the diff and the gates as JSON\n"
		"  --reasons FILE            reason rules tried before the shipped ones\n"
		"  -h, --help                this help\n"
		"\n"
		"Exit status: 0 no gate crossed, 1 a gate crossed (the change is worse than\n"
		"allowed), 2 usage error, 3 an input cannot be used, 4 the flame graph or the\n"
		"diff cannot be written.\n");
}

/*
 * A side from a capture directory or a summary file. With keep, the profile
 * too, which only a capture directory has (a summary lists only top stacks).
 */
static int load_side(const char *path, struct diff_side **out, struct profile **keep)
{
	struct stat st;
	char why[256] = "";
	int err;

	*out = NULL;
	if (stat(path, &st)) {
		fprintf(stderr, "offcpu diff: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	if (S_ISDIR(st.st_mode)) {
		struct profile *p = NULL;
		struct summary_meta meta;
		struct lane lane;
		struct lane_load ld;

		err = lane__load(path, &p, &lane, &ld);
		if (err) {
			fprintf(stderr, "offcpu diff: %s\n", ld.error);
			return err;
		}
		lane_load__warn(&ld, "diff", stderr);
		*out = diff_side__from_profile(p);
		err = *out ? 0 : -errno;
		if (keep && !err)
			*keep = p;
		else
			profile__free(p);
		if (err) {
			fprintf(stderr, "offcpu diff: %s: %s\n", path, strerror(-err));
			return err;
		}
		/* Without schedstat, the workload's wall time from the summary. */
		if (!diff_side__wall_ns(*out) &&
		    !summary_json__read_path(lane.summary_path, &meta, NULL, 0)) {
			diff_side__set_wall_ns(*out, meta.wall_ns);
			summary_meta__free(&meta);
		}
		return 0;
	}
	FILE *f;

	if (keep) {
		fprintf(stderr,
			"offcpu diff: --flamegraph needs capture directories, and %s is a "
			"summary (it has only the top stacks); give its directory\n",
			path);
		return -EINVAL;
	}
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "offcpu diff: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	err = diff_side__read_summary(f, out, why, sizeof(why));
	fclose(f);
	if (err == -EINVAL)
		fprintf(stderr,
			"offcpu diff: %s: %s; give a capture directory or its "
			"offcpu.summary.json\n",
			path, why);
	else if (err)
		fprintf(stderr, "offcpu diff: %s: %s\n", path, strerror(-err));
	return err;
}

/* The differential flame graph, through util/atomic_file: never half an SVG. */
static int write_flamegraph(const char *path, const struct profile *base, const struct profile *new,
			    const struct diff_side *bs, const struct diff_side *ns,
			    enum diff_norm norm, const char *base_label, const char *new_label)
{
	struct flamegraph_opts o = {
		.base = base,
		.diff = norm == DIFF_NORM_TOTAL	 ? FLAMEGRAPH_DIFF_SHARE
			: norm == DIFF_NORM_WALL ? FLAMEGRAPH_DIFF_WALL
						 : FLAMEGRAPH_DIFF_ABSOLUTE,
		.base_wall_ns = diff_side__wall_ns(bs),
		.new_wall_ns = diff_side__wall_ns(ns),
	};
	struct atomic_file af;
	char *subtitle = NULL;
	FILE *out;
	int err;

	if (asprintf(&subtitle, "%s -> %s", base_label, new_label) < 0)
		return -ENOMEM;
	o.subtitle = subtitle;
	out = atomic_file__open(&af, path);
	if (!out) {
		err = -errno;
		goto cleanup;
	}
	err = flamegraph__write(out, new, &o);
	if (err)
		atomic_file__abort(&af);
	else
		err = atomic_file__commit(&af);
cleanup:
	free(subtitle);
	return err;
}

int cmd_diff(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"normalize", optional_argument, NULL, 'n'},
		{"fail-on", required_argument, NULL, 'f'},
		{"flamegraph", required_argument, NULL, 'g'},
		{"top", required_argument, NULL, 't'},
		{"width", required_argument, NULL, 'w'},
		{"color", optional_argument, NULL, 'c'},
		{"colour", optional_argument, NULL, 'c'},
		{"json", no_argument, NULL, 'j'},
		{"reasons", required_argument, NULL, 'R'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	struct diff_gate gates[MAX_GATES];
	struct diff_gate_result results[MAX_GATES];
	struct diff_report_opts o = {0};
	struct diff_side *base = NULL, *new = NULL;
	struct profile *base_p = NULL, *new_p = NULL;
	enum diff_norm norm = DIFF_NORM_NONE;
	const char *color = "auto", *flame = NULL;
	struct diff *d = NULL;
	size_t ng = 0, crossed = 0;
	char why[320];
	int c, err, rc = 2;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (!optarg || !strcmp(optarg, "total"))
				norm = DIFF_NORM_TOTAL;
			else if (!strcmp(optarg, "wall"))
				norm = DIFF_NORM_WALL;
			else if (!strcmp(optarg, "none"))
				norm = DIFF_NORM_NONE;
			else {
				fprintf(stderr,
					"offcpu diff: --normalize is total or wall, not '%s'\n",
					optarg);
				goto cleanup;
			}
			break;
		case 'f':
			if (ng == MAX_GATES) {
				fprintf(stderr, "offcpu diff: at most %d --fail-on gates\n",
					MAX_GATES);
				goto cleanup;
			}
			if (diff_gate__parse(optarg, &gates[ng], why, sizeof(why))) {
				fprintf(stderr, "offcpu diff: %s; see 'offcpu diff --help'\n", why);
				goto cleanup;
			}
			ng++;
			break;
		case 'g':
			flame = optarg;
			break;
		case 't':
			if (term_opts__int(optarg, 1, 100000, &o.top)) {
				fprintf(stderr,
					"offcpu diff: --top wants a number from 1, not '%s'\n",
					optarg);
				goto cleanup;
			}
			break;
		case 'w':
			if (term_opts__int(optarg, 40, 10000, &o.width)) {
				fprintf(stderr,
					"offcpu diff: --width wants a number from 40, not '%s'\n",
					optarg);
				goto cleanup;
			}
			break;
		case 'c':
			color = optarg ? optarg : "always";
			break;
		case 'j':
			o.json = true;
			break;
		case 'R':
			if (term_opts__reasons("diff", optarg))
				return EXIT_USAGE;
			break;
		case 'h':
			usage(stdout);
			rc = 0;
			goto cleanup;
		default:
			usage(stderr);
			goto cleanup;
		}
	}
	if (optind != argc - 2) {
		fprintf(stderr, "offcpu diff: expected BASE and NEW; try 'offcpu diff --help'\n");
		goto cleanup;
	}
	if (term_opts__color(color, &o.color)) {
		fprintf(stderr, "offcpu diff: --color is auto, always or never, not '%s'\n", color);
		goto cleanup;
	}
	if (flame && (!*flame || !strcmp(flame, "-"))) {
		fprintf(stderr, "offcpu diff: --flamegraph wants a file name (the diff itself goes "
				"to standard output)\n");
		goto cleanup;
	}
	if (!o.width)
		o.width = term_opts__width();
	o.base_label = argv[optind];
	o.new_label = argv[optind + 1];
	/* Asking a summary for what only a capture has is a usage error, not bad input. */
	for (int i = 0; flame && i < 2; i++) {
		struct stat sb;

		if (!stat(argv[optind + i], &sb) && !S_ISDIR(sb.st_mode)) {
			fprintf(stderr,
				"offcpu diff: --flamegraph needs capture directories, and %s "
				"is a summary (it has only the top stacks); give its directory\n",
				argv[optind + i]);
			goto cleanup;
		}
	}
	rc = EXIT_INPUT;
	if (load_side(argv[optind], &base, flame ? &base_p : NULL) ||
	    load_side(argv[optind + 1], &new, flame ? &new_p : NULL))
		goto cleanup;
	err = diff__new(base, new, norm, &d);
	if (err == -EINVAL) {
		fprintf(stderr,
			"offcpu diff: --normalize=wall needs both sides' wall time (schedstat or "
			"a summary with a workload); use --normalize=total\n");
		goto cleanup;
	}
	if (err) {
		fprintf(stderr, "offcpu diff: %s\n", strerror(-err));
		goto cleanup;
	}
	for (size_t i = 0; i < ng; i++) {
		diff_gate__eval(&gates[i], d, &results[i]);
		crossed += results[i].crossed;
	}
	rc = EXIT_OUTPUT;
	err = diff_report__write(stdout, d, gates, results, ng, &o);
	if (err) {
		fprintf(stderr, "offcpu diff: writing the diff failed: %s\n", strerror(-err));
		goto cleanup;
	}
	if (flame) {
		err = write_flamegraph(flame, base_p, new_p, base, new, norm, o.base_label,
				       o.new_label);
		if (err) {
			fprintf(stderr, "offcpu diff: cannot write the flame graph %s: %s\n", flame,
				strerror(-err));
			goto cleanup;
		}
	}
	rc = crossed ? 1 : 0;
cleanup:
	for (size_t i = 0; i < ng; i++)
		diff_gate__free(&gates[i]);
	diff__free(d);
	diff_side__free(base);
	diff_side__free(new);
	profile__free(base_p);
	profile__free(new_p);
	return rc;
}
