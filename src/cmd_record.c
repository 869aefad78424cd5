// SPDX-License-Identifier: GPL-2.0-only
#include <stdio.h>

#include "cmd.h"

int cmd_record(int argc, char **argv)
{
	fprintf(stderr, "offcpu record: not built yet\n");
	return 2;
}

int cmd_summarize(int argc, char **argv)
{
	fprintf(stderr, "offcpu summarize: not built yet\n");
	return 2;
}
