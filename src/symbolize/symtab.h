/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A sorted index of one module's function symbols, for lookups in O(log n).
 *
 * libdwfl's own dwfl_module_addrinfo() scans the whole symbol table on every
 * call (200 us per address in libc, milliseconds in large C++ libraries);
 * a profile resolves tens of thousands of distinct addresses. The symbols
 * come from libdwfl (.symtab, else the debuginfo file's, else .dynsym and
 * MiniDebugInfo), so the index sees what elfutils sees.
 *
 * An address resolves to the symbol whose [start, start + size) holds it,
 * the innermost when symbols nest; failing that, to the closest sizeless
 * symbol below it (hand-written assembly), as elfutils does. Among aliases
 * at one address a global name wins over a weak one over a local one.
 */
#ifndef OFFCPU_SYMBOLIZE_SYMTAB_H
#define OFFCPU_SYMBOLIZE_SYMTAB_H

#include <stddef.h>
#include <stdint.h>

#include <elfutils/libdwfl.h>

struct symtab;

/* Index mod's symbols; names point into mod, which must outlive the index. NULL with errno. */
struct symtab *symtab__build(Dwfl_Module *mod);
void symtab__free(struct symtab *t);
/* The symbol holding addr (a module address), or NULL; *offset gets addr - start. */
const char *symtab__resolve(const struct symtab *t, uint64_t addr, uint64_t *offset);
size_t symtab__count(const struct symtab *t);
/* The name of one symbol (in the file the names are read from), or NULL when none. */
const char *symtab__any_name(const struct symtab *t);

#endif
