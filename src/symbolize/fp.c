// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>

#include "symbolize/fp.h"

/* How many bytes from the start of a function the prologue checks look at. */
#define FP_PROLOGUE_BYTES 64
/* How many compile units the producer check reads at most. */
#define FP_MAX_CUS 256

/*
 * Functions that the C runtime start files bring into every executable; they
 * are compiled once by the distribution, not with the program's own flags.
 */
static const char *const crt_funcs[] = {
	"_start",
	"_init",
	"_fini",
	"deregister_tm_clones",
	"register_tm_clones",
	"__do_global_dtors_aux",
	"frame_dummy",
	"__libc_csu_init",
	"__libc_csu_fini",
	"_dl_relocate_static_pie",
};

static bool is_crt(const char *name)
{
	for (size_t i = 0; i < sizeof(crt_funcs) / sizeof(crt_funcs[0]); i++)
		if (!strcmp(name, crt_funcs[i]))
			return true;
	return false;
}

/*
 * x86-64: "mov %rsp,%rbp" (either encoding), or Go's "lea N(%rsp),%rbp",
 * anywhere in the first bytes. GCC schedules other instructions between
 * "push %rbp" and the mov, and shrink-wrapping puts the whole prologue after
 * an early-exit test, so the very first instructions prove nothing. Without
 * frame pointers only functions that need a frame anyway (alloca, variable-
 * length arrays) contain these.
 */
static bool x86_64_has_fp(const unsigned char *b, size_t n)
{
	for (size_t i = 0; i + 4 <= n; i++) {
		if (b[i] != 0x48)
			continue;
		if ((b[i + 1] == 0x89 && b[i + 2] == 0xe5) ||
		    (b[i + 1] == 0x8b && b[i + 2] == 0xec))
			return true;
		if (b[i + 1] == 0x8d && (b[i + 2] == 0x6c || b[i + 2] == 0xac) && b[i + 3] == 0x24)
			return true;
	}
	return false;
}

/* arm64: "add x29, sp, #imm" (mov x29, sp is imm 0) among the first instructions. */
static bool arm64_has_fp(const unsigned char *b, size_t n)
{
	for (size_t i = 0; i + 4 <= n; i += 4) {
		uint32_t insn = b[i] | b[i + 1] << 8 | b[i + 2] << 16 | (uint32_t)b[i + 3] << 24;

		if ((insn & 0xffc003ff) == 0x910003fd)
			return true;
	}
	return false;
}

static bool fp_register(Elf *elf, unsigned int *reg)
{
	GElf_Ehdr eh;

	if (!elf || !gelf_getehdr(elf, &eh))
		return false;
	/* DWARF register numbers of the frame pointer: %rbp, x29 */
	if (eh.e_machine == EM_X86_64)
		*reg = 6;
	else if (eh.e_machine == EM_AARCH64)
		*reg = 29;
	else
		return false;
	return true;
}

static enum fp_verdict verdict(size_t with_fp, size_t sampled, size_t min)
{
	if (sampled < min)
		return FP_UNKNOWN;
	if (with_fp * 100 >= sampled * FP_PRESENT_PCT)
		return FP_PRESENT;
	if (with_fp * 100 <= sampled * FP_ABSENT_PCT)
		return FP_ABSENT;
	return FP_UNKNOWN;
}

struct func {
	uint64_t vaddr, size;
};

static int cmp_func(const void *pa, const void *pb)
{
	const struct func *a = pa, *b = pb;

	return a->vaddr < b->vaddr ? -1 : a->vaddr > b->vaddr;
}

/* The file offset of vaddr when it lies in an executable segment, or -1. */
static int64_t exec_offset(Elf *elf, uint64_t vaddr, size_t *avail)
{
	size_t phnum;

	if (elf_getphdrnum(elf, &phnum))
		return -1;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz) {
			*avail = ph.p_vaddr + ph.p_filesz - vaddr;
			return ph.p_offset + (vaddr - ph.p_vaddr);
		}
	}
	return -1;
}

