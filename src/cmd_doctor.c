// SPDX-License-Identifier: GPL-2.0-only
/* offcpu doctor: what works on this host for off-CPU collection, and why not. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "collect/probe.h"

int cmd_doctor(int argc, char **argv)
{
	struct probe_result res[32];
	const char *binary = NULL;
	int native_ok = 1;
	size_t n;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf("usage: offcpu doctor [--binary PATH]\n\n"
			       "One line per check: ok, warn, FAIL or info, what was seen, and the "
			       "fix.\n"
			       "Exit status 0 when the native collector can run here, 1 "
			       "otherwise.\n");
			return 0;
		}
		if (!strcmp(argv[i], "--binary") && i + 1 < argc) {
			binary = argv[++i];
			continue;
		}
		fprintf(stderr, "offcpu doctor: unknown argument '%s'; try --help\n", argv[i]);
		return 2;
	}
	n = probe__run_all(res, sizeof(res) / sizeof(res[0]), binary);
	for (size_t i = 0; i < n; i++) {
		printf("%-4s %-10s %s", probe_verdict__name(res[i].verdict), res[i].name,
		       res[i].seen);
		if (res[i].fix[0])
			printf("; fix: %s", res[i].fix);
		putchar('\n');
		if (res[i].verdict == PROBE_FAIL && res[i].needed_by_native)
			native_ok = 0;
	}
	printf("%s\n", native_ok ? "native collector: can run here"
				 : "native collector: cannot run here (see FAIL lines)");
	return native_ok ? 0 : 1;
}
