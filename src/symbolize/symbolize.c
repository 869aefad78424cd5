// SPDX-License-Identifier: GPL-2.0-only
/*
 * The symbolizer: processes (a snapshot of their executable mappings, a JIT
 * map, a cache of resolved addresses) over binaries (one libdwfl module per
 * distinct file, shared by every process that maps it).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <elfutils/libdwelf.h>
#include <gelf.h>
#include <zlib.h>

#include "symbolize/demangle.h"
#include "symbolize/dwlazy.h"
#include "symbolize/fp.h"
#include "symbolize/perfmap.h"
#include "symbolize/procmaps.h"
#include "symbolize/symbolize.h"
#include "symbolize/symtab.h"
#include "util/filepages.h"
#include "util/hash.h"
#include "util/hmap.h"
#include "util/procfs.h"
#include "util/vec.h"

/* Where separate debug files live (elfutils' default debuginfo path). */
#define DEBUG_ROOT "/usr/lib/debug"
/* A process whose address is in no known mapping is re-read at most this often. */
#define REFRESH_NS 100000000ULL
/* The name buffer for one demangled name before it is interned. */
#define NAME_MAX_LEN 1024

struct load_seg {
	uint64_t vaddr, offset, filesz;
};

struct cframe {
	const char *name; /* interned */
	bool is_inline;
};

struct vcached {
	uint64_t vaddr;
	uint32_t first, n; /* into binary->vframes */
};

/* A range of code of one function (DW_TAG_subprogram) of a compile unit. */
struct fn_range {
	uint64_t lo, hi; /* [lo, hi) in DWARF addresses */
	Dwarf_Die die;
};

/* The functions of one compile unit by address, built at its first inline lookup. */
struct cu_funcs {
	void *cu_addr; /* the CU DIE's address in the debug data: its identity */
	struct fn_range *r;
	size_t n, cap;
};

struct binary {
	char *path;	  /* as the process sees it */
	const char *base; /* basename of path, for "[base+0xOFF]" */
	unsigned int dev_major, dev_minor;
	uint64_t ino;
	uint64_t size; /* for the vdso, which has no inode */
	Dwfl *dwfl;
	Dwfl_Module *mod;    /* NULL when the file could not be read as ELF */
	struct symtab *syms; /* built at the first lookup */
	bool syms_tried;
	struct load_seg *segs;
	size_t nsegs;
	bool pseudo;	  /* [vdso] */
	bool open_failed; /* tried again when another mapping of it is seen */
	enum fp_verdict fp;
	bool has_symbols, has_debuginfo;
	bool facts_tried;    /* binary_facts() ran */
	bool framed;	     /* an address in it was resolved: symbolizer__binaries() lists it */
	bool dwarf_read;     /* an inline lookup has loaded its DWARF */
	char *dwarf_path;    /* the file its DWARF is in, when found on this machine */
	struct dwlazy *lazy; /* that DWARF inflated as lookups need it (NULL: through libdwfl) */
	bool lazy_tried;
	struct cu_funcs *cus;
	size_t ncus, cus_cap;
	struct hmap cu_idx; /* a CU DIE's address -> its index in cus */
	/*
	 * The frames of each address of the file resolved so far, for every
	 * process that maps it: vframes[vc[i].first ..] for address vc[i].vaddr.
	 */
	struct vcached *vc;
	size_t nvc, vc_cap;
	struct hmap vc_idx;
	struct cframe *vframes;
	size_t nvframes, vframes_cap;
};

/* One executable file mapping of a process. */
struct umap {
	uint64_t start, end;
	uint64_t bias; /* runtime address - ELF vaddr */
	uint32_t bin;
};

struct cached {
	uint64_t addr;
	uint32_t first, n; /* into proc->frames */
};

/*
 * An image a process had before an exec: its mappings name the addresses
 * seen before `until` (symbolizer__exec()). maps is NULL when none was read.
 */
struct proc_image {
	uint64_t until;
	struct umap *maps;
	size_t nmaps;
	/*
	 * A forked child's first image was a copy of its parent's: the parent's
	 * image at parent_seq fills what maps lack (image_complete()), once the
	 * parent's own execs have been told apart, at the first lookup.
	 */
	int parent;
	uint64_t parent_seq;
	bool completed;
};

/* Images kept per process; addresses seen before the oldest kept are not named. */
#define PROC_IMAGES 16

struct proc {
	int pid;
	uint64_t starttime;		   /* clock ticks after boot; 0 if never seen alive */
	uint64_t read_from_ns, read_to_ns; /* when maps were read: before and after */
	struct umap *maps;
	size_t nmaps;
	char *perfmap_path;
	struct perfmap *perfmap;
	off_t perfmap_size;
	struct timespec perfmap_mtime;
	struct hmap cache_idx;
	struct cached *cache;
	size_t ncache, cache_cap;
	struct cframe *frames;
	size_t nframes, frames_cap;
	bool gone; /* seen gone by symbolizer__forget_gone(): freed at its next call */
	struct proc_image *images; /* before each exec seen, oldest first */
	size_t nimages, images_cap;
	uint64_t images_from; /* addresses seen before: their image was dropped */
	/* a forked child, no exec since: its parent's image at parent_seq, while it has no maps */
	int parent;
	uint64_t parent_seq;
};

struct symbolizer {
	bool inlines, no_demangle, debuginfod, perf_map_dir_given;
	bool dwarf_whole;
	char *kallsyms_path, *proc_root, *perf_map_dir;

	struct ksyms *ksyms;
	struct ksyms *kcore; /* answers for [kcore_lo, kcore_hi) without a read */
	uint64_t kcore_lo, kcore_hi;
	bool ksyms_tried;
	int ksyms_err;

	struct binary **bins;
	size_t nbins, bins_cap;
	struct hmap bin_idx;

	struct proc **procs;
	size_t nprocs, procs_cap;
	struct hmap proc_idx;

	char **names;
	size_t nnames, names_cap;
	struct hmap name_idx;

	struct sym_binary *pub;
	struct symbolizer_stats stats;
};

/*
 * A file named by .gnu_debuglink is the module's debug file when their build
 * ids agree or, for a module without one, when its CRC is the link's.
 */
static bool debug_file_matches(Dwfl_Module *mod, int fd, GElf_Word crc)
{
	const unsigned char *want;
	const void *have;
	unsigned char buf[65536];
	GElf_Addr vaddr;
	int want_len = dwfl_module_build_id(mod, &want, &vaddr);
	uLong sum = crc32(0, Z_NULL, 0);
	off_t off = 0;
	ssize_t got;
	bool same;
	Elf *elf;

	if (want_len > 0) {
		elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		got = elf ? dwelf_elf_gnu_build_id(elf, &have) : -1;
		same = got == want_len && !memcmp(have, want, want_len);
		elf_end(elf);
		return same;
	}
	while ((got = pread(fd, buf, sizeof(buf), off)) > 0) {
		sum = crc32(sum, buf, (uInt)got);
		off += got;
	}
	return got == 0 && (GElf_Word)sum == crc;
}

