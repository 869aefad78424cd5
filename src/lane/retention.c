// SPDX-License-Identifier: GPL-2.0-only
/*
 * Period directory names and retention (see retention.h). Every access below
 * BASE is by directory fd, with O_NOFOLLOW / AT_SYMLINK_NOFOLLOW: a symlink
 * planted under BASE is never followed out of it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lane/retention.h"
#include "util/units.h"

#define NS_S 1000000000ULL
#define SUMMARY "offcpu.summary.json"
/* Lane directories are flat; this only bounds a tree someone else put there. */
#define MAX_DEPTH 8

int period__name(char *buf, size_t len, uint64_t realtime_ns)
{
	time_t t = (time_t)(realtime_ns / NS_S);
	struct tm tm;

	if (len < PERIOD_NAME_LEN)
		return -ENAMETOOLONG;
	if (!gmtime_r(&t, &tm))
		return -ERANGE;
	/* Years past 9999 would make a longer name that no parser here takes. */
	if (strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) != PERIOD_NAME_LEN - 1)
		return -ERANGE;
	return 0;
}

int period__parse_name(const char *name, uint64_t *realtime_ns)
{
	static const char form[] = "dddd-dd-ddTdd:dd:ddZ";
	char back[PERIOD_NAME_LEN];
	struct tm tm = {0};
	time_t t;

	if (!name || strlen(name) != PERIOD_NAME_LEN - 1)
		return -EINVAL;
	for (size_t i = 0; i < PERIOD_NAME_LEN - 1; i++)
		if (form[i] == 'd' ? name[i] < '0' || name[i] > '9' : name[i] != form[i])
			return -EINVAL;
	tm.tm_year = atoi(name) - 1900;
	tm.tm_mon = atoi(name + 5) - 1;
	tm.tm_mday = atoi(name + 8);
	tm.tm_hour = atoi(name + 11);
	tm.tm_min = atoi(name + 14);
	tm.tm_sec = atoi(name + 17);
	t = timegm(&tm);
	/* timegm normalises 02-30 to 03-02: a name that does not read back is no date. */
	if (t < 0 || period__name(back, sizeof(back), (uint64_t)t * NS_S) || strcmp(back, name))
		return -EINVAL;
	*realtime_ns = (uint64_t)t * NS_S;
	return 0;
}

int period__parse_staged_name(const char *name, uint64_t *realtime_ns)
{
	char inner[PERIOD_NAME_LEN];
	size_t len = name ? strlen(name) : 0;

	if (len != PERIOD_NAME_LEN - 1 + sizeof(".") - 1 + sizeof(".new") - 1 || name[0] != '.' ||
	    strcmp(name + len - 4, ".new"))
		return -EINVAL;
	memcpy(inner, name + 1, PERIOD_NAME_LEN - 1);
	inner[PERIOD_NAME_LEN - 1] = '\0';
	return period__parse_name(inner, realtime_ns);
}

/* The disk a directory tree takes (st_blocks * 512), without following anything. */
static uint64_t tree_bytes(int fd, int depth)
{
	struct dirent *e;
	struct stat st;
	uint64_t sum = 0;
	DIR *d;
	int dfd;

	if (!fstat(fd, &st))
		sum += (uint64_t)st.st_blocks * 512;
	dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return sum;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return sum;
	}
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		if (S_ISDIR(st.st_mode) && depth < MAX_DEPTH) {
			int sub = openat(dfd, e->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (sub >= 0) {
				sum += tree_bytes(sub, depth + 1);
				close(sub);
			}
		} else {
			sum += (uint64_t)st.st_blocks * 512;
		}
	}
	closedir(d);
	return sum;
}

/*
 * Remove the directory name in parent and what it holds. A symlink inside is
 * unlinked as a link; name itself must be a real directory (O_NOFOLLOW), and
 * a race that swaps it for a symlink makes the last unlinkat fail, not follow.
 */
static int remove_tree(int parent, const char *name, int depth)
{
	struct dirent *e;
	struct stat sb;
	int fd, err = 0, uerr;
	DIR *d;

	fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		err = -errno;
		close(fd);
		return err;
	}
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (!unlinkat(fd, e->d_name, 0))
			continue;
		/* Linux says EISDIR for a directory, POSIX EPERM (also an immutable file). */
		uerr = errno;
		if ((uerr == EISDIR || uerr == EPERM) && depth < MAX_DEPTH &&
		    !fstatat(fd, e->d_name, &sb, AT_SYMLINK_NOFOLLOW) && S_ISDIR(sb.st_mode)) {
			int sub = remove_tree(fd, e->d_name, depth + 1);

			if (sub && !err)
				err = sub;
		} else if (!err) {
			err = -uerr;
		}
	}
	closedir(d);
	if (!err && unlinkat(parent, name, AT_REMOVEDIR))
		err = -errno;
	return err;
}

