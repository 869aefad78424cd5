/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What a lane is, as every layer sees it: its capture format (mode), the
 * collector that fills it and the paths of its files. Planning and loading a
 * lane are in lane/lane.h; the collectors themselves in collect/collectors.h.
 */
#ifndef OFFCPU_MODEL_LANE_H
#define OFFCPU_MODEL_LANE_H

#include <limits.h>

enum lane_mode { LANE_TIME = 0, LANE_STACKS };
/* One per row of collect/collectors.c. */
enum collector_kind { COLLECTOR_NATIVE = 0, COLLECTOR_BCC, COLLECTOR_BPFTRACE };

struct lane {
	enum lane_mode mode;
	enum collector_kind collector;
	const char *collector_name; /* the summary's "collector": "native", "bcc", ... */
	char tool[PATH_MAX]; /* as named: "native", "offcputime-bpfcc", "/opt/bcc/offcputime" */
	char dir[PATH_MAX];
	char capture_path[PATH_MAX];
	char diagnostics_path[PATH_MAX];
	char summary_path[PATH_MAX];
	char profile_path[PATH_MAX];
	char timeline_path[PATH_MAX]; /* native, with record --timeline */
};

const char *lane_mode__name(enum lane_mode m);
/* "time"/"stacks" -> mode; -EINVAL otherwise. */
int lane_mode__parse(const char *s, enum lane_mode *m);

#endif
