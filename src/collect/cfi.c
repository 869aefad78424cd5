// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unwind tables from call frame information (contract in collect/cfi.h).
 *
 * This file finds where each FDE starts and ends (libdw has no public
 * iterator over FDE ranges) and plays out each FDE's instructions once,
 * after its CIE's (fde_rows()), reducing the rules to struct
 * offcpu_cfi_row as libdw's answer for the same rules would be reduced
 * (row_of()). FDEs with anything else (signal frames, expressions for the
 * CFA, rbp or the return address, set_loc, deep remember_state) are asked
 * of libdw row by row: dwarf_cfi_addrframe at each pc, stepping with the
 * end that dwarf_frame_info gives. libdw plays an FDE out from its start
 * for every row asked, which made the builder quadratic in an FDE's rows.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <gelf.h>

#include "collect/cfi.h"

#define CFI_DEBUG_ROOT "/usr/lib/debug"

/* x86-64 DWARF register numbers. */
#define REG_RDI 5
#define REG_RBP 6
#define REG_RSP 7
#define REG_RA 16

/* One FDE's range, and where it is in its section (the tie-break for equal starts). */
struct fde_range {
	uint64_t start, end, off;
	const uint8_t *insns, *insns_end; /* its instructions, in the section's data */
	uint32_t cie;			  /* index in fde_list.cies */
};

/*
 * The rule of one register as far as a row can say it. RULE_OTHER is a
 * rule libdw reports in a form no row takes (another register, a value
 * rather than a saved slot); RULE_UNSPEC is no rule at all, whose meaning
 * is libdw's default: such rows are left to libdw. RULE_RDI: in register
 * rdi (the return address in glibc's vfork).
 */
enum reg_rule { RULE_UNSPEC, RULE_UNDEF, RULE_SAME, RULE_OFFSET, RULE_OTHER, RULE_RDI };

struct reg_state {
	uint8_t rule;
	int64_t off; /* RULE_OFFSET: saved at CFA + off */
};

/* The state a row is made of: the CFA as register + offset, the return address, rbp. */
struct cfa_state {
	bool cfa_defined;
	uint64_t cfa_reg;
	int64_t cfa_off;
	struct reg_state ra, rbp;
};

/* A CIE as the row builder needs it; its initial state is played out at first use. */
struct cie_info {
	uint64_t off;
	uint8_t enc;
	bool ok;
	bool z;	       /* its FDEs have augmentation data, with its size first */
	bool fast;     /* the one-pass builder may run its FDEs (else libdw, row by row) */
	bool has_init; /* init holds its initial state */
	uint64_t code_align;
	int64_t data_align;
	const uint8_t *insns, *insns_end;
	struct cfa_state init;
};

struct fde_list {
	struct fde_range *v;
	size_t n, cap;
	struct cie_info *cies;
	size_t ncies, cap_cies;
};

struct row_buf {
	struct offcpu_cfi_row *v;
	size_t n, cap;
};

/* The CFI of one ELF: which section, its bytes and address, and libdw's view of it. */
struct cfi_source {
	Elf *elf;
	Dwarf *dw;	/* for .debug_frame; NULL for .eh_frame */
	Dwarf_CFI *cfi; /* from dwarf_getcfi_elf (ended here) or dwarf_getcfi (owned by dw) */
	Elf_Data *data;
	uint64_t sh_addr;
	bool eh_frame;
};

static void cfi_source__close(struct cfi_source *s)
{
	if (s->cfi && !s->dw)
		dwarf_cfi_end(s->cfi);
	if (s->dw)
		dwarf_end(s->dw);
	memset(s, 0, sizeof(*s));
}

