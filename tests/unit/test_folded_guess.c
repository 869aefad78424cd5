// SPDX-License-Identifier: GPL-2.0-only
/*
 * The folded parser's line cache only guesses a line's stack, and a guess is
 * checked frame by frame. Real hashes almost never collide, so here the
 * parser is compiled with a constant line hash: every line is handed the
 * stack of some other line (a prefix of it, one with other kinds, one that
 * is longer) and must still get its own. The reference is the same parser
 * (from the library, with the real hash) fed one line at a time, which
 * never guesses.
 */
#define LINE_HASH(s, n) ((void)(s), (void)(n), (uint64_t)0)
#define folded__parse folded__parse_colliding
#include "parse/folded.c"
#undef folded__parse
/* The header was read under the other name: the library's own, declared again. */
int folded__parse(FILE *in, struct profile *p, const struct folded_opts *opts,
		  struct parse_stats *stats);

#include "unit.h"

static const char *const names[] = {
	"main",	 "foo",	       "foo_[k]",	"foo_[i]",	       "-",
	"",	 "[unknown]",  "0x7f00ab",	"[Missed User Stack]", "[Missed Kernel Stack]",
	"read",	 "read_[k]",   "entry_SYSCALL_64", "do_syscall_64",     "start_thread",
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

int main(void)
{
	return unit_run();
}
