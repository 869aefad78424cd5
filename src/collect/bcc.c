// SPDX-License-Identifier: GPL-2.0-only
/* BCC's offcputime: folded stacks in microseconds, "-" between user and kernel. */
#include "collect/collectors.h"
#include "collect/external.h"

static char **bcc_argv(const struct lane *l, const char *tool_path, const char *pid)
{
	const char *argv[] = {tool_path, "-f", "-d", "-p", pid};

	return external__vec(argv, sizeof(argv) / sizeof(argv[0]));
}

const struct collector bcc_collector = {
	.kind = COLLECTOR_BCC,
	.name = "bcc",
	.match = "offcputime",
	.mode = LANE_TIME,
	.argv = bcc_argv,
	/* BCC sizes its own maps. */
};