static Elf_Scn *find_section(Elf *elf, const char *name, GElf_Shdr *shdr)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, shdr))
			continue;
		n = elf_strptr(elf, shstrndx, shdr->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

/*
 * The section's bytes, decompressed if need be (libdw then sees them
 * decompressed too). NULL when the section is absent, empty or NOBITS.
 */
static Elf_Data *section_data(Elf *elf, const char *name, uint64_t *sh_addr)
{
	GElf_Shdr shdr;
	Elf_Scn *scn = find_section(elf, name, &shdr);
	Elf_Data *d;

	if (!scn || shdr.sh_type == SHT_NOBITS || !shdr.sh_size)
		return NULL;
	if ((shdr.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
		return NULL;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || !d->d_size)
		return NULL;
	*sh_addr = shdr.sh_addr;
	return d;
}

static int cfi_source__eh_frame(Elf *elf, struct cfi_source *s)
{
	memset(s, 0, sizeof(*s));
	s->elf = elf;
	s->eh_frame = true;
	s->data = section_data(elf, ".eh_frame", &s->sh_addr);
	if (!s->data)
		return -ENOENT;
	s->cfi = dwarf_getcfi_elf(elf);
	return s->cfi ? 0 : -ENOENT;
}

static int cfi_source__debug_frame(Elf *elf, struct cfi_source *s)
{
	memset(s, 0, sizeof(*s));
	s->elf = elf;
	s->data = section_data(elf, ".debug_frame", &s->sh_addr);
	if (!s->data)
		return -ENOENT;
	s->dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (!s->dw)
		return -ENOENT;
	s->cfi = dwarf_getcfi(s->dw);
	if (!s->cfi) {
		cfi_source__close(s);
		return -ENOENT;
	}
	return 0;
}

/* ---- FDE ranges: the initial location and range as the CIE encodes them ---- */

struct cursor {
	const uint8_t *p, *end;
};

static bool read_uleb(struct cursor *c, uint64_t *v)
{
	unsigned int shift = 0;

	*v = 0;
	while (c->p < c->end) {
		uint8_t b = *c->p++;

		if (shift < 64)
			*v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

static bool read_sleb(struct cursor *c, int64_t *v)
{
	unsigned int shift = 0;
	uint64_t r = 0;
	uint8_t b = 0x80;

	while (c->p < c->end && (b & 0x80)) {
		b = *c->p++;
		if (shift < 64)
			r |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	}
	if (b & 0x80)
		return false;
	if (shift < 64 && (b & 0x40))
		r |= ~0ULL << shift;
	*v = (int64_t)r;
	return true;
}

static bool read_fixed(struct cursor *c, size_t len, uint64_t *v)
{
	uint64_t r = 0;

	if ((size_t)(c->end - c->p) < len)
		return false;
	/* x86-64 only: little endian */
	for (size_t i = 0; i < len; i++)
		r |= (uint64_t)c->p[i] << (8 * i);
	c->p += len;
	*v = r;
	return true;
}

/* A DW_EH_PE_* encoded value's format part; false when unreadable or unknown. */
static bool read_encoded(struct cursor *c, uint8_t enc, uint64_t *v)
{
	int64_t s;

	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return read_fixed(c, 8, v);
	case DW_EH_PE_uleb128:
		return read_uleb(c, v);
	case DW_EH_PE_sleb128:
		if (!read_sleb(c, &s))
			return false;
		*v = (uint64_t)s;
		return true;
	case DW_EH_PE_udata2:
		return read_fixed(c, 2, v);
	case DW_EH_PE_sdata2:
		if (!read_fixed(c, 2, v))
			return false;
		*v = (uint64_t)(int64_t)(int16_t)*v;
		return true;
	case DW_EH_PE_udata4:
		return read_fixed(c, 4, v);
	case DW_EH_PE_sdata4:
		if (!read_fixed(c, 4, v))
			return false;
		*v = (uint64_t)(int64_t)(int32_t)*v;
		return true;
	}
	return false;
}

/*
 * The pointer encoding of the FDEs of a CIE: the 'R' entry of a 'z'
 * augmentation, else absolute. Returns false for an augmentation this
 * does not understand (its FDEs are skipped).
 */
static bool cie_fde_encoding(const Dwarf_CIE *cie, uint8_t *enc)
{
	const char *a = cie->augmentation;
	struct cursor c = {cie->augmentation_data,
			   cie->augmentation_data + cie->augmentation_data_size};
	uint64_t skip;

	*enc = DW_EH_PE_absptr;
	if (!a || !*a)
		return true;
	if (*a != 'z' || !cie->augmentation_data)
		return false;
	for (a++; *a; a++) {
		switch (*a) {
		case 'L':
			if (c.p >= c.end)
				return false;
			c.p++;
			break;
		case 'P': {
			uint8_t penc;

			if (c.p >= c.end)
				return false;
			penc = *c.p++;
			if (penc == DW_EH_PE_omit)
				break;
			if (!read_encoded(&c, penc, &skip))
				return false;
			break;
		}
		case 'R':
			if (c.p >= c.end)
				return false;
			*enc = *c.p++;
			break;
		case 'S':
		case 'B':
			break;
		default:
			/* the 'R' entry, if any, came before: what follows is unknown */
			return true;
		}
	}
	return true;
}

/*
 * Whether a CIE's or an FDE's instructions name only registers x86-64 has
 * (the highest DWARF number is 125, k7). libdw grows its register array to
 * the highest number an instruction names and clears it: one corrupt
 * operand made it allocate and touch 2 GB (found by fuzz_cfi). Unknown
 * opcodes fail too: libdw would refuse them anyway.
 */
#define CFI_MAX_REG 127

static bool insns_sane(struct cursor c, uint8_t enc)
{
	uint64_t v;
	int64_t sv;

	while (c.p < c.end) {
		uint8_t op = *c.p++;

		switch (op & 0xc0) {
		case DW_CFA_advance_loc:
			continue;
		case DW_CFA_offset:
			if (!read_uleb(&c, &v))
				return false;
			continue;
		case DW_CFA_restore:
			continue;
		}
		switch (op) {
		case DW_CFA_nop:
		case DW_CFA_remember_state:
		case DW_CFA_restore_state:
		case DW_CFA_GNU_window_save:
			break;
		case DW_CFA_set_loc:
			if (!read_encoded(&c, enc & 0x0f, &v))
				return false;
			break;
		case DW_CFA_advance_loc1:
		case DW_CFA_advance_loc2:
		case DW_CFA_advance_loc4:
			if (!read_fixed(&c,
					op == DW_CFA_advance_loc1   ? 1
					: op == DW_CFA_advance_loc2 ? 2
								    : 4,
					&v))
				return false;
			break;
		case DW_CFA_def_cfa_offset:
		case DW_CFA_GNU_args_size:
			if (!read_uleb(&c, &v))
				return false;
			break;
		case DW_CFA_def_cfa_offset_sf:
			if (!read_sleb(&c, &sv))
				return false;
			break;
		case DW_CFA_def_cfa_expression:
			if (!read_uleb(&c, &v) || v > (uint64_t)(c.end - c.p))
				return false;
			c.p += v;
			break;
		case DW_CFA_restore_extended:
		case DW_CFA_undefined:
		case DW_CFA_same_value:
		case DW_CFA_def_cfa_register:
			if (!read_uleb(&c, &v) || v > CFI_MAX_REG)
				return false;
			break;
		case DW_CFA_offset_extended:
		case DW_CFA_register:
		case DW_CFA_def_cfa:
		case DW_CFA_val_offset:
		case DW_CFA_GNU_negative_offset_extended:
			if (!read_uleb(&c, &v) || v > CFI_MAX_REG)
				return false;
			if (!read_uleb(&c, &v) || (op == DW_CFA_register && v > CFI_MAX_REG))
				return false;
			break;
		case DW_CFA_offset_extended_sf:
		case DW_CFA_def_cfa_sf:
		case DW_CFA_val_offset_sf:
			if (!read_uleb(&c, &v) || v > CFI_MAX_REG || !read_sleb(&c, &sv))
				return false;
			break;
		case DW_CFA_expression:
		case DW_CFA_val_expression:
			if (!read_uleb(&c, &v) || v > CFI_MAX_REG)
				return false;
			if (!read_uleb(&c, &v) || v > (uint64_t)(c.end - c.p))
				return false;
			c.p += v;
			break;
		default:
			return false;
		}
	}
	return true;
}

static int fde_list__push(struct fde_list *l, const struct fde_range *r)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		struct fde_range *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = *r;
	return 0;
}

static void fde_list__free(struct fde_list *l)
{
	free(l->v);
	free(l->cies);
	memset(l, 0, sizeof(*l));
}

static bool in_code(const struct cfi_table *t, uint64_t start, uint64_t end)
{
	for (size_t i = 0; i < t->nsegs; i++) {
		const struct cfi_segment *s = &t->segs[i];

		if (!(s->flags & PF_X))
			continue;
		if (start >= s->vaddr && start < s->vaddr + s->memsz)
			return end - t->base <= UINT32_MAX;
	}
	return false;
}

/*
 * Every FDE's [start, end) that covers code of the file, read with
 * dwarf_next_cfi. FDEs whose CIE or encoding is not understood, empty
 * ones and ones outside the executable segments (such as those the linker
 * left at address 0 for discarded functions) are left out.
 */
static int read_fdes(const struct cfi_source *s, struct cfi_table *t, struct fde_list *out)
{
	const unsigned char *ident = (const unsigned char *)elf_getident(s->elf, NULL);
	Dwarf_Off off = 0, next;
	int err = 0;

	if (!ident)
		return -EIO;
	while (off < s->data->d_size) {
		Dwarf_CFI_Entry e;
		int r = dwarf_next_cfi(ident, s->data, s->eh_frame, off, &next, &e);

		if (r != 0) /* 1: the end; -1: unreadable, keep what was read */
			break;
		if (next <= off)
			break;
		if (dwarf_cfi_cie_p(&e)) {
			struct cie_info *ci;

			if (out->ncies == out->cap_cies) {
				size_t cap = out->cap_cies ? out->cap_cies * 2 : 16;
				struct cie_info *v = realloc(out->cies, cap * sizeof(*v));

				if (!v)
					return -ENOMEM;
				out->cies = v;
				out->cap_cies = cap;
			}
			ci = &out->cies[out->ncies];
			memset(ci, 0, sizeof(*ci));
			ci->off = off;
			ci->ok = cie_fde_encoding(&e.cie, &ci->enc);
			ci->z = e.cie.augmentation && e.cie.augmentation[0] == 'z';
			if (ci->ok && !insns_sane((struct cursor){e.cie.initial_instructions,
								  e.cie.initial_instructions_end},
						  ci->enc))
				return -EBADMSG;
			/*
			 * Signal frames, another return address column and
			 * odd factors stay with libdw.
			 */
			ci->fast = ci->ok && e.cie.return_address_register == REG_RA &&
				   e.cie.code_alignment_factor >= 1 &&
				   e.cie.code_alignment_factor <= 16 &&
				   e.cie.data_alignment_factor >= -64 &&
				   e.cie.data_alignment_factor <= 64 &&
				   !(e.cie.augmentation && strchr(e.cie.augmentation, 'S'));
			ci->code_align = e.cie.code_alignment_factor;
			ci->data_align = e.cie.data_alignment_factor;
			ci->insns = e.cie.initial_instructions;
			ci->insns_end = e.cie.initial_instructions_end;
			out->ncies++;
		} else {
			const struct cie_info *ce = NULL;
			struct cursor c = {e.fde.start, e.fde.end};
			uint64_t start, range, augsz;
			uint8_t enc;
			size_t ci = 0;

			/* CIEs come before their FDEs in practice: look back from the last */
			for (size_t i = out->ncies; i-- > 0;) {
				if (out->cies[i].off == e.fde.CIE_pointer) {
					ce = &out->cies[i];
					ci = i;
					break;
				}
			}
			if (!ce || !ce->ok)
				goto next;
			t->stats.fdes++;
			enc = ce->enc;
			if (!read_encoded(&c, enc, &start) || !read_encoded(&c, enc & 0x0f, &range))
				goto next;
			/* the FDE's augmentation data, then its instructions */
			if (ce->z && (!read_uleb(&c, &augsz) || augsz > (uint64_t)(c.end - c.p)))
				goto next;
			if (ce->z)
				c.p += augsz;
			if (!insns_sane(c, enc))
				return -EBADMSG;
			switch (enc & 0x70) {
			case 0:
				break;
			case DW_EH_PE_pcrel:
				start += s->sh_addr +
					 (uint64_t)(e.fde.start - (const uint8_t *)s->data->d_buf);
				break;
			default:
				goto next;
			}
			if (!range || start + range < start || !in_code(t, start, start + range))
				goto next;
			err = fde_list__push(out, &(struct fde_range){
							  .start = start,
							  .end = start + range,
							  .off = off,
							  .insns = c.p,
							  .insns_end = c.end,
							  .cie = (uint32_t)ci,
						  });
			if (err)
				return err;
		}
	next:
		off = next;
	}
	return err;
}

static int cmp_fde(const void *pa, const void *pb)
{
	const struct fde_range *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->off < b->off ? -1 : a->off > b->off;
}

/* ---- rows ---- */

static bool ops_is_cfa_plus(const Dwarf_Op *ops, size_t nops, int64_t *off)
{
	if (nops == 1 && ops[0].atom == DW_OP_call_frame_cfa) {
		*off = 0;
		return true;
	}
	if (nops == 2 && ops[0].atom == DW_OP_call_frame_cfa && ops[1].atom == DW_OP_plus_uconst) {
		*off = (int64_t)ops[1].number;
		return true;
	}
	return false;
}

/*
 * glibc's and binutils' PLT stubs: CFA = rsp + N + ((rip & 15) >= T) * 8,
 * written "breg7 N; breg16 0; lit15; and; litT; ge; lit3; shl; plus".
 */
static bool ops_is_plt(const Dwarf_Op *ops, size_t nops, int64_t *n, int *thr)
{
	static const uint8_t shape[] = {DW_OP_breg7, DW_OP_breg16, DW_OP_lit15, DW_OP_and, 0,
					DW_OP_ge,    DW_OP_lit3,   DW_OP_shl,	DW_OP_plus};

	if (nops != sizeof(shape))
		return false;
	for (size_t i = 0; i < nops; i++) {
		if (i == 4) {
			if (ops[i].atom < DW_OP_lit0 || ops[i].atom > DW_OP_lit31)
				return false;
		} else if (ops[i].atom != shape[i]) {
			return false;
		}
	}
	if (ops[1].number != 0)
		return false;
	*n = (int64_t)ops[0].number;
	*thr = ops[4].atom - DW_OP_lit0;
	return true;
}

/* The CFA as rsp or rbp plus an offset, from DW_OP_bregx or DW_OP_bregN. */
static bool ops_is_breg(const Dwarf_Op *ops, size_t nops, int *reg, int64_t *off)
{
	if (nops != 1)
		return false;
	if (ops[0].atom == DW_OP_bregx) {
		if (ops[0].number > 31)
			return false;
		*reg = (int)ops[0].number;
		*off = (int64_t)ops[0].number2;
		return true;
	}
	if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
		*reg = ops[0].atom - DW_OP_breg0;
		*off = (int64_t)ops[0].number;
		return true;
	}
	return false;
}

static bool cfa_off_ok(int64_t off)
{
	return off >= 0 && off % 8 == 0 && off / 8 <= UINT16_MAX;
}

static struct offcpu_cfi_row command_row(enum offcpu_cfa cfa)
{
	return (struct offcpu_cfi_row){.rule = OFFCPU_CFI_RULE(cfa, OFFCPU_FP_SAME)};
}

/* One libdw frame state as a row (its pc is set by the caller). */
static struct offcpu_cfi_row row_of(Dwarf_Frame *f, bool signal)
{
	struct offcpu_cfi_row r = {0};
	Dwarf_Op mem[3], *ops;
	size_t nops;
	int64_t off;
	int reg, thr = 0;
	enum offcpu_cfa cfa;
	enum offcpu_fp_rule fp;

	bool ra_rdi;

	if (signal)
		return command_row(OFFCPU_CFA_SIGNAL);
	if (dwarf_frame_register(f, REG_RA, mem, &ops, &nops))
		return command_row(OFFCPU_CFA_UNSUPPORTED);
	/* no ops and ops_mem: "undefined", the outermost frame */
	if (nops == 0 && ops == mem)
		return command_row(OFFCPU_CFA_END);
	ra_rdi = nops == 1 && ops[0].atom == DW_OP_regx && ops[0].number == REG_RDI;
	if (!ra_rdi && (!ops_is_cfa_plus(ops, nops, &off) || off != -8))
		return command_row(OFFCPU_CFA_UNSUPPORTED);

	if (dwarf_frame_cfa(f, &ops, &nops) || !nops)
		return command_row(OFFCPU_CFA_UNSUPPORTED);
	if (ops_is_breg(ops, nops, &reg, &off) && (reg == REG_RSP || reg == REG_RBP)) {
		cfa = reg == REG_RSP ? OFFCPU_CFA_SP : OFFCPU_CFA_FP;
		if (ra_rdi && reg != REG_RSP)
			return command_row(OFFCPU_CFA_UNSUPPORTED);
		if (ra_rdi)
			cfa = OFFCPU_CFA_RA_RDI;
	} else if (!ra_rdi && ops_is_plt(ops, nops, &off, &thr)) {
		cfa = OFFCPU_CFA_PLT;
	} else {
		return command_row(OFFCPU_CFA_UNSUPPORTED);
	}
	if (!cfa_off_ok(off))
		return command_row(OFFCPU_CFA_UNSUPPORTED);
	r.cfa_off = (uint16_t)(off / 8);
	if (cfa == OFFCPU_CFA_PLT)
		r.fp_off = (int8_t)thr;

	/* no ops and NULL: "same value" (libdw's x86-64 default for rbp) */
	fp = OFFCPU_FP_UNKNOWN;
	if (dwarf_frame_register(f, REG_RBP, mem, &ops, &nops)) {
		fp = OFFCPU_FP_UNKNOWN;
	} else if (nops == 0 && !ops) {
		fp = OFFCPU_FP_SAME;
	} else if (ops_is_cfa_plus(ops, nops, &off) && off % 8 == 0 && off / 8 >= INT8_MIN &&
		   off / 8 <= INT8_MAX && cfa != OFFCPU_CFA_PLT) {
		fp = OFFCPU_FP_SAVED;
		r.fp_off = (int8_t)(off / 8);
	}
	r.rule = OFFCPU_CFI_RULE(cfa, fp);
	return r;
}

static bool row_same_rule(const struct offcpu_cfi_row *a, const struct offcpu_cfi_row *b)
{
	return a->rule == b->rule && a->cfa_off == b->cfa_off && a->fp_off == b->fp_off;
}

/* Append a row at pc (relative to the base), merged into the last one when the rules agree. */
static int row_buf__push(struct row_buf *b, uint32_t pc, struct offcpu_cfi_row r)
{
	if (b->n && row_same_rule(&b->v[b->n - 1], &r))
		return 0;
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 1024;
		struct offcpu_cfi_row *v = realloc(b->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		b->v = v;
		b->cap = cap;
	}
	r.pc = pc;
	b->v[b->n++] = r;
	return 0;
}

/* ---- rows in one pass over an FDE's instructions ---- */

/* remember_state nesting the one-pass builder follows (GCC nests one deep) */
#define CFI_STATE_STACK 8
/* Operands past this are left to libdw: factored, they could overflow (and no row holds them). */
#define CFI_OPERAND_MAX (1ULL << 32)

static bool operand_ok(int64_t v)
{
	return v >= -(int64_t)CFI_OPERAND_MAX && v <= (int64_t)CFI_OPERAND_MAX;
}

static struct reg_state *state_reg(struct cfa_state *st, uint64_t reg)
{
	return reg == REG_RA ? &st->ra : reg == REG_RBP ? &st->rbp : NULL;
}

static void state_set(struct cfa_state *st, uint64_t reg, enum reg_rule rule, int64_t off)
{
	struct reg_state *r = state_reg(st, reg);

	if (r)
		*r = (struct reg_state){.rule = rule, .off = off};
}

/*
 * The row of a state, as row_of() makes it from the frame libdw returns
 * for the same rules. false: a rule whose meaning is libdw's to give (no
 * rule at all, an undefined CFA).
 */
static bool row_of_state(const struct cfa_state *st, struct offcpu_cfi_row *r)
{
	enum offcpu_cfa cfa;
	int64_t off;

	switch (st->ra.rule) {
	case RULE_UNDEF:
		*r = command_row(OFFCPU_CFA_END);
		return true;
	case RULE_RDI:
		if (st->cfa_defined && st->cfa_reg != REG_RSP) {
			*r = command_row(OFFCPU_CFA_UNSUPPORTED);
			return true;
		}
		break;
	case RULE_OFFSET:
		if (st->ra.off == -8)
			break;
		/* fall through */
	case RULE_SAME:
	case RULE_OTHER:
		*r = command_row(OFFCPU_CFA_UNSUPPORTED);
		return true;
	default:
		return false;
	}
	if (!st->cfa_defined)
		return false;
	if ((st->cfa_reg != REG_RSP && st->cfa_reg != REG_RBP) || !cfa_off_ok(st->cfa_off)) {
		*r = command_row(OFFCPU_CFA_UNSUPPORTED);
		return true;
	}
	*r = (struct offcpu_cfi_row){.cfa_off = (uint16_t)(st->cfa_off / 8)};
	switch (st->rbp.rule) {
	case RULE_SAME:
		r->rule = OFFCPU_FP_SAME;
		break;
	case RULE_OFFSET:
		off = st->rbp.off;
		if (off % 8 == 0 && off / 8 >= INT8_MIN && off / 8 <= INT8_MAX) {
			r->rule = OFFCPU_FP_SAVED;
			r->fp_off = (int8_t)(off / 8);
		} else {
			r->rule = OFFCPU_FP_UNKNOWN;
		}
		break;
	case RULE_UNDEF:
	case RULE_OTHER:
		r->rule = OFFCPU_FP_UNKNOWN;
		break;
	default:
		return false;
	}
	cfa = st->cfa_reg == REG_RSP ? OFFCPU_CFA_SP : OFFCPU_CFA_FP;
	if (st->ra.rule == RULE_RDI)
		cfa = OFFCPU_CFA_RA_RDI;
	r->rule = OFFCPU_CFI_RULE(cfa, r->rule);
	return true;
}

/*
 * Play out CFA instructions from st. With fr NULL (a CIE's initial
 * instructions) an advance is refused; with fr, each advance past the
 * current location ends a row, pushed to b. Returns 0, 1 for an
 * instruction or a state left to libdw (set_loc, expressions for the CFA,
 * rbp or the return address, restore_state without remember_state, a
 * restore inside a CIE...), or -ENOMEM.
 */
static int play(const struct cie_info *ci, const struct fde_range *fr, const struct cfi_table *t,
		struct cursor c, struct cfa_state *st, struct row_buf *b)
{
	struct cfa_state stack[CFI_STATE_STACK];
	struct offcpu_cfi_row r;
	size_t depth = 0;
	uint64_t loc = fr ? fr->start : 0, reg, v, next;
	int64_t sv;
	int err;

	while (c.p < c.end) {
		uint8_t op = *c.p++;

		switch (op & 0xc0) {
		case DW_CFA_advance_loc:
			next = loc + (op & 0x3f) * ci->code_align;
			goto advance;
		case DW_CFA_offset:
			if (!read_uleb(&c, &v) || v > CFI_OPERAND_MAX)
				return 1;
			state_set(st, op & 0x3f, RULE_OFFSET, (int64_t)v * ci->data_align);
			continue;
		case DW_CFA_restore:
			reg = op & 0x3f;
			goto restore;
		}
		switch (op) {
		case DW_CFA_nop:
			continue;
		case DW_CFA_advance_loc1:
		case DW_CFA_advance_loc2:
		case DW_CFA_advance_loc4:
			if (!read_fixed(&c,
					op == DW_CFA_advance_loc1   ? 1
					: op == DW_CFA_advance_loc2 ? 2
								    : 4,
					&v))
				return 1;
			next = loc + v * ci->code_align;
			goto advance;
		case DW_CFA_offset_extended:
			if (!read_uleb(&c, &reg) || !read_uleb(&c, &v) || v > CFI_OPERAND_MAX)
				return 1;
			state_set(st, reg, RULE_OFFSET, (int64_t)v * ci->data_align);
			continue;
		case DW_CFA_offset_extended_sf:
			if (!read_uleb(&c, &reg) || !read_sleb(&c, &sv) || !operand_ok(sv))
				return 1;
			state_set(st, reg, RULE_OFFSET, sv * ci->data_align);
			continue;
		case DW_CFA_val_offset:
		case DW_CFA_register:
			if (!read_uleb(&c, &reg) || !read_uleb(&c, &v))
				return 1;
			state_set(st, reg,
				  op == DW_CFA_register && reg == REG_RA && v == REG_RDI
					  ? RULE_RDI
					  : RULE_OTHER,
				  0);
			continue;
		case DW_CFA_val_offset_sf:
			if (!read_uleb(&c, &reg) || !read_sleb(&c, &sv))
				return 1;
			state_set(st, reg, RULE_OTHER, 0);
			continue;
		case DW_CFA_undefined:
		case DW_CFA_same_value:
			if (!read_uleb(&c, &reg))
				return 1;
			state_set(st, reg, op == DW_CFA_undefined ? RULE_UNDEF : RULE_SAME, 0);
			continue;
		case DW_CFA_restore_extended:
			if (!read_uleb(&c, &reg))
				return 1;
			goto restore;
		case DW_CFA_def_cfa:
			if (!read_uleb(&c, &reg) || !read_uleb(&c, &v) || v > CFI_OPERAND_MAX)
				return 1;
			st->cfa_defined = true;
			st->cfa_reg = reg;
			st->cfa_off = (int64_t)v;
			continue;
		case DW_CFA_def_cfa_sf:
			if (!read_uleb(&c, &reg) || !read_sleb(&c, &sv) || !operand_ok(sv))
				return 1;
			st->cfa_defined = true;
			st->cfa_reg = reg;
			st->cfa_off = sv * ci->data_align;
			continue;
		case DW_CFA_def_cfa_register:
			if (!read_uleb(&c, &reg) || !st->cfa_defined)
				return 1;
			st->cfa_reg = reg;
			continue;
		case DW_CFA_def_cfa_offset:
			if (!read_uleb(&c, &v) || v > CFI_OPERAND_MAX || !st->cfa_defined)
				return 1;
			st->cfa_off = (int64_t)v;
			continue;
		case DW_CFA_def_cfa_offset_sf:
			if (!read_sleb(&c, &sv) || !operand_ok(sv) || !st->cfa_defined)
				return 1;
			st->cfa_off = sv * ci->data_align;
			continue;
		case DW_CFA_expression:
		case DW_CFA_val_expression:
			if (!read_uleb(&c, &reg) || state_reg(st, reg) || !read_uleb(&c, &v) ||
			    v > (uint64_t)(c.end - c.p))
				return 1;
			c.p += v;
			continue;
		case DW_CFA_remember_state:
			if (depth == CFI_STATE_STACK)
				return 1;
			stack[depth++] = *st;
			continue;
		case DW_CFA_restore_state:
			if (!depth)
				return 1;
			*st = stack[--depth];
			continue;
		case DW_CFA_GNU_args_size:
			if (!read_uleb(&c, &v))
				return 1;
			continue;
		default:
			return 1;
		}
	restore:
		if (!fr)
			return 1;
		if (reg == REG_RA)
			st->ra = ci->init.ra;
		else if (reg == REG_RBP)
			st->rbp = ci->init.rbp;
		continue;
	advance:
		if (!fr || next < loc)
			return 1;
		if (next == loc)
			continue;
		if (!row_of_state(st, &r))
			return 1;
		if ((err = row_buf__push(b, (uint32_t)(loc - t->base), r)))
			return err;
		loc = next;
		if (loc >= fr->end)
			return 0;
	}
	if (!fr)
		return 0;
	if (!row_of_state(st, &r))
		return 1;
	return row_buf__push(b, (uint32_t)(loc - t->base), r);
}

/*
 * The rows of one FDE in one pass over its CIE's and its own instructions:
 * libdw's dwarf_cfi_addrframe plays them out again from the start for
 * every row. 0, 1 when the FDE is left to libdw (rows pushed then taken
 * back by the caller), -ENOMEM.
 */
static int fde_rows(struct fde_list *l, const struct fde_range *fr, const struct cfi_table *t,
		    struct row_buf *b)
{
	struct cie_info *ci = &l->cies[fr->cie];
	struct cfa_state st;

	if (!ci->fast)
		return 1;
	if (!ci->has_init) {
		/* libdw's x86-64 ABI preamble: rbp (callee-saved) keeps its value */
		ci->init = (struct cfa_state){.rbp.rule = RULE_SAME};
		if (play(ci, NULL, t, (struct cursor){ci->insns, ci->insns_end}, &ci->init, NULL)) {
			ci->fast = false;
			return 1;
		}
		ci->has_init = true;
	}
	st = ci->init;
	return play(ci, fr, t, (struct cursor){fr->insns, fr->insns_end}, &st, b);
}

/*
 * The rows of the FDEs, in order of their start. Where FDEs overlap, the
 * one that starts later takes over from its start, and the rest of the
 * earlier one is dropped (a gap after the later one ends): the choice an
 * .eh_frame_hdr lookup makes. Within an FDE, the rule at each pc is the one
 * libdw's dwarf_cfi_addrframe returns for it: played out here in one pass
 * (fde_rows()) where the instructions are the plain ones compilers emit,
 * else asked of libdw row by row (and always with libdw_rows, the
 * reference the tests compare with).
 */
static int build_rows(const struct cfi_source *s, struct cfi_table *t, struct fde_list *fdes,
		      struct row_buf *b, bool libdw_rows)
{
	uint64_t covered = 0;
	int err = 0;

	if (fdes->n)
		qsort(fdes->v, fdes->n, sizeof(*fdes->v), cmp_fde);
	for (size_t i = 0; i < fdes->n; i++) {
		const struct fde_range *fr = &fdes->v[i];
		uint64_t pc = fr->start;

		if (b->n && covered < fr->start) {
			err = row_buf__push(b, (uint32_t)(covered - t->base),
					    command_row(OFFCPU_CFA_NONE));
			if (err)
				return err;
		}
		while (b->n && b->v[b->n - 1].pc >= fr->start - t->base)
			b->n--;
		if (!libdw_rows) {
			size_t n0 = b->n;

			err = fde_rows(fdes, fr, t, b);
			if (err < 0)
				return err;
			if (!err)
				pc = fr->end;
			else
				t->stats.fdes_libdw++;
			b->n = err ? n0 : b->n;
		}
		while (pc < fr->end) {
			Dwarf_Frame *f = NULL;
			Dwarf_Addr fstart, fend;
			bool signal = false;
			struct offcpu_cfi_row r;

			if (dwarf_cfi_addrframe(s->cfi, pc, &f)) {
				/* libdw cannot evaluate this FDE: no rule here */
				r = command_row(OFFCPU_CFA_NONE);
				fend = fr->end;
			} else if (dwarf_frame_info(f, &fstart, &fend, &signal) < 0 || fend <= pc) {
				r = command_row(OFFCPU_CFA_UNSUPPORTED);
				fend = fr->end;
			} else {
				r = row_of(f, signal);
			}
			free(f);
			err = row_buf__push(b, (uint32_t)(pc - t->base), r);
			if (err)
				return err;
			pc = fend < fr->end ? fend : fr->end;
		}
		covered = fr->end;
	}
	if (b->n)
		err = row_buf__push(b, (uint32_t)(covered - t->base), command_row(OFFCPU_CFA_NONE));
	return err;
}

static int build_from(const struct cfi_source *s, struct cfi_table *t, const char *source,
		      bool libdw_rows)
{
	struct fde_list fdes = {0};
	struct row_buf b = {0};
	size_t fdes_before = t->stats.fdes;
	int err;

	err = read_fdes(s, t, &fdes);
	if (!err)
		err = build_rows(s, t, &fdes, &b, libdw_rows);
	fde_list__free(&fdes);
	if (err == -EBADMSG) {
		/* not trusted to libdw at all: as if the section were not there */
		t->stats.corrupt++;
		err = -ENOENT;
	}
	if (err || !b.n) {
		free(b.v);
		t->stats.fdes = fdes_before;
		return err ? err : -ENOENT;
	}
	/* the table lives as long as the process is traced: give back the slack */
	t->rows = realloc(b.v, b.n * sizeof(*b.v)) ?: b.v;
	t->n = b.n;
	t->source = source;
	t->stats.rows = b.n;
	for (size_t i = 0; i < t->n; i++) {
		unsigned int cfa = OFFCPU_CFI_CFA(t->rows[i].rule);

		if (cfa == OFFCPU_CFA_UNSUPPORTED)
			t->stats.unsupported++;
		else if ((cfa == OFFCPU_CFA_SP || cfa == OFFCPU_CFA_FP) &&
			 OFFCPU_CFI_FP(t->rows[i].rule) == OFFCPU_FP_UNKNOWN)
			t->stats.fp_unknown++;
	}
	return 0;
}

/* ---- the ELF file and its separate debug file ---- */

static int read_segments(Elf *elf, struct cfi_table *t)
{
	size_t phnum;
	bool any = false;

	if (elf_getphdrnum(elf, &phnum))
		return -ENOEXEC;
	t->segs = calloc(phnum ? phnum : 1, sizeof(*t->segs));
	if (!t->segs)
		return -ENOMEM;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		t->segs[t->nsegs++] = (struct cfi_segment){
			.vaddr = ph.p_vaddr,
			.offset = ph.p_offset,
			.filesz = ph.p_filesz,
			.memsz = ph.p_memsz,
			.flags = ph.p_flags,
		};
		if (!any || ph.p_vaddr < t->base)
			t->base = ph.p_vaddr;
		any = true;
	}
	return 0;
}

