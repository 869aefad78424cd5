/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Whether a process's address space may have changed since it was last read.
 *
 * The BPF side asks user space to re-read a process's mappings whenever a
 * user stack never seen before shows up (at most every 10 ms per process),
 * since a library loaded by dlopen looks just like that. On a server most new
 * stacks are only new call paths: a PostgreSQL backend under pgbench asks
 * about 50 times a second, and reading /proc/PID/maps (the kernel formats
 * every mapping and its path) twice per request, for the unwinder and the
 * symbolizer, was most of the recorder's CPU time.
 *
 * One read of /proc/PID/stat answers instead: its start time (another process
 * with the same pid), the size of the address space (any mmap or munmap of a
 * library changes it) and where the code and the stack start (an exec moves
 * them, address space layout randomisation or not). A library mapped while
 * another mapping of exactly its size went away between two requests is not
 * seen; the next change of size is.
 *
 * The BPF side reads the same three from the task's mm and does not send a
 * request for a new stack in an address space that has not changed since its
 * last one (notify_track()): PostgreSQL's backends under pgbench sent 1,500
 * requests in 5 s, now 30. What still arrives is a process's first stack, a
 * stack its mappings in BPF could not unwind, or a changed address space.
 */
#ifndef OFFCPU_COLLECT_MMSTAMP_H
#define OFFCPU_COLLECT_MMSTAMP_H

#include <stdbool.h>
#include <stdint.h>

#include "collect/native_table.h"

struct mmstamps {
	struct ntable by_tgid; /* tgid -> struct mmstamp */
	const char *proc_root; /* NULL: /proc */
	uint64_t changed, same;
};

/*
 * Whether tgid's address space differs from the last call for it (true for a
 * tgid not seen yet, or whose stat cannot be read: the caller re-reads and
 * finds out). Records the new stamp.
 */
bool mmstamps__changed(struct mmstamps *m, uint32_t tgid);
/* Forget the processes that have exited (long runs). How many, or -ENOMEM. */
int mmstamps__forget_gone(struct mmstamps *m);
void mmstamps__free(struct mmstamps *m);

#endif