static int try_debug_file(Dwfl_Module *mod, const char *path, const char *main_file, GElf_Word crc,
			  char **found)
{
	int fd;

	if (!strcmp(path, main_file))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (!debug_file_matches(mod, fd, crc) || !(*found = strdup(path))) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Separate debug information on this machine only: by build id in
 * /usr/lib/debug/.build-id, then by .gnu_debuglink next to the file, in
 * .debug/ beside it and under /usr/lib/debug (inside the process's root when
 * the file was opened through /proc/PID/root). elfutils' own search
 * (dwfl_standard_find_debuginfo) ends, when it finds nothing, by loading
 * libdebuginfod, which loads libcurl and initializes TLS: about 30 shared
 * libraries and their start-up for every capture of a program without debug
 * information, DEBUGINFOD_URLS set or not. Servers are asked only with
 * opts->debuginfod (downloads can take minutes).
 */
/* The debug file named by .gnu_debuglink beside file_name, in .debug/ or under the debug root. */
static int debuglink_open(Dwfl_Module *mod, const char *file_name, const char *link, GElf_Word crc,
			  char **found)
{
	char dir[4096], path[8192];
	const char *slash, *root_end = NULL, *rel;
	int fd;

	if (!file_name || !link || !*link || strchr(link, '/'))
		return -1;
	slash = strrchr(file_name, '/');
	if (!slash || (size_t)(slash - file_name) >= sizeof(dir))
		return -1;
	memcpy(dir, file_name, slash - file_name);
	dir[slash - file_name] = '\0';
	snprintf(path, sizeof(path), "%s/%s", dir, link);
	fd = try_debug_file(mod, path, file_name, crc, found);
	if (fd >= 0)
		return fd;
	snprintf(path, sizeof(path), "%s/.debug/%s", dir, link);
	fd = try_debug_file(mod, path, file_name, crc, found);
	if (fd >= 0)
		return fd;
	/* "/proc/PID/root/usr/bin": the debug root is the process's own */
	if (!strncmp(dir, "/proc/", 6)) {
		rel = dir + 6 + strspn(dir + 6, "0123456789");
		if (rel > dir + 6 && !strncmp(rel, "/root/", 6))
			root_end = rel + 5;
	}
	if (root_end)
		snprintf(path, sizeof(path), "%.*s" DEBUG_ROOT "%s/%s", (int)(root_end - dir), dir,
			 root_end, link);
	else
		snprintf(path, sizeof(path), DEBUG_ROOT "%s/%s", dir, link);
	return try_debug_file(mod, path, file_name, crc, found);
}

/*
 * Separate debug information on this machine only: by build id in
 * /usr/lib/debug/.build-id, then by .gnu_debuglink next to the file, in
 * .debug/ beside it and under /usr/lib/debug (inside the process's root when
 * the file was opened through /proc/PID/root). elfutils' own search
 * (dwfl_standard_find_debuginfo) ends, when it finds nothing, by loading
 * libdebuginfod, which loads libcurl and initializes TLS: about 30 shared
 * libraries and their start-up for every capture of a program without debug
 * information, DEBUGINFOD_URLS set or not. Servers are asked only with
 * opts->debuginfod (downloads can take minutes).
 */
static int find_debuginfo_local(Dwfl_Module *mod, void **userdata, const char *modname,
				GElf_Addr base, const char *file_name, const char *debuglink_file,
				GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	int fd = dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name,
					      debuglink_file, debuglink_crc, debuginfo_file_name);

	if (fd >= 0)
		return fd;
	return debuglink_open(mod, file_name, debuglink_file, debuglink_crc, debuginfo_file_name);
}

static const Dwfl_Callbacks local_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = find_debuginfo_local,
	.section_address = dwfl_offline_section_address,
};

static const Dwfl_Callbacks debuginfod_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static const char *intern(struct symbolizer *s, const char *name)
{
	uint64_t h = hash_bytes(name, strlen(name), 0);
	size_t pos = hmap__first(&s->name_idx, h);
	char *copy;

	while ((copy = hmap__next(&s->name_idx, h, &pos)))
		if (!strcmp(copy, name))
			return copy;
	if (vec_reserve(s->names, s->names_cap, s->nnames + 1))
		return NULL;
	copy = strdup(name);
	if (!copy || hmap__add(&s->name_idx, h, copy)) {
		free(copy);
		return NULL;
	}
	s->names[s->nnames++] = copy;
	return copy;
}

/* ---- binaries ---- */

static void binary__free(struct binary *b)
{
	if (!b)
		return;
	symtab__free(b->syms);
	for (size_t i = 0; i < b->ncus; i++)
		free(b->cus[i].r);
	free(b->cus);
	hmap__free(&b->cu_idx);
	free(b->vc);
	free(b->vframes);
	hmap__free(&b->vc_idx);
	dwlazy__free(b->lazy);
	dwfl_end(b->dwfl);
	free(b->segs);
	free(b->dwarf_path);
	free(b->path);
	free(b);
}

/*
 * What a binary holds besides its name and facts: its ELF (mapped), symbols,
 * debug info and resolved frames. Closed when no process left maps it (long
 * runs); opened again, as if new, when one does (open_failed).
 */
static void binary_close(struct binary *b)
{
	symtab__free(b->syms);
	b->syms = NULL;
	b->syms_tried = false;
	for (size_t i = 0; i < b->ncus; i++)
		free(b->cus[i].r);
	free(b->cus);
	b->cus = NULL;
	b->ncus = b->cus_cap = 0;
	hmap__free(&b->cu_idx);
	free(b->vc);
	b->vc = NULL;
	b->nvc = b->vc_cap = 0;
	free(b->vframes);
	b->vframes = NULL;
	b->nvframes = b->vframes_cap = 0;
	hmap__free(&b->vc_idx);
	dwlazy__free(b->lazy);
	b->lazy = NULL;
	b->lazy_tried = false;
	dwfl_end(b->dwfl);
	b->dwfl = NULL;
	b->mod = NULL;
	free(b->segs);
	b->segs = NULL;
	b->nsegs = 0;
	b->dwarf_read = false;
	b->open_failed = true;
}

static uint64_t binary_hash(const struct proc_map *m)
{
	if (m->path[0] == '[')
		return hash_bytes(m->path, strlen(m->path), m->end - m->start);
	return hash_mix64(m->inode ^ ((uint64_t)m->dev_major << 52) ^
			  ((uint64_t)m->dev_minor << 32));
}

static bool binary_is(const struct binary *b, const struct proc_map *m)
{
	if (m->path[0] == '[')
		return b->pseudo && !strcmp(b->path, m->path) && b->size == m->end - m->start;
	return !b->pseudo && b->ino == m->inode && b->dev_major == m->dev_major &&
	       b->dev_minor == m->dev_minor;
}

/*
 * Every binary stays open for the life of the symbolizer, and a system-wide
 * capture sees thousands: past the soft limit on open files, raise it to the
 * hard limit, once.
 */
static int open_keep(const char *path)
{
	static bool raised;
	struct rlimit rl;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 && errno == EMFILE && !raised && !getrlimit(RLIMIT_NOFILE, &rl)) {
		raised = true;
		if (rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			if (!setrlimit(RLIMIT_NOFILE, &rl))
				fd = open(path, O_RDONLY | O_CLOEXEC);
		}
	}
	return fd;
}

/* The file behind a mapping, opened now so that it stays readable after the process exits. */
static int open_mapped(const struct symbolizer *s, int pid, const struct proc_map *m, char *opened,
		       size_t len)
{
	return procmaps__open(s->proc_root, pid, m, open_keep, opened, len);
}