static bool same_build_id(Elf *elf, const struct cfi_table *t)
{
	const void *id;
	ssize_t len;

	if (!t->build_id_len)
		return true;
	len = dwelf_elf_gnu_build_id(elf, &id);
	if (len <= 0)
		return true;
	return (size_t)len >= t->build_id_len && !memcmp(id, t->build_id, t->build_id_len);
}

/* The .debug_frame of the debug file at path, when it is this file's. */
static int try_debug_file(const char *path, struct cfi_table *t, bool libdw_rows)
{
	struct cfi_source s;
	Elf *elf;
	int fd, err = -ENOENT;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !same_build_id(elf, t))
		goto cleanup;
	if (!cfi_source__debug_frame(elf, &s)) {
		err = build_from(&s, t, "debug file .debug_frame", libdw_rows);
		cfi_source__close(&s);
	}
cleanup:
	elf_end(elf);
	close(fd);
	return err;
}

static int try_debuglink(Elf *elf, const char *path, const char *root, struct cfi_table *t,
			 bool libdw_rows)
{
	uint64_t addr;
	Elf_Data *d = section_data(elf, ".gnu_debuglink", &addr);
	char dir[PATH_MAX], buf[PATH_MAX];
	const char *name, *slash;
	size_t dlen;
	int err = -ENOENT;

	if (!d || !path || !memchr(d->d_buf, '\0', d->d_size))
		return -ENOENT;
	name = d->d_buf;
	if (!*name || strchr(name, '/'))
		return -ENOENT;
	slash = strrchr(path, '/');
	dlen = slash ? (size_t)(slash - path) : 0;
	if (dlen >= sizeof(dir))
		return -ENOENT;
	memcpy(dir, path, dlen);
	dir[dlen] = '\0';
	/* next to the file, in .debug/ beside it, then under the debug root */
	if (snprintf(buf, sizeof(buf), "%s/%s", slash ? dir : ".", name) < (int)sizeof(buf) &&
	    strcmp(buf, path))
		err = try_debug_file(buf, t, libdw_rows);
	if (err == -ENOENT &&
	    snprintf(buf, sizeof(buf), "%s/.debug/%s", slash ? dir : ".", name) < (int)sizeof(buf))
		err = try_debug_file(buf, t, libdw_rows);
	if (err == -ENOENT && slash && path[0] == '/' &&
	    snprintf(buf, sizeof(buf), "%s%s/%s", root, dir, name) < (int)sizeof(buf))
		err = try_debug_file(buf, t, libdw_rows);
	return err;
}

