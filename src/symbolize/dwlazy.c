// SPDX-License-Identifier: GPL-2.0-only
/*
 * DWARF inflated as far as inline lookups need (contract in dwlazy.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <zlib.h>

#include "symbolize/dwlazy.h"
#include "util/vec.h"

/* How much more .debug_info one step inflates at least: fewer, larger inflate() calls. */
#define INFLATE_STEP (256u << 10)

/* The sections kept, whole except .debug_info. The first three are required. */
static const char *const kept[] = {
	".debug_info", ".debug_abbrev",	  ".debug_aranges",
	".debug_str",  ".debug_line_str", ".debug_str_offsets",
	".debug_addr", ".debug_rnglists", ".debug_ranges",
};
#define NKEPT (sizeof(kept) / sizeof(kept[0]))

/* Debug sections an inline lookup never reads: left out of the image. */
static const char *const skipped[] = {
	".debug_loc",	       ".debug_loclists",     ".debug_line",	 ".debug_frame",
	".debug_macro",	       ".debug_macinfo",      ".debug_pubnames", ".debug_pubtypes",
	".debug_gnu_pubnames", ".debug_gnu_pubtypes",
};

struct arange {
	uint64_t lo, hi, cu; /* [lo, hi) is in the CU whose header is at cu */
};

struct isec {
	Elf_Scn *scn; /* in the file */
	bool compressed;
	uint64_t file_off, file_len; /* its bytes in the file (after the compression header) */
	uint64_t size;		     /* uncompressed */
	uint64_t img_off;	     /* where its bytes are in the image */
	uint64_t align;
};

/* Compressed bytes are read with pread, this much at a time: mapped, they would stay resident. */
#define INBUF (16u << 10)

/* Compact layout: where .debug_info bytes no lookup needs are inflated to, this much at a time. */
#define SCRATCH (16u << 10)

/*
 * Compact layout: the stream's state is kept every this many bytes of
 * .debug_info, so that reaching a CU the stream has passed costs at most
 * this much inflated again, for 40 KB per copy (zlib's state and window).
 * libc in a PostgreSQL capture: 15 copies, and 7.5 MB inflated in all to
 * reach 4.2 MB (25 MB with a copy every MB and no jumping ahead).
 */
#define CKPT_EVERY (256u << 10)

/* A copy of .debug_info's stream (inflateCopy()) taken at pos. */
struct ckpt {
	z_stream z;
	uint64_t pos;	 /* bytes of .debug_info before it */
	uint64_t in_off; /* the file offset of its next compressed byte */
};

/* Compact layout: a CU placed in the image, by its offset in the file's .debug_info. */
struct placed {
	uint64_t file_off, img_off;
};

struct dwlazy {
	int fd;
	Elf *file; /* the file itself, read by libelf through mmap */
	struct isec sec[NKEPT];
	uint8_t *img; /* the ELF image libdw reads */
	size_t img_len;
	Elf *elf;
	Dwarf *dw;
	z_stream z; /* .debug_info's stream, while not all inflated */
	bool z_live;
	uint64_t in_off, in_left; /* its compressed bytes not read yet */
	uint8_t inbuf[INBUF];
	uint8_t *info;
	size_t info_size, info_done;
	bool broken; /* inflating failed: no more lookups */
	struct arange *ar;
	size_t nar;
	/*
	 * Compact layout (see dwlazy.h): the CUs looked up, one after another
	 * from the image's .debug_info start (placed bytes used), found by
	 * their file offsets in cus[]. info_done is then the furthest the
	 * stream has been, and the stream may go back to a checkpoint.
	 */
	bool compact;
	struct placed *cus;
	size_t ncus, cus_cap, placed;
	struct ckpt *ck;
	size_t nck, ck_cap;
	uint8_t scratch[SCRATCH];
};

static bool name_in(const char *name, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(name, list[i]))
			return true;
	return false;
}

