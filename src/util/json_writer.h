/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A streaming, pretty-printing JSON writer on a FILE *. Writing JSON is simple
 * enough to do by hand; reading it is not (we use json-c for that).
 *
 * Output is indented two spaces per level, with `"key": value` spacing, one
 * value per line, so summaries diff well and grep finds `"field": value`.
 * Strings are escaped per RFC 8259; bytes that are not valid UTF-8 become
 * U+FFFD so the output is always valid JSON. compact=true writes one line.
 */
#ifndef OFFCPU_UTIL_JSON_WRITER_H
#define OFFCPU_UTIL_JSON_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JW_MAX_DEPTH 32

struct jw {
	FILE *out;
	bool compact;
	int depth;
	bool first[JW_MAX_DEPTH];
	bool after_key;
};

void jw_init(struct jw *w, FILE *out, bool compact);
void jw_object_begin(struct jw *w);
void jw_object_end(struct jw *w);
void jw_array_begin(struct jw *w);
void jw_array_end(struct jw *w);
void jw_key(struct jw *w, const char *key);
void jw_string(struct jw *w, const char *s);
void jw_string_len(struct jw *w, const char *s, size_t len);
void jw_u64(struct jw *w, uint64_t v);
void jw_i64(struct jw *w, int64_t v);
/* Finite doubles with up to `digits` decimals; NaN/inf become null. */
void jw_double(struct jw *w, double v, int digits);
void jw_bool(struct jw *w, bool v);
void jw_null(struct jw *w);
/*
 * A key and its value in one call, for the common case of an object's field:
 * jw_u64_field(w, "count", n) is jw_key(w, "count"); jw_u64(w, n).
 * jw_object_field() and jw_array_field() open the value; end it as usual.
 */
void jw_str_field(struct jw *w, const char *key, const char *s);
void jw_u64_field(struct jw *w, const char *key, uint64_t v);
void jw_i64_field(struct jw *w, const char *key, int64_t v);
void jw_double_field(struct jw *w, const char *key, double v, int digits);
void jw_bool_field(struct jw *w, const char *key, bool v);
void jw_object_field(struct jw *w, const char *key);
void jw_array_field(struct jw *w, const char *key);
/* Ends the document with a newline (pretty mode). Returns 0 or -EIO. */
int jw_finish(struct jw *w);

/* Escape s into out as a JSON string body (no quotes). */
void json_escape(FILE *out, const char *s, size_t len);

#endif