/* The vdso exists only in memory: copy it into a memfd that libdwfl can read. */
static int open_vdso(const struct symbolizer *s, int pid, const struct proc_map *m)
{
	size_t len = m->end - m->start;
	char path[256];
	void *buf = NULL;
	int mem = -1, fd = -1, err = 0;

	snprintf(path, sizeof(path), "%s/%d/mem", s->proc_root, pid);
	mem = open(path, O_RDONLY | O_CLOEXEC);
	buf = malloc(len);
	if (mem < 0 || !buf) {
		err = mem < 0 ? -errno : -ENOMEM;
		goto cleanup;
	}
	if (pread(mem, buf, len, m->start) != (ssize_t)len) {
		err = -EIO;
		goto cleanup;
	}
	fd = memfd_create("offcpu-vdso", MFD_CLOEXEC);
	if (fd < 0 || write(fd, buf, len) != (ssize_t)len)
		err = fd < 0 ? -errno : -EIO;
cleanup:
	if (err && fd >= 0)
		close(fd);
	if (mem >= 0)
		close(mem);
	free(buf);
	return err ? err : fd;
}

static void binary_load(struct symbolizer *s, struct binary *b, int fd, const char *file_name)
{
	GElf_Addr ebias;
	size_t phnum;
	Elf *elf;

	b->dwfl = dwfl_begin(s->debuginfod ? &debuginfod_callbacks : &local_callbacks);
	if (!b->dwfl) {
		close(fd);
		return;
	}
	dwfl_report_begin(b->dwfl);
	/* base 0 with add_p_vaddr: module addresses are the file's own vaddrs */
	b->mod = dwfl_report_elf(b->dwfl, b->path, file_name, fd, 0, true);
	dwfl_report_end(b->dwfl, NULL, NULL);
	if (!b->mod) {
		close(fd);
		return;
	}
	elf = dwfl_module_getelf(b->mod, &ebias);
	if (elf && !elf_getphdrnum(elf, &phnum)) {
		b->segs = calloc(phnum, sizeof(*b->segs));
		for (size_t i = 0; b->segs && i < phnum; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
				continue;
			b->segs[b->nsegs++] =
				(struct load_seg){ph.p_vaddr, ph.p_offset, ph.p_filesz};
		}
	}
	/*
	 * Read the symbol table and find debuginfo now: separate debug files
	 * may be searched for next to the binary, inside the process's root.
	 */
}

/* Whether elf has DWARF: a .debug_info section with contents (compressed or not). */
static bool elf_has_dwarf(Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || !sh.sh_size)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info")))
			return true;
	}
	return false;
}

/*
 * Whether b has DWARF, in the file or in a separate debug file, from section
 * headers: loading it (dwfl_module_getdwarf) inflates every compressed debug
 * section (libc6-dbg's: 10 MB), which only an inline lookup needs.
 */
static bool binary_has_dwarf(struct symbolizer *s, struct binary *b)
{
	const unsigned char *id;
	const char *main_file = NULL, *link;
	char path[sizeof(DEBUG_ROOT) + 32 + 2 * 64], *found = NULL;
	GElf_Addr bias, vaddr;
	GElf_Word crc = 0;
	Elf *elf = dwfl_module_getelf(b->mod, &bias), *dbg;
	int fd = -1, len, n;
	Dwarf_Addr dwbias;
	bool yes;

	if (elf_has_dwarf(elf)) {
		dwfl_module_info(b->mod, NULL, NULL, NULL, NULL, NULL, &main_file, NULL);
		b->dwarf_path = main_file ? strdup(main_file) : NULL;
		return true;
	}
	/*
	 * The module's own search is not called from here: it keeps what it
	 * finds in the module. The same places, looked at from outside.
	 */
	len = dwfl_module_build_id(b->mod, &id, &vaddr);
	if (len > 0 && len <= 64) {
		n = snprintf(path, sizeof(path), DEBUG_ROOT "/.build-id/%02x/", id[0]);
		for (int i = 1; i < len; i++)
			n += snprintf(path + n, sizeof(path) - n, "%02x", id[i]);
		snprintf(path + n, sizeof(path) - n, ".debug");
		dwfl_module_info(b->mod, NULL, NULL, NULL, NULL, NULL, &main_file, NULL);
		fd = try_debug_file(b->mod, path, main_file ? main_file : "", 0, &found);
	}
	if (fd < 0 && elf && (link = dwelf_elf_gnu_debuglink(elf, &crc))) {
		dwfl_module_info(b->mod, NULL, NULL, NULL, NULL, NULL, &main_file, NULL);
		fd = debuglink_open(b->mod, main_file, link, crc, &found);
	}
	if (fd < 0)
		/* only elfutils' servers are left to ask (found is NULL) */
		return s->debuginfod && dwfl_module_getdwarf(b->mod, &dwbias) != NULL;
	dbg = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	yes = elf_has_dwarf(dbg);
	elf_end(dbg);
	close(fd);
	if (yes)
		b->dwarf_path = found;
	else
		free(found);
	return yes;
}

/*
 * The pages of b's file that reading its symbols and facts faulted in, given
 * back (util/filepages.h): the mapping of the file and, when its symbol
 * names come from a separate debug file, that file's mapping.
 */
static void binary_drop_pages(struct symbolizer *s, struct binary *b)
{
	GElf_Addr bias;
	Elf *elf = b->mod ? dwfl_module_getelf(b->mod, &bias) : NULL;
	const char *raw = NULL, *name = symtab__any_name(b->syms);
	size_t len = 0;
	long got;

	if (elf)
		raw = elf_rawfile(elf, &len);
	got = filepages__drop(raw, len);
	if (got > 0)
		s->stats.file_bytes_dropped += (uint64_t)got;
	if (!name || (raw && name >= raw && name < raw + len))
		return;
	got = filepages__drop(name, 0);
	if (got > 0)
		s->stats.file_bytes_dropped += (uint64_t)got;
}

/*
 * What a binary's symbols and DWARF say, at the first need rather than when
 * it is opened: opening happens while the collector must read the next
 * process's mappings. Debug files are found by build id and in the host's
 * /usr/lib/debug then; a .gnu_debuglink file next to a binary inside a
 * container is only found while the process lives.
 */
static void binary_facts(struct symbolizer *s, struct binary *b)
{
	if (b->facts_tried || !b->mod)
		return;
	b->facts_tried = true;
	b->has_symbols = dwfl_module_getsymtab(b->mod) > 0;
	b->has_debuginfo = binary_has_dwarf(s, b);
	b->fp = fp__detect(b->mod);
	binary_drop_pages(s, b);
}

/* Open the file behind m for b; one that cannot be read still names frames "[base+0xOFF]". */
static void binary_open(struct symbolizer *s, struct binary *b, int pid, const struct proc_map *m)
{
	char opened[4096 + 64];
	int fd;

	if (b->pseudo) {
		fd = open_vdso(s, pid, m);
		snprintf(opened, sizeof(opened), "%s", m->path);
	} else {
		fd = open_mapped(s, pid, m, opened, sizeof(opened));
	}
	b->open_failed = fd < 0;
	if (fd >= 0)
		binary_load(s, b, fd, opened);
}

