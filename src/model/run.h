/* SPDX-License-Identifier: GPL-2.0-only */
/* How a child process (the workload or a collector) ended, as waitpid saw it. */
#ifndef OFFCPU_MODEL_RUN_H
#define OFFCPU_MODEL_RUN_H

#include <stdbool.h>

struct proc_end {
	bool started;	/* it ran (exec succeeded) */
	bool exited;	/* it has been reaped */
	int exit_code;	/* exit status; 128+N when killed by signal N */
	int signal;	/* the signal that ended it, 0 when it exited */
	int exec_errno; /* why it did not start, when !started */
};

#endif