static int try_build_id(const char *root, struct cfi_table *t, bool libdw_rows)
{
	char buf[PATH_MAX];
	int n;

	if (!t->build_id_len)
		return -ENOENT;
	n = snprintf(buf, sizeof(buf), "%s/.build-id/%02x/", root, t->build_id[0]);
	for (size_t i = 1; i < t->build_id_len && n < (int)sizeof(buf); i++)
		n += snprintf(buf + n, sizeof(buf) - n, "%02x", t->build_id[i]);
	if (n >= (int)sizeof(buf) - 7)
		return -ENOENT;
	strcat(buf, ".debug");
	return try_debug_file(buf, t, libdw_rows);
}

int cfi_table__build_opts(int fd, const char *path, const struct cfi_build_opts *o,
			  struct cfi_table *t)
{
	const char *debug_root = o ? o->debug_root : NULL;
	bool libdw_rows = o && o->libdw_rows;
	struct cfi_source s;
	GElf_Ehdr eh;
	Elf *elf = NULL;
	const void *id;
	ssize_t idlen;
	int err;

	memset(t, 0, sizeof(*t));
	if (!debug_root)
		debug_root = CFI_DEBUG_ROOT;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EIO;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    gelf_getclass(elf) != ELFCLASS64 || eh.e_machine != EM_X86_64 ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)) {
		err = -ENOEXEC;
		goto cleanup;
	}
	t->elf_type = eh.e_type;
	err = read_segments(elf, t);
	if (err)
		goto cleanup;
	idlen = dwelf_elf_gnu_build_id(elf, &id);
	if (idlen > 0) {
		t->build_id_len =
			(size_t)idlen < sizeof(t->build_id) ? (size_t)idlen : sizeof(t->build_id);
		memcpy(t->build_id, id, t->build_id_len);
	}
	if (o && o->segments_only)
		goto cleanup;
	err = cfi_source__eh_frame(elf, &s);
	if (!err) {
		err = build_from(&s, t, ".eh_frame", libdw_rows);
		cfi_source__close(&s);
	}
	if (err == -ENOENT && !cfi_source__debug_frame(elf, &s)) {
		err = build_from(&s, t, ".debug_frame", libdw_rows);
		cfi_source__close(&s);
	}
	if (err == -ENOENT)
		err = try_build_id(debug_root, t, libdw_rows);
	if (err == -ENOENT)
		err = try_debuglink(elf, path, debug_root, t, libdw_rows);
