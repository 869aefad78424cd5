// SPDX-License-Identifier: GPL-2.0-only
/* The push spool (push/spool.h): order, bounds, one entry per period, crash leftovers. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "push/spool.h"
#include "unit.h"

static char *new_dir(void)
{
	char tmpl[PATH_MAX];
	const char *t = getenv("TMPDIR");

	snprintf(tmpl, sizeof(tmpl), "%s/spool.XXXXXX", t && *t ? t : "/tmp");
	return strdup(mkdtemp(tmpl) ? tmpl : "");
}

static void rm_rf(const char *dir)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);
}

static struct spool *open_dir(const char *dir, uint64_t max_bytes, size_t max_entries)
{
	struct spool_opts o = {.dir = dir, .max_bytes = max_bytes, .max_entries = max_entries};
	char why[512];

	return spool__open(&o, why, sizeof(why));
}

static int put(struct spool *s, uint64_t from, const char *body)
{
	struct spool_meta m = {.from_ns = from, .until_ns = from + 10};

	snprintf(m.series, sizeof(m.series), "offcpu{host=h,n=%llu}", (unsigned long long)from);
	return spool__put(s, &m, body, strlen(body));
}

/* The oldest entry's start and body (in buf); 0 when empty. */
static uint64_t oldest(struct spool *s, char *buf, size_t len, char name[SPOOL_NAME_MAX])
{
	struct spool_meta m;
	uint8_t *body;
	size_t n;

	if (spool__oldest(s, &m, &body, &n, name))
		return 0;
	snprintf(buf, len, "%.*s", (int)n, (const char *)body);
	free(body);
	return m.from_ns;
}

static size_t queued(struct spool *s)
{
	struct spool_stats st;

	spool__stats(s, &st);
	return st.queued;
}

TEST(spool_sends_oldest_first_and_removes_what_was_sent)
{
	char *dir = new_dir(), buf[64], name[SPOOL_NAME_MAX];
	struct spool *s = open_dir(dir, 0, 0);

	CHECK(s);
	CHECK_INT(put(s, 3000000000ull, "three"), 0);
	CHECK_INT(put(s, 1000000000ull, "one"), 0);
	CHECK_INT(put(s, 2000000000ull, "two"), 0);
	CHECK_U64(oldest(s, buf, sizeof(buf), name), 1000000000ull);
	CHECK_STR(buf, "one");
	CHECK_INT(spool__sent(s, name), 0);
	CHECK_U64(oldest(s, buf, sizeof(buf), name), 2000000000ull);
	CHECK_STR(buf, "two");
	CHECK_INT(spool__sent(s, name), 0);
	CHECK_U64(oldest(s, buf, sizeof(buf), name), 3000000000ull);
	CHECK_INT(queued(s), 1);
	spool__close(s);
	rm_rf(dir);
	free(dir);
}

TEST(spool_same_period_is_one_entry_even_after_it_was_sent)
{
	char *dir = new_dir(), buf[64], name[SPOOL_NAME_MAX];
	struct spool *s = open_dir(dir, 0, 0);

	CHECK(s);
	CHECK_INT(put(s, 5, "first"), 0);
	CHECK_INT(put(s, 5, "again"), 1);
	CHECK_INT(queued(s), 1);
	CHECK_U64(oldest(s, buf, sizeof(buf), name), 5);
	CHECK_STR(buf, "first");
	CHECK_INT(spool__sent(s, name), 0);
	CHECK_INT(put(s, 5, "after"), 1);
	CHECK_INT(queued(s), 0);
	/* And across a restart: the record of what was sent is on disk. */
	spool__close(s);
	s = open_dir(dir, 0, 0);
	CHECK(s);
	CHECK_INT(put(s, 5, "restart"), 1);
	CHECK_INT(queued(s), 0);
	spool__close(s);
	rm_rf(dir);
	free(dir);
}

TEST(spool_keeps_entries_across_restarts_in_order)
{
	char *dir = new_dir(), buf[64], name[SPOOL_NAME_MAX];
	struct spool *s = open_dir(dir, 0, 0);

	CHECK(s);
	CHECK_INT(put(s, 20, "b"), 0);
	CHECK_INT(put(s, 10, "a"), 0);
	spool__close(s);
	s = open_dir(dir, 0, 0);
	CHECK(s);
	CHECK_INT(queued(s), 2);
	CHECK_U64(oldest(s, buf, sizeof(buf), name), 10);
	CHECK_STR(buf, "a");
	CHECK_STR(name, "00000000000000000010.push");
	spool__close(s);
	rm_rf(dir);
	free(dir);
}

TEST(spool_full_by_entries_drops_the_oldest_and_counts_them)
{
	char *dir = new_dir(), buf[64], name[SPOOL_NAME_MAX];
	struct spool *s = open_dir(dir, 0, 2);
	struct spool_stats st;

	CHECK(s);
	CHECK_INT(put(s, 1, "a"), 0);
	CHECK_INT(put(s, 2, "b"), 0);
	CHECK_INT(put(s, 3, "c"), 0);
	spool__stats(s, &st);
	CHECK_INT(st.queued, 2);
	CHECK_U64(st.dropped, 1);
	CHECK_U64(oldest(s, buf, sizeof(buf), name), 2);
	spool__close(s);
	/* The count is kept in the spool. */
	s = open_dir(dir, 0, 2);
	CHECK(s);
	spool__stats(s, &st);
	CHECK_U64(st.dropped, 1);
	CHECK_INT(st.queued, 2);
	spool__close(s);
	rm_rf(dir);
	free(dir);
}

