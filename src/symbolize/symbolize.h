/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Addresses to names, for the native collector.
 *
 * Kernel addresses resolve through kallsyms; user addresses through the ELF
 * and DWARF of the mapped files (elfutils libdwfl), read through
 * /proc/PID/root so that containers resolve against their own files, with
 * /tmp/perf-PID.map for JIT code. A process that exits during a capture still
 * resolves: symbolizer__track() takes what is needed (maps, open ELF handles)
 * while it lives, and the first user lookup of an untracked pid tracks it.
 *
 * Frame-pointer-less code gives truncated user stacks under FP unwinding;
 * symbolizer__binaries() reports per binary whether it was built with frame
 * pointers, so the summary can say so instead of showing junk.
 *
 * How a user address resolves: the executable mapping that holds it (from
 * the snapshot of /proc/PID/maps) names a file; the file is opened while the
 * process lives, through /proc/PID/root/PATH, or /proc/PID/map_files/ when
 * the path was deleted or now names another file, and stays open. Each file
 * is one libdwfl module, shared by every process that maps it, so symbol
 * tables and DWARF are read once. Its load bias comes from the mapping's
 * file offset and the file's PT_LOAD headers (PIE, shared objects and
 * executables alike). Addresses in no file mapping are looked up in the JIT
 * map /tmp/perf-PID.map (or the one in the process's own /tmp, under its
 * namespace pid, for containers). Separate debuginfo is found by build-id and
 * .gnu_debuglink as elfutils does; from debuginfod servers (DEBUGINFOD_URLS)
 * only with opts->debuginfod, as downloads can take minutes.
 *
 * Names: C++ and legacy Rust names are demangled (see demangle.h) unless
 * no_demangle. Unknown user addresses inside a known file are written
 * "[FILE+0xVADDR]", FILE the basename and VADDR the address in the ELF
 * file's own terms (what addr2line -e FILE takes); others "0xADDR".
 *
 * A return address points after its call, possibly into the next function
 * or line; callers that want the call site pass return address - 1 for
 * every frame but the innermost, as perf does.
 *
 * Results are cached per (pid, address), and per (file, address in the file)
 * for every process that maps the file; a symbolizer is not thread-safe.
 */
#ifndef OFFCPU_SYMBOLIZE_SYMBOLIZE_H
#define OFFCPU_SYMBOLIZE_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct proc_map; /* symbolize/procmaps.h */

struct symbolizer;

struct symbolizer_opts {
	bool inlines;		   /* expand inline frames from DWARF */
	bool no_demangle;	   /* keep C++/Rust names mangled */
	const char *kallsyms_path; /* default /proc/kallsyms */
	const char *proc_root;	   /* default /proc; tests point it elsewhere */
	const char *perf_map_dir;  /* default /tmp */
	bool debuginfod;	   /* let elfutils download debuginfo (DEBUGINFOD_URLS) */
	/*
	 * Inline lookups through libdwfl, which inflates a binary's whole
	 * DWARF, rather than only the compile units they need (dwlazy.h):
	 * the reference the tests hold the lazy reading to.
	 */
	bool dwarf_whole;
};

struct sym_frame {
	char name[256]; /* "func", "func+0x1a" is not used: names only, like perf */
	bool is_inline;
};

/* Per-binary facts for the summary. */
enum fp_verdict { FP_UNKNOWN = 0, FP_PRESENT, FP_ABSENT };
struct sym_binary {
	const char *path; /* as the process saw it */
	enum fp_verdict frame_pointers;
	bool has_symbols;   /* any symbol table, .dynsym included */
	bool has_debuginfo; /* DWARF, in the file or found separately */
};

struct symbolizer *symbolizer__new(const struct symbolizer_opts *opts);
void symbolizer__free(struct symbolizer *s);

/* Snapshot pid's mappings and open its binaries now, while it lives. Idempotent;
 * call again after exec to pick up the new image. Returns 0 or -errno (-ESRCH
 * when the process is gone). Cost: one read of /proc/PID/maps (~0.1-0.2 ms),
 * plus a few ms for each file not seen before (symbols, debuginfo, the
 * frame-pointer verdict). Addresses in no mapping re-read the maps of a
 * process still alive (dlopen) at most every 100 ms. */
