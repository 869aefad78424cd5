// SPDX-License-Identifier: GPL-2.0-only
/*
 * profile.proto written by hand: the wire format needs only varints and
 * length-delimited fields, far less than a protobuf library would bring in.
 * Submessages are encoded into a scratch buffer first, because a length prefix
 * must precede its message. gzip comes from zlib.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "analyze/reasons.h"
#include "output/pprof.h"
#include "util/hash.h"
#include "util/hmap.h"
#include "util/vec.h"

/* Field numbers of perftools.profiles (proto/profile.proto). */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,

	VALUE_TYPE_TYPE = 1,
	VALUE_TYPE_UNIT = 2,

	SAMPLE_LOCATION_ID = 1,
	SAMPLE_VALUE = 2,
	SAMPLE_LABEL = 3,

	LABEL_KEY = 1,
	LABEL_STR = 2,
	LABEL_NUM = 3,
	LABEL_NUM_UNIT = 4,

	MAPPING_ID = 1,
	MAPPING_FILENAME = 5,
	MAPPING_HAS_FUNCTIONS = 7,

	LOCATION_ID = 1,
	LOCATION_MAPPING_ID = 2,
	LOCATION_LINE = 4,

	LINE_FUNCTION_ID = 1,

	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
};

enum { WIRE_VARINT = 0, WIRE_LEN = 2 };
/* User first: pprof names the first mapping as the profile's "File". */
enum { MAPPING_USER = 1, MAPPING_KERNEL = 2 };

/* A growable byte buffer; an allocation failure sticks and is reported once. */
struct pbuf {
	uint8_t *d;
	size_t len, cap;
	bool nomem;
};

static void pb_put(struct pbuf *b, const void *src, size_t n)
{
	/* n == 0: src may be an empty buffer's NULL, which memcpy must not get. */
	if (b->nomem || !n)
		return;
	if (n > SIZE_MAX - b->len || vec_reserve(b->d, b->cap, b->len + n)) {
		b->nomem = true;
		return;
	}
	memcpy(b->d + b->len, src, n);
	b->len += n;
}

static void pb_varint(struct pbuf *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	do {
		tmp[n++] = (uint8_t)(v & 0x7f) | (v >= 0x80 ? 0x80 : 0);
		v >>= 7;
	} while (v);
	pb_put(b, tmp, n);
}

static void pb_tag(struct pbuf *b, int field, int wire)
{
	pb_varint(b, (uint64_t)field << 3 | wire);
}

/* A varint field; zero is the proto3 default and is left out, as encoders do. */
static void pb_u64(struct pbuf *b, int field, uint64_t v)
{
	if (!v)
		return;
	pb_tag(b, field, WIRE_VARINT);
	pb_varint(b, v);
}

static void pb_bytes(struct pbuf *b, int field, const void *d, size_t n)
{
	pb_tag(b, field, WIRE_LEN);
	pb_varint(b, n);
	pb_put(b, d, n);
}

/* Append sub as a length-delimited field and empty it for reuse. */
static void pb_msg(struct pbuf *b, int field, struct pbuf *sub)
{
	if (sub->nomem)
		b->nomem = true;
	pb_bytes(b, field, sub->d, sub->len);
	sub->len = 0;
}

/* The string table: strings interned to their index; index 0 is "". */
struct strtab {
	const char **s;
	size_t nr, cap;
	struct hmap idx; /* a string's hash -> its index */
};

/* Index of s (not copied: it must outlive the table); -ENOMEM. */
static int64_t strtab_id(struct strtab *t, const char *s)
{
	uint64_t h = hash_bytes(s, strlen(s), 0);
	size_t pos;
	void *v;

	if (hmap__reserve(&t->idx) || vec_reserve(t->s, t->cap, t->nr + 1))
		return -ENOMEM;
	for (pos = hmap__first(&t->idx, h); (v = hmap__next(&t->idx, h, &pos));)
		if (!strcmp(t->s[hmap_idx_of(v)], s))
			return (int64_t)hmap_idx_of(v);
	t->s[t->nr] = s;
	hmap__put(&t->idx, pos, h, hmap_idx(t->nr));
	return (int64_t)t->nr++;
}

