// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpftrace map dumps. bpftrace prints a map entry as "@name[KEY]: VALUE", the
 * key's elements joined by ", ". A stack element prints as "\n" followed by one
 * indented line per frame (innermost first), so an entry with stacks spans
 * several lines and its separators sit at the start of lines:
 *
 *     @offcpu_ns[                   <- "@offcpu_ns[" + "\n    __schedule+1576\n ..."
 *         __schedule+1576
 *     ,                             <- ", " ends the kernel stack; a stack follows
 *         0x7f7c36c5d503
 *     , sleep, 2451]: 300141379     <- then two scalars, then the value
 *
 * An empty stack prints as nothing, hence ", , sleep]". The parser joins an
 * entry's lines with '\n' (giving back bpftrace's own text, minus trailing
 * blanks) and splits that text into elements.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "model/frame_name.h"
#include "parse/bpftrace.h"
#include "util/lines.h"
#include "util/vec.h"

struct elem {
	const char *s; /* scalar text, or the stack's text from its first frame line */
	size_t len;
	bool stack;
};

struct bt_state {
	struct profile *p;
	struct parse_stats *st;
	bool in_entry;
	size_t entry_line;
	char *buf; /* the entry: "name\0" then its key text */
	size_t buf_len, buf_cap, name_len;
	struct elem *elems;
	size_t elems_cap;
	uint32_t *ids;
	size_t ids_cap;
	char *comm;
	size_t comm_cap;
};

static int append(struct bt_state *bs, const char *s, size_t len)
{
	if (vec_reserve(bs->buf, bs->buf_cap, bs->buf_len + len + 1))
		return -ENOMEM;
	memcpy(bs->buf + bs->buf_len, s, len);
	bs->buf_len += len;
	return 0;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static void trim(const char **s, size_t *len)
{
	while (*len && is_blank(**s))
		(*s)++, (*len)--;
	while (*len && is_blank((*s)[*len - 1]))
		(*len)--;
}

static bool ends_with(const char *s, size_t len, const char *suf)
{
	size_t n = strlen(suf);

	return len >= n && !memcmp(s + len - n, suf, n);
}

static bool contains(const char *s, size_t len, const char *needle)
{
	return memmem(s, len, needle, strlen(needle)) != NULL;
}

/* The value of hex digits s[0..len), false when one is not hex or it is too long. */
static bool parse_hex(const char *s, size_t len, uint64_t *v)
{
	*v = 0;
	if (!len || len > 16)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (!isxdigit((unsigned char)s[i]))
			return false;
		*v = *v << 4 | (uint64_t)(isdigit((unsigned char)s[i]) ? s[i] - '0'
								       : (s[i] | 0x20) - 'a' + 10);
	}
	return true;
}

/* Where kernel addresses start on x86-64 and arm64 (48-bit and 52-bit VA). */
#define KERNEL_ADDR_MIN 0xffff800000000000ULL

/*
 * One frame line: "sym+OFF", a raw "0xADDR", or perf mode's "ADDR sym+OFF (module)".
 * Sets *name and *len to the symbol without offset and module, and *kernel when the
 * frame's address is a kernel address.
 */
static void frame_name(const char **name, size_t *len, bool *kernel)
{
	const char *s = *name, *sp;
	size_t n = *len;
	uint64_t addr;

	*kernel = false;
	if (n > 2 && s[n - 1] == ')') {
		const char *open = NULL;

		for (size_t i = n - 1; i > 0; i--)
			if (s[i] == '(' && s[i - 1] == ' ') {
				open = s + i - 1;
				break;
			}
		if (open && open > s)
			n = open - s;
	}
	sp = memchr(s, ' ', n);
	/* perf mode's address has 12 or 16 digits; a short hex-looking word is a symbol's. */
	if (sp && sp - s >= 8 && parse_hex(s, sp - s, &addr)) {
		*kernel = addr >= KERNEL_ADDR_MIN;
		n -= sp + 1 - s;
		s = sp + 1;
		while (n && is_blank(*s))
			s++, n--;
	} else if (n > 2 && s[0] == '0' && (s[1] | 0x20) == 'x' && parse_hex(s + 2, n - 2, &addr)) {
		*kernel = addr >= KERNEL_ADDR_MIN;
		*name = s;
		*len = n;
		return; /* a raw address is its own name */
	}
	/* Strip "+1576" or "+0x628". */
	for (size_t i = n; i > 1; i--) {
		if (s[i - 1] != '+')
			continue;
		const char *off = s + i;
		size_t olen = n - i;
		bool num = olen > 0;

		if (olen > 2 && off[0] == '0' && (off[1] | 0x20) == 'x') {
			for (size_t j = 2; j < olen; j++)
				num &= isxdigit((unsigned char)off[j]) != 0;
		} else {
			for (size_t j = 0; j < olen; j++)
				num &= isdigit((unsigned char)off[j]) != 0;
		}
		if (num)
			n = i - 1;
		break;
	}
	*name = s;
	*len = n;
}

