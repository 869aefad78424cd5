// SPDX-License-Identifier: GPL-2.0-only
/* BCC's offcputime: folded stacks in microseconds, "-" between user and kernel. */
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "collect/collectors.h"
#include "collect/external.h"
#include "collect/probe.h"
#include "collect/proc.h"

static char **bcc_argv(const struct lane *l, const char *tool_path, const char *pid)
{
	const char *argv[] = {tool_path, "-f", "-d", "-p", pid};

	return external__vec(argv, sizeof(argv) / sizeof(argv[0]));
}

/* BCC compiles its program on the host: it needs the running kernel's headers. */
static void bcc_probe(struct probe_result *r)
{
	char path[PATH_MAX], headers[PATH_MAX];
	struct utsname u;
	struct stat st;

	if (proc__resolve_exe("offcputime-bpfcc", path, sizeof(path))) {
		r->verdict = PROBE_WARN;
		probe__say(r->seen, "offcputime-bpfcc not installed");
		probe__say(r->fix, "apt-get install bpfcc-tools (for --tool offcputime-bpfcc)");
		return;
	}
	uname(&u);
	snprintf(headers, sizeof(headers), "/lib/modules/%s/build", u.release);
	if (!stat(headers, &st) || !stat("/sys/kernel/kheaders.tar.xz", &st)) {
		probe__say(r->seen, "%s; kernel headers present", path);
		return;
	}
	r->verdict = PROBE_WARN;
	probe__say(r->seen, "%s cannot compile its program: no kernel headers for %s", path,
		   u.release);
	probe__say(r->fix,
		   "install linux-headers-%s, or a kernel with CONFIG_IKHEADERS; offcpu's "
		   "native collector needs neither",
		   u.release);
}

const struct collector bcc_collector = {
	.kind = COLLECTOR_BCC,
	.name = "bcc",
	.match = "offcputime",
	.mode = LANE_TIME,
	.argv = bcc_argv,
	/* BCC sizes its own maps. */
	.probe = bcc_probe,
};
