/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Give back the pages of a mapped file once it has been read.
 *
 * libdwfl maps each binary whole (private, writable) and reading its symbol
 * table faults in .symtab and .strtab, megabytes for a large library; a
 * host-wide capture reads a hundred binaries at its stop, and their pages
 * add up in the recorder's RSS although they are copies of the page cache.
 * Pages still identical to the file are dropped from this process
 * (MADV_DONTNEED); a later read faults the page in again from the cache.
 * A page this process wrote (a private copy) is never dropped: the pagemap
 * tells them apart.
 */
#ifndef OFFCPU_UTIL_FILEPAGES_H
#define OFFCPU_UTIL_FILEPAGES_H

#include <stddef.h>

/*
 * Drop the resident file pages of [addr, addr + len) (rounded out to whole
 * pages) or, with len 0, of the private file mapping of this process that
 * holds addr (found in /proc/self/maps: a read of some 300 lines, dearer
 * than the drop; give len when the caller knows it). Returns the bytes
 * dropped, 0 when addr is in no such mapping, or -errno (/proc/self/maps
 * or pagemap unreadable, madvise).
 *
 * Any range is safe: what is dropped is what the kernel can give back
 * unchanged (file pages; shared memory, which keeps its contents), never a
 * private copy, present or swapped out.
 */
long filepages__drop(const void *addr, size_t len);

#endif
