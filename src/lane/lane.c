// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lane/lane.h"
#include "parse/bpftrace.h"
#include "parse/folded.h"
#include "parse/profile_text.h"
#include "parse/summary_json.h"

static int join(char *out, size_t len, const char *dir, const char *name)
{
	int n = snprintf(out, len, "%s/%s", dir, name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int lane__plan(struct lane *l, const char *dir, enum lane_mode mode, const char *tool)
{
	int err;

	memset(l, 0, sizeof(*l));
	l->mode = mode;
	if (!tool)
		tool = "native";
	if (strlen(tool) >= sizeof(l->tool) || strlen(dir) >= sizeof(l->dir))
		return -ENAMETOOLONG;
	strcpy(l->tool, tool);
	strcpy(l->dir, dir);
	l->collector = collector_kind__from_tool(tool, mode);
	l->collector_name = collector_kind__name(l->collector);
	err = join(l->capture_path, sizeof(l->capture_path), dir,
		   mode == LANE_STACKS ? "offcpu.stacks.txt" : "offcpu.time.txt");
	if (!err)
		err = join(l->diagnostics_path, sizeof(l->diagnostics_path), dir,
			   "offcpu.diagnostics.txt");
	if (!err)
		err = join(l->summary_path, sizeof(l->summary_path), dir, "offcpu.summary.json");
	if (!err)
		err = join(l->profile_path, sizeof(l->profile_path), dir, "offcpu.profile.txt");
	if (!err)
		err = join(l->timeline_path, sizeof(l->timeline_path), dir, "offcpu.timeline.txt");
	return err;
}

int lane__parse_capture(const struct lane *l, struct profile *p, struct parse_stats *st)
{
	FILE *f = fopen(l->profile_path, "r");
	int err;

	/* The native collector's lossless profile keeps threads, states and run-queue time. */
	if (f) {
		err = profile_text__parse(f, p, st);
		fclose(f);
		return err;
	}
	/* A profile that is there but cannot be read is an error, not a cue to read less. */
	if (errno != ENOENT)
		return -errno;
	f = fopen(l->capture_path, "r");
	if (!f)
		return -errno;
	if (l->mode == LANE_STACKS)
		err = bpftrace__parse(f, p, st);
	else
		err = folded__parse(f, p, NULL, st);
	fclose(f);
	return err;
}

/* ld->error for a failed parse of ld->path: where, and what is wrong. */
static void parse_error(struct lane_load *ld, int err)
{
	const struct parse_stats *st = &ld->parse;
	size_t cap = sizeof(ld->error);

	switch (err) {
	case -EBADMSG:
		snprintf(ld->error, cap, "%s:%zu: %s", ld->path, st->error_line, st->error_reason);
		break;
	case -EOVERFLOW:
		snprintf(ld->error, cap, "%s:%zu: a count or a sum of them does not fit in 64 bits",
			 ld->path, st->error_line);
		break;
	case -EINVAL:
		/* Only the profile text refuses a whole file, on its first line. */
		snprintf(ld->error, cap, "%s:%zu: %s", ld->path, st->first_malformed_line,
			 st->first_malformed_reason);
		break;
	default:
		snprintf(ld->error, cap, "%s: %s", ld->path, strerror(-err));
	}
}

/* lane__load_planned, keeping what the caller put in ld (the summary's integrity). */
static int load_planned(const struct lane *l, struct profile **out, struct lane_load *ld)
{
	struct profile *p = NULL;
	int err;

	*out = NULL;
	/* Present but unusable (a symlink loop, no permission) still counts as the profile. */
	ld->from_profile = !access(l->profile_path, F_OK) || errno != ENOENT;
	ld->capture_found = ld->from_profile || !access(l->capture_path, F_OK);
	snprintf(ld->path, sizeof(ld->path), "%s",
		 ld->from_profile ? l->profile_path : l->capture_path);
	if (!ld->capture_found) {
		snprintf(ld->error, sizeof(ld->error),
			 "%s holds no capture (offcpu.time.txt or offcpu.stacks.txt); record one "
			 "with 'offcpu record -o %s'",
			 l->dir, l->dir);
		return -ENOENT;
	}
	p = profile__new();
	if (!p) {
		snprintf(ld->error, sizeof(ld->error), "%s: %s", ld->path, strerror(ENOMEM));
		return -ENOMEM;
	}
	err = lane__parse_capture(l, p, &ld->parse);
	if (err) {
		/* Present a moment ago, gone now: still a file that cannot be read. */
		if (err == -ENOENT)
			err = -EIO;
		parse_error(ld, err);
		profile__free(p);
		return err;
	}
	*out = p;
	return 0;
}

int lane__load_planned(const struct lane *l, struct profile **out, struct lane_load *ld)
{
	memset(ld, 0, sizeof(*ld));
	return load_planned(l, out, ld);
}

int lane__load(const char *dir, struct profile **out, struct lane *l, struct lane_load *ld)
{
	struct summary_meta meta;
	enum lane_mode mode = LANE_TIME;
	char probe[PATH_MAX], why[256] = "";
	struct stat sb;
	int err;

	*out = NULL;
	memset(ld, 0, sizeof(*ld));
	if (stat(dir, &sb)) {
		err = -errno;
		snprintf(ld->error, sizeof(ld->error), "%s: %s", dir, strerror(-err));
		return err;
	}
	if (!S_ISDIR(sb.st_mode)) {
		snprintf(ld->error, sizeof(ld->error),
			 "%s is not a directory; give the directory 'offcpu record -o' wrote", dir);
		return -ENOTDIR;
	}
	err = join(probe, sizeof(probe), dir, "offcpu.time.txt");
	if (err) {
		snprintf(ld->error, sizeof(ld->error), "%s: %s", dir, strerror(-err));
		return err;
	}
	if (access(probe, F_OK)) {
		join(probe, sizeof(probe), dir, "offcpu.stacks.txt");
		if (!access(probe, F_OK))
			mode = LANE_STACKS;
	}
	err = lane__plan(l, dir, mode, NULL);
	if (err) {
		snprintf(ld->error, sizeof(ld->error), "%s: %s", dir, strerror(-err));
		return err;
	}
	/* The summary, when there is one, knows the tool and the kernel-side losses. */
	err = summary_json__read_path(l->summary_path, &meta, why, sizeof(why));
	if (!err) {
		lane__plan(l, dir, mode, meta.tool[0] ? meta.tool : NULL);
		ld->integrity = meta.integrity;
		summary_meta__free(&meta);
	} else if (err == -EPROTO) {
		snprintf(ld->error, sizeof(ld->error), "%s: %s", l->summary_path, why);
		return err;
	} else if (err != -ENOENT) {
		snprintf(ld->summary_problem, sizeof(ld->summary_problem), "%s: %s",
			 l->summary_path, err == -EINVAL ? why : strerror(-err));
	}
	return load_planned(l, out, ld);
}

/* s with control bytes as '?': a summary's text must not break lines or drive a terminal. */
static const char *clean(const char *s, char *buf, size_t len)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < len; i++)
		buf[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	buf[i] = '\0';
	return buf;
}

void lane_load__warn(const struct lane_load *ld, const char *cmd, FILE *out)
{
	const struct parse_stats *st = &ld->parse;
	char a[sizeof(ld->summary_problem)], b[sizeof(ld->integrity.message)];

	if (ld->summary_problem[0])
		fprintf(out,
			"offcpu %s: warning: %s; read without it (tool and kernel-side losses "
			"unknown)\n",
			cmd, clean(ld->summary_problem, a, sizeof(a)));
	if (st->malformed)
		fprintf(out, "offcpu %s: %s:%zu: %zu malformed line(s) skipped, the first: %s\n",
			cmd, clean(ld->path, a, sizeof(a)), st->first_malformed_line, st->malformed,
			clean(st->first_malformed_reason, b, sizeof(b)));
	/* The report opens with the integrity banner: saying it here too says it twice. */
	if (ld->integrity.status == INTEGRITY_PARTIAL && strcmp(cmd, "report"))
		fprintf(out, "offcpu %s: warning: the capture is partial: %s\n", cmd,
			clean(ld->integrity.message, b, sizeof(b)));
}