/* An age for a log line, to the second, in its two largest units: "1d 2h", "24h 1m", "59s". */
static char *age_text(uint64_t ns, char *buf, size_t len)
{
	static const struct {
		uint64_t s;
		const char *unit;
	} units[] = {{86400, "d"}, {3600, "h"}, {60, "m"}, {1, "s"}};
	uint64_t s = ns / NS_S;
	size_t i = 0;

	/* Days only from two days on: "36h 5m" reads better than "1d 12h". */
	while (i + 1 < sizeof(units) / sizeof(units[0]) &&
	       s < units[i].s * (units[i].s == 86400 ? 2 : 1))
		i++;
	if (i + 1 < sizeof(units) / sizeof(units[0]) && s % units[i].s / units[i + 1].s)
		snprintf(buf, len, "%llu%s %llu%s", (unsigned long long)(s / units[i].s),
			 units[i].unit, (unsigned long long)(s % units[i].s / units[i + 1].s),
			 units[i + 1].unit);
	else
		snprintf(buf, len, "%llu%s", (unsigned long long)(s / units[i].s), units[i].unit);
	return buf;
}

struct period {
	uint64_t start;
	uint64_t bytes;
	char name[PERIOD_NAME_LEN];
	bool removed;
	/* The directory as it was measured: unchanged, its size still holds. */
	dev_t dev;
	ino_t ino;
	struct timespec mtim, ctim;
};

/* The periods the last call kept, sorted by start (names sort the same way). */
struct retention_cache {
	struct period *v;
	size_t n;
};

struct retention_cache *retention_cache__new(void)
{
	return calloc(1, sizeof(struct retention_cache));
}

void retention_cache__free(struct retention_cache *c)
{
	if (!c)
		return;
	free(c->v);
	free(c);
}

