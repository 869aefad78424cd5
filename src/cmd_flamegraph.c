// SPDX-License-Identifier: GPL-2.0-only
/*
 * offcpu flamegraph [-o FILE] [options] DIR
 *
 * Loads a capture directory into the profile model (lane__load) and draws it
 * with output/flamegraph.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "cmd_filters.h"
#include "lane/lane.h"
#include "output/flamegraph.h"
#include "output/term_opts.h"
#include "util/atomic_file.h"

#define DEFAULT_FILE "offcpu.flamegraph.svg"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: offcpu flamegraph [-o FILE] [options] DIR\n"
		"\n"
		"Draw the off-CPU flame graph of the capture in DIR as one self-contained SVG\n"
		"(open it in a browser: hover for details, click to zoom, Ctrl-F to search).\n"
		"\n"
		"  -o, --output FILE     where to write the SVG ('-': standard output;\n"
		"                        default DIR/" DEFAULT_FILE "); only a regular file\n"
		"                        is replaced, never a device, FIFO or symlink\n"
		"  -t, --title TEXT      the title (default: Off-CPU Time Flame Graph)\n"
		"      --icicle          root at the top, stacks growing down\n"
		"      --threads         one frame per thread (comm-tid) instead of per comm\n"
		"      --count           width by number of off-CPU intervals, not time\n"
		"      --color blue|reason  palette: by frame kind (default) or by wait reason\n"
		"      --width PX        image width (default %d)\n"
		"      --min-width PX    do not draw frames narrower than PX (default %.1f)\n"
		"      --min-share PCT   do not draw frames under PCT %% of the total\n"
		"      --max-frames N    draw at most N frames, widest first (default %d, 0: no "
		"cap)\n"
		"      --reasons FILE    reason rules tried before the shipped ones "
		"(docs/reasons.md)\n"
		"      --pid PID,...     only the threads of these processes\n"
		"      --comm NAME       only processes or threads named NAME, exactly "
		"(repeatable)\n"
		"      --top N           only the N process names with most off-CPU time\n"
		"\n"
		"Frames not drawn keep their time in their parent's width. A filter that\n"
		"matches no thread writes nothing and exits 3.\n",
		FLAMEGRAPH_WIDTH, FLAMEGRAPH_MIN_WIDTH_PX, FLAMEGRAPH_MAX_FRAMES);
}

__attribute__((format(printf, 1, 2))) static int bad_usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "offcpu flamegraph: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "; try 'offcpu flamegraph --help'\n");
	return 2;
}

static int parse_double(const char *s, double lo, double hi, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return errno || end == s || *end || !(*v >= lo && *v <= hi) ? -EINVAL : 0;
}

/* Through util/atomic_file: a failed write never leaves half an SVG behind. */
static int write_file(const char *path, const struct profile *p, const struct flamegraph_opts *o)
{
	struct atomic_file af;
	FILE *out;
	int err;

	if (!strcmp(path, "-"))
		return flamegraph__write(stdout, p, o);
	out = atomic_file__open(&af, path);
	if (!out)
		return -errno;
	err = flamegraph__write(out, p, o);
	if (err) {
		err = atomic_file__error(&af, err);
		atomic_file__abort(&af);
		return err;
	}
	return atomic_file__commit(&af);
}

