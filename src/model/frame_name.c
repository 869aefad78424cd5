// SPDX-License-Identifier: GPL-2.0-only
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "model/frame_name.h"

#define UNWIND_PREFIX "[unwind: "
#define UNSYM_PREFIX "[unsymbolized"

bool frame_name__is_raw(const char *s, size_t len)
{
	if (len == 9 && !memcmp(s, "[unknown]", 9))
		return true;
	/* An address has at most 16 hex digits; a longer word is something else. */
	if (len < 3 || len > 18 || s[0] != '0' || (s[1] | 0x20) != 'x')
		return false;
	for (size_t i = 2; i < len; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

size_t frame_name__unsymbolize(const char *s, size_t len, char *buf, size_t size)
{
	int n;

	if (len > 2 && s[0] == '0')
		n = snprintf(buf, size, UNSYM_PREFIX " %.*s]", (int)len, s);
	else
		n = snprintf(buf, size, "%s", FRAME_NAME_UNSYMBOLIZED);
	if (n < 0)
		n = 0;
	return (size_t)n < size ? (size_t)n : size ? size - 1 : 0;
}

bool frame_name__unsymbolized(const char *name)
{
	size_t len;

	/*
	 * Every spelling starts with '[' or '0', and most names are symbols: the
	 * writers ask this of every frame of every stack.
	 */
	if (name[0] != '[' && name[0] != '0')
		return false;
	len = strlen(name);

	if (frame_name__is_raw(name, len))
		return true;
	return len > strlen(UNSYM_PREFIX) && !strncmp(name, UNSYM_PREFIX, strlen(UNSYM_PREFIX)) &&
	       (name[strlen(UNSYM_PREFIX)] == ']' || name[strlen(UNSYM_PREFIX)] == ' ');
}

bool frame_name__unwind_marker(const char *name, struct unwind_marker *m)
{
	size_t plen = strlen(UNWIND_PREFIX), len = strlen(name);
	const char *in, *body, *end;

	if (len <= plen + 1 || strncmp(name, UNWIND_PREFIX, plen) || name[len - 1] != ']')
		return false;
	if (!m)
		return true;
	body = name + plen;
	end = name + len - 1;
	/* No reason holds " in " (COMMON contract); a binary's name may. */
	in = memmem(body, end - body, " in ", 4);
	m->reason = body;
	m->reason_len = in ? (size_t)(in - body) : (size_t)(end - body);
	m->binary = in && in + 4 < end ? in + 4 : NULL;
	m->binary_len = m->binary ? (size_t)(end - m->binary) : 0;
	return true;
}