static int binary_get(struct symbolizer *s, int pid, const struct proc_map *m, uint32_t *out)
{
	uint64_t h = binary_hash(m);
	size_t pos = hmap__first(&s->bin_idx, h), i;
	struct binary *b;
	void *v;

	while ((v = hmap__next(&s->bin_idx, h, &pos))) {
		i = hmap_idx_of(v);
		if (binary_is(s->bins[i], m)) {
			/* another process may have it where this one can read it */
			if (s->bins[i]->open_failed)
				binary_open(s, s->bins[i], pid, m);
			*out = i;
			return 0;
		}
	}
	if (vec_reserve(s->bins, s->bins_cap, s->nbins + 1))
		return -ENOMEM;
	b = calloc(1, sizeof(*b));
	if (!b || !(b->path = strdup(m->path))) {
		free(b);
		return -ENOMEM;
	}
	b->base = strrchr(b->path, '/') ? strrchr(b->path, '/') + 1 : b->path;
	b->dev_major = m->dev_major;
	b->dev_minor = m->dev_minor;
	b->ino = m->inode;
	b->size = m->end - m->start;
	b->pseudo = m->path[0] == '[';
	binary_open(s, b, pid, m);
	if (hmap__add(&s->bin_idx, h, hmap_idx(s->nbins))) {
		binary__free(b);
		return -ENOMEM;
	}
	s->bins[s->nbins] = b;
	*out = s->nbins++;
	return 0;
}

/* runtime address - ELF vaddr, from the PT_LOAD that the mapping's file offset falls in */
static uint64_t mapping_bias(const struct binary *b, const struct proc_map *m)
{
	uint64_t page = sysconf(_SC_PAGESIZE);

	for (size_t i = 0; i < b->nsegs; i++) {
		const struct load_seg *g = &b->segs[i];

		if (m->offset >= (g->offset & ~(page - 1)) && m->offset < g->offset + g->filesz)
			return m->start - (g->vaddr + (m->offset - g->offset));
	}
	return m->start - m->offset;
}

/* ---- processes ---- */

static void proc__free(struct proc *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nimages; i++)
		free(p->images[i].maps);
	free(p->images);
	free(p->maps);
	free(p->perfmap_path);
	perfmap__free(p->perfmap);
	hmap__free(&p->cache_idx);
	free(p->cache);
	free(p->frames);
	free(p);
}

static void proc_forget_cache(struct proc *p)
{
	hmap__clear(&p->cache_idx);
	p->ncache = 0;
	p->nframes = 0;
}

/* Field 22 of /proc/PID/stat: tells a pid's process from a later one with the same pid. */
static uint64_t read_starttime(const struct symbolizer *s, int pid)
{
	struct procfs_stat st;

	procfs__stat(s->proc_root, pid, &st);
	return st.starttime;
}

/* The process's pid in its own pid namespace (the last NSpid field), or pid. */
static int read_nspid(const struct symbolizer *s, int pid)
{
	char path[256], *line = NULL;
	size_t len = 0;
	int nspid = pid;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/status", s->proc_root, pid);
	f = fopen(path, "re");
	if (!f)
		return pid;
	while (getline(&line, &len, f) > 0) {
		if (strncmp(line, "NSpid:", 6))
			continue;
		for (char *tok = strtok(line + 6, " \t\n"); tok; tok = strtok(NULL, " \t\n"))
			nspid = atoi(tok);
		break;
	}
	free(line);
	fclose(f);
	return nspid;
}

static int perfmap_find(struct symbolizer *s, struct proc *p)
{
	char path[4096];
	struct stat st;
	int nspid;

	snprintf(path, sizeof(path), "%s/perf-%d.map", s->perf_map_dir, p->pid);
	if (stat(path, &st) && !s->perf_map_dir_given) {
		/* a runtime in a container writes into its own /tmp, under its own pid */
		nspid = read_nspid(s, p->pid);
		snprintf(path, sizeof(path), "%s/%d/root/tmp/perf-%d.map", s->proc_root, p->pid,
			 nspid);
		if (stat(path, &st))
			return -ENOENT;
	} else if (!S_ISREG(st.st_mode)) {
		return -ENOENT;
	}
	free(p->perfmap_path);
	p->perfmap_path = strdup(path);
	return p->perfmap_path ? 0 : -ENOMEM;
}

/* (Re)load the JIT map when it appeared or changed since it was read. */
static void perfmap_refresh(struct symbolizer *s, struct proc *p)
{
	struct perfmap *m;
	struct stat st;
	FILE *f;

	if (!p->perfmap_path && perfmap_find(s, p))
		return;
	if (stat(p->perfmap_path, &st))
		return;
	if (p->perfmap && st.st_size == p->perfmap_size &&
	    st.st_mtim.tv_sec == p->perfmap_mtime.tv_sec &&
	    st.st_mtim.tv_nsec == p->perfmap_mtime.tv_nsec)
		return;
	f = fopen(p->perfmap_path, "re");
	if (!f)
		return;
	m = perfmap__load(f);
	fclose(f);
	if (!m)
		return;
	perfmap__free(p->perfmap);
	p->perfmap = m;
	p->perfmap_size = st.st_size;
	p->perfmap_mtime = st.st_mtim;
}

static int cmp_umap(const void *pa, const void *pb)
{
	const struct umap *a = pa, *b = pb;

	return a->start < b->start ? -1 : a->start > b->start;
}

static bool umaps_equal(const struct umap *a, size_t na, const struct umap *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (a[i].start != b[i].start || a[i].end != b[i].end || a[i].bias != b[i].bias ||
		    a[i].bin != b[i].bin)
			return false;
	return true;
}

/*
 * Take pid's mappings (raw, read between from_ns and to_ns) and open the
 * files behind the executable ones.
 */
static int proc_snapshot_maps(struct symbolizer *s, struct proc *p, const struct proc_map *raw,
			      size_t nraw, uint64_t from_ns, uint64_t to_ns)
{
	struct umap *maps = NULL;
	size_t n = 0;
	int err = 0;

	if (!nraw) {
		/*
		 * No address space: a zombie, or a process on its way out (the
		 * kernel drops its mm before its pid). What it had is kept.
		 */
		return -ESRCH;
	}
	p->starttime = read_starttime(s, p->pid);
	p->read_from_ns = from_ns;
	p->read_to_ns = to_ns;
	maps = calloc(nraw ? nraw : 1, sizeof(*maps));
	if (!maps) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < nraw; i++) {
		const struct proc_map *m = &raw[i];
		uint32_t bin;

		if (!m->executable || (m->path[0] != '/' && strcmp(m->path, "[vdso]")))
			continue;
		err = binary_get(s, p->pid, m, &bin);
		if (err)
			goto cleanup;
		maps[n++] = (struct umap){m->start, m->end, mapping_bias(s->bins[bin], m), bin};
	}
	qsort(maps, n, sizeof(*maps), cmp_umap);
	/* a new image (exec) or new libraries: earlier answers may be wrong or misses */
	if (!umaps_equal(maps, n, p->maps, p->nmaps))
		proc_forget_cache(p);
	free(p->maps);
	p->maps = maps;
	p->nmaps = n;
	maps = NULL;
	perfmap_refresh(s, p);
cleanup:
	free(maps);
	return err;
}

/* Read pid's mappings now and open the files behind the executable ones. */
static int proc_snapshot(struct symbolizer *s, struct proc *p)
{
	struct proc_map *raw = NULL;
	uint64_t from = now_ns();
	size_t nraw = 0;
	int err = procmaps__read(s->proc_root, p->pid, &raw, &nraw);

	if (err)
		return err;
	err = proc_snapshot_maps(s, p, raw, nraw, from, now_ns());
	procmaps__free(raw, nraw);
	return err;
}

static struct proc *proc_find(const struct symbolizer *s, int pid)
{
	uint64_t h = hash_mix64(pid);
	size_t pos = hmap__first(&s->proc_idx, h);
	struct proc *p;

	while ((p = hmap__next(&s->proc_idx, h, &pos)))
		if (p->pid == pid)
			return p;
	return NULL;
}