int cmd_flamegraph(int argc, char **argv)
{
	enum {
		OPT_ICICLE = 256,
		OPT_THREADS,
		OPT_COUNT,
		OPT_COLOR,
		OPT_WIDTH,
		OPT_MIN_WIDTH,
		OPT_MIN_SHARE,
		OPT_MAX_FRAMES
	};
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"title", required_argument, NULL, 't'},
		{"icicle", no_argument, NULL, OPT_ICICLE},
		{"threads", no_argument, NULL, OPT_THREADS},
		{"count", no_argument, NULL, OPT_COUNT},
		{"color", required_argument, NULL, OPT_COLOR},
		{"colour", required_argument, NULL, OPT_COLOR},
		{"width", required_argument, NULL, OPT_WIDTH},
		{"min-width", required_argument, NULL, OPT_MIN_WIDTH},
		{"min-share", required_argument, NULL, OPT_MIN_SHARE},
		{"max-frames", required_argument, NULL, OPT_MAX_FRAMES},
		{"reasons", required_argument, NULL, 'R'},
		{"pid", required_argument, NULL, CMD_FILTER_PID},
		{"comm", required_argument, NULL, CMD_FILTER_COMM},
		{"top", required_argument, NULL, CMD_FILTER_TOP},
		{"help", no_argument, NULL, 'h'},
		{},
	};
	struct filter *f = NULL;
	struct filter_result fres;
	struct flamegraph_stats stats = {0};
	struct flamegraph_opts o = {.stats = &stats};
	struct profile *p = NULL;
	struct lane lane;
	struct lane_load ld;
	const char *output = NULL, *dir;
	char defpath[PATH_MAX];
	bool min_width_set = false;
	double v;
	int c, err, ret = 1;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:t:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 't':
			o.title = optarg;
			break;
		case OPT_ICICLE:
			o.icicle = true;
			break;
		case OPT_THREADS:
			o.per_thread = true;
			break;
		case OPT_COUNT:
			o.weight = FLAMEGRAPH_WEIGHT_COUNT;
			break;
		case OPT_COLOR:
			if (!strcmp(optarg, "blue"))
				o.color = FLAMEGRAPH_COLOR_BLUE;
			else if (!strcmp(optarg, "reason"))
				o.color = FLAMEGRAPH_COLOR_REASON;
			else
				return bad_usage("--color takes blue or reason, not '%s'", optarg);
			break;
		case OPT_WIDTH:
			if (parse_double(optarg, 200, 100000, &v) || v != (unsigned int)v)
				return bad_usage(
					"--width takes whole pixels from 200 to 100000, not '%s'",
					optarg);
			o.width = v;
			break;
		case OPT_MIN_WIDTH:
			if (parse_double(optarg, 0, 100000, &v))
				return bad_usage("--min-width takes pixels (0 or more), not '%s'",
						 optarg);
			/* 0 means "draw everything", which the options spell as < 0. */
			o.min_width_px = v > 0 ? v : -1;
			min_width_set = true;
			break;
		case OPT_MIN_SHARE:
			if (parse_double(optarg, 0, 100, &v))
				return bad_usage(
					"--min-share takes a percentage from 0 to 100, not '%s'",
					optarg);
			o.min_share_pct = v;
			if (v == 0)
				o.min_width_px = -1;
			break;
		case OPT_MAX_FRAMES:
			if (parse_double(optarg, 0, 1e12, &v) || v != (double)(uint64_t)v)
				return bad_usage("--max-frames takes a whole number, not '%s'",
						 optarg);
			o.max_frames = v ? (size_t)v : SIZE_MAX;
			break;
		case 'R':
			if (term_opts__reasons("flamegraph", optarg))
				return EXIT_USAGE;
			break;
		case CMD_FILTER_PID:
		case CMD_FILTER_COMM:
		case CMD_FILTER_TOP:
			ret = cmd_filters__option("flamegraph", &f, c, optarg);
			if (ret)
				return ret;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return bad_usage("unknown option or missing argument");
		}
	}
	if (min_width_set && o.min_share_pct > 0)
		return bad_usage("give --min-width or --min-share, not both");
	if (optind != argc - 1)
		return bad_usage("%s", optind >= argc ? "say which capture directory to draw"
						      : "give one capture directory");
	dir = argv[optind];
	if (!output) {
		if (snprintf(defpath, sizeof(defpath), "%s/" DEFAULT_FILE, dir) >=
		    (int)sizeof(defpath))
			return bad_usage("directory name too long: %s", dir);
		output = defpath;
	}

	err = lane__load(dir, &p, &lane, &ld);
	if (err) {
		fprintf(stderr, "offcpu flamegraph: %s\n", ld.error);
		ret = EXIT_INPUT;
		goto cleanup;
	}
	lane_load__warn(&ld, "flamegraph", stderr);
	ret = cmd_filters__apply("flamegraph", f, &p, NULL, &fres);
	if (ret)
		goto cleanup;
	ret = EXIT_OUTPUT; /* from here on, only writing can fail */
	/* Name what was drawn: the lossless profile, or the capture. */
	o.subtitle = ld.from_profile ? lane.profile_path : lane.capture_path;

	err = write_file(output, p, &o);
	if (err) {
		fprintf(stderr, "offcpu flamegraph: cannot write %s: %s\n", output,
			atomic_file__strerror(err));
		goto cleanup;
	}
	if (strcmp(output, "-"))
		fprintf(stderr,
			"offcpu flamegraph: wrote %s: %zu frames drawn, %zu too narrow to draw\n",
			output, stats.drawn, stats.pruned);
	ret = 0;
cleanup:
	profile__free(p);
	filter__free(f);
	return ret;
}
