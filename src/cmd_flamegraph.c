// SPDX-License-Identifier: GPL-2.0-only
/* offcpu flamegraph DIR -o OUT.svg: the off-CPU flame graph of a capture directory. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "lane/lane.h"
#include "output/flamegraph.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: offcpu flamegraph DIR -o OUT.svg [options]\n"
		"\n"
		"Draw the off-CPU flame graph of the capture in DIR as one self-contained SVG\n"
		"(open it in a browser: hover for details, click to zoom, Ctrl-F to search).\n"
		"\n"
		"  -o, --output FILE     where to write the SVG ('-' for standard output)\n"
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
		"\n"
		"Frames not drawn keep their time in their parent's width.\n",
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

static mode_t umask_now(void)
{
	mode_t m = umask(022);

	umask(m);
	return m;
}

/* Write to a temporary file beside path and rename it over path: no half-written SVG. */
static int write_file(const char *path, const struct profile *p, const struct flamegraph_opts *o)
{
	char tmp[PATH_MAX];
	FILE *f = NULL;
	int fd, err;

	if (!strcmp(path, "-"))
		return flamegraph__write(stdout, p, o);
	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkstemp(tmp);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
		close(fd);
		goto cleanup;
	}
	err = flamegraph__write(f, p, o);
	if (fclose(f) && !err)
		err = -EIO;
	f = NULL;
	/* mkstemp makes the file private; an SVG is as readable as any new file. */
	if (!err && chmod(tmp, 0666 & ~umask_now()))
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
cleanup:
	if (err)
		unlink(tmp);
	return err;
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
		{"help", no_argument, NULL, 'h'},
		{},
	};
	struct flamegraph_stats stats = {0};
	struct flamegraph_opts o = {.stats = &stats};
	struct profile *p = NULL;
	struct lane lane;
	struct lane_load ld;
	const char *output = NULL, *dir;
	char subtitle[PATH_MAX + 64];
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
	if (!output)
		return bad_usage(
			"say where to write the SVG with -o FILE ('-' for standard output)");
	dir = argv[optind];

	err = lane__load(dir, &p, &lane, &ld);
	if (err == -ENOENT) {
		fprintf(stderr,
			"offcpu flamegraph: %s holds no capture (offcpu.time.txt or "
			"offcpu.stacks.txt); record one with 'offcpu record -o %s ...'\n",
			dir, dir);
		goto cleanup;
	}
	if (err) {
		fprintf(stderr, "offcpu flamegraph: cannot load %s: %s\n", dir, strerror(-err));
		goto cleanup;
	}
	if (ld.parse.malformed)
		fprintf(stderr,
			"offcpu flamegraph: %s: %zu malformed lines skipped (first: line %zu, "
			"%s)\n",
			dir, ld.parse.malformed, ld.parse.first_malformed_line,
			ld.parse.first_malformed_reason);
	snprintf(subtitle, sizeof(subtitle), "%s (%s)", dir, collector_kind__name(lane.collector));
	o.subtitle = subtitle;

	err = write_file(output, p, &o);
	if (err) {
		fprintf(stderr, "offcpu flamegraph: cannot write %s: %s\n", output, strerror(-err));
		goto cleanup;
	}
	if (strcmp(output, "-"))
		fprintf(stderr,
			"offcpu flamegraph: wrote %s: %zu frames drawn, %zu too narrow to draw\n",
			output, stats.drawn, stats.pruned);
	ret = 0;
cleanup:
	profile__free(p);
	return ret;
}
