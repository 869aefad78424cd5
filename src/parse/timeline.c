// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reading the timeline text. The reader keeps a small open-addressing map
 * from the file's stack ids to the profile's, because the file's ids are
 * whatever the writer's profile used.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse/timeline.h"
#include "util/hash.h"
#include "util/hmap.h"
#include "util/vec.h"

/*
 * File stack id -> profile stack id, in the shared table. hash_mix64 is a
 * bijection, so equal hashes are equal ids and no key needs storing.
 */
static int idmap_put(struct hmap *m, uint32_t key, uint32_t val)
{
	uint64_t h = hash_mix64(key);
	size_t pos;
	int err = hmap__reserve(m);

	if (err)
		return err;
	pos = hmap__first(m, h);
	if (hmap__next(m, h, &pos)) /* a later definition of the id replaces the earlier */
		m->slots[(pos - 1) & m->mask].val = hmap_idx(val);
	else
		hmap__put(m, pos, h, hmap_idx(val));
	return 0;
}

static bool idmap_get(const struct hmap *m, uint32_t key, uint32_t *val)
{
	uint64_t h = hash_mix64(key);
	size_t pos = hmap__first(m, h);
	void *v = hmap__next(m, h, &pos);

	if (!v)
		return false;
	*val = hmap_idx_of(v);
	return true;
}

/* Parse a decimal unsigned field ending at a space or the end; advances *s. */
static bool take_u64(char **s, uint64_t *v)
{
	char *p = *s, *end;

	if (*p < '0' || *p > '9')
		return false;
	errno = 0;
	*v = strtoull(p, &end, 10);
	if (errno || (*end && *end != ' '))
		return false;
	*s = *end ? end + 1 : end;
	return true;
}

static bool take_int(char **s, int *v)
{
	char *p = *s, *end;
	long x;

	errno = 0;
	x = strtol(p, &end, 10);
	if (errno || end == p || (*end && *end != ' ') || x < INT32_MIN || x > INT32_MAX)
		return false;
	*v = (int)x;
	*s = *end ? end + 1 : end;
	return true;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/*
 * Unescape %XX in place; returns the new length or -1 on a bad escape. "%00"
 * is bad: names are C strings, so a NUL would cut the name short.
 */
static long unescape(char *s, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		int c;

		if (s[i] != '%') {
			s[o++] = s[i];
			continue;
		}
		if (i + 2 >= len || hexval(s[i + 1]) < 0 || hexval(s[i + 2]) < 0)
			return -1;
		c = hexval(s[i + 1]) << 4 | hexval(s[i + 2]);
		if (!c)
			return -1;
		s[o++] = (char)c;
		i += 2;
	}
	return (long)o;
}

struct reader {
	struct profile *p;
	struct timeline *t;
	struct hmap ids;
	uint32_t *frames;
	size_t frames_cap;
};

/* Returns 1 on a record, 0 on a malformed line (*why set), or -errno. */
static int parse_stack(struct reader *r, char *s, const char **why)
{
	uint64_t id;
	size_t n = 0;
	int ret;

	if (!take_u64(&s, &id) || id > UINT32_MAX) {
		*why = "bad stack id";
		return 0;
	}
	while (*s) {
		char *end = strchr(s, ';');
		size_t len = end ? (size_t)(end - s) : strlen(s);
		enum frame_kind kind;
		long nlen;

		if (len < 3 || s[1] != ':') {
			*why = "bad frame (want KIND:NAME)";
			return 0;
		}
		if (frame_kind__from_letter(s[0], &kind)) {
			*why = "bad frame kind (want u, k, m or i)";
			return 0;
		}
		nlen = unescape(s + 2, len - 2);
		if (nlen <= 0) {
			*why = "bad frame name escape";
			return 0;
		}
		if (vec_reserve(r->frames, r->frames_cap, n + 1))
			return -ENOMEM;
		ret = profile__frame(r->p, kind, s + 2, (size_t)nlen);
		if (ret < 0)
			return ret;
		r->frames[n++] = (uint32_t)ret;
		s = end ? end + 1 : s + len;
	}
	ret = profile__stack(r->p, r->frames, n);
	if (ret < 0)
		return ret;
	ret = idmap_put(&r->ids, (uint32_t)id, (uint32_t)ret);
	return ret < 0 ? ret : 1;
}