static void strtab_free(struct strtab *t)
{
	free(t->s);
	hmap__free(&t->idx);
}

/*
 * Locations of a physical frame with the functions inlined into it: the
 * frames' ids, outermost first, stored flat; interned so that each chain is
 * one location wherever it occurs.
 */
struct inl_locs {
	uint32_t *ids;
	size_t nids, ids_cap;
	size_t *first; /* chain i is ids[first[i]] .. ids[first[i + 1]] */
	size_t nr, first_cap;
	struct hmap idx; /* a chain's hash -> its index */
};

struct enc {
	const struct profile *p;
	struct reasons *rs;
	struct strtab st;
	struct pbuf out, msg, sub, packed;
	struct inl_locs inl;
	char (*ids)[2][12]; /* per thread: its pid and tid as strings, when string_ids */
	int err;
};

/*
 * The location id of frames fr[0..n) (a physical frame, then the functions
 * inlined into it): frame id + 1 for one frame, past the frames' ids for a
 * chain. 0 on -ENOMEM (in e->err).
 */
static uint64_t chain_location(struct enc *e, const uint32_t *fr, size_t n)
{
	struct inl_locs *l = &e->inl;
	uint64_t h;
	size_t pos;
	void *v;

	if (n == 1)
		return (uint64_t)fr[0] + 1;
	h = hash_bytes(fr, n * sizeof(*fr), n);
	if (hmap__reserve(&l->idx) || vec_reserve(l->first, l->first_cap, l->nr + 2) ||
	    vec_reserve(l->ids, l->ids_cap, l->nids + n)) {
		e->err = -ENOMEM;
		return 0;
	}
	if (!l->nr)
		l->first[0] = 0;
	for (pos = hmap__first(&l->idx, h); (v = hmap__next(&l->idx, h, &pos));) {
		size_t i = hmap_idx_of(v);

		if (l->first[i + 1] - l->first[i] == n &&
		    !memcmp(l->ids + l->first[i], fr, n * sizeof(*fr)))
			return profile__nr_frames(e->p) + 1 + i;
	}
	memcpy(l->ids + l->nids, fr, n * sizeof(*fr));
	l->nids += n;
	l->first[l->nr + 1] = l->nids;
	hmap__put(&l->idx, pos, h, hmap_idx(l->nr));
	return profile__nr_frames(e->p) + 1 + l->nr++;
}

/* Interns s, remembering the first failure so call sites stay flat. */
static uint64_t str(struct enc *e, const char *s)
{
	int64_t id = strtab_id(&e->st, s);

	if (id < 0) {
		e->err = (int)id;
		return 0;
	}
	return (uint64_t)id;
}

static void value_type(struct enc *e, int field, const char *type, const char *unit)
{
	pb_u64(&e->msg, VALUE_TYPE_TYPE, str(e, type));
	pb_u64(&e->msg, VALUE_TYPE_UNIT, str(e, unit));
	pb_msg(&e->out, field, &e->msg);
}

static void label_str(struct enc *e, const char *key, const char *val)
{
	pb_u64(&e->sub, LABEL_KEY, str(e, key));
	pb_u64(&e->sub, LABEL_STR, str(e, val));
	pb_msg(&e->msg, SAMPLE_LABEL, &e->sub);
}

static void label_num(struct enc *e, const char *key, int64_t num, const char *unit)
{
	pb_u64(&e->sub, LABEL_KEY, str(e, key));
	/* num is always written: a label whose value is 0 must still say so. */
	pb_tag(&e->sub, LABEL_NUM, WIRE_VARINT);
	pb_varint(&e->sub, (uint64_t)num);
	if (unit)
		pb_u64(&e->sub, LABEL_NUM_UNIT, str(e, unit));
	pb_msg(&e->msg, SAMPLE_LABEL, &e->sub);
}

