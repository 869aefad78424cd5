/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The user-space half of the BPF unwinder (bpf/unwind.bpf.h): for each traced
 * process, its executable mappings in the umaps map, and for each binary they
 * map, its unwind table (collect/cfi.h) in an array of its own under the
 * cfi_files map.
 *
 * A binary (by device and inode) is converted once per run, whichever
 * processes map it, and its rows are then only in the kernel: user space
 * keeps the segments for the load bias. Tables are loaded in the order
 * binaries are first seen until their rows would pass the memory budget; a
 * binary over it gets no table (its frames are unwound by frame pointers
 * where it has them, else the stack ends with "[unwind: over budget in
 * BIN]") and is counted. Anonymous executable mappings (JIT code) and files
 * without CFI get no table either: frame pointers, then "no CFI".
 *
 * In long runs (unwinder__forget_gone(), after each period) the tables of
 * binaries that no process kept maps any more are forgotten: their rows are
 * reused by the tables of binaries seen later, so the budget bounds what is
 * mapped now, not everything ever run.
 *
 * With lazy tables (unwinder_opts.lazy, the collector's choice), a binary's
 * table is built when the first stack needs it rather than when a process
 * mapping it is read: most binaries a process maps (a PostgreSQL backend
 * maps 60) are never on a stack. Until then its mappings say
 * OFFCPU_UMARK_PENDING; the BPF side stops there and sends the stack raw,
 * and unwinder__unwind_raw() builds what that stack needs, then points every
 * process's mappings of the binary at the new table.
 *
 * unwinder__track() runs when the BPF side asks (a process's first user
 * stack, an address outside the mappings it knows, after exec): a process's
 * first switches after exec are unwound before its mappings are loaded and
 * end with "[unwind: maps not loaded in ...]". The BPF side deletes a
 * process's mappings at exec and at exit.
 */
#ifndef OFFCPU_COLLECT_UNWIND_H
#define OFFCPU_COLLECT_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define UNWIND_DEFAULT_BUDGET (64ULL << 20)

struct unwinder;
struct proc_map; /* symbolize/procmaps.h */

struct unwinder_opts {
	int umaps_fd;	       /* BPF map: tgid -> struct offcpu_umaps */
	int files_fd;	       /* BPF map of maps: file id -> array of struct offcpu_cfi_row */
	uint64_t budget;       /* bytes of rows at most; 0: UNWIND_DEFAULT_BUDGET */
	const char *proc_root; /* default /proc */
	FILE *diag;	       /* one line per binary that got no table, and why; may be NULL */
	bool lazy;	       /* tables at the first stack that needs them (above) */
};

enum unwind_status {
	UNWIND_TABLE = 0,   /* loaded */
	UNWIND_NO_CFI,	    /* the file has no CFI: frame pointers only */
	UNWIND_OVER_BUDGET, /* its rows did not fit the budget */
	UNWIND_ERROR,	    /* unreadable, not ELF, or the kernel refused the map */
	UNWIND_PENDING,	    /* lazy: no stack has needed it yet */
};

/* One binary seen, for the summary and benchmarks. */
struct unwind_binary {
	const char *path; /* as the first process that mapped it saw it */
	enum unwind_status status;
	size_t rows;
	uint64_t bytes;	    /* rows * 8: locked kernel memory of its table */
	uint64_t build_ns;  /* time to read its CFI and build the rows */
	uint64_t load_ns;   /* time to create and fill its BPF array */
	const char *source; /* ".eh_frame", ... (cfi_table.source) */
};

struct unwinder_stats {
	size_t processes;    /* umaps entries written */
	size_t binaries;     /* distinct files seen */
	size_t tables;	     /* ... with a table loaded now */
	size_t over_budget;  /* ... left without a table by the budget */
	size_t pending;	     /* ... lazy: not needed by a stack yet */
	uint64_t bytes;	     /* kernel memory of the row arrays (chunks), in bytes */
	uint64_t rows_bytes; /* ... holding the rows of the tables loaded now */
	uint64_t budget;
	size_t maps_dropped; /* executable mappings past OFFCPU_MAX_UMAPS in a process */
	size_t forgotten;    /* binaries forgotten (no process kept maps them); one seen
				again counts again in binaries */
};

struct unwinder *unwinder__new(const struct unwinder_opts *o);
void unwinder__free(struct unwinder *u);

/* Read pid's mappings and load what it needs. 0 or -errno (-ESRCH: gone). */
int unwinder__track(struct unwinder *u, int pid);
/* The same with its mappings read by the caller (one read for the symbolizer too). */
int unwinder__track_maps(struct unwinder *u, int pid, const struct proc_map *maps, size_t nr);
/*
 * Forget the mappings kept for processes that have exited, at the second
 * call that finds them gone (long runs: after each period), then the tables
 * of the binaries no process kept maps. Cannot fail; returns 0.
 */
int unwinder__forget_gone(struct unwinder *u);

void unwinder__stats(const struct unwinder *u, struct unwinder_stats *st);
/*
 * The binaries known (seen and not forgotten); owned by u, valid until the
 * next call of unwinder__track() or unwinder__forget_gone().
 */
const struct unwind_binary *unwinder__binaries(const struct unwinder *u, size_t *n);

/*
 * Unwind a stack the BPF side left to user space (the first len bytes of r
 * are present) with the tables and the mappings last loaded for r->tgid,
 * building the lazy tables it reaches (unwinder__need()): return addresses
 * innermost first into ips (at most max), ended by a marker word
 * (OFFCPU_UMARK_BASE | why) unless complete. Returns how many.
 */
struct offcpu_raw_ustack;
size_t unwinder__unwind_raw(struct unwinder *u, const struct offcpu_raw_ustack *r, size_t len,
			    uint64_t *ips, size_t max);

/*
 * Build and load the table of the binary mapped at pc in process tgid (as
 * last read) if it is still pending, and point every process's mappings of
 * it there, in the kernel too. 1 when it built one, 0 when there was none to
 * build, -ENOENT when no mapping of tgid holds pc.
 */
int unwinder__need(struct unwinder *u, uint32_t tgid, uint64_t pc);

/*
 * Whether pc of process tgid (as last read) is in a signal trampoline (a row
 * of its table marked by the 'S' augmentation): the frame where a signal
 * handler returns, below which the stack is the code the signal interrupted.
 */
bool unwinder__signal_frame(const struct unwinder *u, uint32_t tgid, uint64_t pc);

/* The marker frame's text for enum offcpu_umark why, e.g. "no CFI"; NULL if unknown. */
const char *unwind_mark__reason(unsigned int why);

#endif