int symbolizer__track(struct symbolizer *s, int pid);
/*
 * The same with pid's mappings read by the caller (procmaps__read()) between
 * from_ns and to_ns (CLOCK_MONOTONIC; 0: just now), which tell an exec's
 * old image from its new one (symbolizer__exec()).
 */
int symbolizer__track_maps(struct symbolizer *s, int pid, const struct proc_map *maps, size_t nr,
			   uint64_t from_ns, uint64_t to_ns);
/*
 * Forget the processes that have exited (or whose pid another process took):
 * their mappings and cached frames, at the second call that finds them gone
 * (their rows drained late still resolve); then close the binaries no
 * process left maps (symbols, debug info, resolved frames; opened again if a
 * process maps them later). For long runs (record --every), after each
 * period. Returns how many processes were freed, or -ENOMEM.
 */
int symbolizer__forget_gone(struct symbolizer *s);

/*
 * A kernel address to "name" (kallsyms, loaded at the first call so that BPF
 * programs and modules loaded meanwhile are known), or "0xADDR" when unknown.
 * buf is always written; returns 0, or -errno when kallsyms could not be read.
 */
int symbolizer__kernel(struct symbolizer *s, uint64_t addr, char *buf, size_t len);

/*
 * A kallsyms table read already (the native collector reads it at start)
 * answers symbolizer__kernel() for addresses in [lo, hi), the core kernel's
 * text, whose symbols never change: kallsyms is then read again only for an
 * address outside it (a module's, a BPF program's). s takes k, even on error.
 * 0 or -EINVAL.
 */
struct ksyms;
int symbolizer__kernel_core(struct symbolizer *s, struct ksyms *k, uint64_t lo, uint64_t hi);

/*
 * A user address of pid to frames, outermost first (with inlines: the caller
 * of an inlined function comes before it, every level of a nest of them, as
 * addr2line -i gives them; at most max frames, the outermost). Inlines cost
 * 5 to 90 us per new address (the first in a compile unit indexes its
 * functions), against under 5 us without.
 * Unknown addresses give one frame "[MODULE+0xOFF]" or "0xADDR". Returns the
 * number of frames written (>= 1) or -errno (-EINVAL when max is 0).
 */
int symbolizer__user(struct symbolizer *s, int pid, uint64_t addr, struct sym_frame *out,
		     size_t max);

/*
 * pid runs in a copy of ppid's address space (forked, no exec since) at seq
 * (symbolizer__exec()'s count): while none of its own mappings were read
 * (it was gone first), the mappings of ppid's image at seq name its
 * addresses. Nothing when it has its own. 0, -EINVAL or -ENOMEM.
 */
int symbolizer__inherit(struct symbolizer *s, int pid, int ppid, uint64_t seq);

/*
 * Process pid exec'd at exec_ns (CLOCK_MONOTONIC; 0: unknown): the
 * addresses seen before seq (the caller's own increasing count, e.g. the
 * order of its events) belong to the image it had, named by the mappings
 * read before (symbolizer__user_at()); later ones by the mappings read
 * since. Mappings read after the exec but before this call (its notice came
 * late) are the new image's, and kept for it only: told by exec_ns against
 * when the read began and ended, or, for a read across it, by reading /proc
 * now (neither image's when that fails). A process forked by ppid (> 0;
 * 0: unknown), whose exec this is the first since, had its parent's
 * mappings until then: the parent's image at seq names what its own read
 * did not cover (none read, or read while the exec tore them down), at the
 * first lookup, once the parent's own execs are known. The last 16 images
 * are kept.
 * 0, -EINVAL or -ENOMEM.
 */
int symbolizer__exec(struct symbolizer *s, int pid, uint64_t seq, uint64_t exec_ns, int ppid);

/*
 * symbolizer__user() for an address seen at seq: in an image replaced by an
 * exec after seq, named with that image's mappings ("0xADDR" when none had
 * been read). UINT64_MAX: the current image.
 */