TEST(spool_full_by_bytes_drops_the_oldest_and_refuses_what_cannot_fit)
{
	char *dir = new_dir(), body[1001], name[SPOOL_NAME_MAX], buf[8];
	struct spool *s;
	struct spool_stats st;

	memset(body, 'x', 1000);
	body[1000] = 0;
	/* Room for two entries of about 1100 bytes (header included), not three. */
	s = open_dir(dir, 2500, 0);
	CHECK(s);
	CHECK_INT(put(s, 1, body), 0);
	CHECK_INT(put(s, 2, body), 0);
	CHECK_INT(put(s, 3, body), 0);
	spool__stats(s, &st);
	CHECK_INT(st.queued, 2);
	CHECK(st.queued_bytes <= 2500);
	CHECK_U64(st.dropped, 1);
	CHECK_U64(oldest(s, buf, sizeof(buf), name), 2);
	spool__close(s);
	s = open_dir(dir, 500, 0);
	CHECK(s);
	CHECK_INT(put(s, 9, body), -EFBIG);
	spool__stats(s, &st);
	CHECK_U64(st.dropped, 2);
	spool__close(s);
	rm_rf(dir);
	free(dir);
}

TEST(spool_ignores_and_removes_half_written_entries)
{
	char *dir = new_dir(), path[PATH_MAX], buf[64], name[SPOOL_NAME_MAX];
	struct spool *s;
	FILE *f;

	/* What a crash in the middle of spool__put leaves behind. */
	snprintf(path, sizeof(path), "%s/.tmp-00000000000000000007.push.123", dir);
	f = fopen(path, "w");
	CHECK(f);
	fputs("offcpu-push-entry 1\nfrom_ns 7\n", f);
	fclose(f);
	s = open_dir(dir, 0, 0);
	CHECK(s);
	CHECK_INT(queued(s), 0);
	CHECK(access(path, F_OK) != 0);
	CHECK_U64(oldest(s, buf, sizeof(buf), name), 0);
	spool__close(s);
	rm_rf(dir);
	free(dir);
}

TEST(spool_moves_an_entry_cut_short_to_failed)
{
	char *dir = new_dir(), path[PATH_MAX], buf[64], name[SPOOL_NAME_MAX];
	struct spool *s = open_dir(dir, 0, 0);
	struct spool_stats st;
	FILE *f;

	CHECK(s);
	CHECK_INT(put(s, 8, "good"), 0);
	spool__close(s);
	/* An entry whose body is shorter than its header says. */
	snprintf(path, sizeof(path), "%s/00000000000000000004.push", dir);
	f = fopen(path, "w");
	CHECK(f);
	fputs("offcpu-push-entry 1\nfrom_ns 4\nuntil_ns 5\nseries a{}\nsize 100\n\nshort", f);
	fclose(f);
	s = open_dir(dir, 0, 0);
	CHECK(s);
	CHECK_U64(oldest(s, buf, sizeof(buf), name), 8);
	CHECK_STR(buf, "good");
	spool__stats(s, &st);
	CHECK_U64(st.failed, 1);
	CHECK_INT(st.queued, 1);
	snprintf(path, sizeof(path), "%s/failed/00000000000000000004.push", dir);
	CHECK(access(path, F_OK) == 0);
	spool__close(s);
	rm_rf(dir);
	free(dir);
}

TEST(spool_reject_moves_aside_and_counts)
{
	char *dir = new_dir(), path[PATH_MAX], buf[64], name[SPOOL_NAME_MAX];
	struct spool *s = open_dir(dir, 0, 0);
	struct spool_stats st;

	CHECK(s);
	CHECK_INT(put(s, 1, "a"), 0);
	CHECK_INT(put(s, 2, "b"), 0);
	CHECK_U64(oldest(s, buf, sizeof(buf), name), 1);
	CHECK_INT(spool__reject(s, name), 0);
	CHECK_U64(oldest(s, buf, sizeof(buf), name), 2);
	spool__stats(s, &st);
	CHECK_U64(st.failed, 1);
	snprintf(path, sizeof(path), "%s/failed/00000000000000000001.push", dir);
	CHECK(access(path, F_OK) == 0);
	spool__close(s);
	rm_rf(dir);
	free(dir);
}

TEST(spool_entry_recorded_as_sent_before_a_crash_is_not_sent_again)
{
	char *dir = new_dir(), path[PATH_MAX], buf[64], name[SPOOL_NAME_MAX];
	struct spool *s = open_dir(dir, 0, 0);
	FILE *f;

	CHECK(s);
	CHECK_INT(put(s, 1, "a"), 0);
	CHECK_INT(put(s, 2, "b"), 0);
	spool__close(s);
	/* The server's 2xx was recorded, then the process died before the unlink. */
	snprintf(path, sizeof(path), "%s/sent", dir);
	f = fopen(path, "a");
	CHECK(f);
	fputs("00000000000000000001.push\n", f);
	fclose(f);
	s = open_dir(dir, 0, 0);
	CHECK(s);
	CHECK_INT(queued(s), 1);
	CHECK_U64(oldest(s, buf, sizeof(buf), name), 2);
	snprintf(path, sizeof(path), "%s/00000000000000000001.push", dir);
	CHECK(access(path, F_OK) != 0);
	spool__close(s);
	rm_rf(dir);
	free(dir);
}

TEST(spool_is_used_by_one_process_at_a_time)
{
	char *dir = new_dir();
	struct spool *a = open_dir(dir, 0, 0), *b;

	CHECK(a);
	b = open_dir(dir, 0, 0);
	CHECK(!b);
	CHECK_INT(errno, EBUSY);
	spool__close(a);
	b = open_dir(dir, 0, 0);
	CHECK(b);
	spool__close(b);
	rm_rf(dir);
	free(dir);
}

int main(void)
{
	return unit_run();
}
