// SPDX-License-Identifier: GPL-2.0-only
/*
 * offcpu export --format pprof|speedscope|chrome-trace [-o FILE] DIR
 *
 * Loads a capture directory into the profile model (lane__load) and hands it
 * to one writer.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "cmd_filters.h"
#include "lane/lane.h"
#include "parse/timeline.h"
#include "output/chrome_trace.h"
#include "output/pprof.h"
#include "output/speedscope.h"
#include "output/term_opts.h"
#include "util/atomic_file.h"

enum export_format { EXPORT_PPROF, EXPORT_SPEEDSCOPE, EXPORT_CHROME_TRACE };

static const struct {
	const char *name;
	const char *default_file; /* in DIR when -o is not given */
} formats[] = {
	[EXPORT_PPROF] = {"pprof", "offcpu.pb.gz"},
	[EXPORT_SPEEDSCOPE] = {"speedscope", "offcpu.speedscope.json"},
	[EXPORT_CHROME_TRACE] = {"chrome-trace", "offcpu.trace.json"},
};

#define TIMELINE_FILE "offcpu.timeline.txt"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: offcpu export --format pprof|speedscope|chrome-trace [-o FILE] DIR\n\n"
		"Write the capture in DIR for another viewer:\n"
		"  pprof         gzipped profile.proto, for `go tool pprof` (default "
		"DIR/offcpu.pb.gz)\n"
		"  speedscope    speedscope JSON, one profile per thread "
		"(DIR/offcpu.speedscope.json)\n"
		"  chrome-trace  Chrome Trace Event JSON of DIR/" TIMELINE_FILE ", for Perfetto\n"
		"                (DIR/offcpu.trace.json)\n\n"
		"  -f, --format FORMAT  the output format (required)\n"
		"  -o, --output FILE    where to write; '-' is standard output; only a regular\n"
		"                       file is replaced, never a device, FIFO or symlink\n"
		"      --reasons FILE   reason rules tried before the shipped ones (pprof's and\n"
		"                       the trace's reasons; docs/reasons.md)\n"
		"      --pid PID,...    only the threads of these processes\n"
		"      --comm NAME      only processes or threads named NAME, exactly "
		"(repeatable)\n"
		"      --top N          only the N process names with most off-CPU time\n"
		"  -h, --help           this help\n\n"
		"A filter that matches no thread writes nothing and exits 3.\n");
}

static int load_timeline(const char *dir, struct profile *p, struct timeline **out)
{
	struct parse_stats st;
	char path[PATH_MAX];
	struct timeline *t = NULL;
	FILE *f;
	int err;

	*out = NULL;
	if (snprintf(path, sizeof(path), "%s/%s", dir, TIMELINE_FILE) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "r");
	if (!f) {
		err = -errno;
		if (err == -ENOENT)
			fprintf(stderr,
				"offcpu export: %s has no " TIMELINE_FILE
				"; record with --timeline (native collector) for chrome-trace\n",
				dir);
		else
			fprintf(stderr, "offcpu export: cannot open %s: %s\n", path,
				strerror(-err));
		return err;
	}
	t = timeline__new();
	if (!t) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = timeline__parse(f, p, t, &st);
	if (err == -EPROTO)
		fprintf(stderr, "offcpu export: %s is not an offcpu timeline version %d\n", path,
			TIMELINE_FORMAT_VERSION);
	else if (err && st.error_line)
		fprintf(stderr, "offcpu export: %s:%zu: %s\n", path, st.error_line,
			err == -EOVERFLOW ? "a count or a sum of them does not fit in 64 bits"
					  : strerror(-err));
	else if (err)
		fprintf(stderr, "offcpu export: %s: %s\n", path, strerror(-err));
	else if (st.malformed)
		/* The same words as the capture's warnings (lane_load__warn). */
		fprintf(stderr,
			"offcpu export: %s:%zu: %zu malformed line(s) skipped, the first: %s\n",
			path, st.first_malformed_line, st.malformed, st.first_malformed_reason);
cleanup:
	fclose(f);
	if (err)
		timeline__free(t);
	else
		*out = t;
	return err;
}

