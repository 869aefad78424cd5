// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <string.h>

#include "model/lane.h"

const char *lane_mode__name(enum lane_mode m)
{
	return m == LANE_STACKS ? "stacks" : "time";
}

int lane_mode__parse(const char *s, enum lane_mode *m)
{
	if (!strcmp(s, "time"))
		*m = LANE_TIME;
	else if (!strcmp(s, "stacks"))
		*m = LANE_STACKS;
	else
		return -EINVAL;
	return 0;
}
