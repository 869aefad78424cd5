// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reading the lossless profile text (format: parse/profile_text.h). The
 * file's ids are mapped onto the profile's through arrays indexed by file id,
 * so reading into a profile that already has data merges instead of clashing.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/profile_text.h"
#include "util/lines.h"
#include "util/vec.h"

#define UNDEF UINT32_MAX

/* File id -> profile id; UNDEF where the file's definition was malformed. */
struct idmap {
	uint32_t *ids;
	size_t n, cap;
};

struct pt_state {
	struct profile *p;
	struct parse_stats *st;
	struct idmap frames, stacks, threads;
	uint32_t *tmp; /* a stack's frame ids */
	size_t tmp_cap;
	char *name; /* an unescaped name, NUL-terminated */
	size_t name_cap;
	struct profile_weight sum; /* of this file's rows */
	size_t rows;
	bool seen_end;
	bool merge; /* the profile had rows before */
};

struct cursor {
	const char *p, *end;
};

/* The next space-separated field; false at the end of the line. */
static bool field(struct cursor *c, const char **s, size_t *len)
{
	const char *sp;

	if (c->p >= c->end)
		return false;
	sp = memchr(c->p, ' ', c->end - c->p);
	*s = c->p;
	*len = (sp ? sp : c->end) - c->p;
	c->p = sp ? sp + 1 : c->end;
	return *len > 0;
}

static int next_u64(struct cursor *c, uint64_t *v)
{
	const char *s;
	size_t len;

	if (!field(c, &s, &len))
		return -EINVAL;
	return parse__u64(s, len, v);
}

