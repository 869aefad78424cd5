/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The one reader of /proc/PID/stat, for what the collectors and the symbolizer
 * need of it: the scheduler state and the start time that tells a process from
 * a later one given the same pid.
 */
#ifndef OFFCPU_UTIL_PROCFS_H
#define OFFCPU_UTIL_PROCFS_H

#include <stdint.h>

/* The kernel's PF_EXITING: set in do_exit(), before the task drops its mappings. */
#define PROCFS_PF_EXITING 0x4u

struct procfs_stat {
	char state;	    /* field 3: R, S, D, Z, T, ... */
	unsigned int flags; /* field 9: the kernel's PF_* flags; 0 when absent */
	uint64_t starttime; /* field 22: clock ticks after boot; 0 when absent */
	/*
	 * Fields 26 and 28, where the address space's code and stack start: an
	 * exec moves them, and until it has mapped the new program startcode
	 * is 0. 0 when absent (no address space, or fields missing).
	 */
	uint64_t startcode, startstack;
};

/*
 * Parse the text of a stat file. comm (field 2) may hold spaces and
 * parentheses, so the fields are counted from its last ')'. 0, or -EINVAL when
 * there is no state (then *st is zeroed).
 */
int procfs__parse_stat(const char *text, struct procfs_stat *st);

/*
 * Read and parse PROC_ROOT/PID/stat (proc_root NULL: "/proc"). 0, or -errno of
 * the open or read (-ENOENT: no such process), or -EINVAL; *st is zeroed then.
 */
int procfs__stat(const char *proc_root, int pid, struct procfs_stat *st);

#endif
