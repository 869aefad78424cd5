/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What every parser reports besides the rows it adds: how many lines it read,
 * which it could not use and where. A malformed line never stops a parse and is
 * never dropped silently: it is counted here with its 1-based line number.
 *
 * A parser returns 0 when it read to EOF (malformed lines included), or -errno:
 * -EOVERFLOW a count or sum would wrap 64 bits (stats->error_line says where),
 * -EBADMSG the input says where it ends and was cut short or does not add up
 * (a format with a trailer: stats->error_line and error_reason say where and
 * why), -ENOMEM, -EIO on a read error. On error the profile keeps what was
 * added before the failing line. A parser zeroes *stats first; stats may be NULL.
 */
#ifndef OFFCPU_PARSE_PARSE_H
#define OFFCPU_PARSE_PARSE_H

#include <stddef.h>
#include <stdint.h>

struct parse_stats {
	size_t lines;	  /* physical lines read (a final line without '\n' counts) */
	size_t records;	  /* records turned into profile rows */
	size_t skipped;	  /* well-formed input that carries no off-CPU data (headers, other maps) */
	size_t malformed; /* lines (or records) that could not be parsed */
	size_t first_malformed_line; /* 0 when none */
	char first_malformed_reason[96];
	size_t error_line;     /* line of a fatal error (-EOVERFLOW, -EBADMSG), 0 otherwise */
	char error_reason[96]; /* why, for -EBADMSG; "" otherwise */
};

/* Count a malformed line; the first one keeps its line number and reason. */
void parse__malformed(struct parse_stats *st, size_t line, const char *why);
/*
 * The unsigned decimal s[0..len) (digits only: no sign, space or base prefix)
 * into *v: 0, -EINVAL when it is not one, -EOVERFLOW past 64 bits.
 */
int parse__u64(const char *s, size_t len, uint64_t *v);

#endif