/* The functions worth sampling (main-file vaddrs), sorted, one per address. */
static size_t candidate_funcs(Dwfl_Module *mod, GElf_Addr main_bias, struct func **out)
{
	int nsym = dwfl_module_getsymtab(mod);
	struct func *f;
	size_t n = 0, u = 0;

	*out = NULL;
	if (nsym <= 0)
		return 0;
	f = malloc(nsym * sizeof(*f));
	if (!f)
		return 0;
	for (int i = 1; i < nsym; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, NULL, NULL);

		/* ".cold" parts of split functions never set up a frame of their own */
		if (!name || GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF ||
		    sym.st_size < 8 || is_crt(name) || strstr(name, ".cold"))
			continue;
		f[n++] = (struct func){addr - main_bias, sym.st_size};
	}
	qsort(f, n, sizeof(*f), cmp_func);
	for (size_t i = 0; i < n; i++)
		if (!u || f[u - 1].vaddr != f[i].vaddr)
			f[u++] = f[i];
	*out = f;
	return u;
}

static enum fp_verdict from_prologues(Dwfl_Module *mod)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	bool (*has_fp)(const unsigned char *, size_t);
	size_t n, stride, sampled = 0, with_fp = 0;
	struct func *funcs = NULL;
	GElf_Ehdr eh;

	if (!elf || !gelf_getehdr(elf, &eh))
		return FP_UNKNOWN;
	if (eh.e_machine == EM_X86_64)
		has_fp = x86_64_has_fp;
	else if (eh.e_machine == EM_AARCH64)
		has_fp = arm64_has_fp;
	else
		return FP_UNKNOWN;
	n = candidate_funcs(mod, bias, &funcs);
	/* spread the sample over the whole binary, not its first functions */
	stride = n > FP_SAMPLE ? n / FP_SAMPLE : 1;
	for (size_t i = 0; i < n && sampled < FP_SAMPLE; i += stride) {
		size_t avail = 0;
		int64_t off = exec_offset(elf, funcs[i].vaddr, &avail);
		Elf_Data *d;

		if (off < 0)
			continue;
		if (avail > funcs[i].size)
			avail = funcs[i].size;
		if (avail > FP_PROLOGUE_BYTES)
			avail = FP_PROLOGUE_BYTES;
		d = elf_getdata_rawchunk(elf, off, avail, ELF_T_BYTE);
		if (!d || !d->d_buf)
			continue;
		sampled++;
		with_fp += has_fp(d->d_buf, d->d_size);
	}
	free(funcs);
	return verdict(with_fp, sampled, FP_MIN_FUNCS);
}

/*
 * Addresses spread evenly over the executable segments: how many of them
 * have, in the unwind tables, a CFA computed from the frame pointer?
 * .eh_frame is read through a handle of its own, ended here: the module's
 * (dwfl_module_eh_cfi()) would keep the 512 probes' entries until the
 * symbolizer ends, 1.4 MB for the binaries of a host-wide capture.
 */
static enum fp_verdict from_cfi(Dwfl_Module *mod)
{
	GElf_Addr ebias;
	Dwarf_Addr cbias;
	Elf *elf = dwfl_module_getelf(mod, &ebias);
	Dwarf_CFI *own = elf ? dwarf_getcfi_elf(elf) : NULL, *cfi = own;
	size_t phnum, probes = 0, sampled = 0, with_fp = 0;
	uint64_t span = 0;
	unsigned int reg;

