// SPDX-License-Identifier: GPL-2.0-only
/*
 * Writing the lossless profile text. A profile can hold tens of millions of
 * rows, so records are formatted into a local buffer by hand and written with
 * one fwrite each instead of an fprintf per field.
 */
#include <errno.h>
#include <string.h>

#include "output/profile_text.h"
#include "parse/profile_text.h"

struct out {
	FILE *f;
	char buf[256]; /* numbers and keywords; names are streamed */
	size_t len;
};

static void flush(struct out *o)
{
	if (o->len)
		fwrite(o->buf, 1, o->len, o->f);
	o->len = 0;
}

static void put_str(struct out *o, const char *s)
{
	size_t n = strlen(s);

	if (o->len + n > sizeof(o->buf))
		flush(o);
	if (n > sizeof(o->buf)) {
		fwrite(s, 1, n, o->f);
		return;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

static void put_char(struct out *o, char c)
{
	if (o->len == sizeof(o->buf))
		flush(o);
	o->buf[o->len++] = c;
}

/* " N" */
static void put_u64(struct out *o, uint64_t v)
{
	char tmp[24];
	size_t i = sizeof(tmp);

	do {
		tmp[--i] = '0' + v % 10;
		v /= 10;
	} while (v);
	tmp[--i] = ' ';
	if (o->len + sizeof(tmp) > sizeof(o->buf))
		flush(o);
	memcpy(o->buf + o->len, tmp + i, sizeof(tmp) - i);
	o->len += sizeof(tmp) - i;
}

static void put_int(struct out *o, int v)
{
	char tmp[16];

	if (v >= 0) {
		put_u64(o, (uint64_t)v);
		return;
	}
	snprintf(tmp, sizeof(tmp), " %d", v); /* rare: only a collector's "unknown" -1 */
	put_str(o, tmp);
}

/* " NAME", escaped so that it holds no raw blank, control byte or newline. */
static void put_name(struct out *o, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	put_char(o, ' ');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (o->len + 4 > sizeof(o->buf))
			flush(o);
		switch (c) {
		case '\\':
			o->buf[o->len++] = '\\';
			o->buf[o->len++] = '\\';
			break;
		case ' ':
			o->buf[o->len++] = '\\';
			o->buf[o->len++] = 's';
			break;
		case '\t':
			o->buf[o->len++] = '\\';
			o->buf[o->len++] = 't';
			break;
		case '\r':
			o->buf[o->len++] = '\\';
			o->buf[o->len++] = 'r';
			break;
		case '\n':
			o->buf[o->len++] = '\\';
			o->buf[o->len++] = 'n';
			break;
		default:
			if (c < 0x20 || c == 0x7f) {
				o->buf[o->len++] = '\\';
				o->buf[o->len++] = 'x';
				o->buf[o->len++] = hex[c >> 4];
				o->buf[o->len++] = hex[c & 15];
			} else {
				o->buf[o->len++] = (char)c;
			}
		}
	}
}

static void end_line(struct out *o)
{
	put_char(o, '\n');
	flush(o);
}

int profile_text__write(FILE *out, const struct profile *p)
{
	struct out o = {.f = out};
	struct profile_weight sum = {0};
	size_t n = profile__nr_frames(p);

	put_str(&o, PROFILE_TEXT_MAGIC "\nrunq_known");
	put_u64(&o, profile__runq_known(p));
	end_line(&o);
	for (size_t i = 0; i < n; i++) {
		const struct profile_frame *f = profile__frame_at(p, i);

		put_str(&o, "frame");
		put_u64(&o, i);
		put_char(&o, ' ');
		put_char(&o, frame_kind__letter(f->kind));
		put_name(&o, f->name);
		end_line(&o);
	}
	n = profile__nr_stacks(p);
	for (size_t i = 0; i < n; i++) {
		size_t nf;
		const uint32_t *fr = profile__stack_at(p, i, &nf);

		put_str(&o, "stack");
		put_u64(&o, i);
		for (size_t j = 0; j < nf; j++)
			put_u64(&o, fr[j]);
		end_line(&o);
	}
	n = profile__nr_threads(p);
	for (size_t i = 0; i < n; i++) {
		const struct profile_thread *t = profile__thread_at(p, i);

		put_str(&o, "thread");
		put_u64(&o, i);
		put_int(&o, t->pid);
		put_int(&o, t->tid);
		put_name(&o, t->comm);
		end_line(&o);
	}
	for (size_t i = 0; i < n; i++) {
		const struct profile_thread_time *tt = profile__thread_time(p, i);

		if (!tt)
			continue;
		put_str(&o, "time");
		put_u64(&o, i);
		put_u64(&o, tt->wall_ns);
		put_u64(&o, tt->oncpu_ns);
		put_u64(&o, tt->runq_ns);
		/* Added later, and only when known: older files read as before. */
		if (tt->idle_exit_ns)
			put_u64(&o, tt->idle_exit_ns);
		end_line(&o);
	}
	n = profile__nr_rows(p);
	for (size_t i = 0; i < n; i++) {
		const struct profile_row *r = profile__row_at(p, i);

		put_str(&o, "row");
		put_u64(&o, r->thread);
		put_u64(&o, r->stack);
		put_char(&o, ' ');
		put_str(&o, offcpu_state__letter(r->state));
		put_u64(&o, r->w.count);
		put_u64(&o, r->w.off_ns);
		put_u64(&o, r->w.runq_ns);
		end_line(&o);
		/* The profile's own totals cannot wrap, so neither can these. */
		sum.count += r->w.count;
		sum.off_ns += r->w.off_ns;
		sum.runq_ns += r->w.runq_ns;
	}
	put_str(&o, "end");
	put_u64(&o, n);
	put_u64(&o, sum.count);
	put_u64(&o, sum.off_ns);
	put_u64(&o, sum.runq_ns);
	end_line(&o);
	if (fflush(out) || ferror(out))
		return -EIO;
	return 0;
}
