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
 */
#ifndef OFFCPU_SYMBOLIZE_SYMBOLIZE_H
#define OFFCPU_SYMBOLIZE_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct symbolizer;

struct symbolizer_opts {
	bool inlines;		    /* expand inline frames from DWARF */
	bool no_demangle;	    /* keep C++/Rust names mangled */
	const char *kallsyms_path;  /* default /proc/kallsyms */
	const char *proc_root;	    /* default /proc; tests point it elsewhere */
	const char *perf_map_dir;   /* default /tmp */
};

struct sym_frame {
	char name[256]; /* "func", "func+0x1a" is not used: names only, like perf */
	bool is_inline;
};

/* Per-binary facts for the summary. */
enum fp_verdict { FP_UNKNOWN = 0, FP_PRESENT, FP_ABSENT };
struct sym_binary {
	const char *path;
	enum fp_verdict frame_pointers;
	bool has_symbols;
	bool has_debuginfo;
};

struct symbolizer *symbolizer__new(const struct symbolizer_opts *opts);
void symbolizer__free(struct symbolizer *s);

/* Snapshot pid's mappings and open its binaries now, while it lives. Idempotent;
 * call again after exec to pick up the new image. */
int symbolizer__track(struct symbolizer *s, int pid);

/* A kernel address to "name" (kallsyms), or "0xADDR" when unknown. Returns 0 or -errno. */
int symbolizer__kernel(struct symbolizer *s, uint64_t addr, char *buf, size_t len);

/*
 * A user address of pid to frames, outermost first (with inlines: the caller
 * of an inlined function comes before it). Unknown addresses give one frame
 * "[MODULE+0xOFF]" or "0xADDR". Returns the number of frames written (>= 1) or -errno.
 */
int symbolizer__user(struct symbolizer *s, int pid, uint64_t addr, struct sym_frame *out,
		     size_t max);

/* The binaries seen so far; the array is owned by s and valid until the next call. */
const struct sym_binary *symbolizer__binaries(struct symbolizer *s, size_t *n);

/*
 * kallsyms on its own, for tests and for doctor: parse "ADDR TYPE NAME [MODULE]"
 * lines from in (any length of name), keeping text symbols.
 */
struct ksyms;
struct ksyms *ksyms__load(FILE *in);
void ksyms__free(struct ksyms *k);
/* The symbol containing addr, or NULL; *offset gets addr - start when not NULL. */
const char *ksyms__resolve(const struct ksyms *k, uint64_t addr, uint64_t *offset);
size_t ksyms__count(const struct ksyms *k);

#endif