	/* file addresses: the probes below add ebias, which cbias takes back */
	cbias = ebias;
	if (!cfi)
		cfi = dwfl_module_dwarf_cfi(mod, &cbias);
	if (!cfi || !fp_register(elf, &reg) || elf_getphdrnum(elf, &phnum)) {
		dwarf_cfi_end(own);
		return FP_UNKNOWN;
	}
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
			span += ph.p_memsz;
	}
	for (size_t k = 0; span && k < FP_CFI_SAMPLES; k++, probes++) {
		uint64_t at = span * k / FP_CFI_SAMPLES, pc = 0;
		Dwarf_Frame *frame = NULL;
		Dwarf_Op *ops;
		size_t nops;

		for (size_t i = 0; i < phnum; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD ||
			    !(ph.p_flags & PF_X))
				continue;
			if (at < ph.p_memsz) {
				pc = ph.p_vaddr + at;
				break;
			}
			at -= ph.p_memsz;
		}
		/* padding, PLT stubs and code without unwind info are not counted */
		if (dwarf_cfi_addrframe(cfi, pc + ebias - cbias, &frame))
			continue;
		if (!dwarf_frame_cfa(frame, &ops, &nops) && nops == 1 &&
		    ops[0].atom == DW_OP_bregx) {
			sampled++;
			with_fp += ops[0].number == reg;
		}
		free(frame);
	}
	dwarf_cfi_end(own);
	/* unwind tables for only a little of the code (the C runtime's) say nothing of the rest */
	if (sampled * 100 < probes * FP_MIN_CFI_PCT)
		return FP_UNKNOWN;
	return verdict(with_fp, sampled, FP_MIN_CFI);
}

/* Where flag last occurs in a command line, or NULL. */
static const char *last_of(const char *p, const char *flag)
{
	const char *last = NULL;

	for (const char *q = strstr(p, flag); q; q = strstr(q + 1, flag))
		last = q;
	return last;
}

static enum fp_verdict from_producers(Dwfl_Module *mod)
{
	Dwarf_Addr bias;
	Dwarf *dw = dwfl_module_getdwarf(mod, &bias);
	Dwarf_Off off = 0, next;
	size_t hsize, present = 0, absent = 0;

	for (int i = 0;
	     dw && i < FP_MAX_CUS && !dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL);
	     i++, off = next) {
		const char *p, *yes, *no;
		Dwarf_Attribute a;
		Dwarf_Die cu;

		if (!dwarf_offdie(dw, off + hsize, &cu))
			continue;
		p = dwarf_formstring(dwarf_attr(&cu, DW_AT_producer, &a));
		if (!p)
			continue;
		/* the last of the two flags on a command line is the one that counts */
		yes = last_of(p, "-fno-omit-frame-pointer");
		no = last_of(p, "-fomit-frame-pointer");
		if (yes && (!no || yes > no))
			present++;
		else if (no)
			absent++;
	}
	if (present && !absent)
		return FP_PRESENT;
	if (absent && !present)
		return FP_ABSENT;
	return FP_UNKNOWN;
}

/* Go sets frame pointers on x86-64 and arm64 (since 1.7 and 1.12) and cannot be told not to. */
static bool is_go(Dwfl_Module *mod)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(name, ".gopclntab") || !strcmp(name, ".note.go.buildid"))
			return true;
	}
	return false;
}

enum fp_verdict fp__detect(Dwfl_Module *mod)
{
	unsigned int reg;
	GElf_Addr bias;
	enum fp_verdict v;

	/* Go's unwind tables compute the CFA from %rsp even though every frame has a record */
	if (is_go(mod))
		return fp_register(dwfl_module_getelf(mod, &bias), &reg) ? FP_PRESENT : FP_UNKNOWN;
	v = from_cfi(mod);

	if (v == FP_UNKNOWN)
		v = from_prologues(mod);
	return v != FP_UNKNOWN ? v : from_producers(mod);
}

static const Dwfl_Callbacks file_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

int sym_binary__frame_pointers(const char *path, enum fp_verdict *verdict)
{
	Dwfl *dwfl = dwfl_begin(&file_callbacks);
	Dwfl_Module *mod;
	int fd = -1, err = 0;

	*verdict = FP_UNKNOWN;
	if (!dwfl)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto cleanup;
	}
	dwfl_report_begin(dwfl);
	mod = dwfl_report_elf(dwfl, path, path, fd, 0, true);
	dwfl_report_end(dwfl, NULL, NULL);
	if (!mod) {
		err = -ENOEXEC;
		goto cleanup;
	}
	fd = -1; /* the module owns it now */
	*verdict = fp__detect(mod);
cleanup:
	if (fd >= 0)
		close(fd);
	dwfl_end(dwfl);
	return err;
}
