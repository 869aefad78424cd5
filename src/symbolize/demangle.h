/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * C++ (Itanium ABI) and legacy Rust symbol names to what a reader expects.
 *
 * The demangler is libstdc++'s __cxa_demangle, looked up at run time (it is
 * already loaded into C++ programs, and libstdc++.so.6 is on every system
 * that runs them), so that offcpu itself needs no C++ runtime at link time.
 * Without it names stay mangled. Legacy Rust names lose their "::h<hash>"
 * suffix and their $LT$-style escapes; Rust v0 ("_R") names stay mangled.
 */
#ifndef OFFCPU_SYMBOLIZE_DEMANGLE_H
#define OFFCPU_SYMBOLIZE_DEMANGLE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Write the demangled form of name into buf (len > 0), truncated to fit;
 * names that are not mangled, or do not demangle, are copied as they are.
 * Returns true when buf holds a demangled name.
 */
bool sym_demangle(const char *name, char *buf, size_t len);

/* Whether a demangler was found; tests skip instead of failing without one. */
bool sym_demangle_available(void);

#endif