/*
 * One sample: value [count, off_ns], the row's labels, and the reason of this
 * part of it (detail: a rule's, or NULL).
 */
static void encode_sample(struct enc *e, const struct profile_row *r, const uint32_t *fr, size_t n,
			  uint64_t count, uint64_t off_ns, enum reason reason, const char *detail)
{
	const struct profile_thread *t = profile__thread_at(e->p, r->thread);

	/*
	 * pprof wants the leaf first; the model keeps the root first. A
	 * frame and the functions inlined into it are one location.
	 */
	for (size_t j = n; j > 0;) {
		size_t end = j;

		while (--j > 0 && profile__frame_at(e->p, fr[j])->kind == FRAME_INLINE)
			;
		pb_varint(&e->packed, chain_location(e, fr + j, end - j));
	}
	pb_msg(&e->msg, SAMPLE_LOCATION_ID, &e->packed);
	pb_varint(&e->packed, count);
	pb_varint(&e->packed, off_ns);
	pb_msg(&e->msg, SAMPLE_VALUE, &e->packed);

	label_str(e, "comm", t->comm);
	label_str(e, "state", offcpu_state__name(r->state));
	if (t->pid)
		label_num(e, "pid", t->pid, NULL);
	if (t->tid)
		label_num(e, "tid", t->tid, NULL);
	if (e->ids) {
		char(*id)[12] = e->ids[r->thread];

		/* The table keeps pointers: the strings live as long as the encoder. */
		snprintf(id[0], sizeof(id[0]), "%d", (int)t->pid);
		snprintf(id[1], sizeof(id[1]), "%d", (int)t->tid);
		if (t->pid)
			label_str(e, "process", id[0]);
		if (t->tid)
			label_str(e, "thread", id[1]);
	}
	if (profile__runq_known(e->p))
		label_num(e, "runq_ns", (int64_t)r->w.runq_ns, "nanoseconds");
	label_str(e, "reason", reason__name(reason));
	if (detail)
		label_str(e, "reason_detail", detail);
	pb_msg(&e->out, PROFILE_SAMPLE, &e->msg);
}

static int encode_samples(struct enc *e)
{
	const struct profile *p = e->p;
	bool runq_known = profile__runq_known(p);

	for (size_t i = 0; i < profile__nr_rows(p); i++) {
		const struct profile_row *r = profile__row_at(p, i);
		const struct profile_thread *t = profile__thread_at(p, r->thread);
		const uint32_t *fr;
		const char *detail;
		enum reason reason;
		uint64_t rq;
		size_t n;

		fr = profile__stack_at(p, r->stack, &n);
		if (!t || (!fr && n))
			return -EINVAL;
		if (r->w.count > INT64_MAX || r->w.off_ns > INT64_MAX || r->w.runq_ns > INT64_MAX)
			return -EOVERFLOW;
		reason = reasons__get_detail(e->rs, r->stack, r->state, &detail);
		/*
		 * The run-queue part of a blocked row is runqueue time, as in the
		 * report: a sample of its own, so the reason labels sum the same.
		 */
		rq = runq_known && reason != REASON_RUNQUEUE && r->w.runq_ns <= r->w.off_ns
			     ? r->w.runq_ns
			     : 0;
		if (rq < r->w.off_ns || !rq)
			encode_sample(e, r, fr, n, r->w.count, r->w.off_ns - rq, reason, detail);
		if (rq)
			encode_sample(e, r, fr, n, rq < r->w.off_ns ? 0 : r->w.count, rq,
				      REASON_RUNQUEUE, NULL);
		if (e->err)
			return e->err;
	}
	return 0;
}