cleanup:
	if (err && err != -ENOENT)
		cfi_table__free(t);
	elf_end(elf);
	return err;
}

int cfi_table__build_root(int fd, const char *path, const char *debug_root, struct cfi_table *t)
{
	return cfi_table__build_opts(fd, path, &(struct cfi_build_opts){.debug_root = debug_root},
				     t);
}

int cfi_table__build(int fd, const char *path, struct cfi_table *t)
{
	return cfi_table__build_root(fd, path, NULL, t);
}

void cfi_table__free(struct cfi_table *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t->segs);
	memset(t, 0, sizeof(*t));
}

int cfi_table__bias(const struct cfi_table *t, uint64_t map_start, uint64_t map_offset,
		    uint64_t *bias)
{
	const struct cfi_segment *best = NULL;
	int best_rank = 0;

	/*
	 * A mapping starts at the page holding its segment's first byte.
	 * Segments can share a page: prefer the one that starts in the
	 * mapping's first page, and the executable one among those.
	 */
	for (size_t i = 0; i < t->nsegs; i++) {
		const struct cfi_segment *s = &t->segs[i];
		uint64_t page = s->offset & ~4095ULL;
		int rank;

		if (map_offset < page || map_offset >= s->offset + (s->filesz ? s->filesz : 1))
			continue;
		rank = 1 + (map_offset == page) * 2 + !!(s->flags & PF_X);
		if (rank > best_rank) {
			best = s;
			best_rank = rank;
		}
	}
	if (!best)
		return -ENOENT;
	if (t->elf_type == ET_EXEC) {
		*bias = 0;
		return 0;
	}
	/* the file offset map_offset is at map_start; in the ELF it is at vaddr + (it - offset) */
	*bias = map_start - (best->vaddr + (map_offset - best->offset));
	return 0;
}

