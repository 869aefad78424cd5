/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unwind tables for the BPF unwinder, built from one ELF file's call frame
 * information (elfutils libdw): its .eh_frame, else its .debug_frame, else
 * the .debug_frame of its separate debug file (found by build id under
 * /usr/lib/debug/.build-id/, then by .gnu_debuglink next to the file and
 * under /usr/lib/debug).
 *
 * Every CFI row of every FDE becomes one struct offcpu_cfi_row (bpf/offcpu.h)
 * for the x86-64 rules the BPF side evaluates: the CFA as rsp or rbp plus a
 * multiple of 8, rbp unchanged or saved at CFA + a multiple of 8, the return
 * address at CFA - 8. The rest becomes a command row: PLT stubs (their CFA
 * expression recognised by shape), signal trampolines (the 'S' augmentation),
 * the outermost frame (return address undefined), and UNSUPPORTED for any
 * other rule (counted in stats). Gaps between FDEs get an OFFCPU_CFA_NONE row,
 * so that a lookup (the last row whose pc <= the address) never lands in a
 * neighbouring function's rule; the table ends with a NONE row at the end of
 * the last FDE. Rows are sorted by pc, pcs strictly increasing, consecutive
 * rows with equal rules merged. Where FDEs overlap (rare; none in the
 * binaries measured), the one that starts later takes over from its start
 * and the rest of the earlier one is a gap: the FDE an .eh_frame_hdr lookup
 * picks. FDEs outside the executable PT_LOAD segments (the linker leaves
 * discarded functions' at address 0) are left out.
 *
 * Cost, measured: see BENCHMARKS.md ("Unwind tables").
 */
#ifndef OFFCPU_COLLECT_CFI_H
#define OFFCPU_COLLECT_CFI_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/offcpu.h"

struct cfi_stats {
	size_t fdes;	    /* FDEs read */
	size_t fdes_libdw;  /* ... whose rows libdw made, one call a row (the rest: one pass) */
	size_t rows;	    /* rows in the table (after merging) */
	size_t unsupported; /* rows made OFFCPU_CFA_UNSUPPORTED */
	size_t fp_unknown;  /* rows with OFFCPU_FP_UNKNOWN */
	size_t corrupt;	    /* CFI sections refused: a register x86-64 lacks, an unknown opcode */
};

/* A PT_LOAD segment, for the load bias of a mapping. */
struct cfi_segment {
	uint64_t vaddr, offset, filesz;
	uint64_t memsz;
	uint32_t flags; /* PF_X, PF_W, PF_R */
};

struct cfi_table {
	uint64_t base; /* ELF vaddr that rows[i].pc is relative to */
	struct offcpu_cfi_row *rows;
	size_t n;
	const char *source; /* ".eh_frame", ".debug_frame", "debug file .debug_frame" (static) */
	struct cfi_segment *segs; /* PT_LOAD segments of the file */
	size_t nsegs;
	uint16_t elf_type; /* ET_EXEC (loaded at its vaddrs: bias 0) or ET_DYN */
	uint8_t build_id[20];
	size_t build_id_len; /* 0: the file has none */
	struct cfi_stats stats;
};

/*
 * Build the table of the ELF file open at fd (read with pread, fd not
 * closed; path is only for finding a debug file and for messages). Returns
 * 0, -ENOENT when the file has no usable CFI anywhere (t->segs and build id are
 * still filled, t->n == 0), -ENOEXEC when it is not an x86-64 ELF executable
 * or shared object (or its headers cannot be read),
 * -ENOMEM, or -EIO. On error *t holds nothing to free except after -ENOENT.
 * A CFI section whose instructions name a register x86-64 does not have
 * or an unknown opcode is corrupt and not used (t->stats.corrupt counts it):
 * libdw would allocate for such numbers without bound.
 */
int cfi_table__build(int fd, const char *path, struct cfi_table *t);
/*
 * The same, with the debug files under debug_root instead of /usr/lib/debug
 * (a container's root, a test's directory); NULL means /usr/lib/debug.
 */
int cfi_table__build_root(int fd, const char *path, const char *debug_root, struct cfi_table *t);

struct cfi_build_opts {
	const char *debug_root; /* NULL: /usr/lib/debug */
	/*
	 * Every row asked of libdw (dwarf_cfi_addrframe at each row's pc), as
	 * the builder did before it played out each FDE once itself: the
	 * reference the tests hold the one-pass rows to.
	 */
	bool libdw_rows;
	/*
	 * Only what a mapping's load bias needs (the ELF checks, segments,
	 * base and build id; t->n == 0): the rows come from a second build,
	 * when a stack needs them (collect/unwind.h, lazy tables).
	 */
	bool segments_only;
};

int cfi_table__build_opts(int fd, const char *path, const struct cfi_build_opts *o,
			  struct cfi_table *t);
void cfi_table__free(struct cfi_table *t);

/*
 * The load bias (runtime address - ELF vaddr) of a mapping of the file that
 * starts at map_start with file offset map_offset. Returns 0, or -ENOENT
 * when no PT_LOAD segment holds that offset. Where two segments start in
 * the same page of a shared object, the executable one is taken: ask with
 * an executable mapping.
 */
int cfi_table__bias(const struct cfi_table *t, uint64_t map_start, uint64_t map_offset,
		    uint64_t *bias);

/* The row for ELF vaddr addr (the last row whose pc <= addr - base), or NULL. */
const struct offcpu_cfi_row *cfi_table__find(const struct cfi_table *t, uint64_t addr);

/*
 * One row as text, for tests and messages: "rsp+16 rbp=[cfa-16]", "rbp+16"
 * (rbp unchanged), "rsp+8 rbp=?" (rbp unknown), "plt rsp+8 rip&15>=11",
 * "signal", "end", "none", "unsupported". Returns 0, or -ENOSPC when len is
 * too small (buf then holds what fit).
 */
int cfi_row__format(const struct offcpu_cfi_row *r, char *buf, size_t len);

#endif
