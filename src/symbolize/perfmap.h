/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * JIT symbol maps in perf's format, /tmp/perf-PID.map, written by the
 * runtime (V8/node --perf-basic-prof, the JVM with perf-map-agent, .NET,
 * LuaJIT, ...) one line per compiled function:
 *
 *     START SIZE NAME
 *
 * START and SIZE in hex (with or without 0x), NAME the rest of the line
 * (it may contain spaces). A runtime may reuse memory for newer code, so
 * when two entries cover an address the later line wins.
 */
#ifndef OFFCPU_SYMBOLIZE_PERFMAP_H
#define OFFCPU_SYMBOLIZE_PERFMAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct perfmap;

/* NULL with errno set on a read error or no memory; bad lines are skipped. */
struct perfmap *perfmap__load(FILE *in);
void perfmap__free(struct perfmap *m);
/* The name covering addr, or NULL; *offset gets addr - start when not NULL. */
const char *perfmap__resolve(const struct perfmap *m, uint64_t addr, uint64_t *offset);
size_t perfmap__count(const struct perfmap *m);

#endif
