// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>

#include "output/profile_text.h"
#include "parse/folded.h"
#include "parse/profile_text.h"
#include "unit.h"

#define W(c, o, r) (&(struct profile_weight){.count = (c), .off_ns = (o), .runq_ns = (r)})

/* Write p into a malloc'ed string (caller frees); NULL on error. */
static char *write_str(const struct profile *p, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		return NULL;
	if (profile_text__write(f, p)) {
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	return buf;
}

static int read_str(const char *s, struct profile *p, struct parse_stats *st)
{
	FILE *f = unit_memfile(s);
	int err;

	if (!f)
		return -errno;
	err = profile_text__parse(f, p, st);
	fclose(f);
	return err;
}

/* A profile with every feature the format must carry, names chosen to need escapes. */
static struct profile *tricky_profile(void)
{
	struct profile *p = profile__new();
	static char big[100001];
	uint32_t fr[6];
	int s0, s1, s2, t0, t1, t2;
	struct profile_thread_time tt = {
		.wall_ns = UINT64_MAX, .oncpu_ns = 7, .runq_ns = 0, .idle_exit_ns = 5};

	if (!p)
		return NULL;
	memset(big, 'z', sizeof(big) - 1);
	fr[0] = profile__frame(p, FRAME_USER, "main", 4);
	fr[1] = profile__frame(p, FRAME_USER, "std::map<int, int>::find(int const&) const",
			       strlen("std::map<int, int>::find(int const&) const"));
	fr[2] = profile__frame(p, FRAME_USER,
			       "a\\s b\tc\nd\re\x01"
			       "f\x7f"
			       "g",
			       15);
	fr[3] = profile__frame(p, FRAME_KERNEL, "schedule", 8);
	fr[4] = profile__frame(p, FRAME_MISSING, "[Missed User Stack]", 19);
	fr[5] = profile__frame(p, FRAME_USER, big, sizeof(big) - 1);
	profile__frame(p, FRAME_KERNEL, "main", 4); /* same name, other kind: its own frame */
	profile__frame(p, FRAME_USER, "unused \xc3\xa9", 9);
	s0 = profile__stack(p, fr, 4);
	s1 = profile__stack(p, NULL, 0);
	s2 = profile__stack(p, fr + 3, 3);
	t0 = profile__thread(p, 10, 11, "Web Content");
	t1 = profile__thread(p, 0, 0, "");
	t2 = profile__thread(p, -1, INT32_MIN, "x\ny z\\");
	profile__set_thread_time(p, t2, &tt);
	profile__set_thread_time(p, t0, &(struct profile_thread_time){1, 2, 3});
	profile__set_runq_known(p, true);
	profile__add(p, t0, s0, OFFCPU_STATE_SLEEP, W(3, 300, 30));
	profile__add(p, t1, s1, OFFCPU_STATE_UNKNOWN, W(1, 0, 0));
	profile__add(p, t2, s2, OFFCPU_STATE_PREEMPT, W(2, 50, 50));
	profile__add(p, t0, s0, OFFCPU_STATE_DISK, W(1, UINT64_MAX / 2, 0));
	profile__add(p, t0, s2, OFFCPU_STATE_OTHER, W(UINT64_MAX / 2, 1, 1));
	return p;
}

static void check_same(const struct profile *a, const struct profile *b, const char **why)
{
	*why = NULL;
	if (profile__nr_frames(a) != profile__nr_frames(b) ||
	    profile__nr_stacks(a) != profile__nr_stacks(b) ||
	    profile__nr_threads(a) != profile__nr_threads(b) ||
	    profile__nr_rows(a) != profile__nr_rows(b)) {
		*why = "counts differ";
		return;
	}
	if (profile__runq_known(a) != profile__runq_known(b))
		*why = "runq_known differs";
	for (uint32_t i = 0; i < profile__nr_frames(a) && !*why; i++) {
		const struct profile_frame *x = profile__frame_at(a, i),
					   *y = profile__frame_at(b, i);

		if (x->kind != y->kind || strcmp(x->name, y->name))
			*why = "a frame differs";
	}
	for (uint32_t i = 0; i < profile__nr_stacks(a) && !*why; i++) {
		size_t n, m;
		const uint32_t *x = profile__stack_at(a, i, &n), *y = profile__stack_at(b, i, &m);

		if (n != m || (n && memcmp(x, y, n * sizeof(*x))))
			*why = "a stack differs";
	}
	for (uint32_t i = 0; i < profile__nr_threads(a) && !*why; i++) {
		const struct profile_thread *x = profile__thread_at(a, i),
					    *y = profile__thread_at(b, i);
		const struct profile_thread_time *tx = profile__thread_time(a, i);
		const struct profile_thread_time *ty = profile__thread_time(b, i);

		if (x->pid != y->pid || x->tid != y->tid || strcmp(x->comm, y->comm))
			*why = "a thread differs";
		else if (!tx != !ty || (tx && memcmp(tx, ty, sizeof(*tx))))
			*why = "a thread time differs";
	}
	for (size_t i = 0; i < profile__nr_rows(a) && !*why; i++) {
		const struct profile_row *x = profile__row_at(a, i), *y = profile__row_at(b, i);

		if (x->thread != y->thread || x->stack != y->stack || x->state != y->state ||
		    memcmp(&x->w, &y->w, sizeof(x->w)))
			*why = "a row differs";
	}
	if (!*why && memcmp(profile__totals(a), profile__totals(b), sizeof(struct profile_totals)))
		*why = "totals differ";
}

TEST(profile_text_round_trip_is_lossless)
{
	struct profile *a = tricky_profile(), *b = profile__new();
	struct parse_stats st;
	char *text, *again;
	size_t len, len2;
	const char *why;

	CHECK(a && b);
	text = write_str(a, &len);
	CHECK(text);
	CHECK(!strncmp(text, "# offcpu profile v1\nrunq_known 1\n", 33));
	CHECK_INT(read_str(text, b, &st), 0);
	CHECK_INT(st.malformed, 0);
	CHECK_INT(st.records, 5);
	check_same(a, b, &why);
	if (why)
		UNIT_FAIL("%s", why);
	/* Writing what was read gives the same bytes. */
	again = write_str(b, &len2);
	CHECK(again);
	CHECK_INT(len2, len);
	CHECK(!memcmp(text, again, len));
	free(text);
	free(again);
	profile__free(a);
	profile__free(b);
}

TEST(profile_text_keeps_inlined_frames)
{
	struct profile *a = profile__new(), *b = profile__new();
	struct parse_stats st;
	uint32_t fr[3];
	const uint32_t *got;
	char *text;
	size_t len, n;
	int s, t;

	CHECK(a && b);
	fr[0] = profile__frame(a, FRAME_USER, "main", 4);
	fr[1] = profile__frame(a, FRAME_INLINE, "helper", 6);
	fr[2] = profile__frame(a, FRAME_USER, "helper", 6);
	s = profile__stack(a, fr, 3);
	t = profile__thread(a, 1, 1, "app");
	CHECK_INT(profile__add(a, t, s, OFFCPU_STATE_SLEEP, W(1, 10, 0)), 0);
	text = write_str(a, &len);
	CHECK(text);
	CHECK_CONTAINS(text, "\nframe 1 i helper\n");
	CHECK_CONTAINS(text, "\nframe 2 u helper\n");
	CHECK_INT(read_str(text, b, &st), 0);
	CHECK_INT(st.malformed, 0);
	got = profile__stack_at(b, 0, &n);
	CHECK_INT(n, 3);
	CHECK_INT(profile__frame_at(b, got[1])->kind, FRAME_INLINE);
	CHECK_INT(profile__frame_at(b, got[2])->kind, FRAME_USER);
	free(text);
	profile__free(a);
	profile__free(b);
}

TEST(profile_text_escapes_names)
{
	struct profile *p = profile__new();
	char *text;
	size_t len;

	CHECK(p);
	profile__frame(p, FRAME_KERNEL, "a b\\c\nd\x01", 8);
	profile__thread(p, 1, 2, "Web Content");
	text = write_str(p, &len);
	CHECK(text);
	CHECK(strstr(text, "\nframe 0 k a\\sb\\\\c\\nd\\x01\n") != NULL);
	CHECK(strstr(text, "\nthread 0 1 2 Web\\sContent\n") != NULL);
	CHECK(strstr(text, "\nend 0 0 0 0\n") != NULL);
	free(text);
	profile__free(p);
}

TEST(profile_text_round_trip_of_parsed_folded)
{
	const char *folded = "sleep;main;entry_SYSCALL_64;schedule 10\n"
			     "my app;[Missed User Stack];schedule 5\n";
	struct profile *a = profile__new(), *b = profile__new();
	struct parse_stats st;
	const char *why;
	char *text;
	size_t len;
	FILE *f;

	CHECK(a && b);
	f = unit_memfile(folded);
	CHECK_INT(folded__parse(f, a, NULL, &st), 0);
	fclose(f);
	text = write_str(a, &len);
	CHECK(text);
	CHECK_INT(read_str(text, b, &st), 0);
	check_same(a, b, &why);
	if (why)
		UNIT_FAIL("%s", why);
	CHECK(!profile__runq_known(b));
	free(text);
	profile__free(a);
	profile__free(b);
}

TEST(profile_text_rejects_other_files)
{
	struct profile *p = profile__new();
	struct parse_stats st;

	CHECK(p);
	CHECK_INT(read_str("sleep;main 5\n", p, &st), -EINVAL);
	CHECK_INT(st.first_malformed_line, 1);
	CHECK_INT(read_str("# offcpu profile v2\nend 0 0 0 0\n", p, &st), -EINVAL);
	CHECK_INT(read_str("", p, &st), -EINVAL);
	CHECK_INT(st.lines, 0);
	CHECK_INT(profile__nr_frames(p), 0);
	profile__free(p);
}

TEST(profile_text_detects_truncation)
{
	struct profile *p = profile__new();
	struct parse_stats st;
	const char *whole = "# offcpu profile v1\nframe 0 u main\nstack 0 0\nthread 0 1 1 a\n"
			    "row 0 0 S 1 5 0\nrow 0 0 D 2 7 0\nend 2 3 12 0\n";
	char cut[256];
	int err;

	CHECK(p);
	CHECK_INT(read_str(whole, p, &st), 0);
	profile__free(p);
	/* Cut anywhere before the end line's last digit: always an error, never a shorter profile.
	 */
	for (size_t n = 0; n + 2 < strlen(whole); n++) {
		p = profile__new();
		CHECK(p);
		snprintf(cut, sizeof(cut), "%.*s", (int)n, whole);
		err = read_str(cut, p, &st);

		profile__free(p);
		if (err != -EBADMSG && err != -EINVAL) {
			UNIT_FAIL("cut at byte %zu: %d, want -EBADMSG", n, err);
			return;
		}
		if (err == -EBADMSG &&
		    (!st.error_line || strncmp(st.error_reason, "truncated", 9))) {
			UNIT_FAIL("cut at byte %zu: line %zu, reason '%s'", n, st.error_line,
				  st.error_reason);
			return;
		}
	}

	p = profile__new();
	CHECK(p);
	CHECK_INT(read_str("# offcpu profile v1\nframe 0 u main\nstack 0 0\nthread 0 1 1 a\n"
			   "row 0 0 S 1 5 0\n",
			   p, &st),
		  -EBADMSG);
	CHECK_INT(st.records, 1);
	CHECK_INT(st.malformed, 0);
	CHECK_INT(st.error_line, 5);
	CHECK(!strncmp(st.error_reason, "truncated:", 10));
	profile__free(p);

	p = profile__new();
	CHECK(p);
	CHECK_INT(read_str("# offcpu profile v1\r\nframe 0 u main\r\nstack 0 0\r\n"
			   "thread 0 1 1 a\r\nrow 0 0 S 1 5 0\r\nend 2 2 10 0\r\n",
			   p, &st),
		  -EBADMSG);
	CHECK_INT(st.error_line, 6);
	CHECK(!strncmp(st.error_reason, "truncated or damaged:", 21));
	profile__free(p);
}

TEST(profile_text_malformed_records_are_counted)
{
	struct profile *p = profile__new();
	struct parse_stats st;
	const char *in = "# offcpu profile v1\n"
			 "# a comment\n"
			 "frame 0 u main\n"
			 "frame 1 x bad_kind\n"	    /* 4 */
			 "frame 2 u bad\\qescape\n" /* 5 */
			 "frame 3 u two words\n"    /* 6 */
			 "frame 0 u again\n"	    /* 7: defined twice */
			 "stack 0 0\n"
			 "stack 1 0 9\n" /* 9: unknown frame */
			 "thread 0 5 6 a\\sb\n"
			 "time 7 1 2 3\n"    /* 11: unknown thread */
			 "row 0 0 Z 1 1 0\n" /* 12: bad state */
			 "row 0 0 S 1 1 2\n" /* 13: runq > off */
			 "row 0 1 S 1 1 0\n" /* 14: unknown stack (its line was bad) */
			 "row 0 0 S x 1 0\n" /* 15 */
			 "bogus 1 2\n"	     /* 16 */
			 "row 0 0 S 2 20 10\n"
			 "end 1 2 20 10\n"
			 "row 0 0 S 1 1 0\n"; /* 19: after the end */

	CHECK(p);
	CHECK_INT(read_str(in, p, &st), 0);
	CHECK_INT(st.lines, 19);
	CHECK_INT(st.records, 1);
	CHECK_INT(st.malformed, 12);
	CHECK_INT(st.first_malformed_line, 4);
	CHECK_STR(st.first_malformed_reason, "bad frame kind");
	CHECK_STR(profile__thread_at(p, 0)->comm, "a b");
	CHECK_INT(profile__thread_at(p, 0)->pid, 5);
	CHECK_U64(profile__totals(p)->all.off_ns, 20);
	CHECK_U64(profile__totals(p)->all.runq_ns, 10);
	profile__free(p);
}

/* The idle-exit field came later: optional, and never above the on-CPU time. */
TEST(profile_text_thread_time_idle_exit_is_optional)
{
	struct profile *p = profile__new();
	struct parse_stats st;
	const char *in = "# offcpu profile v1\n"
			 "thread 0 5 5 a\n"
			 "thread 1 5 6 b\n"
			 "thread 2 5 7 c\n"
			 "time 0 10 4 1 3\n"
			 "time 1 10 4 1\n"
			 "time 2 10 4 1 5\n" /* 7: above on-CPU */
			 "end 0 0 0 0\n";

	CHECK(p);
	CHECK_INT(read_str(in, p, &st), 0);
	CHECK_INT(st.malformed, 1);
	CHECK_INT(st.first_malformed_line, 7);
	CHECK_STR(st.first_malformed_reason, "idle exit time above on-CPU time");
	CHECK_U64(profile__thread_time(p, 0)->idle_exit_ns, 3);
	CHECK_U64(profile__thread_time(p, 0)->oncpu_ns, 4);
	CHECK_U64(profile__thread_time(p, 1)->idle_exit_ns, 0);
	CHECK(!profile__thread_time(p, 2));
	profile__free(p);
}

TEST(profile_text_overflow_is_fatal)
{
	struct profile *p = profile__new();
	struct parse_stats st;

	CHECK(p);
	CHECK_INT(read_str("# offcpu profile v1\nframe 0 u f\nstack 0 0\nthread 0 0 0\n"
			   "row 0 0 S 1 18446744073709551615 0\nrow 0 0 D 1 1 0\nend 2 2 0 0\n",
			   p, &st),
		  -EOVERFLOW);
	CHECK_INT(st.error_line, 6);
	CHECK_INT(st.records, 1);
	CHECK_INT(read_str("# offcpu profile v1\nrow 0 0 S 18446744073709551616 1 0\n", p, &st),
		  -EOVERFLOW);
	CHECK_INT(st.error_line, 2);
	profile__free(p);
}

TEST(profile_text_merges_into_a_profile_with_data)
{
	struct profile *a = tricky_profile(), *m = profile__new();
	struct parse_stats st;
	char *text;
	size_t len;

	CHECK(a && m);
	text = write_str(a, &len);
	CHECK(text);
	/* Something else first, so the file's ids are not the profile's. */
	profile__frame(m, FRAME_USER, "other", 5);
	profile__stack(m, NULL, 0);
	profile__thread(m, 99, 99, "other");
	profile__add(m, 0, 0, OFFCPU_STATE_SLEEP, W(1, 1, 0));
	CHECK_INT(read_str(text, m, &st), 0);
	CHECK_INT(st.malformed, 0);
	/* runq_known: the earlier rows did not split run-queue time */
	CHECK(!profile__runq_known(m));
	CHECK_U64(profile__totals(m)->all.off_ns, profile__totals(a)->all.off_ns + 1);
	CHECK_INT(profile__nr_rows(m), profile__nr_rows(a) + 1);
	/* Reading the same file again sums into the same rows. */
	CHECK_INT(read_str(text, m, &st), -EOVERFLOW);
	free(text);
	profile__free(a);
	profile__free(m);
}

int main(void)
{
	return unit_run();
}