int symbolizer__user_at(struct symbolizer *s, int pid, uint64_t seq, uint64_t addr,
			struct sym_frame *out, size_t max);

/*
 * The basename of the file mapped at addr in pid (as tracked), or NULL; owned
 * by s. For naming where an unwind stopped.
 */
const char *symbolizer__binary_name(struct symbolizer *s, int pid, uint64_t addr);
const char *symbolizer__binary_name_at(struct symbolizer *s, int pid, uint64_t seq, uint64_t addr);

/*
 * The binaries an address was resolved in so far (not the vdso): the ones
 * on the stacks, not every file a process maps; their facts are read at
 * this call if no lookup read them. The array is owned by s and valid until
 * the next call.
 */
const struct sym_binary *symbolizer__binaries(struct symbolizer *s, size_t *n);

/* Counters, for tests and benchmarks. */
struct symbolizer_stats {
	uint64_t user_lookups;	  /* calls of symbolizer__user() */
	uint64_t user_cache_hits; /* ... answered from the cache */
	uint64_t file_cache_hits; /* ... from what another process resolved in the same file */
	uint64_t kernel_lookups;
	size_t processes;	     /* pids tracked */
	size_t binaries;	     /* distinct files opened */
	size_t dwarf_reads;	     /* binaries whose DWARF was loaded (for inline frames only) */
	size_t dwarf_lazy;	     /* ... of them read as far as lookups needed (dwlazy.h) */
	uint64_t dwarf_info_read;    /* bytes of their .debug_info inflated */
	uint64_t dwarf_info_size;    /* ... of their .debug_info's full size */
	uint64_t dwarf_info_kept;    /* bytes of their .debug_info kept in memory */
	uint64_t binaries_closed;    /* ... closed once no process mapped them (forget_gone) */
	uint64_t file_bytes_dropped; /* of binaries' mapped files, once read (util/filepages.h) */
};
void symbolizer__stats(const struct symbolizer *s, struct symbolizer_stats *st);

/*
 * The frame-pointer verdict for one ELF file, as symbolizer__binaries() gives
 * it (see fp.h for how it is decided), for doctor and tests. Returns 0 or -errno.
 */
int sym_binary__frame_pointers(const char *path, enum fp_verdict *verdict);

/*
 * kallsyms on its own, for tests and for doctor: parse "ADDR TYPE NAME [MODULE]"
 * lines from in (any length of name), keeping text symbols.
 */
struct ksyms;
struct ksyms *ksyms__load(FILE *in);
/*
 * The same a line at a time, for a reader that parses kallsyms for other
 * things in the same pass: new, add_line() per line (NUL-terminated), then
 * finish() before the first resolve. 0 or -errno.
 */
struct ksyms *ksyms__new(void);
int ksyms__add_line(struct ksyms *k, const char *line);
int ksyms__finish(struct ksyms *k);
void ksyms__free(struct ksyms *k);
/*
 * The text symbol containing addr (up to the next symbol of any kind; the last
 * one extends a page), or NULL; *offset gets addr - start when not NULL.
 */
const char *ksyms__resolve(const struct ksyms *k, uint64_t addr, uint64_t *offset);
size_t ksyms__count(const struct ksyms *k);
/*
 * Symbols on demand, for a caller with a cheaper source than reading all of
 * kallsyms (the native collector asks the kernel, one symbol at a time):
 * ask() names the symbol holding addr (NUL-terminated into name) and gives
 * its start and size, 0 or -errno. Each answer is kept, and each address
 * ask() could not name; resolve() then answers as for a loaded ksyms.
 * free_ctx(ctx), when not NULL, runs at ksyms__free(), or here on failure.
 */
typedef int (*ksyms_ask_fn)(void *ctx, uint64_t addr, char *name, size_t len, uint64_t *start,
			    uint64_t *size);
struct ksyms *ksyms__new_lazy(ksyms_ask_fn ask, void *ctx, void (*free_ctx)(void *ctx));

#endif