static bool next_int(struct cursor *c, int *v)
{
	const char *s;
	size_t len;
	uint64_t u;
	bool neg;

	if (!field(c, &s, &len))
		return false;
	neg = s[0] == '-';
	if (parse__u64(s + neg, len - neg, &u) || u > (uint64_t)INT_MAX + neg)
		return false;
	*v = neg ? (int)-(int64_t)u : (int)u;
	return true;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Unescape the rest of the line into ps->name; *len excludes the NUL. */
static int unescape(struct pt_state *ps, struct cursor *c, size_t *len, const char **why)
{
	const char *s = c->p, *end = c->end;
	size_t n = 0;

	if (vec_reserve(ps->name, ps->name_cap, (size_t)(end - s) + 1))
		return -ENOMEM;
	for (; s < end; s++) {
		char ch = *s;

		if (ch == ' ' || ch == '\t') {
			/* Only trailing blanks may follow a name; they mean nothing. */
			while (s < end && (*s == ' ' || *s == '\t'))
				s++;
			if (s < end) {
				*why = "unescaped blank in a name";
				return -EINVAL;
			}
			break;
		}
		if (ch == '\0' || (unsigned char)ch < 0x20) {
			*why = "raw control byte in a name";
			return -EINVAL;
		}
		if (ch != '\\') {
			ps->name[n++] = ch;
			continue;
		}
		if (++s == end) {
			*why = "bad escape in a name";
			return -EINVAL;
		}
		switch (*s) {
		case '\\':
			ch = '\\';
			break;
		case 's':
			ch = ' ';
			break;
		case 't':
			ch = '\t';
			break;
		case 'r':
			ch = '\r';
			break;
		case 'n':
			ch = '\n';
			break;
		case 'x':
			if (end - s < 3 || hexval(s[1]) < 0 || hexval(s[2]) < 0 ||
			    !(hexval(s[1]) | hexval(s[2]))) {
				*why = "bad escape in a name";
				return -EINVAL;
			}
			ch = (char)(hexval(s[1]) << 4 | hexval(s[2]));
			s += 2;
			break;
		default:
			*why = "bad escape in a name";
			return -EINVAL;
		}
		ps->name[n++] = ch;
	}
	ps->name[n] = '\0';
	*len = n;
	return 0;
}

/*
 * A file id being defined must be new: at least the number defined so far
 * (gaps are what malformed definitions left) and below the line number, which
 * bounds what a valid file can have defined, and so the map's memory. Checked
 * before interning, so a bad definition adds nothing to the profile.
 */
static int check_new(const struct idmap *m, uint64_t id, size_t lineno, const char **why)
{
	if (id < m->n) {
		*why = "id defined twice";
		return -EINVAL;
	}
	if (id >= lineno) {
		*why = "id out of range";
		return -EINVAL;
	}
	return 0;
}

static int define(struct idmap *m, uint64_t id, uint32_t pid)
{
	if (vec_reserve(m->ids, m->cap, id + 1))
		return -ENOMEM;
	while (m->n < id)
		m->ids[m->n++] = UNDEF;
	m->ids[m->n++] = pid;
	return 0;
}

static bool lookup(const struct idmap *m, uint64_t id, uint32_t *pid)
{
	if (id >= m->n || m->ids[id] == UNDEF)
		return false;
	*pid = m->ids[id];
	return true;
}

/* One record; 0 or -EINVAL with *why (malformed), or a fatal -errno. */
static int record(struct pt_state *ps, const char *line, size_t len, size_t lineno,
		  const char **why)
{
	struct cursor c = {line, line + len};
	const char *kw, *s;
	size_t kwlen, slen;
	uint64_t id, v[4];
	uint32_t a, b;
	int err, x, y, r;

	if (!field(&c, &kw, &kwlen)) {
		*why = "no record type";
		return -EINVAL;
	}
#define IS(lit) (kwlen == sizeof(lit) - 1 && !memcmp(kw, lit, kwlen))
	*why = "bad number";
	if (IS("frame")) {
		enum frame_kind kind;

		if ((err = next_u64(&c, &id)) || (err = check_new(&ps->frames, id, lineno, why)))
			return err == -EOVERFLOW ? -EINVAL : err;
		if (!field(&c, &s, &slen) || slen != 1 || frame_kind__from_letter(s[0], &kind)) {
			*why = "bad frame kind";
			return -EINVAL;
		}
		err = unescape(ps, &c, &slen, why);
		if (err)
			return err;
		if (!slen) {
			*why = "empty frame name";
			return -EINVAL;
		}
		r = profile__frame(ps->p, kind, ps->name, slen);
		if (r < 0)
			return r;
		return define(&ps->frames, id, r);
	}
	if (IS("stack")) {
		size_t n = 0;

		if ((err = next_u64(&c, &id)) || (err = check_new(&ps->stacks, id, lineno, why)))
			return err == -EOVERFLOW ? -EINVAL : err;
		while (field(&c, &s, &slen)) {
			if (parse__u64(s, slen, &v[0]))
				return -EINVAL;
			if (!lookup(&ps->frames, v[0], &a)) {
				*why = "unknown frame id";
				return -EINVAL;
			}
			if (vec_reserve(ps->tmp, ps->tmp_cap, n + 1))
				return -ENOMEM;
			ps->tmp[n++] = a;
		}
		if (c.p < c.end) {
			*why = "two spaces in a stack";
			return -EINVAL;
		}
		r = profile__stack(ps->p, ps->tmp, n);
		if (r < 0)
			return r;
		return define(&ps->stacks, id, r);
	}
	if (IS("thread")) {
		if ((err = next_u64(&c, &id)) || (err = check_new(&ps->threads, id, lineno, why)))
			return err == -EOVERFLOW ? -EINVAL : err;
		if (!next_int(&c, &x) || !next_int(&c, &y))
			return -EINVAL;
		err = unescape(ps, &c, &slen, why);
		if (err)
			return err;
		if (strlen(ps->name) != slen) {
			*why = "NUL byte in a comm";
			return -EINVAL;
		}
		r = profile__thread(ps->p, x, y, ps->name);
		if (r < 0)
			return r;
		return define(&ps->threads, id, r);
	}
	if (IS("time")) {
		struct profile_thread_time tt;

		if ((err = next_u64(&c, &id)) || (err = next_u64(&c, &v[0])) ||
		    (err = next_u64(&c, &v[1])) || (err = next_u64(&c, &v[2])))
			return err == -EOVERFLOW ? -EINVAL : err;
		if (!lookup(&ps->threads, id, &a)) {
			*why = "unknown thread id";
			return -EINVAL;
		}
		v[3] = 0;
		if (c.p < c.end && *c.p != ' ' && (err = next_u64(&c, &v[3])))
			return err == -EOVERFLOW ? -EINVAL : err;
		if (v[3] > v[1]) {
			*why = "idle exit time above on-CPU time";
			return -EINVAL;
		}
		tt = (struct profile_thread_time){v[0], v[1], v[2], v[3]};
		return profile__set_thread_time(ps->p, a, &tt);
	}
	if (IS("row")) {
		enum offcpu_state state = OFFCPU_STATE__COUNT;
		struct profile_weight w;
		uint64_t tid, sid;

		if ((err = next_u64(&c, &tid)) || (err = next_u64(&c, &sid)))
			return err == -EOVERFLOW ? -EINVAL : err;
		if (!field(&c, &s, &slen) || slen != 1) {
			*why = "bad state";
			return -EINVAL;
		}
		for (int k = 0; k < OFFCPU_STATE__COUNT; k++)
			if (offcpu_state__letter(k)[0] == s[0])
				state = k;
		if (state == OFFCPU_STATE__COUNT) {
			*why = "bad state";
			return -EINVAL;
		}
		/* A weight that does not fit 64 bits is the fatal overflow, like in the others. */
		*why = "bad number";
		if ((err = next_u64(&c, &w.count)) || (err = next_u64(&c, &w.off_ns)) ||
		    (err = next_u64(&c, &w.runq_ns)))
			return err;
		if (!lookup(&ps->threads, tid, &a)) {
			*why = "unknown thread id";
			return -EINVAL;
		}
		if (!lookup(&ps->stacks, sid, &b)) {
			*why = "unknown stack id";
			return -EINVAL;
		}
		if (w.runq_ns > w.off_ns) {
			*why = "runq_ns > off_ns";
			return -EINVAL;
		}
		/* The file's sums are within the profile's totals, which profile__add() guards. */
		err = profile__add(ps->p, a, b, state, &w);
		if (err)
			return err;
		ps->sum.count += w.count;
		ps->sum.off_ns += w.off_ns;
		ps->sum.runq_ns += w.runq_ns;
		ps->rows++;
		ps->st->records++;
		return 0;
	}
	if (IS("runq_known")) {
		if ((err = next_u64(&c, &v[0])) || v[0] > 1) {
			*why = "runq_known is not 0 or 1";
			return -EINVAL;
		}
		profile__set_runq_known(ps->p, v[0] && (!ps->merge || profile__runq_known(ps->p)));
		return 0;
	}
	if (IS("end")) {
		for (int i = 0; i < 4; i++)
			if ((err = next_u64(&c, &v[i])))
				return -EINVAL;
		ps->seen_end = true;
		/* Rows lost in the middle make the file as unusable as rows cut from its end. */
		if (v[0] != ps->rows || v[1] != ps->sum.count || v[2] != ps->sum.off_ns ||
		    v[3] != ps->sum.runq_ns) {
			*why = "truncated or damaged: the end line's sums differ from the rows "
			       "read";
			return -EBADMSG;
		}
		return 0;
	}
#undef IS
	*why = "unknown record type";
	return -EINVAL;
}

int profile_text__parse(FILE *in, struct profile *p, struct parse_stats *stats)
{
	struct parse_stats local;
	struct pt_state ps = {.p = p, .st = stats ? stats : &local};
	struct parse_stats *st = ps.st;
	struct line_reader *lr;
	const char *line, *why;
	size_t len;
	int err;

	memset(st, 0, sizeof(*st));
	ps.merge = profile__nr_rows(p) > 0;
	lr = line_reader__new(in);
	if (!lr)
		return -ENOMEM;
	err = line_reader__next(lr, &line, &len);
	if (err < 0)
		goto cleanup;
	if (err == 0 || len != strlen(PROFILE_TEXT_MAGIC) ||
	    memcmp(line, PROFILE_TEXT_MAGIC, len)) {
		st->lines = err;
		parse__malformed(
			st, 1,
			"not an offcpu profile: the first line is not \"" PROFILE_TEXT_MAGIC "\"");
		err = -EINVAL;
		goto cleanup;
	}
	st->lines = 1;
	st->skipped = 1;
	while ((err = line_reader__next(lr, &line, &len)) > 0) {
		st->lines++;
		while (len && (line[len - 1] == ' ' || line[len - 1] == '\t'))
			len--;
		if (!len)
			continue;
		if (line[0] == '#') {
			st->skipped++;
			continue;
		}
		if (ps.seen_end) {
			parse__malformed(st, st->lines, "record after the end line");
			continue;
		}
		why = "malformed";
		err = record(&ps, line, len, st->lines, &why);
		if (err == -EINVAL) {
			parse__malformed(st, st->lines, why);
		} else if (err) {
			st->error_line = st->lines;
			if (err == -EBADMSG)
				snprintf(st->error_reason, sizeof(st->error_reason), "%s", why);
			goto cleanup;
		}
	}
	/* The writer ends every file with the end line: without it, the file was cut. */
	if (!err && !ps.seen_end) {
		err = -EBADMSG;
		st->error_line = st->lines;
		snprintf(st->error_reason, sizeof(st->error_reason),
			 "truncated: the file stops before its end line");
	}
cleanup:
	line_reader__free(lr);
	free(ps.frames.ids);
	free(ps.stacks.ids);
	free(ps.threads.ids);
	free(ps.tmp);
	free(ps.name);
	return err;
}