static void encode_mapping(struct enc *e, uint64_t id, const char *file)
{
	pb_u64(&e->msg, MAPPING_ID, id);
	pb_u64(&e->msg, MAPPING_FILENAME, str(e, file));
	pb_u64(&e->msg, MAPPING_HAS_FUNCTIONS, 1);
	pb_msg(&e->out, PROFILE_MAPPING, &e->msg);
}

/* Locations (one per frame) and functions (one per distinct name). */
static int encode_frames(struct enc *e)
{
	const struct profile *p = e->p;
	size_t nr = profile__nr_frames(p);
	/* function id by string-table index of the name; 0 = none yet */
	uint64_t *func_of = NULL, *names = NULL, *fid_of = NULL, nfunc = 0;
	const struct inl_locs *inl = &e->inl;
	size_t func_cap = 0;
	int err = 0;

	names = malloc((nr ? nr : 1) * sizeof(*names));
	fid_of = malloc((nr ? nr : 1) * sizeof(*fid_of));
	if (!names || !fid_of) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < nr; i++) {
		const struct profile_frame *f = profile__frame_at(p, (uint32_t)i);
		uint64_t name, fid;

		if (!f) {
			err = -EINVAL;
			goto cleanup;
		}
		name = str(e, f->name);
		if (e->err) {
			err = e->err;
			goto cleanup;
		}
		if (name >= func_cap) {
			size_t old = func_cap;

			if (vec_reserve(func_of, func_cap, (size_t)name + 1)) {
				err = -ENOMEM;
				goto cleanup;
			}
			memset(func_of + old, 0, (func_cap - old) * sizeof(*func_of));
		}
		fid = func_of[name];
		if (!fid) {
			fid = func_of[name] = ++nfunc;
			names[fid - 1] = name;
		}
		fid_of[i] = fid;
		pb_u64(&e->msg, LOCATION_ID, i + 1);
		pb_u64(&e->msg, LOCATION_MAPPING_ID,
		       f->kind == FRAME_KERNEL ? MAPPING_KERNEL : MAPPING_USER);
		pb_u64(&e->sub, LINE_FUNCTION_ID, fid);
		pb_msg(&e->msg, LOCATION_LINE, &e->sub);
		pb_msg(&e->out, PROFILE_LOCATION, &e->msg);
	}
	/* A chain's lines run innermost first, the physical frame's function last. */
	for (size_t c = 0; c < inl->nr; c++) {
		pb_u64(&e->msg, LOCATION_ID, nr + 1 + c);
		pb_u64(&e->msg, LOCATION_MAPPING_ID, MAPPING_USER);
		for (size_t j = inl->first[c + 1]; j-- > inl->first[c];) {
			pb_u64(&e->sub, LINE_FUNCTION_ID, fid_of[inl->ids[j]]);
			pb_msg(&e->msg, LOCATION_LINE, &e->sub);
		}
		pb_msg(&e->out, PROFILE_LOCATION, &e->msg);
	}
	for (uint64_t fid = 1; fid <= nfunc; fid++) {
		pb_u64(&e->msg, FUNCTION_ID, fid);
		pb_u64(&e->msg, FUNCTION_NAME, names[fid - 1]);
		pb_u64(&e->msg, FUNCTION_SYSTEM_NAME, names[fid - 1]);
		pb_msg(&e->out, PROFILE_FUNCTION, &e->msg);
	}
cleanup:
	free(func_of);
	free(names);
	free(fid_of);
	return err;
}