/*
 * Split key text into elements. A stack starts with '\n' and holds the
 * indented lines that follow; an element that is empty (", ," or a trailing
 * ", ") is a stack that printed as nothing. Returns the number of elements.
 */
static int split_key(struct bt_state *bs, const char *s, size_t len, size_t *nelems)
{
	const char *p = s, *end = s + len;
	size_t n = 0;

	for (;;) {
		struct elem e = {.s = p, .len = 0, .stack = false};

		if (p < end && *p == '\n') {
			e.stack = true;
			e.s = p + 1;
			/* Frame lines are indented; the separator line is not. */
			while (p < end && *p == '\n' && p + 1 < end && is_blank(p[1])) {
				const char *nl = memchr(p + 1, '\n', end - p - 1);

				p = nl ? nl : end;
			}
			/* A bare "\n" (no frame lines) leaves p before e.s: an empty stack. */
			e.len = p > e.s ? (size_t)(p - e.s) : 0;
			if (p < end && *p == '\n')
				p++;
		} else if (p == end || *p == ',') {
			e.stack = true; /* empty */
		} else {
			while (p < end && *p != ',' && *p != '\n')
				p++;
			e.len = p - e.s;
			trim(&e.s, &e.len);
		}
		if (n == bs->elems_cap && vec_reserve(bs->elems, bs->elems_cap, n + 1))
			return -ENOMEM;
		bs->elems[n++] = e;
		if (p >= end)
			break;
		if (*p != ',')
			return -EINVAL;
		p++;
		if (p < end && *p == ' ')
			p++;
		if (p == end) {
			/* ", " then "]": a last stack that printed as nothing. */
			if (n == bs->elems_cap && vec_reserve(bs->elems, bs->elems_cap, n + 1))
				return -ENOMEM;
			bs->elems[n++] = (struct elem){.s = p, .len = 0, .stack = true};
			break;
		}
	}
	*nelems = n;
	return 0;
}

/* A scalar key that is an int: a pid or tid. */
static bool as_int(const struct elem *e, int *v)
{
	long long x = 0;
	size_t i = 0;
	bool neg = false;

	if (e->len && e->s[0] == '-')
		neg = true, i = 1;
	if (i == e->len || e->len - i > 10)
		return false;
	for (; i < e->len; i++) {
		if (!isdigit((unsigned char)e->s[i]))
			return false;
		x = x * 10 + (e->s[i] - '0');
	}
	if (neg)
		x = -x;
	if (x < INT_MIN || x > INT_MAX)
		return false;
	*v = (int)x;
	return true;
}

/* Intern one stack element's frames, outermost first, appending ids at *nids. */
static int add_stack(struct bt_state *bs, const struct elem *e, enum frame_kind kind, size_t *nids)
{
	const char *p = e->s, *end = e->s + e->len;
	size_t first = *nids;

	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		const char *le = nl ? nl : end;
		const char *name = p;
		size_t len = le - p;
		char unsym[64];
		bool kaddr;
		int id;

		p = nl ? nl + 1 : end;
		trim(&name, &len);
		if (!len)
			continue;
		frame_name(&name, &len, &kaddr);
		if (!len)
			continue;
		/* A raw address (or perf mode's "[unknown]") is not a symbol: say so. */
		if (frame_name__is_raw(name, len)) {
			len = frame_name__unsymbolize(name, len, unsym, sizeof(unsym));
			name = unsym;
		}
		id = profile__frame(bs->p, kaddr ? FRAME_KERNEL : kind, name, len);
		if (id < 0)
			return id;
		if (vec_reserve(bs->ids, bs->ids_cap, *nids + 1))
			return -ENOMEM;
		bs->ids[(*nids)++] = id;
	}
	/* bpftrace prints the innermost frame first; the profile wants the root first. */
	for (size_t i = first, j = *nids; i + 1 < j; i++, j--) {
		uint32_t t = bs->ids[i];

		bs->ids[i] = bs->ids[j - 1];
		bs->ids[j - 1] = t;
	}
	return 0;
}

