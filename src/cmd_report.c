// SPDX-License-Identifier: GPL-2.0-only
/* offcpu report DIR: the terminal report of a capture directory. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cmd.h"
#include "cmd_filters.h"
#include "lane/lane.h"
#include "output/report.h"
#include "parse/timeline.h"
#include "output/term_opts.h"

/*
 * The capture's timeline, when it has one, for "Woken by": read into a
 * profile of its own, so that the report's stacks stay the capture's. A
 * timeline that cannot be read costs the section only, with a word.
 */
static struct timeline *load_timeline(const char *path, struct profile **tp)
{
	struct timeline *t = timeline__new();
	struct parse_stats st;
	FILE *f = fopen(path, "r");
	int err = -ENOMEM;

	*tp = profile__new();
	if (!f) {
		err = -errno;
		goto cleanup;
	}
	if (t && *tp)
		err = timeline__parse(f, *tp, t, &st);
	fclose(f);
	if (!err && st.malformed)
		fprintf(stderr,
			"offcpu report: %s:%zu: %zu malformed line(s) skipped, the first: %s\n",
			path, st.first_malformed_line, st.malformed, st.first_malformed_reason);
cleanup:
	if (!err)
		return t;
	if (err != -ENOENT)
		fprintf(stderr, "offcpu report: %s: %s; no \"Woken by\" section\n", path,
			err == -EPROTO ? "not an offcpu timeline this version reads"
				       : strerror(-err));
	timeline__free(t);
	profile__free(*tp);
	*tp = NULL;
	return NULL;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: offcpu report [OPTIONS] DIR\n"
		"\n"
		"Where the threads of a capture waited, and why: the integrity banner (when\n"
		"events were lost), off-CPU time by reason, the wall-clock budget per process\n"
		"and thread, and the top blocking stacks; with a timeline (record --timeline),\n"
		"what woke the waits it kept.\n"
		"\n"
		"  --top N              stacks and process names to show (default 10)\n"
		"  --pid PID,...        only the threads of these processes\n"
		"  --comm NAME          only processes or threads named NAME, exactly "
		"(repeatable)\n"
		"  --width N            columns (default: the terminal's, else 80)\n"
		"  --color=WHEN         auto (default: a terminal and NO_COLOR unset), always, "
		"never\n"
		"  --json               the same content as JSON\n"
		"  --reasons FILE       reason rules tried before the shipped ones "
		"(docs/reasons.md)\n"
		"  -h, --help           this help\n"
		"\n"
		"Processes are grouped by name (the main thread's), largest off-CPU time first.\n"
		"\n"
		"Exit status: 0 success, 2 usage error, 3 the capture cannot be used (or no\n"
		"thread matches the filters), 4 the report cannot be written.\n");
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"top", required_argument, NULL, 't'},
		{"width", required_argument, NULL, 'w'},
		{"color", optional_argument, NULL, 'c'},
		{"colour", optional_argument, NULL, 'c'},
		{"json", no_argument, NULL, 'j'},
		{"reasons", required_argument, NULL, 'R'},
		{"pid", required_argument, NULL, CMD_FILTER_PID},
		{"comm", required_argument, NULL, CMD_FILTER_COMM},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	struct filter *f = NULL;
	struct filter_result fres;
	struct report_opts o = {0};
	const char *color = "auto";
	struct profile *p = NULL, *tp = NULL;
	struct timeline *tl;
	struct lane lane;
	struct lane_load ld;
	int c, err, ret = 2;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 't':
			if (term_opts__int(optarg, 1, 100000, &o.top)) {
				fprintf(stderr,
					"offcpu report: --top wants a number from 1, not '%s'\n",
					optarg);
				goto cleanup;
			}
			o.max_procs = o.top;
			break;
		case CMD_FILTER_PID:
		case CMD_FILTER_COMM:
			ret = cmd_filters__option("report", &f, c, optarg);
			if (ret)
				goto cleanup;
			ret = 2;
			break;
		case 'w':
			if (term_opts__int(optarg, 40, 10000, &o.width)) {
				fprintf(stderr,
					"offcpu report: --width wants a number from 40, not '%s'\n",
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
			if (term_opts__reasons("report", optarg))
				goto cleanup;
			break;
		case 'h':
			usage(stdout);
			ret = 0;
			goto cleanup;
		default:
			usage(stderr);
			goto cleanup;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "offcpu report: expected one capture directory; try 'offcpu report "
				"--help'\n");
		goto cleanup;
	}
	if (term_opts__color(color, &o.color)) {
		fprintf(stderr, "offcpu report: --color is auto, always or never, not '%s'\n",
			color);
		goto cleanup;
	}
	if (!o.width)
		o.width = term_opts__width();
	err = lane__load(argv[optind], &p, &lane, &ld);
	if (err) {
		fprintf(stderr, "offcpu report: %s\n", ld.error);
		ret = EXIT_INPUT;
		goto cleanup;
	}
	o.unwinder = unwinder__of_collector(lane.collector);
	term_opts__settle_integrity(&ld.integrity);
	lane_load__warn(&ld, "report", stderr);
	ret = cmd_filters__apply("report", f, &p, NULL, &fres);
	if (ret)
		goto cleanup;
	if (filter__active(f)) {
		o.filter = f;
		o.filtered = &fres;
	}
	o.timeline = tl = load_timeline(lane.timeline_path, &tp);
	if (tl && filter__active(f)) {
		/* "Woken by" speaks of the same threads as the rest. */
		struct filter_result tres;
		struct timeline *tu = NULL;
		struct profile *tq = NULL;

		if (!filter__apply(f, tp, tl, &tq, &tu, &tres)) {
			timeline__free(tl);
			profile__free(tp);
			tl = tu;
			tp = tq;
		} else {
			timeline__free(tl);
			tl = NULL;
		}
		o.timeline = tl;
	}
	err = report__write(stdout, p, &ld.integrity, &o);
	timeline__free(tl);
	profile__free(tp);
	if (err) {
		fprintf(stderr, "offcpu report: writing the report failed: %s\n", strerror(-err));
		ret = EXIT_OUTPUT;
		goto cleanup;
	}
	ret = 0;
cleanup:
	profile__free(p);
	filter__free(f);
	return ret;
}