/* Where a compressed section's stream is in the file, and its size inflated. */
static bool zlib_header(int fd, const GElf_Shdr *sh, struct isec *s)
{
	Elf64_Chdr ch;

	if (sh->sh_size < sizeof(ch) ||
	    pread(fd, &ch, sizeof(ch), (off_t)sh->sh_offset) != (ssize_t)sizeof(ch) ||
	    ch.ch_type != ELFCOMPRESS_ZLIB)
		return false;
	s->compressed = true;
	s->file_off = sh->sh_offset + sizeof(ch);
	s->file_len = sh->sh_size - sizeof(ch);
	s->size = ch.ch_size;
	s->align = ch.ch_addralign ? ch.ch_addralign : 1;
	return true;
}

/*
 * Inflate from the file (*in_off, *in_left bytes left) until z's output
 * is full or its stream ends. The zlib code of the last step, Z_DATA_ERROR
 * when the file cannot be read.
 */
static int pump(struct dwlazy *d, z_stream *z, uint64_t *in_off, uint64_t *in_left)
{
	int r = Z_OK;

	while (z->avail_out) {
		if (!z->avail_in) {
			size_t n = *in_left < INBUF ? (size_t)*in_left : INBUF;
			ssize_t got;

			if (!n)
				return Z_BUF_ERROR;
			got = pread(d->fd, d->inbuf, n, (off_t)*in_off);
			if (got <= 0)
				return Z_DATA_ERROR;
			*in_off += (uint64_t)got;
			*in_left -= (uint64_t)got;
			z->next_in = d->inbuf;
			z->avail_in = (uInt)got;
		}
		r = inflate(z, Z_NO_FLUSH);
		if (r != Z_OK)
			return r;
	}
	return r;
}

/* A kept section other than .debug_info, whole into the image (before .debug_info's stream). */
static bool section_fill(struct dwlazy *d, const struct isec *s)
{
	uint64_t off = s->file_off, left = s->file_len;
	z_stream z = {0};
	bool ok;

	if (!s->compressed)
		return pread(d->fd, d->img + s->img_off, s->size, (off_t)s->file_off) ==
		       (ssize_t)s->size;
	if (s->size > UINT32_MAX || inflateInit(&z) != Z_OK)
		return false;
	z.next_out = d->img + s->img_off;
	z.avail_out = (uInt)s->size;
	ok = pump(d, &z, &off, &left) == Z_STREAM_END && z.total_out == s->size;
	inflateEnd(&z);
	return ok;
}

/* .debug_info inflated through byte upto (at least INFLATE_STEP more). */
static bool info_ensure(struct dwlazy *d, size_t upto)
{
	if (upto > d->info_size)
		upto = d->info_size;
	while (d->info_done < upto) {
		size_t want = d->info_size - d->info_done;
		int r;

		if (d->broken || !d->z_live)
			return false;
		if (want > upto - d->info_done + INFLATE_STEP)
			want = upto - d->info_done + INFLATE_STEP;
		if (want > UINT32_MAX)
			want = UINT32_MAX;
		d->z.next_out = d->info + d->info_done;
		d->z.avail_out = (uInt)want;
		r = pump(d, &d->z, &d->in_off, &d->in_left);
		d->info_done = d->z.total_out;
		if (r == Z_STREAM_END || d->info_done >= d->info_size) {
			inflateEnd(&d->z);
			d->z_live = false;
			if (d->info_done != d->info_size)
				d->broken = true;
		} else if (r != Z_OK) {
			inflateEnd(&d->z);
			d->z_live = false;
			d->broken = true;
		}
	}
	return !d->broken;
}

/* ---- reading DWARF's own encodings ---- */

struct rd {
	const uint8_t *p, *end;
};

static bool rd_u(struct rd *r, size_t n, uint64_t *v)
{
	if ((size_t)(r->end - r->p) < n)
		return false;
	*v = 0;
	for (size_t i = 0; i < n; i++)
		*v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	return true;
}