/* Time unit of a map by its name's suffix; 0 when it holds a count. */
static uint64_t name_unit_ns(const char *name, size_t len)
{
	if (ends_with(name, len, "_ns"))
		return 1;
	if (ends_with(name, len, "_us"))
		return 1000;
	if (ends_with(name, len, "_ms"))
		return 1000000;
	if (ends_with(name, len, "_s"))
		return 1000000000;
	return 0;
}

/* The entry in bs->buf is complete: value is the text after its closing "]:". */
static int finish_entry(struct bt_state *bs, const char *value, size_t vlen)
{
	struct parse_stats *st = bs->st;
	const char *name = bs->buf, *key = bs->buf + bs->name_len + 1;
	size_t name_len = bs->name_len, key_len = bs->buf_len - bs->name_len - 1;
	size_t nelems = 0, nids = 0, nstacks = 0, i;
	struct profile_weight w = {0};
	bool user_named, kernel_named;
	const char *comm = NULL;
	size_t comm_len = 0;
	int pid = 0, tid = 0, nnum = 0, err, thread, stack;
	uint64_t v = 0, unit;

	bs->in_entry = false;
	trim(&value, &vlen);
	/* A histogram or stats() value: no off-CPU data of the kind we read. */
	if (!vlen || (vlen >= 6 && !memcmp(value, "count ", 6))) {
		st->skipped++;
		return 0;
	}
	err = split_key(bs, key, key_len, &nelems);
	if (err == -EINVAL) {
		parse__malformed(st, bs->entry_line, "map key is not \"elem, elem, ...\"");
		return 0;
	}
	if (err)
		return err;
	for (i = 0; i < nelems; i++)
		nstacks += bs->elems[i].stack;
	if (!nstacks) {
		st->skipped++; /* a map without stacks, e.g. @start[tid] */
		return 0;
	}
	for (i = 0; i < vlen; i++) {
		unsigned d = (unsigned char)value[i] - '0';

		if (d > 9) {
			parse__malformed(st, bs->entry_line,
					 "map value is not a non-negative integer");
			return 0;
		}
		if (v > (UINT64_MAX - d) / 10)
			return -EOVERFLOW;
		v = v * 10 + d;
	}
	unit = name_unit_ns(name, name_len);
	if (unit) {
		if (v > UINT64_MAX / unit)
			return -EOVERFLOW;
		w.count = 1;
		w.off_ns = v * unit;
	} else {
		w.count = v;
	}

	user_named = contains(name, name_len, "user") || contains(name, name_len, "ustack");
	kernel_named = contains(name, name_len, "kernel") || contains(name, name_len, "kstack");
	/*
	 * The model wants user frames then kernel frames: intern the user stacks
	 * first, then the kernel stacks, each outermost first.
	 */
	for (int pass = 0; pass < 2; pass++) {
		size_t si = 0;

		for (i = 0; i < nelems; i++) {
			const struct elem *e = &bs->elems[i];
			bool first_is_user = user_named && !kernel_named;
			bool is_user;

			if (!e->stack)
				continue;
			is_user = si++ == 0 ? first_is_user : !first_is_user;
			if (is_user != (pass == 0))
				continue;
			err = add_stack(bs, e, is_user ? FRAME_USER : FRAME_KERNEL, &nids);
			if (err)
				return err;
		}
	}
	for (i = 0; i < nelems; i++) {
		const struct elem *e = &bs->elems[i];
		int x;

		if (e->stack)
			continue;
		if (as_int(e, &x)) {
			if (nnum == 0)
				pid = x;
			else if (nnum == 1)
				tid = x;
			nnum++;
		} else if (!comm) {
			comm = e->s;
			comm_len = e->len;
		}
	}
	if (vec_reserve(bs->comm, bs->comm_cap, comm_len + 1))
		return -ENOMEM;
	if (comm_len)
		memcpy(bs->comm, comm, comm_len);
	bs->comm[comm_len] = '\0';
	thread = profile__thread(bs->p, pid, tid, bs->comm);
	if (thread < 0)
		return thread;
	stack = profile__stack(bs->p, bs->ids, nids);
	if (stack < 0)
		return stack;
	err = profile__add(bs->p, thread, stack, OFFCPU_STATE_UNKNOWN, &w);
	if (err)
		return err;
	st->records++;
	return 0;
}

