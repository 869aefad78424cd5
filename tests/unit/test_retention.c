// SPDX-License-Identifier: GPL-2.0-only
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "lane/retention.h"
#include "unit.h"

#define S 1000000000ULL
#define MIB (1ULL << 20)
/* 2026-12-03T10:15:00Z */
#define T0 (1796292900ULL * S)

static char base[64];

static void new_base(void)
{
	snprintf(base, sizeof(base), "%s/offcpu-ret.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(base))
		base[0] = '\0';
}

static bool exists(const char *name)
{
	char p[PATH_MAX];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", base, name);
	return !lstat(p, &st);
}

static int write_bytes(const char *path, uint64_t n)
{
	static char buf[65536];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		return -1;
	for (uint64_t done = 0; done < n;) {
		size_t k = n - done < sizeof(buf) ? (size_t)(n - done) : sizeof(buf);

		memset(buf, 'x', k);
		if (write(fd, buf, k) != (ssize_t)k) {
			close(fd);
			return -1;
		}
		done += k;
	}
	return close(fd);
}

/* A period as record writes it: a directory with a summary and a profile of payload bytes. */
static int make_period(uint64_t start, uint64_t payload, char *name)
{
	char p[PATH_MAX];

	if (period__name(name, PERIOD_NAME_LEN, start))
		return -1;
	snprintf(p, sizeof(p), "%s/%s", base, name);
	if (mkdir(p, 0755))
		return -1;
	snprintf(p, sizeof(p), "%s/%s/offcpu.summary.json", base, name);
	if (write_bytes(p, 100))
		return -1;
	snprintf(p, sizeof(p), "%s/%s/offcpu.profile.txt", base, name);
	return write_bytes(p, payload);
}

static int count_lines(const char *text, const char *needle)
{
	int n = 0;

	for (const char *s = text; (s = strstr(s, needle)); s += strlen(needle))
		n++;
	return n;
}

static int prune(uint64_t max_age, uint64_t max_bytes, uint64_t now, struct retention_stats *st,
		 char **log)
{
	struct retention r = {.max_age_ns = max_age, .max_bytes = max_bytes};
	size_t len = 0;
	FILE *f = open_memstream(log, &len);
	int err;

	err = retention__prune_path(base, &r, now, f, st);
	fclose(f);
	return err;
}

TEST(period_name_round_trips)
{
	char name[PERIOD_NAME_LEN];
	uint64_t ns = 0;

	CHECK_INT(period__name(name, sizeof(name), T0 + 999999999ULL), 0);
	CHECK_STR(name, "2026-12-03T10:15:00Z");
	CHECK_INT(period__parse_name(name, &ns), 0);
	CHECK_U64(ns, T0);
	CHECK_INT(period__name(name, 20, T0), -ENAMETOOLONG);
	CHECK_INT(period__parse_name("1970-01-01T00:00:00Z", &ns), 0);
	CHECK_U64(ns, 0);
	CHECK_INT(period__parse_staged_name(".2026-12-03T10:15:00Z.new", &ns), 0);
	CHECK_U64(ns, T0);
}

TEST(period_name_parse_is_strict)
{
	static const char *const bad[] = {
		"2026-02-30T00:00:00Z",
		"2026-12-03T24:00:00Z",
		"2026-12-03T23:59:60Z",
		"2026-13-01T00:00:00Z",
		"2026-12-03T10:15:00",
		"2026-12-03T10:15:00z",
		"2026-12-03 10:15:00Z",
		"2026-12-03T10:15:00Z.new",
		"+026-12-03T10:15:00Z",
		"2026-12-3T10:15:00ZZ",
		"",
		"1969-12-31T23:59:59Z",
		".2026-12-03T10:15:00Z",
		"2026-12-03T10:15:00Z ",
	};
	uint64_t ns = 42;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (!period__parse_name(bad[i], &ns))
			UNIT_FAIL("'%s' parsed as a period name", bad[i]);
	CHECK_U64(ns, 42);
	CHECK(period__parse_staged_name("2026-12-03T10:15:00Z.new", &ns));
	CHECK(period__parse_staged_name(".2026-12-03T10:15:00Z", &ns));
	CHECK(period__parse_staged_name(".2026-02-30T10:15:00Z.new", &ns));
}

TEST(prune_by_age_keeps_younger)
{
	struct retention_stats st;
	char n[4][PERIOD_NAME_LEN], *log = NULL;
	uint64_t now = T0 + 4 * 3600 * S;

	new_base();
	for (int i = 0; i < 4; i++)
		CHECK_INT(make_period(T0 + (uint64_t)i * 3600 * S, 4096, n[i]), 0);
	/* Started 4h, 3h, 2h, 1h ago; --keep 150m. */
	CHECK_INT(prune(150 * 60 * S, 0, now, &st, &log), 0);
	CHECK(!exists(n[0]));
	CHECK(!exists(n[1]));
	CHECK(exists(n[2]));
	CHECK(exists(n[3]));
	CHECK_INT(st.periods, 4);
	CHECK_INT(st.removed_age, 2);
	CHECK_INT(st.removed_size, 0);
	CHECK_INT(count_lines(log, "retention: removed"), 2);
	CHECK_CONTAINS(log, "removed 2026-12-03T10:15:00Z (started 4h ago, more than --keep 2.5h)");
	CHECK_CONTAINS(log, "removed 2026-12-03T11:15:00Z (started 3h ago, more than --keep 2.5h)");
	free(log);
	/* Ages are said in their two largest units, to the second. */
	log = NULL;
	CHECK_INT(prune(3600 * S, 0, now + 65 * S, &st, &log), 0);
	CHECK_CONTAINS(log,
		       "removed 2026-12-03T12:15:00Z (started 2h 1m ago, more than --keep 1h)");
	free(log);
	CHECK_INT(make_period(now, 10, n[0]), 0);
	log = NULL;
	CHECK_INT(prune(60 * S, 0, T0 + 3 * 3600 * S + 3 * 86400 * S + 2 * 3600 * S, &st, &log), 0);
	CHECK_CONTAINS(log,
		       "removed 2026-12-03T13:15:00Z (started 3d 2h ago, more than --keep 1m)");
	CHECK(exists(n[0]));
	free(log);
	CHECK_INT(make_period(now + 200 * S, 10, n[1]), 0);
	log = NULL;
	CHECK_INT(prune(60 * S, 0, now + 259 * S, &st, &log), 0);
	CHECK_CONTAINS(log, "(started 4m 19s ago, more than --keep 1m)");
	CHECK(exists(n[1]));
	free(log);
	/* Again: nothing more to do, nothing said. */
	log = NULL;
	CHECK_INT(prune(60 * S, 0, now + 259 * S, &st, &log), 0);
	CHECK_INT(st.periods, 1);
	CHECK_STR(log, "");
	free(log);
}

TEST(prune_never_removes_the_newest)
{
	struct retention_stats st;
	char n[3][PERIOD_NAME_LEN], *log = NULL;

	new_base();
	for (int i = 0; i < 3; i++)
		CHECK_INT(make_period(T0 + (uint64_t)i * 60 * S, MIB, n[i]), 0);
	/* Everything is older than 1s and beyond 1 byte: only the newest stays. */
	CHECK_INT(prune(S, 1, T0 + 86400 * S, &st, &log), 0);
	CHECK(!exists(n[0]));
	CHECK(!exists(n[1]));
	CHECK(exists(n[2]));
	CHECK_INT(st.removed_age, 2);
	CHECK(st.bytes_kept >= MIB);
	free(log);
}

TEST(prune_by_size_oldest_first)
{
	struct retention_stats st;
	char n[4][PERIOD_NAME_LEN], *log = NULL;

	new_base();
	/* Created newest first: the order comes from the names, not from the disk. */
	for (int i = 3; i >= 0; i--)
		CHECK_INT(make_period(T0 + (uint64_t)i * 60 * S, MIB, n[i]), 0);
	CHECK_INT(prune(0, 2 * MIB + MIB / 2, T0 + 3600 * S, &st, &log), 0);
	CHECK(!exists(n[0]));
	CHECK(!exists(n[1]));
	CHECK(exists(n[2]));
	CHECK(exists(n[3]));
	CHECK_INT(st.removed_size, 2);
	CHECK_INT(st.removed_age, 0);
	CHECK(st.bytes_kept <= 2 * MIB + MIB / 2);
	CHECK(st.bytes_removed >= 2 * MIB);
	CHECK_INT(count_lines(log, "more than --keep-size 2.5M"), 2);
	free(log);
}

TEST(prune_by_age_then_size)
{
	struct retention_stats st;
	char n[4][PERIOD_NAME_LEN], *log = NULL;

	new_base();
	for (int i = 0; i < 4; i++)
		CHECK_INT(make_period(T0 + (uint64_t)i * 3600 * S, MIB, n[i]), 0);
	/* Age takes the first; the three left are over 2.5M: size takes the second. */
	CHECK_INT(prune(3 * 3600 * S + 1, 2 * MIB + MIB / 2, T0 + 4 * 3600 * S, &st, &log), 0);
	CHECK(!exists(n[0]));
	CHECK(!exists(n[1]));
	CHECK(exists(n[2]));
	CHECK(exists(n[3]));
	CHECK_INT(st.removed_age, 1);
	CHECK_INT(st.removed_size, 1);
	free(log);
}

TEST(prune_leaves_what_is_not_a_period)
{
	char n[PERIOD_NAME_LEN], newest[PERIOD_NAME_LEN], p[PATH_MAX], outside[64], *log = NULL;
	struct retention_stats st;
	struct stat sb;

	new_base();
	snprintf(outside, sizeof(outside), "%s/offcpu-out.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	CHECK(mkdtemp(outside));
	snprintf(p, sizeof(p), "%s/offcpu.summary.json", outside);
	CHECK_INT(write_bytes(p, 10), 0);
	snprintf(p, sizeof(p), "%s/precious", outside);
	CHECK_INT(write_bytes(p, 10), 0);

	CHECK_INT(make_period(T0 + 86400 * S, 10, newest), 0);
	/* A symlink named like an old period, to a directory that looks like one. */
	snprintf(p, sizeof(p), "%s/2026-12-01T00:00:00Z", base);
	CHECK_INT(symlink(outside, p), 0);
	/* A file named like a period. */
	snprintf(p, sizeof(p), "%s/2026-12-01T00:01:00Z", base);
	CHECK_INT(write_bytes(p, 10), 0);
	/* A directory named like a period without a summary. */
	snprintf(p, sizeof(p), "%s/2026-12-01T00:02:00Z", base);
	CHECK_INT(mkdir(p, 0755), 0);
	/* A directory whose summary is a symlink, not a file. */
	snprintf(p, sizeof(p), "%s/2026-12-01T00:03:00Z", base);
	CHECK_INT(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/2026-12-01T00:03:00Z/offcpu.summary.json", base);
	CHECK_INT(symlink("/etc/hostname", p), 0);
	/* Names that are not periods, holding a summary. */
	static const char *const junk[] = {"notes", "2026-12-01T00:04:00Z.bak",
					   "2026-02-30T00:00:00Z", "2026-12-01t00:05:00z"};
	for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", base, junk[i]);
		CHECK_INT(mkdir(p, 0755), 0);
		snprintf(p, sizeof(p), "%s/%s/offcpu.summary.json", base, junk[i]);
		CHECK_INT(write_bytes(p, 10), 0);
	}
	/* A real old period holding a symlink out of it: the link goes, not its target. */
	CHECK_INT(make_period(T0, 10, n), 0);
	snprintf(p, sizeof(p), "%s/%s/link", base, n);
	CHECK_INT(symlink(outside, p), 0);

	CHECK_INT(prune(3600 * S, 1, T0 + 2 * 86400 * S, &st, &log), 0);
	CHECK(!exists(n));
	CHECK(exists(newest));
	CHECK(exists("2026-12-01T00:00:00Z"));
	CHECK(exists("2026-12-01T00:01:00Z"));
	CHECK(exists("2026-12-01T00:02:00Z"));
	CHECK(exists("2026-12-01T00:03:00Z"));
	for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++)
		CHECK(exists(junk[i]));
	snprintf(p, sizeof(p), "%s/precious", outside);
	CHECK_INT(lstat(p, &sb), 0);
	snprintf(p, sizeof(p), "%s/offcpu.summary.json", outside);
	CHECK_INT(lstat(p, &sb), 0);
	snprintf(p, sizeof(p), "/etc/hostname");
	CHECK_INT(stat(p, &sb), 0);
	CHECK_INT(st.periods, 2);
	CHECK_INT(st.left_alone, 4);
	CHECK_CONTAINS(log, "left 2026-12-01T00:00:00Z alone: a symlink");
	CHECK_CONTAINS(log, "left 2026-12-01T00:01:00Z alone: a file");
	CHECK_CONTAINS(log, "left 2026-12-01T00:02:00Z alone: it holds no offcpu.summary.json");
	CHECK_CONTAINS(log, "left 2026-12-01T00:03:00Z alone: it holds no offcpu.summary.json");
	CHECK_INT(count_lines(log, "retention: removed"), 1);
	free(log);
}

TEST(prune_removes_stale_staged_dirs)
{
	char p[PATH_MAX], *log = NULL, newest[PERIOD_NAME_LEN];
	struct timespec old[2];
	struct retention_stats st;
	uint64_t now;
	struct timespec ts;

	new_base();
	clock_gettime(CLOCK_REALTIME, &ts);
	now = (uint64_t)ts.tv_sec * S + (uint64_t)ts.tv_nsec;
	CHECK_INT(make_period(now - 60 * S, 10, newest), 0);
	/* Written two hours ago and never renamed: a dead record's. */
	snprintf(p, sizeof(p), "%s/.2026-12-01T00:00:00Z.new", base);
	CHECK_INT(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/.2026-12-01T00:00:00Z.new/offcpu.profile.txt", base);
	CHECK_INT(write_bytes(p, 10), 0);
	snprintf(p, sizeof(p), "%s/.2026-12-01T00:00:00Z.new", base);
	old[0].tv_sec = old[1].tv_sec = ts.tv_sec - 7200;
	old[0].tv_nsec = old[1].tv_nsec = 0;
	CHECK_INT(utimensat(AT_FDCWD, p, old, 0), 0);
	/* Being written now (its name is old: a long period): stays. */
	snprintf(p, sizeof(p), "%s/.2026-12-01T00:01:00Z.new", base);
	CHECK_INT(mkdir(p, 0755), 0);
	/* A symlink named like a staged period: stays, target untouched. */
	snprintf(p, sizeof(p), "%s/.2026-12-01T00:02:00Z.new", base);
	CHECK_INT(symlink(base, p), 0);
	CHECK_INT(lutimes(p, (struct timeval[2]){{ts.tv_sec - 7200, 0}, {ts.tv_sec - 7200, 0}}), 0);

	CHECK_INT(prune(0, 0, now, &st, &log), 0);
	CHECK(!exists(".2026-12-01T00:00:00Z.new"));
	CHECK(exists(".2026-12-01T00:01:00Z.new"));
	CHECK(exists(".2026-12-01T00:02:00Z.new"));
	CHECK(exists(newest));
	CHECK_INT(st.removed_staged, 1);
	CHECK_INT(st.left_alone, 1);
	CHECK_CONTAINS(log, "removed .2026-12-01T00:00:00Z.new, a period left half-written");
	free(log);
}

TEST(prune_no_limits_removes_nothing)
{
	char n[3][PERIOD_NAME_LEN], *log = NULL;
	struct retention_stats st;

	new_base();
	for (int i = 0; i < 3; i++)
		CHECK_INT(make_period(T0 + (uint64_t)i * 60 * S, MIB, n[i]), 0);
	CHECK_INT(prune(0, 0, T0 + 365 * 86400 * S, &st, &log), 0);
	for (int i = 0; i < 3; i++)
		CHECK(exists(n[i]));
	CHECK_INT(st.periods, 3);
	CHECK(st.bytes_kept >= 3 * MIB);
	CHECK_STR(log, "");
	free(log);
	/* A base that is not there: the error, nothing else. */
	CHECK_INT(
		retention__prune_path("/nonexistent/offcpu", &(struct retention){0}, 0, NULL, NULL),
		-ENOENT);
}

/* Entries in base besides . and .. whose name starts with prefix. */
static int entries(const char *prefix)
{
	DIR *d = opendir(base);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		     !strncmp(e->d_name, prefix, strlen(prefix));
	closedir(d);
	return n;
}

/*
 * A period whose removal stops halfway (a file that cannot be unlinked) is
 * out of the periods already, never half there under its name; a later call
 * removes what is left.
 */
TEST(prune_half_removed_period_is_out_of_sight)
{
	char n[2][PERIOD_NAME_LEN], p[PATH_MAX], cmd[2 * PATH_MAX + 64], *log = NULL;
	struct retention_stats st;
	struct timespec ts;
	uint64_t now;
	int err, err2;

	new_base();
	clock_gettime(CLOCK_REALTIME, &ts);
	now = (uint64_t)ts.tv_sec * S;
	CHECK_INT(make_period(now - 7200 * S, 10, n[0]), 0);
	CHECK_INT(make_period(now - 60 * S, 10, n[1]), 0);
	snprintf(p, sizeof(p), "%s/%s/stuck", base, n[0]);
	CHECK_INT(write_bytes(p, 10), 0);
	snprintf(cmd, sizeof(cmd), "chattr +i '%s' 2>/dev/null", p);
	if (system(cmd))
		SKIP("chattr +i does not work here (needs root and a file system with it)");
	err = prune(3600 * S, 0, now, &st, &log);
	/* Undone before any check, wherever the file is: a failed test must not leave it. */
	snprintf(cmd, sizeof(cmd), "chattr -i '%s/.%s.new/stuck' '%s' 2>/dev/null", base, n[0], p);
	err2 = system(cmd);
	(void)err2;
	CHECK_INT(err, -EPERM);
	CHECK(!exists(n[0]));
	CHECK_INT(entries("."), 1);
	CHECK_INT(st.errors, 1);
	CHECK_CONTAINS(log, "could not remove");
	free(log);
	/* An hour later the leftover is a stale staged directory, and goes. */
	log = NULL;
	CHECK_INT(prune(3600 * S, 0, now + 3700 * S, &st, &log), 0);
	CHECK_INT(entries("."), 0);
	CHECK_INT(st.removed_staged, 1);
	CHECK(exists(n[1]));
	free(log);
}

TEST(prune_leaves_no_staged_names_behind)
{
	char n[3][PERIOD_NAME_LEN], *log = NULL;
	struct retention_stats st;

	new_base();
	for (int i = 0; i < 3; i++)
		CHECK_INT(make_period(T0 + (uint64_t)i * 60 * S, MIB, n[i]), 0);
	CHECK_INT(prune(0, MIB + MIB / 2, T0 + 3600 * S, &st, &log), 0);
	CHECK_INT(entries(""), 1);
	CHECK(exists(n[2]));
	free(log);
}

static int append_bytes(const char *name, const char *file, uint64_t n)
{
	char p[PATH_MAX], buf[4096];
	int fd;

	snprintf(p, sizeof(p), "%s/%s/%s", base, name, file);
	fd = open(p, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd < 0)
		return -1;
	memset(buf, 'y', sizeof(buf));
	for (uint64_t done = 0; done < n; done += sizeof(buf))
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
			close(fd);
			return -1;
		}
	return close(fd);
}

TEST(prune_cache_remeasures_only_changed_periods)
{
	struct retention_cache *c = retention_cache__new();
	struct retention r = {.max_bytes = 1ULL << 40, .cache = c};
	struct retention_stats st;
	char n[3][PERIOD_NAME_LEN];
	uint64_t first, now = T0 + 3600 * S;

	CHECK(c);
	new_base();
	for (int i = 0; i < 3; i++)
		CHECK_INT(make_period(T0 + (uint64_t)i * 60 * S, MIB, n[i]), 0);
	CHECK_INT(retention__prune_path(base, &r, now, NULL, &st), 0);
	first = st.bytes_kept;
	CHECK(first >= 3 * MIB);
	/*
	 * Grown in place, the directory unchanged: the cached size stands
	 * (periods are not rewritten; this is how the test sees the cache).
	 */
	CHECK_INT(append_bytes(n[0], "offcpu.profile.txt", MIB), 0);
	CHECK_INT(retention__prune_path(base, &r, now, NULL, &st), 0);
	CHECK_U64(st.bytes_kept, first);
	/* Without the cache it is measured again. */
	r.cache = NULL;
	CHECK_INT(retention__prune_path(base, &r, now, NULL, &st), 0);
	CHECK(st.bytes_kept >= first + MIB);
	/* A new file changes the directory: measured again with the cache too. */
	r.cache = c;
	CHECK_INT(append_bytes(n[1], "offcpu.timeline.txt", MIB), 0);
	CHECK_INT(retention__prune_path(base, &r, now, NULL, &st), 0);
	CHECK(st.bytes_kept >= first + MIB);
	/* The size limit removes by what is on disk, cached or not. */
	r.max_bytes = 2 * MIB + MIB / 2;
	CHECK_INT(retention__prune_path(base, &r, now, NULL, &st), 0);
	CHECK(!exists(n[0]));
	CHECK(!exists(n[1]));
	CHECK(exists(n[2]));
	/* A period made again under a removed one's name is a new directory: measured. */
	CHECK_INT(make_period(T0, 3 * MIB, n[0]), 0);
	r.max_bytes = 0;
	CHECK_INT(retention__prune_path(base, &r, now, NULL, &st), 0);
	CHECK_INT(st.periods, 2);
	CHECK(st.bytes_kept >= 4 * MIB);
	retention_cache__free(c);
	retention_cache__free(NULL);
}

int main(void)
{
	return unit_run();
}