static struct proc *proc_add(struct symbolizer *s, int pid)
{
	struct proc *p;

	if (vec_reserve(s->procs, s->procs_cap, s->nprocs + 1))
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	if (hmap__add(&s->proc_idx, hash_mix64(pid), p)) {
		free(p);
		return NULL;
	}
	s->procs[s->nprocs++] = p;
	return p;
}

/* pid's entry, made when new (it stays if its mappings cannot be read: a lookup retries). */
static struct proc *proc_get(struct symbolizer *s, int pid)
{
	struct proc *p = proc_find(s, pid);

	return p ? p : proc_add(s, pid);
}

int symbolizer__track(struct symbolizer *s, int pid)
{
	struct proc *p;

	if (!s || pid <= 0)
		return -EINVAL;
	p = proc_get(s, pid);
	return p ? proc_snapshot(s, p) : -ENOMEM;
}

int symbolizer__track_maps(struct symbolizer *s, int pid, const struct proc_map *maps, size_t nr,
			   uint64_t from_ns, uint64_t to_ns)
{
	struct proc *p;

	if (!s || pid <= 0)
		return -EINVAL;
	p = proc_get(s, pid);
	if (!from_ns || !to_ns)
		from_ns = to_ns = now_ns();
	return p ? proc_snapshot_maps(s, p, maps, nr, from_ns, to_ns) : -ENOMEM;
}

static const struct proc_image *image_at(const struct proc *p, uint64_t seq);

/* Whether [m->start, m->end) meets one of maps (sorted, disjoint). */
static bool umaps_overlap(const struct umap *maps, size_t n, const struct umap *m)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (maps[mid].end <= m->start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && maps[lo].start < m->end;
}

/*
 * A parent's mappings read now, if it has none yet: a read after an exec of
 * its own is told apart by its exec's notice (symbolizer__exec()).
 */
static void parent_snapshot(struct symbolizer *s, int ppid)
{
	struct proc *pp = proc_get(s, ppid);

	if (pp && !pp->maps && !pp->nimages)
		proc_snapshot(s, pp);
}

/* ppid's image at seq (its current one in *tmp), or NULL. */
static const struct proc_image *parent_image(const struct symbolizer *s, int ppid, uint64_t seq,
					     struct proc_image *tmp)
{
	const struct proc *pp = proc_find(s, ppid);
	const struct proc_image *img = pp ? image_at(pp, seq) : NULL;

	if (!pp || img)
		return img;
	*tmp = (struct proc_image){.maps = pp->maps, .nmaps = pp->nmaps};
	return tmp;
}

/*
 * The old image of a forked child, at its first lookup: until its exec it
 * ran in a copy of its parent's address space, so the parent's mappings
 * fill what its own lack (none read before the exec, or a read that raced
 * the exec's teardown of them). Its own win where both map: what it mapped
 * after the fork. A parent that mapped more since only adds ranges its
 * stacks do not fall in.
 */
static void image_complete(struct symbolizer *s, struct proc_image *img)
{
	const struct proc_image *pimg;
	struct proc_image tmp;
	struct umap *maps;
	size_t n;

	if (!img->parent || img->completed)
		return;
	img->completed = true;
	pimg = parent_image(s, img->parent, img->parent_seq, &tmp);
	if (!pimg || !pimg->nmaps || !(maps = malloc((img->nmaps + pimg->nmaps) * sizeof(*maps))))
		return;
	n = img->nmaps;
	if (n)
		memcpy(maps, img->maps, n * sizeof(*maps));
	for (size_t i = 0; i < pimg->nmaps; i++)
		if (!umaps_overlap(img->maps, img->nmaps, &pimg->maps[i]))
			maps[n++] = pimg->maps[i];
	qsort(maps, n, sizeof(*maps), cmp_umap);
	free(img->maps);
	img->maps = maps;
	img->nmaps = n;
}

int symbolizer__inherit(struct symbolizer *s, int pid, int ppid, uint64_t seq)
{
	struct proc *p;

	if (!s || pid <= 0 || ppid <= 0 || pid == ppid)
		return -EINVAL;
	p = proc_get(s, pid);
	if (!p)
		return -ENOMEM;
	if (p->maps || p->nimages || p->parent)
		return 0;
	p->parent = ppid;
	p->parent_seq = seq;
	parent_snapshot(s, ppid);
	return 0;
}

/*
 * The image of pid before seq ends here: the mappings read so far go with
 * it when their read ended before the exec (exec_ns), and stay the new
 * image's when it began after. A read across it saw one image or the other
 * (procmaps__read() refuses one that an exec overlapped), told by what /proc
 * says now; when /proc cannot say, by neither. The old image of a forked
 * child is completed with its parent's at its first lookup (image_complete()).
 */
int symbolizer__exec(struct symbolizer *s, int pid, uint64_t seq, uint64_t exec_ns, int ppid)
{
	struct proc_map *raw = NULL;
	struct proc_image *img;
	bool theirs, known;
	struct proc *p;
	uint64_t from;
	size_t nraw = 0;

	if (!s || pid <= 0)
		return -EINVAL;
	p = proc_get(s, pid);
	if (!p || vec_reserve(p->images, p->images_cap, p->nimages + 1))
		return -ENOMEM;
	/* theirs: the mappings read so far may be the old image's; known: they are */
	theirs = p->maps && !(exec_ns && p->read_from_ns >= exec_ns);
	known = !theirs || (exec_ns && p->read_to_ns < exec_ns);
	from = now_ns();
	if (!known && (procmaps__read(s->proc_root, pid, &raw, &nraw) || !nraw)) {
		/* cannot tell: no name rather than a wrong one, for either image */
		free(p->maps);
		p->maps = NULL;
		p->nmaps = 0;
		theirs = false;
	}
	if (p->nimages == PROC_IMAGES) {
		free(p->images[0].maps);
		p->images_from = p->images[0].until;
		memmove(p->images, p->images + 1, --p->nimages * sizeof(*p->images));
	}
	img = &p->images[p->nimages++];
	*img = (struct proc_image){.until = seq};
	if (ppid > 0 && ppid != pid) {
		img->parent = ppid;
		img->parent_seq = seq;
		parent_snapshot(s, ppid);
	} else if (p->parent) {
		img->parent = p->parent;
		img->parent_seq = p->parent_seq;
	}
	p->parent = 0;
	proc_forget_cache(p);
	if (theirs) {
		img->maps = p->maps;
		img->nmaps = p->nmaps;
		p->maps = NULL;
		p->nmaps = 0;
		/* the same as now: they were the new image's after all */
		if (nraw && !proc_snapshot_maps(s, p, raw, nraw, from, now_ns()) &&
		    umaps_equal(img->maps, img->nmaps, p->maps, p->nmaps)) {
			free(img->maps);
			img->maps = NULL;
			img->nmaps = 0;
		}
	}
	procmaps__free(raw, nraw);
	return 0;
}

/* ---- user lookups ---- */

static const struct umap *umaps_find(const struct umap *maps, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && addr < maps[lo - 1].end)
		return &maps[lo - 1];
	return NULL;
}

static const struct umap *umap_find(const struct proc *p, uint64_t addr)
{
	return umaps_find(p->maps, p->nmaps, addr);
}