/* The closing "]: VALUE" of an entry's last line; NULL when the line has none. */
static const char *closing(const char *line, size_t len)
{
	for (size_t i = len; i >= 2; i--)
		if (line[i - 2] == ']' && line[i - 1] == ':')
			return line + i - 2;
	return NULL;
}

static int parse_line(struct bt_state *bs, const char *line, size_t len, size_t lineno)
{
	struct parse_stats *st = bs->st;
	const char *close, *name;
	size_t name_len;

	while (len && is_blank(line[len - 1]))
		len--;
	if (bs->in_entry && memchr(line, '\0', len)) {
		parse__malformed(st, bs->entry_line, "NUL byte in line");
		bs->in_entry = false;
		return 0;
	}
	if (bs->in_entry) {
		if (len && (is_blank(line[0]) || line[0] == ',' || line[0] == ']')) {
			close = is_blank(line[0]) ? NULL : closing(line, len);
			if (append(bs, "\n", 1) ||
			    append(bs, line, close ? (size_t)(close - line) : len))
				return -ENOMEM;
			if (close)
				return finish_entry(bs, close + 2, line + len - close - 2);
			return 0;
		}
		parse__malformed(st, bs->entry_line, "map entry cut short");
		bs->in_entry = false;
	}
	if (!len)
		return 0;
	if (memchr(line, '\0', len)) {
		parse__malformed(st, lineno, "NUL byte in line");
		return 0;
	}
	if (line[0] != '@') {
		st->skipped++; /* printf output, "Attaching N probes...", histogram buckets */
		return 0;
	}
	name = line + 1;
	for (name_len = 0; 1 + name_len < len; name_len++) {
		char c = name[name_len];

		if (!isalnum((unsigned char)c) && c != '_')
			break;
	}
	if (1 + name_len == len || name[name_len] != '[') {
		st->skipped++; /* "@name: 5", a histogram's "@name:" */
		return 0;
	}
	bs->buf_len = 0;
	if (append(bs, name, name_len) || append(bs, "", 1))
		return -ENOMEM;
	bs->name_len = name_len;
	bs->entry_line = lineno;
	bs->in_entry = true;
	line += 2 + name_len;
	len -= 2 + name_len;
	close = closing(line, len);
	if (append(bs, line, close ? (size_t)(close - line) : len))
		return -ENOMEM;
	if (close)
		return finish_entry(bs, close + 2, line + len - close - 2);
	return 0;
}

int bpftrace__parse(FILE *in, struct profile *p, struct parse_stats *stats)
{
	struct parse_stats local;
	struct bt_state bs = {.p = p, .st = stats ? stats : &local};
	struct line_reader *lr;
	const char *line;
	size_t len;
	int err;

	memset(bs.st, 0, sizeof(*bs.st));
	lr = line_reader__new(in);
	if (!lr)
		return -ENOMEM;
	while ((err = line_reader__next(lr, &line, &len)) > 0) {
		bs.st->lines++;
		err = parse_line(&bs, line, len, bs.st->lines);
		if (err) {
			bs.st->error_line = bs.st->lines;
			break;
		}
	}
	if (!err && bs.in_entry)
		parse__malformed(bs.st, bs.entry_line, "map entry cut short");
	line_reader__free(lr);
	free(bs.buf);
	free(bs.elems);
	free(bs.ids);
	free(bs.comm);
	return err;
}