const struct offcpu_cfi_row *cfi_table__find(const struct cfi_table *t, uint64_t addr)
{
	size_t lo = 0, hi;
	uint64_t rel;

	if (!t || !t->n || addr < t->base)
		return NULL;
	rel = addr - t->base;
	if (rel > UINT32_MAX)
		return NULL;
	if (rel < t->rows[0].pc)
		return NULL;
	/* the last row whose pc <= rel: rows[lo].pc <= rel < rows[hi].pc */
	hi = t->n;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->rows[mid].pc <= rel)
			lo = mid;
		else
			hi = mid;
	}
	return &t->rows[lo];
}

int cfi_row__format(const struct offcpu_cfi_row *r, char *buf, size_t len)
{
	int n;

	switch (OFFCPU_CFI_CFA(r->rule)) {
	case OFFCPU_CFA_NONE:
		n = snprintf(buf, len, "none");
		break;
	case OFFCPU_CFA_SIGNAL:
		n = snprintf(buf, len, "signal");
		break;
	case OFFCPU_CFA_END:
		n = snprintf(buf, len, "end");
		break;
	case OFFCPU_CFA_PLT:
		n = snprintf(buf, len, "plt rsp+%u rip&15>=%d", r->cfa_off * 8, r->fp_off);
		break;
	case OFFCPU_CFA_RA_RDI:
		n = snprintf(buf, len, "rsp+%u ra=rdi", r->cfa_off * 8);
		break;
	case OFFCPU_CFA_SP:
	case OFFCPU_CFA_FP:
		switch (OFFCPU_CFI_FP(r->rule)) {
		case OFFCPU_FP_SAME:
			n = snprintf(buf, len, "%s+%u",
				     OFFCPU_CFI_CFA(r->rule) == OFFCPU_CFA_SP ? "rsp" : "rbp",
				     r->cfa_off * 8);
			break;
		case OFFCPU_FP_SAVED:
			n = snprintf(buf, len, "%s+%u rbp=[cfa%+d]",
				     OFFCPU_CFI_CFA(r->rule) == OFFCPU_CFA_SP ? "rsp" : "rbp",
				     r->cfa_off * 8, r->fp_off * 8);
			break;
		default:
			n = snprintf(buf, len, "%s+%u rbp=?",
				     OFFCPU_CFI_CFA(r->rule) == OFFCPU_CFA_SP ? "rsp" : "rbp",
				     r->cfa_off * 8);
			break;
		}
		break;
	default:
		n = snprintf(buf, len, "unsupported");
		break;
	}
	return n >= 0 && (size_t)n < len ? 0 : -ENOSPC;
}