/* The image of an address seen at seq, or NULL for the current one. */
static const struct proc_image *image_at(const struct proc *p, uint64_t seq)
{
	static const struct proc_image dropped;

	if (!p->nimages || seq >= p->images[p->nimages - 1].until)
		return NULL;
	if (seq < p->images_from)
		return &dropped;
	for (size_t i = 0; i < p->nimages; i++)
		if (seq < p->images[i].until)
			return &p->images[i];
	return NULL;
}

static int push_frame(struct symbolizer *s, struct proc *p, const char *name, bool is_inline)
{
	const char *in = intern(s, name);

	if (!in || vec_reserve(p->frames, p->frames_cap, p->nframes + 1))
		return -ENOMEM;
	p->frames[p->nframes++] = (struct cframe){in, is_inline};
	return 0;
}

static int push_symbol(struct symbolizer *s, struct proc *p, const char *name, bool is_inline)
{
	char buf[NAME_MAX_LEN];

	if (s->no_demangle)
		return push_frame(s, p, name, is_inline);
	sym_demangle(name, buf, sizeof(buf));
	return push_frame(s, p, buf, is_inline);
}

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));

	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	return name ? name : dwarf_diename(die);
}

static int fn_add(struct cu_funcs *cf, Dwarf_Die *die)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (lo >= hi)
			continue;
		if (vec_reserve(cf->r, cf->cap, cf->n + 1))
			return -ENOMEM;
		cf->r[cf->n++] = (struct fn_range){lo, hi, *die};
	}
	return 0;
}

/* Functions among the children of die, and in namespaces and classes (C++). */
static int fn_collect(struct cu_funcs *cf, Dwarf_Die *die, int depth)
{
	Dwarf_Die child;
	int err = 0;

	if (depth > 8 || dwarf_child(die, &child))
		return 0;
	do {
		int tag = dwarf_tag(&child);

		if (tag == DW_TAG_subprogram)
			err = fn_add(cf, &child);
		else if (tag == DW_TAG_namespace || tag == DW_TAG_class_type)
			err = fn_collect(cf, &child, depth + 1);
	} while (!err && !dwarf_siblingof(&child, &child));
	return err;
}

