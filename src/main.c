// SPDX-License-Identifier: GPL-2.0-only
/* The command table: offcpu SUBCOMMAND [ARGS]. Nothing else lives here. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *help;
};

static const struct command commands[] = {
	{"record", cmd_record,
	 "run a command (or attach to pids, a cgroup, the host) and capture off-CPU time"},
	{"summarize", cmd_summarize, "re-read a capture directory and rewrite its summary"},
	{"doctor", cmd_doctor, "check what works on this host for off-CPU collection, and why not"},
	{"report", cmd_report,
	 "where and why a capture's threads waited: budget, reasons, top stacks"},
	{"diff", cmd_diff, "compare two captures; --fail-on gates for CI (exit 1 when crossed)"},
	{"export", cmd_export, "write a capture as pprof, speedscope or a Chrome trace (Perfetto)"},
	{"flamegraph", cmd_flamegraph,
	 "draw a capture's off-CPU flame graph as an interactive SVG"},
	{"push", cmd_push, "send captures to a Grafana Pyroscope server (pprof, with retries)"},
};

static void usage(FILE *out)
{
	fprintf(out, "usage: offcpu [--version] [--help] COMMAND [ARGS]\n\n"
		     "Where, why and how long threads wait off the CPU.\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-11s %s\n", commands[i].name, commands[i].help);
	fprintf(out, "\n'offcpu COMMAND --help' for a command's options; man offcpu for more.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "offcpu: no command given; try 'offcpu --help'\n");
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("offcpu %s\n", OFFCPU_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "offcpu: unknown command '%s'; try 'offcpu --help'\n", argv[1]);
	return 2;
}
