// SPDX-License-Identifier: GPL-2.0-only
/*
 * The folded parser's line cache only guesses a line's stack, and a guess is
 * checked frame by frame. Real hashes almost never collide, so here the
 * parser is compiled with a constant line hash: every line is handed the
 * stack of some other line (a prefix of it, one with other kinds, one that
 * is longer) and must still get its own. Its text ring is small, so that
 * the text a slot points to is often another line's by then. The reference
 * is the same parser (from the library, with the real hash) fed one line at
 * a time, which never guesses.
 */
#include <stdint.h>
/* 0: every line hashes the same; 1: lines of one length hash the same. */
static int hash_by_length;
#define LINE_HASH(s, n) ((void)(s), hash_by_length ? (uint64_t)(n)*0x9e3779b97f4a7c15ULL : 0)
/* A ring of 1 KiB, a few dozen lines: texts are overwritten all the time. */
#define RING_MIN 1024u
#define RING_MAX 1024u
#define folded__parse folded__parse_colliding
#include "parse/folded.c"
#undef folded__parse
/* The header was read under the other name: the library's own, declared again. */
int folded__parse(FILE *in, struct profile *p, const struct folded_opts *opts,
		  struct parse_stats *stats);

#include "unit.h"

static const char *const names[] = {
	"main",
	"foo",
	"foo_[k]",
	"foo_[i]",
	"-",
	"",
	"[unknown]",
	"0x7f00ab",
	"[Missed User Stack]",
	"[Missed Kernel Stack]",
	"read",
	"read_[k]",
	"entry_SYSCALL_64",
	"do_syscall_64",
	"start_thread",
	"schedule",
};

/* The stack of row idx as "kind:name;...", root first. */
static void stack_str(const struct profile *p, size_t idx, char *buf, size_t size)
{
	const struct profile_row *r = profile__row_at(p, idx);
	const uint32_t *fr;
	size_t n, off = 0;

	buf[0] = '\0';
	fr = profile__stack_at(p, r->stack, &n);
	for (size_t i = 0; i < n && off < size; i++) {
		const struct profile_frame *f = profile__frame_at(p, fr[i]);

		off += snprintf(buf + off, size - off, "%s%c:%s", i ? ";" : "",
				frame_kind__letter(f->kind), f->name);
	}
}

static int parse_with(int (*parse)(FILE *, struct profile *, const struct folded_opts *,
				   struct parse_stats *),
		      const char *s, size_t len, struct profile *p)
{
	FILE *f = fmemopen((void *)s, len, "r");
	struct parse_stats st;
	int err;

	if (!f)
		return -errno;
	err = parse(f, p, NULL, &st);
	fclose(f);
	return err;
}

TEST(folded_wrong_guesses_never_change_a_stack)
{
	size_t nn = sizeof(names) / sizeof(names[0]), alen = 0;
	struct profile *a = profile__new(), *b = profile__new();
	char *all = malloc(1 << 20), line[512];
	unsigned seed = 7;

	CHECK(a && b && all);
	for (int i = 0; i < 4000; i++) {
		int len, depth;

		seed = seed * 1103515245 + 12345;
		len = snprintf(line, sizeof(line), "c%u", (seed >> 4) % 3);
		depth = (seed >> 8) % 7;
		for (int d = 0; d < depth; d++) {
			seed = seed * 1103515245 + 12345;
			/* Few names near the root: lines are often prefixes of each other. */
			len += snprintf(line + len, sizeof(line) - len, ";%s",
					names[(seed >> 16) % (d < 2 ? 3 : nn)]);
		}
		len += snprintf(line + len, sizeof(line) - len, " %d\n", i + 1);
		memcpy(all + alen, line, len);
		alen += len;
		CHECK_INT(parse_with(folded__parse, line, len, a), 0);
	}
	CHECK_INT(parse_with(folded__parse_colliding, all, alen, b), 0);
	CHECK_INT(profile__nr_frames(a), profile__nr_frames(b));
	CHECK_INT(profile__nr_stacks(a), profile__nr_stacks(b));
	CHECK_INT(profile__nr_rows(a), profile__nr_rows(b));
	for (size_t i = 0; i < profile__nr_rows(a); i++) {
		char sa[150], sb[150]; /* 6 frames of at most 24 bytes */

		stack_str(a, i, sa, sizeof(sa));
		stack_str(b, i, sb, sizeof(sb));
		CHECK_STR(sb, sa);
		CHECK_U64(profile__row_at(a, i)->w.off_ns, profile__row_at(b, i)->w.off_ns);
		CHECK_INT(profile__row_at(a, i)->thread, profile__row_at(b, i)->thread);
	}
	free(all);
	profile__free(a);
	profile__free(b);
}