static int fn_cmp(const void *a, const void *b)
{
	const struct fn_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The function of cu whose code holds pc, from the CU's index; NULL when none. */
static Dwarf_Die *fn_find(struct binary *b, Dwarf_Die *cu, uint64_t pc)
{
	uint64_t h = hash_mix64((uintptr_t)cu->addr);
	struct cu_funcs *cf = NULL;
	size_t pos, lo = 0, hi;
	void *v;

	for (pos = hmap__first(&b->cu_idx, h); (v = hmap__next(&b->cu_idx, h, &pos));)
		if (b->cus[hmap_idx_of(v)].cu_addr == cu->addr)
			cf = &b->cus[hmap_idx_of(v)];
	if (!cf) {
		/* Once per CU: one walk of its top level instead of one per address. */
		if (hmap__reserve(&b->cu_idx) || vec_reserve(b->cus, b->cus_cap, b->ncus + 1))
			return NULL;
		for (pos = hmap__first(&b->cu_idx, h); hmap__next(&b->cu_idx, h, &pos);)
			;
		cf = &b->cus[b->ncus];
		*cf = (struct cu_funcs){.cu_addr = cu->addr};
		if (fn_collect(cf, cu, 0)) {
			free(cf->r);
			return NULL;
		}
		qsort(cf->r, cf->n, sizeof(*cf->r), fn_cmp);
		hmap__put(&b->cu_idx, pos, h, hmap_idx(b->ncus++));
	}
	hi = cf->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cf->r[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && pc < cf->r[lo - 1].hi ? &cf->r[lo - 1].die : NULL;
}

/* The inlined functions holding pc inside fn, outermost first. */
static int push_inlines_of(struct symbolizer *s, struct proc *p, Dwarf_Die *fn, uint64_t pc)
{
	Dwarf_Die cur = *fn, child;
	bool deeper = true;
	int err = 0;

	while (deeper && !err && !dwarf_child(&cur, &child)) {
		deeper = false;
		do {
			int tag = dwarf_tag(&child);

			if ((tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block) ||
			    dwarf_haspc(&child, pc) <= 0)
				continue;
			if (tag == DW_TAG_inlined_subroutine) {
				const char *name = die_name(&child);

				err = push_symbol(s, p, name ? name : "[inlined]", true);
			}
			cur = child;
			deeper = true;
			break;
		} while (!dwarf_siblingof(&child, &child));
	}
	return err;
}

/* The lowest vaddr of b's PT_LOAD segments. */
static uint64_t lowest_vaddr(const struct binary *b)
{
	uint64_t v = b->segs[0].vaddr;

	for (size_t i = 1; i < b->nsegs; i++)
		if (b->segs[i].vaddr < v)
			v = b->segs[i].vaddr;
	return v;
}

/* The functions inlined at vaddr, from the outermost caller inwards. */
static int push_inlines(struct symbolizer *s, struct proc *p, struct binary *b, uint64_t vaddr)
{
	Dwfl_Module *mod = b->mod;
	Dwarf_Addr bias;
	Dwarf_Die cudie, *cu, *scopes = NULL, *fn;
	int n, err = 0;

	if (!b->dwarf_read) {
		b->dwarf_read = true;
		s->stats.dwarf_reads++;
	}
	if (!b->lazy_tried) {
		b->lazy_tried = true;
		if (!s->dwarf_whole && b->dwarf_path && b->nsegs)
			b->lazy = dwlazy__open(b->dwarf_path, lowest_vaddr(b));
	}
	if (b->lazy) {
		/* the DWARF's addresses are the file's (dwlazy__open() checked) */
		bias = 0;
		cu = dwlazy__addrdie(b->lazy, vaddr, &cudie) ? &cudie : NULL;
	} else {
		cu = dwfl_module_addrdie(mod, vaddr, &bias);
	}
	fn = cu ? fn_find(b, cu, vaddr - bias) : NULL;

	if (fn)
		return push_inlines_of(s, p, fn, vaddr - bias);
	/* Code outside the functions the index knows: the general, slower walk. */
	n = cu ? dwarf_getscopes(cu, vaddr - bias, &scopes) : 0;

	/* scopes run innermost first: inlined instances, the subprogram, the CU */
	for (int i = n - 1; i >= 0 && !err; i--) {
		const char *name;

		if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
			continue;
		name = die_name(&scopes[i]);
		err = push_symbol(s, p, name ? name : "[inlined]", true);
	}
	free(scopes);
	return err;
}

static bool may_refresh(struct symbolizer *s, struct proc *p)
{
	/* never re-read a pid that was not seen alive: it may be another process now */
	if (!p->starttime || now_ns() - p->read_to_ns < REFRESH_NS)
		return false;
	return read_starttime(s, p->pid) == p->starttime;
}

/*
 * The frames of address vaddr of file b, appended to p->frames. They depend
 * on the file alone, so they are kept with it: another process mapping the
 * same file (libc in every process of a host-wide capture) gets them without
 * a second lookup of symbols and inlines.
 */
static int resolve_in_file(struct symbolizer *s, struct proc *p, struct binary *b, uint64_t vaddr)
{
	uint64_t h = hash_mix64(vaddr);
	size_t before = p->nframes, n, pos;
	const char *name;
	void *v;
	int err;

	for (pos = hmap__first(&b->vc_idx, h); (v = hmap__next(&b->vc_idx, h, &pos));) {
		const struct vcached *c = &b->vc[hmap_idx_of(v)];

		if (c->vaddr != vaddr)
			continue;
		if (vec_reserve(p->frames, p->frames_cap, p->nframes + c->n))
			return -ENOMEM;
		memcpy(p->frames + p->nframes, b->vframes + c->first, c->n * sizeof(*p->frames));
		p->nframes += c->n;
		s->stats.file_cache_hits++;
		return 0;
	}
	b->framed = true;
	if (!b->syms_tried) {
		b->syms_tried = true;
		/* The debug file first: its .symtab has the static functions. */
		binary_facts(s, b);
		b->syms = symtab__build(b->mod);
		binary_drop_pages(s, b);
	}
	name = symtab__resolve(b->syms, vaddr, NULL);
	if (!name) {
		char buf[NAME_MAX_LEN];

		snprintf(buf, sizeof(buf), "[%s+0x%" PRIx64 "]", b->base, vaddr);
		err = push_frame(s, p, buf, false);
	} else {
		err = push_symbol(s, p, name, false);
		if (!err && s->inlines)
			binary_facts(s, b);
		if (!err && s->inlines && b->has_debuginfo)
			err = push_inlines(s, p, b, vaddr);
	}
	n = p->nframes - before;
	/* Not kept on failure (the lookup is simply made again) nor past 32-bit counts. */
	if (err || b->nvframes + n > UINT32_MAX || hmap__reserve(&b->vc_idx) ||
	    vec_reserve(b->vc, b->vc_cap, b->nvc + 1) ||
	    vec_reserve(b->vframes, b->vframes_cap, b->nvframes + n))
		return err;
	memcpy(b->vframes + b->nvframes, p->frames + before, n * sizeof(*p->frames));
	b->vc[b->nvc] = (struct vcached){vaddr, (uint32_t)b->nvframes, (uint32_t)n};
	b->nvframes += n;
	for (pos = hmap__first(&b->vc_idx, h); hmap__next(&b->vc_idx, h, &pos);)
		;
	hmap__put(&b->vc_idx, pos, h, hmap_idx(b->nvc++));
	return 0;
}

/* Resolve addr into frames appended to p->frames. */
static int resolve(struct symbolizer *s, struct proc *p, uint64_t addr)
{
	const struct umap *um = umap_find(p, addr);
	char buf[NAME_MAX_LEN];
	struct binary *b;
	const char *name;
	uint64_t vaddr;

	if (!um) {
		perfmap_refresh(s, p);
		name = perfmap__resolve(p->perfmap, addr, NULL);
		if (name)
			return push_frame(s, p, name, false);
		/* code loaded since the snapshot (dlopen) */
		if (may_refresh(s, p) && !proc_snapshot(s, p))
			um = umap_find(p, addr);
		if (!um) {
			snprintf(buf, sizeof(buf), "0x%" PRIx64, addr);
			return push_frame(s, p, buf, false);
		}
	}
	b = s->bins[um->bin];
	vaddr = addr - um->bias;
	if (!b->mod) {
		/* JIT code may live in file mappings too (memfd, libffi trampolines) */
		perfmap_refresh(s, p);
		name = perfmap__resolve(p->perfmap, addr, NULL);
		if (name)
			return push_frame(s, p, name, false);
	}
	if (b->mod)
		return resolve_in_file(s, p, b, vaddr);
	snprintf(buf, sizeof(buf), "[%s+0x%" PRIx64 "]", b->base, vaddr);
	return push_frame(s, p, buf, false);
}

/*
 * The image that names an address of p seen at seq: one before an exec
 * (completed with its parent's), or, for a forked child that has none of
 * its own mappings, its parent's (in *tmp when current); NULL: p's own.
 */
static const struct proc_image *image_seen(struct symbolizer *s, struct proc *p, uint64_t seq,
					   struct proc_image *tmp)
{
	const struct proc_image *img = image_at(p, seq);

	if (img) {
		if (img >= p->images && img < p->images + p->nimages)
			image_complete(s, (struct proc_image *)img);
		return img;
	}
	if (!p->maps && p->parent)
		return parent_image(s, p->parent, p->parent_seq, tmp);
	return NULL;
}

const char *symbolizer__binary_name_at(struct symbolizer *s, int pid, uint64_t seq, uint64_t addr)
{
	struct proc *p = s ? proc_find(s, pid) : NULL;
	struct proc_image tmp;
	const struct proc_image *img = p ? image_seen(s, p, seq, &tmp) : NULL;
	const struct umap *um = img ? umaps_find(img->maps, img->nmaps, addr)
				: p ? umap_find(p, addr)
				    : NULL;

	return um ? s->bins[um->bin]->base : NULL;
}

const char *symbolizer__binary_name(struct symbolizer *s, int pid, uint64_t addr)
{
	return symbolizer__binary_name_at(s, pid, UINT64_MAX, addr);
}

static int copy_out(const struct proc *p, const struct cached *c, struct sym_frame *out, size_t max)
{
	size_t n = c->n < max ? c->n : max;

	for (size_t i = 0; i < n; i++) {
		const struct cframe *f = &p->frames[c->first + i];

		size_t len = strnlen(f->name, sizeof(out[i].name) - 1);

		memcpy(out[i].name, f->name, len);
		out[i].name[len] = '\0';
		out[i].is_inline = f->is_inline;
	}
	return n;
}

/*
 * addr in an image pid had before an exec: named by that image's mappings
 * alone (no re-read, no JIT map), and not kept in the process's cache, which
 * is the current image's.
 */
static int resolve_in_image(struct symbolizer *s, struct proc *p, const struct proc_image *img,
			    uint64_t addr, struct sym_frame *out, size_t max)
{
	const struct umap *um = umaps_find(img->maps, img->nmaps, addr);
	struct cached c = {.addr = addr, .first = (uint32_t)p->nframes};
	char buf[NAME_MAX_LEN];
	struct binary *b;
	int err, n;

	b = um ? s->bins[um->bin] : NULL;
	if (b && b->mod) {
		err = resolve_in_file(s, p, b, addr - um->bias);
	} else {
		if (b)
			snprintf(buf, sizeof(buf), "[%s+0x%" PRIx64 "]", b->base, addr - um->bias);
		else
			snprintf(buf, sizeof(buf), "0x%" PRIx64, addr);
		err = push_frame(s, p, buf, false);
	}
	if (err)
		return err;
	c.n = (uint32_t)(p->nframes - c.first);
	n = copy_out(p, &c, out, max);
	p->nframes = c.first;
	return n;
}

int symbolizer__user(struct symbolizer *s, int pid, uint64_t addr, struct sym_frame *out,
		     size_t max)
{
	return symbolizer__user_at(s, pid, UINT64_MAX, addr, out, max);
}

int symbolizer__user_at(struct symbolizer *s, int pid, uint64_t seq, uint64_t addr,
			struct sym_frame *out, size_t max)
{
	uint64_t h = hash_mix64(addr);
	const struct proc_image *img;
	struct proc_image tmp;
	struct cached c;
	struct proc *p;
	size_t pos;
	void *v;
	int err;

	if (!s || !out || !max)
		return -EINVAL;
	s->stats.user_lookups++;
	p = proc_find(s, pid);
	if (!p) {
		if (!(p = proc_add(s, pid)))
			return -ENOMEM;
		/* a process gone already resolves nothing but its JIT map */
		if (proc_snapshot(s, p))
			perfmap_refresh(s, p);
	}
	if ((img = image_seen(s, p, seq, &tmp)))
		return resolve_in_image(s, p, img, addr, out, max);
	for (pos = hmap__first(&p->cache_idx, h); (v = hmap__next(&p->cache_idx, h, &pos));) {
		const struct cached *hit = &p->cache[hmap_idx_of(v)];

		if (hit->addr == addr) {
			s->stats.user_cache_hits++;
			return copy_out(p, hit, out, max);
		}
	}
	c.addr = addr;
	err = resolve(s, p, addr);
	/* resolve may have re-read the maps and emptied the cache: count from the end */
	if (err)
		return err;
	c.n = 1;
	while (c.n < p->nframes && p->frames[p->nframes - c.n].is_inline)
		c.n++;
	c.first = p->nframes - c.n;
	if (vec_reserve(p->cache, p->cache_cap, p->ncache + 1) ||
	    hmap__add(&p->cache_idx, h, hmap_idx(p->ncache)))
		return -ENOMEM;
	p->cache[p->ncache++] = c;
	return copy_out(p, &c, out, max);
}

/* ---- kernel ---- */

int symbolizer__kernel(struct symbolizer *s, uint64_t addr, char *buf, size_t len)
{
	const char *name = NULL;
	FILE *f;

	if (!s || !buf || !len)
		return -EINVAL;
	s->stats.kernel_lookups++;
	if (s->kcore && addr >= s->kcore_lo && addr < s->kcore_hi) {
		name = ksyms__resolve(s->kcore, addr, NULL);
		if (name) {
			snprintf(buf, len, "%s", name);
			return 0;
		}
	}
	if (!s->ksyms_tried) {
		s->ksyms_tried = true;
		f = fopen(s->kallsyms_path, "re");
		if (f) {
			s->ksyms = ksyms__load(f);
			if (!s->ksyms)
				s->ksyms_err = -errno;
			fclose(f);
		} else {
			s->ksyms_err = -errno;
		}
	}
	name = ksyms__resolve(s->ksyms, addr, NULL);
	if (name)
		snprintf(buf, len, "%s", name);
	else
		snprintf(buf, len, "0x%" PRIx64, addr);
	return s->ksyms ? 0 : s->ksyms_err;
}

int symbolizer__kernel_core(struct symbolizer *s, struct ksyms *k, uint64_t lo, uint64_t hi)
{
	if (!s || !k || lo >= hi) {
		ksyms__free(k);
		return -EINVAL;
	}
	ksyms__free(s->kcore);
	s->kcore = k;
	s->kcore_lo = lo;
	s->kcore_hi = hi;
	return 0;
}

/* ---- the object ---- */

struct symbolizer *symbolizer__new(const struct symbolizer_opts *opts)
{
	struct symbolizer_opts none = {};
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	if (!opts)
		opts = &none;
	s->inlines = opts->inlines;
	s->no_demangle = opts->no_demangle;
	s->debuginfod = opts->debuginfod;
	s->dwarf_whole = opts->dwarf_whole;
	s->perf_map_dir_given = opts->perf_map_dir != NULL;
	s->kallsyms_path = strdup(opts->kallsyms_path ? opts->kallsyms_path : "/proc/kallsyms");
	s->proc_root = strdup(opts->proc_root ? opts->proc_root : "/proc");
	s->perf_map_dir = strdup(opts->perf_map_dir ? opts->perf_map_dir : "/tmp");
	if (!s->kallsyms_path || !s->proc_root || !s->perf_map_dir) {
		symbolizer__free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

void symbolizer__free(struct symbolizer *s)
{
	if (!s)
		return;
	ksyms__free(s->ksyms);
	ksyms__free(s->kcore);
	for (size_t i = 0; i < s->nprocs; i++)
		proc__free(s->procs[i]);
	free(s->procs);
	hmap__free(&s->proc_idx);
	for (size_t i = 0; i < s->nbins; i++)
		binary__free(s->bins[i]);
	free(s->bins);
	hmap__free(&s->bin_idx);
	for (size_t i = 0; i < s->nnames; i++)
		free(s->names[i]);
	free(s->names);
	hmap__free(&s->name_idx);
	free(s->pub);
	free(s->kallsyms_path);
	free(s->proc_root);
	free(s->perf_map_dir);
	free(s);
}

const struct sym_binary *symbolizer__binaries(struct symbolizer *s, size_t *n)
{
	struct sym_binary *pub;
	size_t k = 0;

	*n = 0;
	pub = realloc(s->pub, (s->nbins ? s->nbins : 1) * sizeof(*pub));
	if (!pub)
		return NULL;
	s->pub = pub;
	for (size_t i = 0; i < s->nbins; i++) {
		struct binary *b = s->bins[i];

		if (b->pseudo || !b->framed)
			continue;
		binary_facts(s, b);
		pub[k++] = (struct sym_binary){b->path, b->fp, b->has_symbols, b->has_debuginfo};
	}
	*n = k;
	return pub;
}

void symbolizer__stats(const struct symbolizer *s, struct symbolizer_stats *st)
{
	*st = s->stats;
	st->processes = s->nprocs;
	st->binaries = s->nbins;
	for (size_t i = 0; i < s->nbins; i++) {
		size_t done, kept, size;

		if (!s->bins[i] || !s->bins[i]->lazy)
			continue;
		dwlazy__info_size(s->bins[i]->lazy, &done, &kept, &size);
		st->dwarf_lazy++;
		st->dwarf_info_read += done;
		st->dwarf_info_kept += kept;
		st->dwarf_info_size += size;
	}
}

static void umaps_mark(bool *mapped, size_t nbins, const struct umap *maps, size_t n)
{
	for (size_t j = 0; j < n; j++)
		if (maps[j].bin < nbins)
			mapped[maps[j].bin] = true;
}

int symbolizer__forget_gone(struct symbolizer *s)
{
	bool *mapped;
	size_t kept = 0;
	int gone = 0;

	if (!s)
		return 0;
	hmap__clear(&s->proc_idx);
	for (size_t i = 0; i < s->nprocs; i++) {
		struct proc *p = s->procs[i];
		uint64_t st = read_starttime(s, p->pid);

		/*
		 * Gone, or its pid taken by another process since: freed at the
		 * call after, so that its last rows, drained late, still resolve.
		 */
		if (!st || (p->starttime && st != p->starttime)) {
			if (!p->gone) {
				p->gone = true;
				s->procs[kept++] = p;
				continue;
			}
			proc__free(p);
			gone++;
			continue;
		}
		s->procs[kept++] = p;
	}
	s->nprocs = kept;
	for (size_t i = 0; i < kept; i++)
		if (hmap__add(&s->proc_idx, hash_mix64(s->procs[i]->pid), s->procs[i]))
			return -ENOMEM;
	/* The binaries no process left maps: closed (their facts stay for the summary). */
	mapped = calloc(s->nbins ? s->nbins : 1, sizeof(*mapped));
	if (!mapped)
		return -ENOMEM;
	for (size_t i = 0; i < kept; i++) {
		const struct proc *p = s->procs[i];

		umaps_mark(mapped, s->nbins, p->maps, p->nmaps);
		/* an image before an exec still names its rows drained late */
		for (size_t j = 0; j < p->nimages; j++)
			umaps_mark(mapped, s->nbins, p->images[j].maps, p->images[j].nmaps);
	}
	for (size_t i = 0; i < s->nbins; i++) {
		struct binary *b = s->bins[i];

		if (!mapped[i] && (b->dwfl || b->syms || b->vc)) {
			binary_close(b);
			s->stats.binaries_closed++;
		}
	}
	free(mapped);
	return gone;
}