static int by_start(const void *a, const void *b)
{
	const struct period *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static bool same_time(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

/* The period measured before, when the directory is the one measured and has not changed. */
static const struct period *cached(const struct retention_cache *c, const struct period *p)
{
	const struct period *hit;

	if (!c || !c->n)
		return NULL;
	hit = bsearch(p, c->v, c->n, sizeof(*c->v), by_start);
	if (hit && hit->dev == p->dev && hit->ino == p->ino && same_time(&hit->mtim, &p->mtim) &&
	    same_time(&hit->ctim, &p->ctim) && !strcmp(hit->name, p->name))
		return hit;
	return NULL;
}

static const char *kind_of(mode_t mode)
{
	if (S_ISLNK(mode))
		return "a symlink";
	if (S_ISREG(mode))
		return "a file";
	return "not a directory";
}

/*
 * Is base/name (its start in p->start) a period directory? Its size in
 * p->bytes when it is; a line on log when it is named like one but is not.
 */
static bool is_period(int base_fd, const char *name, const struct retention_cache *c, FILE *log,
		      struct retention_stats *st, struct period *p)
{
	const struct period *hit;
	struct stat sb;
	int fd;

	if (fstatat(base_fd, name, &sb, AT_SYMLINK_NOFOLLOW))
		return false;
	if (!S_ISDIR(sb.st_mode)) {
		if (log)
			fprintf(log,
				"offcpu: retention: left %s alone: %s, not a period directory\n",
				name, kind_of(sb.st_mode));
		st->left_alone++;
		return false;
	}
	memcpy(p->name, name, sizeof(p->name));
	p->removed = false;
	p->dev = sb.st_dev;
	p->ino = sb.st_ino;
	p->mtim = sb.st_mtim;
	p->ctim = sb.st_ctim;
	/*
	 * A written period does not change: measuring thousands of them again
	 * after every period would cost more than the period's own writing.
	 */
	hit = cached(c, p);
	if (hit) {
		p->bytes = hit->bytes;
		return true;
	}
	fd = openat(base_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (fstatat(fd, SUMMARY, &sb, AT_SYMLINK_NOFOLLOW) || !S_ISREG(sb.st_mode)) {
		if (log)
			fprintf(log,
				"offcpu: retention: left %s alone: it holds no " SUMMARY
				" file, so it is not a period offcpu wrote\n",
				name);
		st->left_alone++;
		close(fd);
		return false;
	}
	p->bytes = tree_bytes(fd, 0);
	close(fd);
	return true;
}

static int remove_period(int base_fd, const struct period *p, FILE *log, struct retention_stats *st,
			 const char *why)
{
	char size[32], staged[PERIOD_NAME_LEN + sizeof(".") + sizeof(".new")];
	const char *gone = p->name;
	int err;

	/*
	 * Renamed out of the periods first, so that a reader sees the period
	 * whole or not at all; should the removal stop halfway, what is left is
	 * a stale staged directory, removed by a later call.
	 */
	snprintf(staged, sizeof(staged), ".%s.new", p->name);
	if (!renameat2(base_fd, p->name, base_fd, staged, RENAME_NOREPLACE))
		gone = staged;
	err = remove_tree(base_fd, gone, 0);
	units__format_size(p->bytes, size, sizeof(size));
	if (err) {
		st->errors++;
		if (log)
			fprintf(log, "offcpu: retention: could not remove %s (%s): %s\n", p->name,
				why, strerror(-err));
		return err;
	}
	st->bytes_removed += p->bytes;
	if (log)
		fprintf(log, "offcpu: retention: removed %s (%s), %s freed\n", p->name, why, size);
	return 0;
}

/* A ".NAME.new" last written over an hour ago: its record died while writing it. */
static int prune_staged(int base_fd, const char *name, uint64_t now, FILE *log,
			struct retention_stats *st)
{
	struct stat sb;
	uint64_t mtime;
	int err;

	if (fstatat(base_fd, name, &sb, AT_SYMLINK_NOFOLLOW))
		return 0;
	if (!S_ISDIR(sb.st_mode)) {
		if (log)
			fprintf(log, "offcpu: retention: left %s alone: %s, not a staged period\n",
				name, kind_of(sb.st_mode));
		st->left_alone++;
		return 0;
	}
	mtime = (uint64_t)sb.st_mtim.tv_sec * NS_S + (uint64_t)sb.st_mtim.tv_nsec;
	if (sb.st_mtim.tv_sec < 0 || now < mtime || now - mtime <= RETENTION_STAGED_MAX_AGE_NS)
		return 0;
	err = remove_tree(base_fd, name, 0);
	if (err) {
		st->errors++;
		if (log)
			fprintf(log, "offcpu: retention: could not remove the stale %s: %s\n", name,
				strerror(-err));
		return err;
	}
	st->removed_staged++;
	if (log)
		fprintf(log,
			"offcpu: retention: removed %s, a period left half-written over an hour "
			"ago\n",
			name);
	return 0;
}

int retention__prune(int base_fd, const struct retention *r, uint64_t now, FILE *log,
		     struct retention_stats *stats)
{
	struct retention_stats dummy;
	struct retention_stats *st = stats ? stats : &dummy;
	struct period *v = NULL, *nv;
	size_t n = 0, cap = 0;
	struct dirent *e;
	uint64_t total = 0;
	int fd, err = 0, e2;
	bool listed = false;
	DIR *d;

	memset(st, 0, sizeof(*st));
	/* An open of our own: readdir must not move the caller's fd offset. */
	fd = openat(base_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		err = -errno;
		close(fd);
		return err;
	}
	while ((e = readdir(d))) {
		struct period p;

		if (!period__parse_staged_name(e->d_name, &p.start)) {
			e2 = prune_staged(base_fd, e->d_name, now, log, st);
			if (e2 && !err)
				err = e2;
			continue;
		}
		if (period__parse_name(e->d_name, &p.start) ||
		    !is_period(base_fd, e->d_name, r->cache, log, st, &p))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				err = -ENOMEM;
				goto cleanup;
			}
			v = nv;
		}
		v[n++] = p;
		total += p.bytes;
	}
	listed = true;
	st->periods = (unsigned int)n;
	if (!n)
		goto cleanup;
	qsort(v, n, sizeof(*v), by_start);

	/* Oldest first, never the newest (v[n - 1]). */
	for (size_t i = 0; i + 1 < n && r->max_age_ns; i++) {
		char why[96], age[32], keep[32];

		if (now <= v[i].start || now - v[i].start <= r->max_age_ns)
			break;
		snprintf(why, sizeof(why), "started %s ago, more than --keep %s",
			 age_text(now - v[i].start, age, sizeof(age)),
			 units__format_duration(r->max_age_ns, keep, sizeof(keep)));
		e2 = remove_period(base_fd, &v[i], log, st, why);
		if (e2 && !err)
			err = e2;
		if (!e2) {
			st->removed_age++;
			total -= v[i].bytes;
		}
		/* Removed, or failed and said so: the size pass does not try it again. */
		v[i].removed = true;
	}
	for (size_t i = 0; i + 1 < n && r->max_bytes && total > r->max_bytes; i++) {
		char why[96], tot[32], keep[32];

		if (v[i].removed)
			continue;
		snprintf(why, sizeof(why), "periods total %s, more than --keep-size %s",
			 units__format_size(total, tot, sizeof(tot)),
			 units__format_size(r->max_bytes, keep, sizeof(keep)));
		e2 = remove_period(base_fd, &v[i], log, st, why);
		if (e2 && !err)
			err = e2;
		if (!e2) {
			st->removed_size++;
			total -= v[i].bytes;
		}
		v[i].removed = true;
	}
	st->bytes_kept = total;
cleanup:
	if (r->cache && listed) {
		size_t kept = 0;

		for (size_t i = 0; i < n; i++)
			if (!v[i].removed)
				v[kept++] = v[i];
		free(r->cache->v);
		r->cache->v = v;
		r->cache->n = kept;
		v = NULL;
	}
	closedir(d);
	free(v);
	return err;
}

int retention__prune_path(const char *base, const struct retention *r, uint64_t now_realtime_ns,
			  FILE *log, struct retention_stats *st)
{
	int fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	err = retention__prune(fd, r, now_realtime_ns, log, st);
	close(fd);
	return err;
}