static int parse_interval(struct reader *r, char *s, const char **why)
{
	struct timeline_interval iv = {0};
	uint64_t stack;
	char *st, *name = NULL;
	int ret;

	if (!take_u64(&s, &iv.start_ns) || !take_u64(&s, &iv.dur_ns) ||
	    !take_u64(&s, &iv.runq_ns) || !take_int(&s, &iv.pid) || !take_int(&s, &iv.tid)) {
		*why = "bad number";
		return 0;
	}
	st = s;
	s = strchr(s, ' ');
	if (!s) {
		*why = "missing fields";
		return 0;
	}
	*s++ = '\0';
	iv.state = OFFCPU_STATE__COUNT;
	for (int i = 0; i < OFFCPU_STATE__COUNT; i++)
		if (!strcmp(st, offcpu_state__letter(i)))
			iv.state = i;
	if (iv.state == OFFCPU_STATE__COUNT) {
		*why = "bad state letter";
		return 0;
	}
	if ((*s >= '0' && *s <= '9') || *s == '-') {
		if (!take_int(&s, &iv.waker_tid)) {
			*why = "bad waker field";
			return 0;
		}
	} else {
		long nlen;

		name = s;
		s = strchr(s, ' ');
		if (!s) {
			*why = "missing fields";
			return 0;
		}
		*s++ = '\0';
		nlen = unescape(name, strlen(name));
		if (nlen <= 0) {
			*why = "bad waker name";
			return 0;
		}
		name[nlen] = '\0';
	}
	if (!take_u64(&s, &stack) || *s) {
		*why = "bad stack field";
		return 0;
	}
	if (stack > UINT32_MAX || !idmap_get(&r->ids, (uint32_t)stack, &iv.stack)) {
		*why = "stack id not defined by an earlier stack line";
		return 0;
	}
	/*
	 * A name is interned only for an interval timeline__append() takes (its
	 * checks, before): names get ids in order of the intervals kept, as the
	 * writer's timeline had them.
	 */
	if (name && iv.runq_ns <= iv.dur_ns && iv.start_ns + iv.dur_ns >= iv.start_ns) {
		ret = timeline__irq(r->t, name);
		if (ret < 0)
			return ret;
		iv.waker_irq = (uint32_t)ret;
	}
	ret = timeline__append(r->t, &iv);
	if (ret == -EINVAL) {
		*why = "runq_ns > dur_ns or end time wraps";
		return 0;
	}
	return ret < 0 ? ret : 1;
}

/* "N" or "N N" into a and b: 1, or 0 with *why. */
static int parse_info(char *s, int n, uint64_t *a, uint64_t *b, const char **why)
{
	uint64_t x, y = 0;

	if (!take_u64(&s, &x) || (n == 2 && !take_u64(&s, &y)) || *s) {
		*why = n == 2 ? "bad lost count or time" : "bad threshold";
		return 0;
	}
	*a = x;
	if (b)
		*b = y;
	return 1;
}

/* "offcpu-timeline V", V a version this reader reads. */
static bool version_ok(const char *line)
{
	char tail;
	int v;

	if (strncmp(line, "offcpu-timeline ", 16) || line[16] < '1' || line[16] > '9' ||
	    sscanf(line + 16, "%d%c", &v, &tail) != 1)
		return false;
	return v >= TIMELINE_FORMAT_OLDEST && v <= TIMELINE_FORMAT_VERSION;
}

int timeline__parse(FILE *in, struct profile *p, struct timeline *t, struct parse_stats *stats)
{
	struct parse_stats dummy;
	struct reader r = {.p = p, .t = t};
	struct timeline_info info = *timeline__info(t);
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int err = 0;

	if (!stats)
		stats = &dummy;
	memset(stats, 0, sizeof(*stats));
	while ((len = getline(&line, &cap, in)) >= 0) {
		const char *why = NULL;
		int ret = 0;

		stats->lines++;
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (stats->lines == 1) {
			if (!version_ok(line)) {
				err = -EPROTO;
				goto cleanup;
			}
			stats->skipped++;
			continue;
		}
		if (!len || line[0] == '#')
			continue;
		if (strlen(line) != (size_t)len)
			why = "NUL byte in line";
		else if (!strncmp(line, "stack ", 6))
			ret = parse_stack(&r, line + 6, &why);
		else if (!strncmp(line, "interval ", 9))
			ret = parse_interval(&r, line + 9, &why);
		else if (!strncmp(line, "threshold ", 10))
			ret = parse_info(line + 10, 1, &info.min_ns, NULL, &why);
		else if (!strncmp(line, "lost ", 5))
			ret = parse_info(line + 5, 2, &info.lost, &info.lost_ns, &why);
		else
			why = "unknown record (want stack, interval, threshold or lost)";
		if (ret < 0) {
			err = ret;
			stats->error_line = stats->lines;
			goto cleanup;
		}
		if (ret > 0) {
			/* Only intervals are records; a stack line only names frames. */
			if (line[0] == 'i')
				stats->records++;
			else
				stats->skipped++;
			continue;
		}
		if (!stats->malformed++) {
			stats->first_malformed_line = stats->lines;
			snprintf(stats->first_malformed_reason,
				 sizeof(stats->first_malformed_reason), "%s", why);
		}
	}
	if (ferror(in))
		err = -EIO;
	else if (!stats->lines)
		err = -EPROTO;
cleanup:
	timeline__set_info(t, &info);
	free(line);
	free(r.frames);
	hmap__free(&r.ids);
	return err;
}
