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
		"  --top N              stacks to show (default 10)\n"
		"  --width N            columns (default: the terminal's, else 80)\n"
		"  --color=WHEN         auto (default: a terminal and NO_COLOR unset), always, "
		"never\n"
		"  --json               the same content as JSON\n"
		"  --reasons FILE       reason rules tried before the shipped ones "
		"(docs/reasons.md)\n"
		"  -h, --help           this help\n"
		"\n"
		"Exit status: 0 success, 2 usage error, 3 the capture cannot be used,\n"
		"4 the report cannot be written.\n");
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"top", required_argument, NULL, 't'},	 {"width", required_argument, NULL, 'w'},
		{"color", optional_argument, NULL, 'c'}, {"colour", optional_argument, NULL, 'c'},
		{"json", no_argument, NULL, 'j'},	 {"reasons", required_argument, NULL, 'R'},
		{"help", no_argument, NULL, 'h'},	 {0},
	};
	struct report_opts o = {0};
	const char *color = "auto";
	struct profile *p = NULL, *tp = NULL;
	struct timeline *tl;
	struct lane lane;
	struct lane_load ld;
	int c, err;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 't':
			if (term_opts__int(optarg, 1, 100000, &o.top)) {
				fprintf(stderr,
					"offcpu report: --top wants a number from 1, not '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'w':
			if (term_opts__int(optarg, 40, 10000, &o.width)) {
				fprintf(stderr,
					"offcpu report: --width wants a number from 40, not '%s'\n",
					optarg);
				return 2;
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
				return EXIT_USAGE;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "offcpu report: expected one capture directory; try 'offcpu report "
				"--help'\n");
		return 2;
	}
	if (term_opts__color(color, &o.color)) {
		fprintf(stderr, "offcpu report: --color is auto, always or never, not '%s'\n",
			color);
		return 2;
	}
	if (!o.width)
		o.width = term_opts__width();
	err = lane__load(argv[optind], &p, &lane, &ld);
	if (err) {
		fprintf(stderr, "offcpu report: %s\n", ld.error);
		return EXIT_INPUT;
	}
	o.unwinder = unwinder__of_collector(lane.collector);
	term_opts__settle_integrity(&ld.integrity);
	lane_load__warn(&ld, "report", stderr);
	o.timeline = tl = load_timeline(lane.timeline_path, &tp);
	err = report__write(stdout, p, &ld.integrity, &o);
	timeline__free(tl);
	profile__free(tp);
	profile__free(p);
	if (err) {
		fprintf(stderr, "offcpu report: writing the report failed: %s\n", strerror(-err));
		return EXIT_OUTPUT;
	}
	return 0;
}
