// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
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

int lane__load(const char *dir, struct profile **out, struct lane *l, struct lane_load *ld)
{
	struct summary_meta meta;
	struct profile *p = NULL;
	enum lane_mode mode = LANE_TIME;
	char probe[PATH_MAX];
	int err;

	*out = NULL;
	memset(ld, 0, sizeof(*ld));
	err = join(probe, sizeof(probe), dir, "offcpu.time.txt");
	if (err)
		return err;
	if (access(probe, R_OK)) {
		join(probe, sizeof(probe), dir, "offcpu.stacks.txt");
		if (!access(probe, R_OK))
			mode = LANE_STACKS;
	}
	err = lane__plan(l, dir, mode, NULL);
	if (err)
		return err;
	/* The summary, when there is one, knows the tool and the kernel-side losses. */
	if (!summary_json__read_path(l->summary_path, &meta)) {
		lane__plan(l, dir, mode, meta.tool[0] ? meta.tool : NULL);
		ld->integrity = meta.integrity;
		summary_meta__free(&meta);
	}
	p = profile__new();
	if (!p)
		return -ENOMEM;
	err = lane__parse_capture(l, p, &ld->parse);
	if (err == -ENOENT) {
		ld->capture_found = false;
		err = -ENOENT;
		goto cleanup;
	}
	ld->capture_found = true;
	ld->from_profile = !access(l->profile_path, R_OK);
	if (err)
		goto cleanup;
	*out = p;
	return 0;
cleanup:
	profile__free(p);
	return err;
}