/* Frames already in the profile (one with a NUL byte in its name) are found, never mistaken. */
TEST(folded_guesses_in_a_profile_with_frames_before)
{
	static const char in[] = "c;ab;x 1\nc;ab;x 2\nc;ab 3\nc;ab 4\nc;ab;x 5\n";
	struct profile *p = profile__new();
	struct parse_stats st;
	const uint32_t *fr;
	FILE *f;
	size_t n;
	int nul, ab;

	CHECK(p);
	nul = profile__frame(p, FRAME_USER, "ab\0c", 4);
	ab = profile__frame(p, FRAME_USER, "ab", 2);
	CHECK(nul == 0 && ab == 1);
	f = fmemopen((void *)in, sizeof(in) - 1, "r");
	CHECK(f);
	CHECK_INT(folded__parse_colliding(f, p, NULL, &st), 0);
	fclose(f);
	CHECK_INT(profile__nr_frames(p), 3);
	CHECK_INT(profile__nr_rows(p), 2);
	fr = profile__stack_at(p, profile__row_at(p, 0)->stack, &n);
	CHECK(n == 2 && fr[0] == (uint32_t)ab && fr[1] == 2);
	CHECK_U64(profile__row_at(p, 0)->w.off_ns, (1 + 2 + 5) * 1000);
	fr = profile__stack_at(p, profile__row_at(p, 1)->stack, &n);
	CHECK(n == 1 && fr[0] == (uint32_t)ab);
	CHECK_U64(profile__row_at(p, 1)->w.off_ns, (3 + 4) * 1000);
	profile__free(p);
}

/*
 * A slot whose text the ring has written over since is not believed, even
 * when the bytes now there are the line's: X is kept at the ring's start,
 * fillers of another length (another slot) wrap it, and a text W that starts
 * with Y lands where X was. Y has X's length (X's slot): believing the stale
 * slot would give Y the stack of X.
 */
TEST(folded_ring_text_written_over_is_not_believed)
{
	char x[33], y[33], buf[4096], *o = buf;
	struct profile *p = profile__new();
	struct parse_stats st;
	const uint32_t *fr;
	size_t n;
	FILE *f;

	CHECK(p);
	memset(x, 'x', 32);
	memset(y, 'y', 32);
	x[32] = y[32] = '\0';
	o += sprintf(o, "c;%s 1\n", x);
	/* 16 fillers of 62 bytes after X's 32: the ring's 1024, exactly. */
	for (int i = 0; i < 16; i++)
		o += sprintf(o, "c;f%02d%057d 1\n", i, 0);
	o += sprintf(o, "c;%s;zzzzz 1\n", y);
	o += sprintf(o, "c;%s 1\n", y);
	hash_by_length = 1;
	f = fmemopen(buf, o - buf, "r");
	CHECK(f);
	CHECK_INT(folded__parse_colliding(f, p, NULL, &st), 0);
	fclose(f);
	hash_by_length = 0;
	CHECK_INT(st.records, 19);
	CHECK_INT(profile__nr_rows(p), 19); /* every line its own stack */
	fr = profile__stack_at(p, profile__row_at(p, 18)->stack, &n);
	CHECK_INT(n, 1);
	CHECK_STR(profile__frame_at(p, fr[0])->name, y);
	profile__free(p);
}

/*
 * The line cache keeps what it held when it grows with the profile's stacks:
 * every line put is still found after many doublings (lines whose hashes
 * fall in sets of their own, so that none is dropped for want of room).
 */
TEST(folded_line_cache_keeps_its_lines_when_it_grows)
{
	enum { N = 20000 };
	struct folded_state fs = {.p = profile__new()};
	size_t first_slots = 0;
	uint32_t f;

	CHECK(fs.p);
	f = profile__frame(fs.p, FRAME_USER, "f", 1);
	for (uint32_t i = 0; i < N; i++) {
		uint32_t fr[2] = {f, i};
		char text[16];
		int len = snprintf(text, sizeof(text), "f;%u", i);

		if (i)
			CHECK_INT(profile__frame(fs.p, FRAME_USER, text, len), (int)i);
		CHECK_INT(profile__stack(fs.p, fr, i ? 2 : 1), (int)i);
		line_cache__put(&fs, (uint64_t)i << 1, (int)i, text, len);
		if (!first_slots)
			first_slots = fs.cache_mask + 1;
	}
	CHECK(fs.cache_mask + 1 >= 16 * first_slots); /* it grew, several times */
	for (uint32_t i = 0; i < N; i++) {
		struct line_guess g = line_cache__get(&fs, (uint64_t)i << 1);

		if (g.stack != (int)i) {
			CHECK_INT(g.stack, (int)i);
			break;
		}
	}
	bigmem__free(fs.cache, (fs.cache_mask + 1) * sizeof(*fs.cache));
	bigmem__free(fs.ring, fs.ring_size);
	profile__free(fs.p);
}

int main(void)
{
	return unit_run();
}
