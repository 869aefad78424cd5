/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The DWARF of one file with compressed debug sections (Debian's -dbg
 * packages), for inline lookups, inflated only as far as the lookups need.
 *
 * libdw inflates every debug section when it opens a file: for libc6-dbg's
 * libc, 11 MB from 3.8 MB, about 50 ms of CPU, most of it .debug_info, at
 * every capture's stop. An inline lookup needs the compile unit holding the
 * address and nothing of the location lists or line tables. Here the file's
 * .debug_aranges (which CU holds which address) is read first; the small
 * sections the CUs refer to (abbreviations, strings, ranges, addresses)
 * whole; the rest not at all. libdw reads the result as an ELF image in
 * memory whose sections are those, uncompressed, at their full sizes (pages
 * never written are never resident).
 *
 * .debug_info is a single zlib stream, which cannot be entered in the
 * middle. When no abbreviation of the file names a form that reaches
 * outside its CU (ref_addr, the dwz alternate file's forms, type
 * signatures), the image holds only the CUs looked up, one after another
 * (the compact layout): the stream runs through the bytes before a CU
 * into a small buffer, and keeps a copy of its state every 256 KB so
 * that a CU it has passed costs at most that much inflated again. Resident
 * memory then follows the CUs used (libc: 34 CUs, 150 KB, where inflating
 * up to the furthest of them kept 4.4 MB), and libdw, which reads unit
 * headers one after another from the start, sees only those. Otherwise
 * (LTO's cross-CU references) .debug_info is inflated in place from its
 * start up to the end of the furthest CU looked up, and whole when a CU
 * whose abbreviations reach outside it is.
 *
 * Files this cannot serve (no .debug_aranges, .debug_info not compressed,
 * an alternate debug file, type units) get NULL from dwlazy__open(): the
 * caller loads the DWARF through libdwfl as before.
 */
#ifndef OFFCPU_SYMBOLIZE_DWLAZY_H
#define OFFCPU_SYMBOLIZE_DWLAZY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <elfutils/libdw.h>

struct dwlazy;

/*
 * The DWARF of the ELF file at path, whose addresses are those of a binary
 * whose lowest PT_LOAD segment starts at vaddr (the file's must too). NULL
 * when it cannot be served lazily (see above) or on failure.
 */
struct dwlazy *dwlazy__open(const char *path, uint64_t vaddr);
void dwlazy__free(struct dwlazy *d);

/* The CU DIE holding addr, with everything it needs inflated. false: no CU has it. */
bool dwlazy__addrdie(struct dwlazy *d, uint64_t addr, Dwarf_Die *cu);

/*
 * Bytes of .debug_info inflated so far (the furthest the stream went), of
 * them kept in memory (resident), and its full size.
 */
void dwlazy__info_size(const struct dwlazy *d, size_t *inflated, size_t *resident, size_t *size);

#endif
