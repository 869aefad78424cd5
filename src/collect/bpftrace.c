// SPDX-License-Identifier: GPL-2.0-only
/* bpftrace running share/offcpu.bt (compiled in): a map dump, written through -o. */
#include <limits.h>
#include <stdio.h>

#include "collect/collectors.h"
#include "collect/external.h"
#include "collect/probe.h"
#include "collect/proc.h"
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

static void bpftrace_probe(struct probe_result *r)
{
	char path[PATH_MAX], out[4096];
	char *argv[] = {path, "-e", "BEGIN { exit(); }", NULL};
	int rc;

	if (proc__resolve_exe("bpftrace", path, sizeof(path))) {
		r->verdict = PROBE_WARN;
		probe__say(r->seen, "bpftrace not installed");
		probe__say(r->fix, "apt-get install bpftrace (for --tool bpftrace)");
		return;
	}
	rc = probe__run_tool(argv, out, sizeof(out), 20000);
	if (rc == 0) {
		probe__say(r->seen, "%s runs a trivial program", path);
		return;
	}
	r->verdict = PROBE_WARN;
	probe__first_line(r->seen, out[0] ? out : "bpftrace failed without a message");
	probe__say(r->fix, "see `%s -e 'BEGIN { exit(); }'`", path);
}

const struct collector bpftrace_collector = {
	.kind = COLLECTOR_BPFTRACE,
	.name = "bpftrace",
	.match = "bpftrace",
	.mode = LANE_STACKS,
	.writes_capture = true,
	.argv = bpftrace_argv,
	.env = bpftrace_env,
	.probe = bpftrace_probe,
};
