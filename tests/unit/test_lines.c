// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>

#include "unit.h"
#include "util/lines.h"

static FILE *memfile(const char *buf, size_t len)
{
	return len ? fmemopen((void *)buf, len, "r") : fopen("/dev/null", "r");
}

TEST(lines_splits_crlf_nul_and_last_line)
{
	static const char in[] = "a\r\n\r\nb\0c\nlast\r";
	FILE *f = memfile(in, sizeof(in) - 1);
	struct line_reader *lr;
	const char *l;
	size_t len;

	CHECK(f);
	lr = line_reader__new(f);
	CHECK(lr);
	CHECK_INT(line_reader__lineno(lr), 0);
	CHECK_INT(line_reader__next(lr, &l, &len), 1);
	CHECK_INT(len, 1);
	CHECK(l[0] == 'a');
	CHECK_INT(line_reader__next(lr, &l, &len), 1);
	CHECK_INT(len, 0);
	CHECK_INT(line_reader__next(lr, &l, &len), 1);
	CHECK_INT(len, 3);
	CHECK(!memcmp(l, "b\0c", 3));
	/* a last line without '\n' is a line; its '\r' goes like a CRLF's */
	CHECK_INT(line_reader__next(lr, &l, &len), 1);
	CHECK_INT(len, 4);
	CHECK(!memcmp(l, "last", 4));
	CHECK_INT(line_reader__lineno(lr), 4);
	CHECK_INT(line_reader__next(lr, &l, &len), 0);
	CHECK_INT(line_reader__next(lr, &l, &len), 0);
	line_reader__free(lr);
	fclose(f);
	line_reader__free(NULL);
}

/* A peek sees the next whole line without taking it; a last line without '\n' is not peeked. */
TEST(lines_peek_sees_the_next_line_and_takes_nothing)
{
	static const char in[] = "one\ntwo\r\nthree";
	FILE *f = memfile(in, sizeof(in) - 1);
	struct line_reader *lr;
	const char *l, *pl;
	size_t len, plen;

	CHECK(f);
	lr = line_reader__new(f);
	CHECK(lr);
	CHECK_INT(line_reader__peek(lr, &pl, &plen), 0); /* nothing read yet */
	CHECK_INT(line_reader__next(lr, &l, &len), 1);
	CHECK(len == 3 && !memcmp(l, "one", 3));
	CHECK_INT(line_reader__peek(lr, &pl, &plen), 1);
	CHECK(plen == 3 && !memcmp(pl, "two", 3));
	CHECK_INT(line_reader__peek(lr, &pl, &plen), 1);
	CHECK(plen == 3 && !memcmp(pl, "two", 3));
	CHECK_INT(line_reader__lineno(lr), 1);
	CHECK_INT(line_reader__next(lr, &l, &len), 1);
	CHECK(len == 3 && !memcmp(l, "two", 3));
	CHECK_INT(line_reader__lineno(lr), 2);
	CHECK_INT(line_reader__peek(lr, &pl, &plen), 0);
	CHECK_INT(line_reader__next(lr, &l, &len), 1);
	CHECK(len == 5 && !memcmp(l, "three", 5));
	CHECK_INT(line_reader__peek(lr, &pl, &plen), 0);
	CHECK_INT(line_reader__next(lr, &l, &len), 0);
	line_reader__free(lr);
	fclose(f);
}

/* peek2 sees the line after the next; what it found is what next() returns then. */
TEST(lines_peek2_sees_two_lines_ahead)
{
	static const char in[] = "a\nbb\r\n\nccc\nd";
	FILE *f = memfile(in, sizeof(in) - 1);
	struct line_reader *lr;
	const char *l, *pl;
	size_t len, plen;

	CHECK(f);
	lr = line_reader__new(f);
	CHECK(lr);
	CHECK_INT(line_reader__next(lr, &l, &len), 1);
	CHECK(len == 1 && l[0] == 'a');
	CHECK_INT(line_reader__peek2(lr, &pl, &plen), 1);
	CHECK_INT(plen, 0);
	CHECK_INT(line_reader__next(lr, &l, &len), 1);
	CHECK(len == 2 && !memcmp(l, "bb", 2));
	CHECK_INT(line_reader__peek2(lr, &pl, &plen), 1);
	CHECK(plen == 3 && !memcmp(pl, "ccc", 3));
	CHECK_INT(line_reader__next(lr, &l, &len), 1);
	CHECK_INT(len, 0);
	CHECK_INT(line_reader__peek(lr, &pl, &plen), 1);
	CHECK(plen == 3 && !memcmp(pl, "ccc", 3));
	CHECK_INT(line_reader__peek2(lr, &pl, &plen), 0); /* "d" has no '\n' */
	CHECK_INT(line_reader__next(lr, &l, &len), 1);
	CHECK(len == 3 && !memcmp(l, "ccc", 3));
	CHECK_INT(line_reader__next(lr, &l, &len), 1);
	CHECK(len == 1 && l[0] == 'd');
	CHECK_INT(line_reader__lineno(lr), 5);
	CHECK_INT(line_reader__next(lr, &l, &len), 0);
	line_reader__free(lr);
	fclose(f);
}

TEST(lines_empty_input_has_no_lines)
{
	FILE *f = memfile("", 0);
	struct line_reader *lr;
	const char *l;
	size_t len;

	CHECK(f);
	lr = line_reader__new(f);
	CHECK(lr);
	CHECK_INT(line_reader__next(lr, &l, &len), 0);
	CHECK_INT(line_reader__lineno(lr), 0);
	line_reader__free(lr);
	fclose(f);
}

/* Lines longer than any buffer, and lines straddling every read boundary. */
TEST(lines_long_lines_across_reads)
{
	size_t sizes[] = {3 << 20, 1, 65535, 65536, 65537, 0, 200000, 7};
	size_t nl = sizeof(sizes) / sizeof(sizes[0]), total = 0, off = 0;
	struct line_reader *lr;
	const char *l;
	size_t len;
	char *buf;
	FILE *f;

	for (size_t i = 0; i < nl; i++)
		total += sizes[i] + 1;
	buf = malloc(total);
	CHECK(buf);
	for (size_t i = 0; i < nl; i++) {
		memset(buf + off, 'a' + (int)i, sizes[i]);
		off += sizes[i];
		buf[off++] = '\n';
	}
	f = memfile(buf, total);
	CHECK(f);
	lr = line_reader__new(f);
	CHECK(lr);
	for (size_t i = 0; i < nl; i++) {
		CHECK_INT(line_reader__next(lr, &l, &len), 1);
		CHECK_INT(len, sizes[i]);
		if (len) {
			CHECK(l[0] == 'a' + (int)i);
			CHECK(l[len - 1] == 'a' + (int)i);
		}
	}
	CHECK_INT(line_reader__next(lr, &l, &len), 0);
	CHECK_INT(line_reader__lineno(lr), nl);
	line_reader__free(lr);
	fclose(f);
	free(buf);
}

TEST(lines_read_error_is_eio)
{
	FILE *f = fopen("/proc/self/mem", "r"); /* reading at offset 0 fails with EIO */
	struct line_reader *lr;
	const char *l;
	size_t len;

	if (!f)
		SKIP("no /proc/self/mem");
	lr = line_reader__new(f);
	CHECK(lr);
	CHECK_INT(line_reader__next(lr, &l, &len), -EIO);
	line_reader__free(lr);
	fclose(f);
}

int main(void)
{
	return unit_run();
}
