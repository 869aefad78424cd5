// SPDX-License-Identifier: GPL-2.0-only
/* bpftrace running share/offcpu.bt (compiled in): a map dump, written through -o. */
#include "collect/collectors.h"
#include "collect/external.h"
#include "offcpu_bt.h"

static char **bpftrace_argv(const struct lane *l, const char *tool_path, const char *pid)
{
	const char *argv[] = {tool_path, "-o", l->capture_path, "-e", offcpu_bt_script, pid};

	return external__vec(argv, sizeof(argv) / sizeof(argv[0]));
}

/*
 * bpftrace's default of 4096 keys per map would drop stacks of a busy process
 * tree without a word; raise it.
 */
static const char *const bpftrace_env[] = {"BPFTRACE_MAP_KEYS_MAX=65536",
					   "BPFTRACE_NO_CPP_DEMANGLE=0", NULL};

const struct collector bpftrace_collector = {
	.kind = COLLECTOR_BPFTRACE,
	.name = "bpftrace",
	.match = "bpftrace",
	.mode = LANE_STACKS,
	.writes_capture = true,
	.argv = bpftrace_argv,
	.env = bpftrace_env,
};
