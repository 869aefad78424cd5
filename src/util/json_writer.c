// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "util/json_writer.h"

void jw_init(struct jw *w, FILE *out, bool compact)
{
	w->out = out;
	w->compact = compact;
	w->depth = 0;
	w->first[0] = true;
	w->after_key = false;
}

static void newline(struct jw *w)
{
	if (w->compact)
		return;
	fputc('\n', w->out);
	for (int i = 0; i < w->depth; i++)
		fputs("  ", w->out);
}

/* Separator and indentation before a value or key at the current depth. */
static void before_item(struct jw *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (w->depth == 0)
		return;
	if (!w->first[w->depth])
		fputc(',', w->out);
	w->first[w->depth] = false;
	newline(w);
}

static void open(struct jw *w, char c)
{
	before_item(w);
	fputc(c, w->out);
	if (w->depth < JW_MAX_DEPTH - 1)
		w->depth++;
	w->first[w->depth] = true;
}

static void close_(struct jw *w, char c)
{
	bool empty = w->first[w->depth];

	if (w->depth > 0)
		w->depth--;
	if (!empty)
		newline(w);
	fputc(c, w->out);
}

void jw_object_begin(struct jw *w)
{
	open(w, '{');
}

void jw_object_end(struct jw *w)
{
	close_(w, '}');
}

void jw_array_begin(struct jw *w)
{
	open(w, '[');
}

void jw_array_end(struct jw *w)
{
	close_(w, ']');
}

/* Length of a valid UTF-8 sequence at s (max n bytes), 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0)
		len = 2, cp = s[0] & 0x1f;
	else if ((s[0] & 0xf0) == 0xe0)
		len = 3, cp = s[0] & 0x0f;
	else if ((s[0] & 0xf8) == 0xf0)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and out-of-range code points are invalid. */
	if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

void json_escape(FILE *out, const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;

	for (size_t i = 0; i < len;) {
		unsigned char c = s[i];
		size_t n;

		switch (c) {
		case '"':
			fputs("\\\"", out);
			break;
		case '\\':
			fputs("\\\\", out);
			break;
		case '\n':
			fputs("\\n", out);
			break;
		case '\r':
			fputs("\\r", out);
			break;
		case '\t':
			fputs("\\t", out);
			break;
		default:
			if (c < 0x20) {
				fprintf(out, "\\u%04x", c);
				break;
			}
			n = utf8_len(s + i, len - i);
			if (!n) {
				fputs("\\ufffd", out);
				i++;
				continue;
			}
			fwrite(s + i, 1, n, out);
			i += n;
			continue;
		}
		i++;
	}
}

void jw_key(struct jw *w, const char *key)
{
	before_item(w);
	fputc('"', w->out);
	json_escape(w->out, key, strlen(key));
	fputs(w->compact ? "\":" : "\": ", w->out);
	w->after_key = true;
}

void jw_string_len(struct jw *w, const char *s, size_t len)
{
	before_item(w);
	fputc('"', w->out);
	json_escape(w->out, s, len);
	fputc('"', w->out);
}

void jw_string(struct jw *w, const char *s)
{
	if (!s) {
		jw_null(w);
		return;
	}
	jw_string_len(w, s, strlen(s));
}

void jw_u64(struct jw *w, uint64_t v)
{
	before_item(w);
	fprintf(w->out, "%" PRIu64, v);
}

void jw_i64(struct jw *w, int64_t v)
{
	before_item(w);
	fprintf(w->out, "%" PRId64, v);
}

void jw_double(struct jw *w, double v, int digits)
{
	if (!isfinite(v)) {
		jw_null(w);
		return;
	}
	before_item(w);
	fprintf(w->out, "%.*f", digits, v);
}

void jw_bool(struct jw *w, bool v)
{
	before_item(w);
	fputs(v ? "true" : "false", w->out);
}

void jw_null(struct jw *w)
{
	before_item(w);
	fputs("null", w->out);
}

void jw_str_field(struct jw *w, const char *key, const char *s)
{
	jw_key(w, key);
	jw_string(w, s);
}

void jw_u64_field(struct jw *w, const char *key, uint64_t v)
{
	jw_key(w, key);
	jw_u64(w, v);
}

void jw_i64_field(struct jw *w, const char *key, int64_t v)
{
	jw_key(w, key);
	jw_i64(w, v);
}

void jw_double_field(struct jw *w, const char *key, double v, int digits)
{
	jw_key(w, key);
	jw_double(w, v, digits);
}

void jw_bool_field(struct jw *w, const char *key, bool v)
{
	jw_key(w, key);
	jw_bool(w, v);
}

void jw_object_field(struct jw *w, const char *key)
{
	jw_key(w, key);
	jw_object_begin(w);
}

void jw_array_field(struct jw *w, const char *key)
{
	jw_key(w, key);
	jw_array_begin(w);
}

int jw_finish(struct jw *w)
{
	if (!w->compact || w->depth == 0)
		fputc('\n', w->out);
	return ferror(w->out) ? -EIO : 0;
}