static int write_format(FILE *out, enum export_format fmt, const struct profile *p,
			const struct timeline *t, const struct lane *l)
{
	char comment[PATH_MAX + 64];
	struct chrome_trace_stats cst;
	int err;

	switch (fmt) {
	case EXPORT_PPROF: {
		struct pprof_opts o = {.comment = comment};

		snprintf(comment, sizeof(comment), "offcpu %s export of %s", OFFCPU_VERSION,
			 l->capture_path);
		return pprof__write(out, p, &o);
	}
	case EXPORT_SPEEDSCOPE: {
		struct speedscope_opts o = {.name = l->dir, .exporter = "offcpu " OFFCPU_VERSION};

		return speedscope__write(out, p, &o);
	}
	case EXPORT_CHROME_TRACE:
		err = chrome_trace__write_stats(out, p, t, &cst);
		if (!err && (cst.clipped || cst.dropped))
			fprintf(stderr,
				"offcpu export: warning: %zu overlapping intervals clipped, "
				"%zu dropped (the collector missed context switches)\n",
				cst.clipped, cst.dropped);
		return err;
	}
	return -EINVAL;
}

/* Through util/atomic_file: a failed export never leaves half a file behind. */
static int write_file(const char *path, enum export_format fmt, const struct profile *p,
		      const struct timeline *t, const struct lane *l)
{
	struct atomic_file af;
	FILE *out;
	int err;

	if (!strcmp(path, "-"))
		return write_format(stdout, fmt, p, t, l);
	out = atomic_file__open(&af, path);
	if (!out)
		return -errno;
	err = write_format(out, fmt, p, t, l);
	if (err) {
		err = atomic_file__error(&af, err);
		atomic_file__abort(&af);
		return err;
	}
	return atomic_file__commit(&af);
}

int cmd_export(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"format", required_argument, NULL, 'f'},
		{"output", required_argument, NULL, 'o'},
		{"reasons", required_argument, NULL, 'R'},
		{"pid", required_argument, NULL, CMD_FILTER_PID},
		{"comm", required_argument, NULL, CMD_FILTER_COMM},
		{"top", required_argument, NULL, CMD_FILTER_TOP},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	struct filter *filter = NULL;
	struct filter_result fres;
	const char *format = NULL, *output = NULL, *dir;
	char defpath[PATH_MAX];
	struct profile *p = NULL;
	struct timeline *t = NULL;
	struct lane l = {0};
	struct lane_load ld = {0};
	enum export_format fmt = 0;
	size_t i;
	int c, err, status = 1;

	optind = 1;
	while ((c = getopt_long(argc, argv, "f:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			format = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 'R':
			if (term_opts__reasons("export", optarg))
				return EXIT_USAGE;
			break;
		case CMD_FILTER_PID:
		case CMD_FILTER_COMM:
		case CMD_FILTER_TOP:
			status = cmd_filters__option("export", &filter, c, optarg);
			if (status)
				return status;
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
		fprintf(stderr, "offcpu export: give exactly one capture directory; try 'offcpu "
				"export --help'\n");
		return 2;
	}
	dir = argv[optind];
	if (!format) {
		fprintf(stderr, "offcpu export: --format is required (pprof, speedscope or "
				"chrome-trace)\n");
		return 2;
	}
	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (!strcmp(format, formats[i].name))
			break;
	if (i == sizeof(formats) / sizeof(formats[0])) {
		fprintf(stderr,
			"offcpu export: unknown format '%s'; use pprof, speedscope or "
			"chrome-trace\n",
			format);
		return 2;
	}
	fmt = (enum export_format)i;
	if (!output) {
		if (snprintf(defpath, sizeof(defpath), "%s/%s", dir, formats[fmt].default_file) >=
		    (int)sizeof(defpath)) {
			fprintf(stderr, "offcpu export: directory name too long: %s\n", dir);
			return 2;
		}
		output = defpath;
	}

	status = EXIT_INPUT;
	err = lane__load(dir, &p, &l, &ld);
	if (err) {
		fprintf(stderr, "offcpu export: %s\n", ld.error);
		goto cleanup;
	}
	lane_load__warn(&ld, "export", stderr);
	if (fmt == EXPORT_CHROME_TRACE && load_timeline(dir, p, &t))
		goto cleanup;
	status = cmd_filters__apply("export", filter, &p, &t, &fres);
	if (status)
		goto cleanup;
	status = EXIT_OUTPUT; /* from here on, only writing can fail */

	err = write_file(output, fmt, p, t, &l);
	if (err) {
		fprintf(stderr, "offcpu export: cannot write %s: %s\n", output,
			atomic_file__strerror(err));
		goto cleanup;
	}
	status = 0;
cleanup:
	timeline__free(t);
	profile__free(p);
	filter__free(filter);
	return status;
}