int pprof__encode(const struct profile *p, const struct pprof_opts *opts, uint8_t **buf,
		  size_t *len)
{
	static const struct pprof_opts no_opts;
	const struct profile_totals *tot;
	struct enc e = {.p = p};
	int err;

	*buf = NULL;
	*len = 0;
	if (!opts)
		opts = &no_opts;
	if (opts->string_ids) {
		e.ids = calloc(profile__nr_threads(p) ? profile__nr_threads(p) : 1, sizeof(*e.ids));
		if (!e.ids)
			return -ENOMEM;
	}
	str(&e, "");
	value_type(&e, PROFILE_SAMPLE_TYPE, "events", "count");
	value_type(&e, PROFILE_SAMPLE_TYPE, "off_cpu", "nanoseconds");
	err = e.err;
	e.rs = reasons__new(p);
	if (!err && !e.rs)
		err = -ENOMEM;
	if (!err)
		err = encode_samples(&e);
	if (err)
		goto cleanup;
	/*
	 * The model keeps names, not addresses, so the mappings are only the
	 * two address spaces by name, empty, with has_functions set (nothing
	 * for pprof to symbolize).
	 */
	encode_mapping(&e, MAPPING_USER, "[user]");
	encode_mapping(&e, MAPPING_KERNEL, "[kernel.kallsyms]");
	err = encode_frames(&e);
	if (err)
		goto cleanup;
	if (opts->time_nanos > 0)
		pb_u64(&e.out, PROFILE_TIME_NANOS, (uint64_t)opts->time_nanos);
	if (opts->duration_nanos > 0)
		pb_u64(&e.out, PROFILE_DURATION_NANOS, (uint64_t)opts->duration_nanos);
	value_type(&e, PROFILE_PERIOD_TYPE, "off_cpu", "nanoseconds");
	pb_u64(&e.out, PROFILE_PERIOD, 1);
	if (opts->comment)
		pb_u64(&e.out, PROFILE_COMMENT, str(&e, opts->comment));
	/* A capture of counts only (bpftrace "stacks") has no time to show by default. */
	tot = profile__totals(p);
	pb_u64(&e.out, PROFILE_DEFAULT_SAMPLE_TYPE,
	       str(&e, !tot->all.off_ns && tot->all.count ? "events" : "off_cpu"));
	/* Last, once every string is interned. */
	for (size_t i = 0; i < e.st.nr; i++)
		pb_bytes(&e.out, PROFILE_STRING_TABLE, e.st.s[i], strlen(e.st.s[i]));
	err = e.err;
	if (!err && (e.out.nomem || e.msg.nomem || e.sub.nomem || e.packed.nomem))
		err = -ENOMEM;
	if (!err) {
		*buf = e.out.d;
		*len = e.out.len;
		e.out.d = NULL;
	}
cleanup:
	reasons__free(e.rs);
	free(e.ids);
	free(e.out.d);
	free(e.msg.d);
	free(e.sub.d);
	free(e.packed.d);
	free(e.inl.ids);
	free(e.inl.first);
	hmap__free(&e.inl.idx);
	strtab_free(&e.st);
	return err;
}

int pprof__write(FILE *out, const struct profile *p, const struct pprof_opts *opts)
{
	uint8_t *buf = NULL, chunk[16384];
	z_stream z = {0};
	size_t len;
	int err, zret;

	err = pprof__encode(p, opts, &buf, &len);
	if (err)
		return err;
	/* windowBits 15 + 16: a gzip wrapper with a zero mtime, so output is reproducible. */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK) {
		free(buf);
		return -ENOMEM;
	}
	z.next_in = buf;
	do {
		/* avail_in is 32 bits wide: feed a large message in pieces. */
		size_t piece = len > (1u << 30) ? (1u << 30) : len;
		int flush;

		if (!z.avail_in) {
			z.avail_in = (uInt)piece;
			len -= piece;
		}
		flush = len ? Z_NO_FLUSH : Z_FINISH;
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		zret = deflate(&z, flush);
		if (zret == Z_STREAM_ERROR) {
			err = -EIO;
			goto cleanup;
		}
		if (fwrite(chunk, 1, sizeof(chunk) - z.avail_out, out) !=
		    sizeof(chunk) - z.avail_out) {
			err = -EIO;
			goto cleanup;
		}
	} while (zret != Z_STREAM_END);
	if (fflush(out))
		err = -EIO;
cleanup:
	deflateEnd(&z);
	free(buf);
	return err;
}