static bool rd_uleb(struct rd *r, uint64_t *v)
{
	unsigned int shift = 0;

	*v = 0;
	while (r->p < r->end) {
		uint8_t b = *r->p++;

		if (shift < 64)
			*v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

static int ar_cmp(const void *a, const void *b)
{
	const struct arange *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* .debug_aranges: which CU holds which addresses. false when it cannot be read whole. */
static bool aranges_read(struct dwlazy *d, const struct isec *s)
{
	struct rd r = {d->img + s->img_off, d->img + s->img_off + s->size};
	size_t cap = 0;

	while (r.p < r.end) {
		const uint8_t *set = r.p;
		uint64_t len, ver, cu, asz, ssz, lo, n;
		bool dw64 = false;
		struct rd t;

		if (!rd_u(&r, 4, &len))
			return false;
		if (len == 0xffffffff) {
			if (!rd_u(&r, 8, &len))
				return false;
			dw64 = true;
		}
		if (len > (uint64_t)(r.end - r.p))
			return false;
		t = (struct rd){r.p, r.p + len};
		r.p += len;
		if (!rd_u(&t, 2, &ver) || ver != 2 || !rd_u(&t, dw64 ? 8 : 4, &cu) ||
		    !rd_u(&t, 1, &asz) || !rd_u(&t, 1, &ssz) || asz != 8 || ssz != 0)
			return false;
		/* the tuples start at a multiple of twice the address size from the set's start */
		t.p = set + (((size_t)(t.p - set) + 15) & ~(size_t)15);
		for (;;) {
			if (!rd_u(&t, 8, &lo) || !rd_u(&t, 8, &n))
				break;
			if (!lo && !n)
				break;
			if (!n || lo + n < lo)
				continue;
			if (d->nar == cap) {
				size_t c = cap ? cap * 2 : 1024;
				struct arange *v = realloc(d->ar, c * sizeof(*v));

				if (!v)
					return false;
				d->ar = v;
				cap = c;
			}
			d->ar[d->nar++] = (struct arange){lo, lo + n, cu};
		}
	}
	if (d->nar) /* qsort() of nothing: a null pointer (UBSan) */
		qsort(d->ar, d->nar, sizeof(*d->ar), ar_cmp);
	return true;
}

/*
 * The abbreviation table at off: 1 when no form in it refers outside the
 * CU (another CU, the dwz alternate file, a type unit) or is one this
 * cannot tell (indirect), 0 when one does, -1 when it cannot be read.
 * *end: the offset after the table.
 */
static int abbrevs_scan(const struct dwlazy *d, uint64_t off, uint64_t *end)
{
	const struct isec *s = &d->sec[1];
	const uint8_t *base = d->img + s->img_off;
	struct rd r;
	uint64_t code, tag, at, form;
	int local = 1;

	if (off >= s->size)
		return -1;
	r = (struct rd){base + off, base + s->size};
	for (;;) {
		if (!rd_uleb(&r, &code))
			return -1;
		if (!code)
			break;
		if (!rd_uleb(&r, &tag) || r.p >= r.end)
			return -1;
		r.p++; /* children */
		for (;;) {
			if (!rd_uleb(&r, &at) || !rd_uleb(&r, &form))
				return -1;
			if (!at && !form)
				break;
			switch (form) {
			case DW_FORM_ref_addr:
			case DW_FORM_indirect:
			case DW_FORM_ref_sig8:
			case DW_FORM_ref_sup4:
			case DW_FORM_ref_sup8:
			case DW_FORM_strp_sup:
			case DW_FORM_GNU_ref_alt:
			case DW_FORM_GNU_strp_alt:
				local = 0;
				break;
			case DW_FORM_implicit_const:
				if (!rd_uleb(&r, &at)) /* its value, signed: skipped the same way */
					return -1;
				break;
			}
		}
	}
	*end = (uint64_t)(r.p - base);
	return local;
}

/* Whether the abbreviations at off keep every DIE of their CU within it. */
static bool abbrevs_local(const struct dwlazy *d, uint64_t off)
{
	uint64_t end;

	return abbrevs_scan(d, off, &end) == 1;
}

/*
 * Whether every table of .debug_abbrev keeps its CU's DIEs within it: then
 * no lookup can need .debug_info whole, and the compact layout serves the
 * file.
 */
static bool abbrevs_all_local(const struct dwlazy *d)
{
	uint64_t off = 0, end;

	while (off < d->sec[1].size) {
		if (abbrevs_scan(d, off, &end) != 1)
			return false;
		off = end;
	}
	return true;
}

/* A unit header's fields after its length (DWARF 2-5). */
struct unit_fields {
	uint64_t ver, ut, asz, abbrev;
};

/*
 * Read them from r, which starts after the length (dw64: a 64-bit unit).
 * false when the version or the fields it has cannot be read; asz is 0 when
 * a unit before DWARF 5 ends before it.
 */
static bool unit_fields(struct rd *r, bool dw64, struct unit_fields *u)
{
	u->ut = DW_UT_compile;
	u->asz = 0;
	if (!rd_u(r, 2, &u->ver) || u->ver < 2 || u->ver > 5)
		return false;
	if (u->ver == 5 && (!rd_u(r, 1, &u->ut) || !rd_u(r, 1, &u->asz)))
		return false;
	if (!rd_u(r, dw64 ? 8 : 4, &u->abbrev))
		return false;
	if (u->ver < 5)
		rd_u(r, 1, &u->asz); /* stays 0 when the unit ends before it */
	return true;
}

/* The CU whose header is at off, inflated to its end, and what its DIEs may reach. */
static bool cu_ensure(struct dwlazy *d, uint64_t off)
{
	struct unit_fields u;
	uint64_t len;
	size_t hdr = 4;
	struct rd r;

	if (off >= d->info_size || !info_ensure(d, off + 24))
		return false;
	r = (struct rd){d->info + off, d->info + d->info_done};
	if (!rd_u(&r, 4, &len))
		return false;
	if (len == 0xffffffff) {
		if (!rd_u(&r, 8, &len))
			return false;
		hdr = 12;
	}
	if (len > d->info_size - off - hdr || !info_ensure(d, off + hdr + len))
		return false;
	if (!unit_fields(&r, hdr == 12, &u))
		return false;
	if ((u.ut != DW_UT_compile && u.ut != DW_UT_partial) || !abbrevs_local(d, u.abbrev))
		return info_ensure(d, d->info_size);
	return true;
}

/* ---- the compact layout ---- */

/* .debug_info's stream restarted at ck, or at its start when ck is NULL. */
static bool stream_restart(struct dwlazy *d, const struct ckpt *ck)
{
	const struct isec *s = &d->sec[0];

	if (d->z_live)
		inflateEnd(&d->z);
	d->z_live = false;
	if (ck ? inflateCopy(&d->z, (z_streamp)&ck->z) != Z_OK : inflateInit(&d->z) != Z_OK)
		return false;
	d->z_live = true;
	/* the copy's input pointed into inbuf as it was: read again from the file */
	d->z.next_in = NULL;
	d->z.avail_in = 0;
	d->in_off = ck ? ck->in_off : s->file_off;
	d->in_left = s->file_off + s->file_len - d->in_off;
	return true;
}

/* A checkpoint at the stream's position, when it is far enough past the last one. */
static void ckpt_maybe(struct dwlazy *d)
{
	uint64_t pos = d->z.total_out, last = d->nck ? d->ck[d->nck - 1].pos : 0;
	struct ckpt *ck;

	if (pos < last + CKPT_EVERY || pos >= d->info_size)
		return;
	/*
	 * Allocated once for all: zlib's state points back at its z_stream
	 * (inflateStateCheck()), so a copy must never move.
	 */
	if (!d->ck) {
		d->ck_cap = d->info_size / CKPT_EVERY + 1;
		d->ck = calloc(d->ck_cap, sizeof(*d->ck));
	}
	if (!d->ck || d->nck == d->ck_cap)
		return; /* only slower */
	ck = &d->ck[d->nck];
	if (inflateCopy(&ck->z, &d->z) != Z_OK)
		return;
	ck->pos = pos;
	ck->in_off = d->in_off - d->z.avail_in;
	d->nck++;
}

/* The stream's next n bytes of .debug_info into dst. */
static bool stream_out(struct dwlazy *d, uint8_t *dst, size_t n)
{
	int r;

	if (d->broken || !d->z_live || n > d->info_size - d->z.total_out)
		return false;
	d->z.next_out = dst;
	d->z.avail_out = (uInt)n;
	r = pump(d, &d->z, &d->in_off, &d->in_left);
	if (d->z.avail_out || (r != Z_OK && r != Z_STREAM_END)) {
		d->broken = true;
		return false;
	}
	if (d->z.total_out > d->info_done)
		d->info_done = d->z.total_out;
	ckpt_maybe(d);
	return true;
}

/*
 * The stream at byte pos of .debug_info: on from where it is, or from the
 * last checkpoint before pos when the stream is past pos or that checkpoint
 * is ahead of it (then at most CKPT_EVERY is inflated to reach pos).
 */
static bool stream_seek(struct dwlazy *d, uint64_t pos)
{
	const struct ckpt *best = NULL;

	if (d->broken || pos > d->info_size)
		return false;
	for (size_t i = 0; i < d->nck && d->ck[i].pos <= pos; i++)
		best = &d->ck[i];
	if (!d->z_live || d->z.total_out > pos || (best && best->pos > d->z.total_out)) {
		if (!stream_restart(d, best)) {
			d->broken = true;
			return false;
		}
	}
	while (d->z.total_out < pos) {
		uint64_t n = pos - d->z.total_out;

		if (!stream_out(d, d->scratch, n < SCRATCH ? (size_t)n : SCRATCH))
			return false;
	}
	return true;
}

/* The index in cus[] of the CU at file offset off, or where it would go. */
static size_t placed_find(const struct dwlazy *d, uint64_t off)
{
	size_t lo = 0, hi = d->ncus;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->cus[mid].file_off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The CU whose header is at off in the file's .debug_info, inflated into
 * the image after the CUs placed before it; *at: where. Only a header libdw
 * takes is placed: libdw reads the units one after another from the start,
 * and one it refused would hide every later one.
 */
static bool cu_place(struct dwlazy *d, uint64_t off, uint64_t *at)
{
	size_t i = placed_find(d, off), hdr = 4;
	uint8_t *dst = d->info + d->placed;
	uint64_t room = d->info_size - d->placed, len;
	struct unit_fields u;
	struct rd r;

	if (i < d->ncus && d->cus[i].file_off == off) {
		*at = d->cus[i].img_off;
		return true;
	}
	if (off >= d->info_size || room < 4 || !stream_seek(d, off) || !stream_out(d, dst, 4))
		return false;
	r = (struct rd){dst, dst + 4};
	rd_u(&r, 4, &len);
	if (len == 0xffffffff) {
		if (room < 12 || !stream_out(d, dst + 4, 8))
			return false;
		r = (struct rd){dst + 4, dst + 12};
		rd_u(&r, 8, &len);
		hdr = 12;
	}
	if (len > room - hdr || len > d->info_size - off - hdr || !stream_out(d, dst + hdr, len))
		return false;
	r = (struct rd){dst + hdr, dst + hdr + len};
	if (!unit_fields(&r, hdr == 12, &u))
		return false;
	if ((u.ut != DW_UT_compile && u.ut != DW_UT_partial) || u.asz != 8 ||
	    u.abbrev >= d->sec[1].size)
		return false;
	if (vec_reserve(d->cus, d->cus_cap, d->ncus + 1))
		return false;
	memmove(&d->cus[i + 1], &d->cus[i], (d->ncus - i) * sizeof(*d->cus));
	d->cus[i] = (struct placed){off, d->placed};
	d->ncus++;
	*at = d->placed;
	d->placed += hdr + len;
	return true;
}

bool dwlazy__addrdie(struct dwlazy *d, uint64_t addr, Dwarf_Die *cu)
{
	size_t lo = 0, hi = d ? d->nar : 0;
	Dwarf_Off next;
	size_t hsize;
	uint64_t off;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->ar[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= d->ar[lo - 1].hi)
		return false;
	off = d->ar[lo - 1].cu;
	if (d->compact ? !cu_place(d, off, &off) : !cu_ensure(d, off))
		return false;
	if (dwarf_next_unit(d->dw, off, &next, &hsize, NULL, NULL, NULL, NULL, NULL, NULL))
		return false;
	return dwarf_offdie(d->dw, off + hsize, cu) != NULL;
}

void dwlazy__info_size(const struct dwlazy *d, size_t *inflated, size_t *resident, size_t *size)
{
	*inflated = d ? d->info_done : 0;
	*resident = !d ? 0 : d->compact ? d->placed : d->info_done;
	*size = d ? d->info_size : 0;
}

void dwlazy__free(struct dwlazy *d)
{
	if (!d)
		return;
	if (d->dw)
		dwarf_end(d->dw);
	if (d->elf)
		elf_end(d->elf);
	if (d->z_live)
		inflateEnd(&d->z);
	for (size_t i = 0; i < d->nck; i++)
		inflateEnd(&d->ck[i].z);
	free(d->ck);
	free(d->cus);
	if (d->img)
		munmap(d->img, d->img_len);
	if (d->file)
		elf_end(d->file);
	if (d->fd >= 0)
		close(d->fd);
	free(d->ar);
	free(d);
}

/* The lowest PT_LOAD vaddr of elf; false when it has none. */
static bool lowest_load(Elf *elf, uint64_t *vaddr)
{
	size_t n;
	bool any = false;

	if (elf_getphdrnum(elf, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (!any || ph.p_vaddr < *vaddr)
			*vaddr = ph.p_vaddr;
		any = true;
	}
	return any;
}

/* Which sections go into the image, and their sizes. false: a file this does not serve. */
static bool sections_pick(struct dwlazy *d)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(d->file, &shstrndx))
		return false;
	while ((scn = elf_nextscn(d->file, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(d->file, shstrndx, sh.sh_name)))
			return false;
		if (!strcmp(name, ".gnu_debugaltlink") || !strncmp(name, ".zdebug", 7))
			return false;
		if (strncmp(name, ".debug_", 7) ||
		    name_in(name, skipped, sizeof(skipped) / sizeof(skipped[0])))
			continue;
		for (size_t i = 0;; i++) {
			if (i == NKEPT)
				return false; /* a debug section not known here (type units...) */
			if (strcmp(name, kept[i]))
				continue;
			if (d->sec[i].scn || sh.sh_type == SHT_NOBITS)
				return false;
			d->sec[i].scn = scn;
			d->sec[i].file_off = sh.sh_offset;
			d->sec[i].file_len = d->sec[i].size = sh.sh_size;
			d->sec[i].align = sh.sh_addralign ? sh.sh_addralign : 1;
			if ((sh.sh_flags & SHF_COMPRESSED) && !zlib_header(d->fd, &sh, &d->sec[i]))
				return false;
			/* only a compressed .debug_info is worth it: libdw maps a plain one */
			if (i == 0 && !(sh.sh_flags & SHF_COMPRESSED))
				return false;
			break;
		}
	}
	return d->sec[0].scn && d->sec[1].scn && d->sec[2].scn;
}

/* The image: ELF header, the kept sections, their names, the section headers. */
static bool image_build(struct dwlazy *d, const GElf_Ehdr *feh)
{
	char names[256];
	size_t nlen = 1, nsec = 1, off = sizeof(Elf64_Ehdr), shoff;
	uint32_t name_at[NKEPT];
	Elf64_Ehdr *eh;
	Elf64_Shdr *sh;

	names[0] = '\0';
	for (size_t i = 0; i < NKEPT; i++) {
		size_t a = d->sec[i].align < 4096 ? d->sec[i].align : 4096;

		if (!d->sec[i].scn)
			continue;
		off = (off + a - 1) & ~(a - 1);
		/* Sizes come from the file: off past SIZE_MAX / 2 would wrap the test below. */
		if (!off || off > SIZE_MAX / 2 || d->sec[i].size > SIZE_MAX / 2 - off)
			return false;
		d->sec[i].img_off = off;
		off += d->sec[i].size;
		name_at[i] = (uint32_t)nlen;
		memcpy(names + nlen, kept[i], strlen(kept[i]) + 1);
		nlen += strlen(kept[i]) + 1;
		nsec++;
	}
	memcpy(names + nlen, ".shstrtab", 10);
	off = (off + 7) & ~(size_t)7;
	shoff = off + ((nlen + 10 + 7) & ~(size_t)7);
	d->img_len = shoff + (nsec + 1) * sizeof(Elf64_Shdr);
	d->img = mmap(NULL, d->img_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (d->img == MAP_FAILED) {
		d->img = NULL;
		return false;
	}
	memcpy(d->img + off, names, nlen + 10);
	eh = (Elf64_Ehdr *)d->img;
	memcpy(eh->e_ident, feh->e_ident, EI_NIDENT);
	eh->e_type = ET_DYN;
	eh->e_machine = feh->e_machine;
	eh->e_version = EV_CURRENT;
	eh->e_ehsize = sizeof(*eh);
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shoff = shoff;
	eh->e_shnum = (uint16_t)(nsec + 1);
	eh->e_shstrndx = (uint16_t)nsec;
	sh = (Elf64_Shdr *)(d->img + shoff);
	for (size_t i = 0, k = 1; i < NKEPT; i++) {
		if (!d->sec[i].scn)
			continue;
		sh[k++] = (Elf64_Shdr){
			.sh_name = name_at[i],
			.sh_type = SHT_PROGBITS,
			.sh_offset = d->sec[i].img_off,
			.sh_size = d->sec[i].size,
			.sh_addralign = d->sec[i].align,
		};
	}
	sh[nsec] = (Elf64_Shdr){
		.sh_name = (uint32_t)nlen,
		.sh_type = SHT_STRTAB,
		.sh_offset = off,
		.sh_size = nlen + 10,
		.sh_addralign = 1,
	};
	return true;
}

struct dwlazy *dwlazy__open(const char *path, uint64_t vaddr)
{
	struct dwlazy *d = calloc(1, sizeof(*d));
	uint64_t low = 0;
	GElf_Ehdr eh;

	if (!d)
		return NULL;
	d->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (d->fd < 0 || elf_version(EV_CURRENT) == EV_NONE)
		goto fail;
	d->file = elf_begin(d->fd, ELF_C_READ_MMAP, NULL);
	if (!d->file || elf_kind(d->file) != ELF_K_ELF || !gelf_getehdr(d->file, &eh) ||
	    gelf_getclass(d->file) != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
		goto fail;
	/* the DWARF's addresses are the binary's own only if the segments agree */
	if (!lowest_load(d->file, &low) || low != vaddr)
		goto fail;
	if (!sections_pick(d) || !image_build(d, &eh))
		goto fail;
	for (size_t i = 1; i < NKEPT; i++)
		if (d->sec[i].scn && !section_fill(d, &d->sec[i]))
			goto fail;
	if (!aranges_read(d, &d->sec[2]))
		goto fail;
	d->compact = abbrevs_all_local(d);
	if (inflateInit(&d->z) != Z_OK)
		goto fail;
	d->z_live = true;
	d->in_off = d->sec[0].file_off;
	d->in_left = d->sec[0].file_len;
	d->info = d->img + d->sec[0].img_off;
	d->info_size = d->sec[0].size;
	d->elf = elf_memory((char *)d->img, d->img_len);
	d->dw = d->elf ? dwarf_begin_elf(d->elf, DWARF_C_READ, NULL) : NULL;
	if (!d->dw)
		goto fail;
	return d;
fail:
	dwlazy__free(d);
	return NULL;
}
