// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unwind tables and process mappings into the BPF maps (see unwind.h).
 */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/types.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpf/offcpu.h"
#include "collect/cfi.h"
#include "collect/native_table.h"
#include "collect/unwind.h"
#include "symbolize/procmaps.h"
#include "util/vec.h"

_Static_assert(OFFCPU_UMARK_MAX <= OFFCPU_UMARK_SLOTS &&
		       sizeof(((struct offcpu_stats *)0)->umarks) ==
			       OFFCPU_UMARK_SLOTS * sizeof(__u64),
	       "offcpu_stats.umarks holds every marker");

/*
 * Lazy tables keep their file open until a stack needs them (it may be
 * deleted or in another mount namespace by then); past this many open, the
 * next binaries get their tables at once, as without lazy tables.
 */
#define LAZY_MAX_FDS 256

/* Rows per chunk (1 MiB), unless one table needs more. */
#define CHUNK_ROWS (1u << 17)

/*
 * The chunk after the current one, made ahead in a thread: putting a chunk
 * into cfi_files waits for an RCU grace period (11-15 ms here), and a process
 * with many libraries (perf: 31 tables, 2.7 MB of rows) needs a few chunks
 * while its first stacks end early for want of them. The thread only makes
 * the map and puts it in cfi_files under id; spare_take() adds it to chunks.
 */
struct spare_job {
	pthread_t thread;
	bool pending; /* started, not joined yet */
	int files_fd;
	uint32_t id;
	size_t cap;
	int fd; /* the map, or -errno */
};

/*
 * An array of rows in the kernel (see struct offcpu_umap). Only the pages a
 * table's rows fall in are mapped here, and only while they are written or
 * looked up by a raw walk: the kernel maps every page of a mapping at once,
 * all counted in this process's resident memory, and the BPF side is the
 * one that reads them.
 */
struct uchunk {
	int fd;
	size_t cap, used; /* rows */
};

/*
 * The rows of a loaded table that are signal trampolines ([lo, hi), table
 * pcs), kept here for unwinder__signal_frame(): a handful per C library.
 */
struct usig {
	uint32_t chunk, first; /* the table's place, as in struct offcpu_umap */
	uint32_t *range;       /* lo, hi pairs */
	size_t n;
};

struct ufile {
	uint32_t id; /* increasing: u->files stays sorted by it */
	bool used;   /* mapped by a process kept, at the last unwinder__forget_gone() */
	unsigned int dev_major, dev_minor;
	uint64_t ino;
	uint32_t chunk; /* key in cfi_files; 0: no table */
	uint32_t first; /* its rows in the chunk, also read by unwinder__unwind_raw() */
	size_t nrows;
	int fd;		  /* lazy, while pending: the file; else -1 */
	bool open_failed; /* no process that mapped it could be reached yet */
	struct cfi_segment *segs;
	size_t nsegs;
	uint64_t base;
	struct unwind_binary pub;
};

/* The mappings last written for a process, for unwinder__unwind_raw(). */
struct uproc {
	struct offcpu_umaps *maps;
	uint32_t *fids; /* the files they map (ufile.id): what keeps their tables */
	size_t nfids;
	bool gone; /* seen gone once by unwinder__forget_gone(): dropped at the next */
};

/*
 * Rows [first, first + n) of chunk, free: a forgotten table's. Tables are
 * put in the first one they fit before the chunks' ends.
 */
struct uhole {
	uint32_t chunk, first;
	size_t n;
};

struct unwinder {
	int umaps_fd, files_fd;
	uint64_t budget;
	char *proc_root;
	FILE *diag;
	bool lazy; /* stats.pending files are open: one each */
	struct ufile *files;
	size_t nfiles, cap_files;
	struct unwind_binary *pub;
	struct unwinder_stats stats;
	struct offcpu_umaps *val; /* scratch for one process's mappings */
	struct uchunk *chunks;	  /* chunk id - 1 -> chunk */
	size_t nchunks, cap_chunks;
	struct usig *sigs; /* loaded tables with signal rows, by (chunk, first) */
	size_t nsigs, cap_sigs;
	struct uhole *holes; /* by (chunk, first), never adjacent nor at a chunk's end */
	size_t nholes, cap_holes;
	uint32_t next_id;
	uint32_t *fids; /* scratch for one process's files */
	size_t cap_fids;
	struct ntable procs;	 /* pid -> struct uproc */
	struct chunk_job *first; /* the first chunk, made in a thread (unwinder__new()) */
	struct spare_job spare;	 /* the next one, made in a thread (spare_start()) */
};

struct chunk_job {
	pthread_t thread;
	bool pending;
	int err;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

const char *unwind_mark__reason(unsigned int why)
{
	static const char *const names[] = {
		[OFFCPU_UMARK_NO_CFI] = "no CFI",
		[OFFCPU_UMARK_UNSUPPORTED] = "unsupported CFI",
		[OFFCPU_UMARK_OUTSIDE] = "outside code",
		[OFFCPU_UMARK_UNREADABLE] = "stack not readable",
		[OFFCPU_UMARK_TRUNCATED] = "truncated",
		[OFFCPU_UMARK_NO_MAPS] = "maps not loaded",
		[OFFCPU_UMARK_OVER_BUDGET] = "over budget",
		[OFFCPU_UMARK_PENDING] = "table not built yet",
	};

	return why < sizeof(names) / sizeof(names[0]) ? names[why] : NULL;
}

static int chunk_new(struct unwinder *u, size_t cap);

/* A map of cap rows, in files_fd under id: its fd, or -errno. */
static int chunk_map(int files_fd, uint32_t id, size_t cap)
{
	LIBBPF_OPTS(bpf_map_create_opts, mo, .map_flags = BPF_F_INNER_MAP | BPF_F_MMAPABLE);
	int fd, err;

	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "cfi_rows", sizeof(uint32_t),
			    sizeof(struct offcpu_cfi_row), cap, &mo);
	if (fd < 0)
		return -errno;
	if (bpf_map_update_elem(files_fd, &id, &fd, BPF_ANY)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

static void *spare_make(void *arg)
{
	struct spare_job *j = arg;

	j->fd = chunk_map(j->files_fd, j->id, j->cap);
	return NULL;
}

/*
 * Once a quarter of the current chunk is used, make the next one in a
 * thread, twice as large (up to SPARE_MAX_ROWS) within the budget: the
 * tables of one process arrive back to back, and the grace period is to
 * pass while they are built. Only chunk_new() and spare_take() add chunks,
 * and both take the spare first: the id it is made under stays the next one.
 */
#define SPARE_MAX_ROWS (8 * CHUNK_ROWS)

static void spare_start(struct unwinder *u)
{
	const struct uchunk *c = u->nchunks ? &u->chunks[u->nchunks - 1] : NULL;
	size_t left = u->budget > u->stats.bytes
			      ? (u->budget - u->stats.bytes) / sizeof(struct offcpu_cfi_row)
			      : 0;
	struct spare_job *j = &u->spare;

	if (j->pending || !c || c->used < c->cap / 4 || left < CHUNK_ROWS)
		return;
	j->files_fd = u->files_fd;
	j->id = u->nchunks + 1;
	j->cap = c->cap < SPARE_MAX_ROWS / 2 ? 2 * c->cap : SPARE_MAX_ROWS;
	if (j->cap > left)
		j->cap = left;
	j->pending = !pthread_create(&j->thread, NULL, spare_make, j);
}

/* The spare, if one was started: joined, and added to chunks. 0 or -errno. */
static int spare_take(struct unwinder *u)
{
	struct spare_job *j = &u->spare;
	struct uchunk *c;

	if (!j->pending)
		return 0;
	pthread_join(j->thread, NULL);
	j->pending = false;
	if (j->fd < 0)
		return j->fd;
	if (vec_reserve(u->chunks, u->cap_chunks, u->nchunks + 1)) {
		close(j->fd);
		return -ENOMEM;
	}
	c = &u->chunks[u->nchunks++];
	memset(c, 0, sizeof(*c));
	c->fd = j->fd;
	c->cap = j->cap;
	u->stats.bytes += c->cap * sizeof(struct offcpu_cfi_row);
	return 0;
}

static void *first_chunk_make(void *arg)
{
	struct unwinder *u = arg;

	u->first->err = chunk_new(u, CHUNK_ROWS);
	return NULL;
}

/*
 * Every entry point waits for the first chunk: the thread writes what they
 * read. A chunk that could not be made is made again when a table needs it.
 */
static void first_chunk_wait(const struct unwinder *u)
{
	struct chunk_job *j = u->first;

	if (!j || !j->pending)
		return;
	pthread_join(j->thread, NULL);
	j->pending = false;
	if (j->err && u->diag)
		fprintf(u->diag, "offcpu native: unwind tables: the first chunk: %s\n",
			strerror(-j->err));
}

struct unwinder *unwinder__new(const struct unwinder_opts *o)
{
	struct unwinder *u = calloc(1, sizeof(*u));
	int err;

	if (!u)
		return NULL;
	u->umaps_fd = o->umaps_fd;
	u->files_fd = o->files_fd;
	u->budget = o->budget ? o->budget : UNWIND_DEFAULT_BUDGET;
	u->stats.budget = u->budget;
	u->diag = o->diag;
	u->lazy = o->lazy;
	u->proc_root = strdup(o->proc_root ? o->proc_root : "/proc");
	u->val = calloc(1, sizeof(*u->val));
	if (!u->proc_root || !u->val ||
	    ntable_init(&u->procs, sizeof(uint32_t), sizeof(struct uproc))) {
		unwinder__free(u);
		errno = ENOMEM;
		return NULL;
	}
	/*
	 * The first chunk in a thread, started before tracing: adding it to
	 * cfi_files waits for an RCU grace period (15 ms here), which neither
	 * the attach nor the first process's tables should wait for.
	 */
	if (u->budget >= CHUNK_ROWS * sizeof(struct offcpu_cfi_row)) {
		u->first = calloc(1, sizeof(*u->first));
		if (!u->first) {
			unwinder__free(u);
			errno = ENOMEM;
			return NULL;
		}
		u->first->pending = !pthread_create(&u->first->thread, NULL, first_chunk_make, u);
		if (!u->first->pending && (err = chunk_new(u, CHUNK_ROWS))) {
			unwinder__free(u);
			errno = -err;
			return NULL;
		}
	}
	return u;
}

void unwinder__free(struct unwinder *u)
{
	if (!u)
		return;
	first_chunk_wait(u);
	spare_take(u);
	free(u->first);
	const void *key;
	void *val;

	for (size_t i = 0; i < u->nfiles; i++) {
		if (u->files[i].fd >= 0)
			close(u->files[i].fd);
		free(u->files[i].segs);
		free((char *)u->files[i].pub.path);
	}
	for (size_t i = 0; i < u->nchunks; i++) {
		close(u->chunks[i].fd);
	}
	free(u->chunks);
	for (size_t i = 0; i < u->nsigs; i++)
		free(u->sigs[i].range);
	free(u->sigs);
	for (size_t pos = 0; u->procs.slots && ntable_next(&u->procs, &pos, &key, &val);) {
		free(((struct uproc *)val)->maps);
		free(((struct uproc *)val)->fids);
	}
	ntable_free(&u->procs);
	free(u->holes);
	free(u->fids);
	free(u->files);
	free(u->pub);
	free(u->val);
	free(u->proc_root);
	free(u);
}

/* A new chunk of cap rows, put under its id in cfi_files. 0 or -errno. */
static int chunk_new(struct unwinder *u, size_t cap)
{
	struct uchunk *c;
	int fd;

	if (u->spare.pending && !spare_take(u)) {
		if (u->chunks[u->nchunks - 1].cap >= cap)
			return 0; /* the spare will do */
		if (u->stats.bytes + cap * sizeof(struct offcpu_cfi_row) > u->budget)
			return -E2BIG;
	}
	if (vec_reserve(u->chunks, u->cap_chunks, u->nchunks + 1))
		return -ENOMEM;
	fd = chunk_map(u->files_fd, u->nchunks + 1, cap);
	if (fd < 0)
		return fd;
	c = &u->chunks[u->nchunks];
	c->used = 0;
	c->cap = cap;
	c->fd = fd;
	u->nchunks++;
	u->stats.bytes += cap * sizeof(struct offcpu_cfi_row);
	return 0;
}

/* Rows of a chunk mapped here: munmap(mem, len) ends the mapping. */
struct rows_view {
	char *mem;
	size_t len;
	struct offcpu_cfi_row *rows; /* the first row asked for */
};

/*
 * Rows [first, first + n) of c, through a mapping of the pages they fall in
 * only (the kernel inserts every page of a mapping when it is made). 0 or
 * -errno.
 */
static int rows_map(const struct uchunk *c, size_t first, size_t n, int prot, struct rows_view *v)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), row = sizeof(struct offcpu_cfi_row);
	size_t from = first * row, to = (first + n) * row;
	size_t off = from & ~(page - 1), len = ((to + page - 1) & ~(page - 1)) - off;
	char *mem = mmap(NULL, len, prot, MAP_SHARED, c->fd, (off_t)off);

	if (mem == MAP_FAILED)
		return -errno;
	*v = (struct rows_view){mem, len, (struct offcpu_cfi_row *)(mem + (from - off))};
	return 0;
}

/* t's rows at row first of c. */
static int chunk_write(struct uchunk *c, size_t first, const struct cfi_table *t)
{
	struct rows_view v;
	int err = rows_map(c, first, t->n, PROT_WRITE, &v);

	if (err)
		return err;
	memcpy(v.rows, t->rows, t->n * sizeof(*t->rows));
	munmap(v.mem, v.len);
	return 0;
}

/* Where (chunk, first) is or would go in u->sigs. */
static size_t sigs_pos(const struct unwinder *u, uint32_t chunk, uint32_t first)
{
	size_t lo = 0, hi = u->nsigs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct usig *x = &u->sigs[mid];

		if (x->chunk < chunk || (x->chunk == chunk && x->first < first))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The signal trampolines' rows of t, loaded at row first of chunk. 0 or -ENOMEM. */
static int sigs_add(struct unwinder *u, uint32_t chunk, uint32_t first, const struct cfi_table *t)
{
	struct usig *g;
	size_t n = 0, at;

	for (size_t i = 0; i < t->n; i++)
		n += OFFCPU_CFI_CFA(t->rows[i].rule) == OFFCPU_CFA_SIGNAL;
	if (!n)
		return 0;
	if (vec_reserve(u->sigs, u->cap_sigs, u->nsigs + 1))
		return -ENOMEM;
	/* A table put in a hole may come before tables loaded earlier. */
	at = sigs_pos(u, chunk, first);
	memmove(&u->sigs[at + 1], &u->sigs[at], (u->nsigs - at) * sizeof(*u->sigs));
	g = &u->sigs[at];
	*g = (struct usig){.chunk = chunk, .first = first};
	g->range = malloc(2 * n * sizeof(*g->range));
	if (!g->range)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		if (OFFCPU_CFI_CFA(t->rows[i].rule) != OFFCPU_CFA_SIGNAL)
			continue;
		g->range[2 * g->n] = t->rows[i].pc;
		g->range[2 * g->n + 1] = i + 1 < t->n ? t->rows[i + 1].pc : t->rows[i].pc + 1;
		g->n++;
	}
	u->nsigs++;
	return 0;
}

static void sigs_remove(struct unwinder *u, uint32_t chunk, uint32_t first)
{
	size_t at = sigs_pos(u, chunk, first);

	if (at == u->nsigs || u->sigs[at].chunk != chunk || u->sigs[at].first != first)
		return;
	free(u->sigs[at].range);
	memmove(&u->sigs[at], &u->sigs[at + 1], (u->nsigs - at - 1) * sizeof(*u->sigs));
	u->nsigs--;
}

/* The first hole t fits in: its index, or u->nholes. */
static size_t hole_find(const struct unwinder *u, size_t n)
{
	size_t i = 0;

	while (i < u->nholes && u->holes[i].n < n)
		i++;
	return i;
}

/*
 * Rows [first, first + n) of chunk are free again: a hole, merged with its
 * neighbours, or given back to the chunk's end. Without memory for a new
 * hole the rows stay unused (lost to the budget, not to correctness).
 */
static void hole_add(struct unwinder *u, uint32_t chunk, uint32_t first, size_t n)
{
	struct uchunk *c = &u->chunks[chunk - 1];
	size_t at = 0;
	struct uhole *h;

	while (at < u->nholes && (u->holes[at].chunk < chunk ||
				  (u->holes[at].chunk == chunk && u->holes[at].first < first)))
		at++;
	if (at && u->holes[at - 1].chunk == chunk &&
	    u->holes[at - 1].first + u->holes[at - 1].n == first) {
		h = &u->holes[--at];
		h->n += n;
	} else {
		if (vec_reserve(u->holes, u->cap_holes, u->nholes + 1))
			return;
		memmove(&u->holes[at + 1], &u->holes[at], (u->nholes - at) * sizeof(*u->holes));
		u->nholes++;
		h = &u->holes[at];
		*h = (struct uhole){.chunk = chunk, .first = first, .n = n};
	}
	if (at + 1 < u->nholes && u->holes[at + 1].chunk == chunk &&
	    h->first + h->n == u->holes[at + 1].first) {
		h->n += u->holes[at + 1].n;
		memmove(&u->holes[at + 1], &u->holes[at + 2],
			(u->nholes - at - 2) * sizeof(*u->holes));
		u->nholes--;
	}
	if (h->first + h->n == c->used) {
		c->used = h->first;
		memmove(h, h + 1, (u->nholes - at - 1) * sizeof(*u->holes));
		u->nholes--;
	}
}

/*
 * Put t's rows into a chunk with room (a new one if none has it, within the
 * budget): 0 with f->chunk and f->first set, -E2BIG over the budget, -errno.
 */
static int table_load(struct unwinder *u, struct ufile *f, const struct cfi_table *t)
{
	size_t left = (u->budget - u->stats.bytes) / sizeof(struct offcpu_cfi_row);
	struct uchunk *c = u->nchunks ? &u->chunks[u->nchunks - 1] : NULL;
	size_t hole = hole_find(u, t->n);
	int err;

	if (hole < u->nholes) {
		/* A forgotten table's rows: nothing reads them any more (see files_forget()). */
		struct uhole *h = &u->holes[hole];
		uint32_t chunk = h->chunk, first = h->first;

		if ((err = chunk_write(&u->chunks[chunk - 1], first, t)) ||
		    (err = sigs_add(u, chunk, first, t)))
			return err;
		h->first += t->n;
		h->n -= t->n;
		if (!h->n) {
			memmove(h, h + 1, (u->nholes - hole - 1) * sizeof(*h));
			u->nholes--;
		}
		f->chunk = chunk;
		f->first = first;
		f->nrows = t->n;
		return 0;
	}
	if (!c || c->cap - c->used < t->n) {
		size_t cap = t->n > CHUNK_ROWS ? t->n : CHUNK_ROWS;

		if (u->stats.bytes >= u->budget || t->n > left)
			return -E2BIG;
		if (cap > left)
			cap = left;
		if ((err = chunk_new(u, cap)))
			return err;
		c = &u->chunks[u->nchunks - 1];
	}
	/* Rows land before the mappings that point at them are written: never half a table. */
	if ((err = chunk_write(c, c->used, t)))
		return err;
	if ((err = sigs_add(u, u->nchunks, c->used, t)))
		return err;
	f->chunk = u->nchunks;
	f->first = c->used;
	f->nrows = t->n;
	c->used += t->n;
	spare_start(u);
	return 0;
}

/* Build f's table from its file, open at fd, and load it: f's status says how it went. */
static void file_build(struct unwinder *u, struct ufile *f, int fd)
{
	const char *path = f->pub.path;
	struct cfi_table t = {};
	uint64_t t0 = mono_ns();
	int err = cfi_table__build(fd, path, &t);

	f->pub.build_ns = mono_ns() - t0;
	f->pub.status = UNWIND_ERROR;
	if (err && err != -ENOENT) {
		if (u->diag)
			fprintf(u->diag, "unwind: %s: no unwind table: %s\n", path, strerror(-err));
		return;
	}
	/* Keep the segments (for the bias of later mappings); the rows go to the kernel. */
	free(f->segs);
	f->segs = t.segs;
	f->nsegs = t.nsegs;
	t.segs = NULL;
	t.nsegs = 0;
	f->base = t.base;
	f->pub.rows = t.n;
	f->pub.source = t.source;
	if (err == -ENOENT || !t.n) {
		f->pub.status = UNWIND_NO_CFI;
		if (u->diag)
			fprintf(u->diag, "unwind: %s: no CFI: frame pointers only\n", path);
	} else {
		t0 = mono_ns();
		err = table_load(u, f, &t);
		f->pub.load_ns = mono_ns() - t0;
		if (err == -E2BIG) {
			f->pub.status = UNWIND_OVER_BUDGET;
			u->stats.over_budget++;
			if (u->diag)
				fprintf(u->diag,
					"unwind: %s: %zu rows do not fit the unwind memory budget "
					"(%" PRIu64 " of %" PRIu64
					" bytes used; --unwind-memory)\n",
					path, t.n, u->stats.bytes, u->budget);
		} else if (err) {
			if (u->diag)
				fprintf(u->diag, "unwind: %s: table not loaded: %s\n", path,
					strerror(-err));
		} else {
			f->pub.status = UNWIND_TABLE;
			f->pub.bytes = t.n * sizeof(struct offcpu_cfi_row);
			u->stats.tables++;
			u->stats.rows_bytes += f->pub.bytes;
		}
	}
	cfi_table__free(&t);
}

/*
 * Lazy: f pending, with only its segments read (for the bias of its
 * mappings) and its file kept open for the build. false: build it now.
 */
static bool file_defer(struct unwinder *u, struct ufile *f, int fd)
{
	struct cfi_table t = {};

	if (!u->lazy || u->stats.pending >= LAZY_MAX_FDS ||
	    cfi_table__build_opts(fd, f->pub.path, &(struct cfi_build_opts){.segments_only = true},
				  &t))
		return false;
	f->segs = t.segs;
	f->nsegs = t.nsegs;
	f->base = t.base;
	f->fd = fd;
	f->pub.status = UNWIND_PENDING;
	u->stats.pending++;
	return true;
}

/* The end of f's pending state: its file closed, whether its table was built or not. */
static void file_undefer(struct unwinder *u, struct ufile *f)
{
	close(f->fd);
	f->fd = -1;
	u->stats.pending--;
}

/*
 * um pointed at f's table, or, without one, at the marker saying why (its
 * base is the caller's: it depends on the mapping).
 */
static void umap_point(struct offcpu_umap *um, const struct ufile *f)
{
	um->chunk = f->chunk;
	um->first = f->first;
	if (f->chunk)
		um->nrows = (uint32_t)f->nrows;
	else if (f->pub.status == UNWIND_PENDING)
		um->nrows = OFFCPU_UMARK_PENDING;
	else if (f->pub.status == UNWIND_OVER_BUDGET)
		um->nrows = OFFCPU_UMARK_OVER_BUDGET;
	else
		um->nrows = OFFCPU_UMARK_NO_CFI;
}

/*
 * f's file, through mapping m of pid, converted and loaded (lazy: made
 * pending). One that cannot be opened stays an error until a process that
 * maps it can be reached (see file_get()).
 */
static void file_open(struct unwinder *u, struct ufile *f, int pid, const struct proc_map *m)
{
	char path[4096];
	int fd = procmaps__open(u->proc_root, pid, m, NULL, path, sizeof(path));

	if (fd < 0) {
		if (u->diag && !f->open_failed)
			fprintf(u->diag, "unwind: %s: cannot open: %s\n", m->path, strerror(-fd));
		f->open_failed = true;
		return;
	}
	f->open_failed = false;
	if (file_defer(u, f, fd))
		return;
	file_build(u, f, fd);
	close(fd);
}

/*
 * The file of mapping m of pid, converted and loaded at its first sight
 * (lazy: made pending). NULL: no memory.
 */
static struct ufile *file_get(struct unwinder *u, int pid, const struct proc_map *m)
{
	struct ufile *f;

	for (size_t i = 0; i < u->nfiles; i++) {
		f = &u->files[i];
		if (f->ino != m->inode || f->dev_major != m->dev_major ||
		    f->dev_minor != m->dev_minor)
			continue;
		/*
		 * Its first process was gone before its files were opened (a
		 * short one): this one may still be there, and the file must
		 * not stay without a table for every process that maps it.
		 */
		if (f->open_failed)
			file_open(u, f, pid, m);
		return f;
	}
	if (vec_reserve(u->files, u->cap_files, u->nfiles + 1))
		return NULL;
	f = &u->files[u->nfiles];
	memset(f, 0, sizeof(*f));
	f->fd = -1;
	f->id = ++u->next_id;
	f->used = true;
	f->dev_major = m->dev_major;
	f->dev_minor = m->dev_minor;
	f->ino = m->inode;
	f->pub.path = strdup(m->path);
	if (!f->pub.path)
		return NULL;
	u->nfiles++;
	u->stats.binaries++;
	f->pub.status = UNWIND_ERROR;

	file_open(u, f, pid, m);
	return f;
}

/* The bias of a mapping of f: the runtime address of ELF vaddr 0. */
static int file_bias(const struct ufile *f, const struct proc_map *m, uint64_t *bias)
{
	struct cfi_table t = {.segs = f->segs, .nsegs = f->nsegs};

	return cfi_table__bias(&t, m->start, m->offset, bias);
}

int unwinder__track(struct unwinder *u, int pid)
{
	struct proc_map *maps = NULL;
	size_t nr = 0;
	int err = procmaps__read(u->proc_root, pid, &maps, &nr);

	if (err)
		return err;
	err = unwinder__track_maps(u, pid, maps, nr);
	procmaps__free(maps, nr);
	return err;
}

int unwinder__track_maps(struct unwinder *u, int pid, const struct proc_map *maps, size_t nr)
{
	struct offcpu_umaps *v = u->val;
	uint32_t key = pid, *fids;
	struct offcpu_umaps *copy;
	size_t nf = 0, size;
	struct uproc *up;
	int err = 0;

	first_chunk_wait(u);
	memset(v, 0, sizeof(*v));
	for (size_t i = 0; i < nr; i++) {
		const struct proc_map *m = &maps[i];
		struct offcpu_umap *um;
		struct ufile *f = NULL;
		uint64_t bias;

		if (!m->executable || m->start >= 0x00007ffffffff000ULL)
			continue; /* [vsyscall] lies above user space */
		if (v->n == OFFCPU_MAX_UMAPS) {
			u->stats.maps_dropped++;
			continue;
		}
		um = &v->m[v->n];
		um->start = m->start;
		um->end = m->end;
		um->nrows = OFFCPU_UMARK_NO_CFI;
		if (m->path[0] == '/' && m->inode) {
			f = file_get(u, pid, m);
			if (!f || vec_reserve(u->fids, u->cap_fids, nf + 1)) {
				err = -ENOMEM;
				goto out;
			}
			if (!nf || u->fids[nf - 1] != f->id)
				u->fids[nf++] = f->id;
		}
		if (f && f->pub.status == UNWIND_OVER_BUDGET)
			um->nrows = OFFCPU_UMARK_OVER_BUDGET;
		if (f && (f->chunk || f->pub.status == UNWIND_PENDING) && !file_bias(f, m, &bias)) {
			umap_point(um, f);
			um->base = bias + f->base;
		}
		if (f)
			um->fid = f->id;
		v->n++;
	}
	/*
	 * Kept here before the kernel has them: the files they name keep their
	 * tables (files_forget()) as long as the kernel may read them.
	 * Only the mappings in use: hosts run thousands of processes.
	 */
	size = offsetof(struct offcpu_umaps, m) + v->n * sizeof(v->m[0]);
	up = ntable_get(&u->procs, &key, NULL);
	copy = up ? realloc(up->maps, size) : NULL;
	if (!copy) {
		err = -ENOMEM;
		goto out;
	}
	memcpy(copy, v, size);
	up->maps = copy;
	up->gone = false;
	fids = realloc(up->fids, (nf ? nf : 1) * sizeof(*fids));
	if (!fids) {
		free(up->maps);
		up->maps = NULL;
		up->nfids = 0;
		err = -ENOMEM;
		goto out;
	}
	memcpy(fids, u->fids, nf * sizeof(*fids));
	up->fids = fids;
	up->nfids = nf;
	if (bpf_map_update_elem(u->umaps_fd, &key, v, BPF_ANY))
		err = -errno;
	else
		u->stats.processes++;
out:
	return err;
}

void unwinder__stats(const struct unwinder *u, struct unwinder_stats *st)
{
	first_chunk_wait(u);
	*st = u->stats;
}

const struct unwind_binary *unwinder__binaries(const struct unwinder *u, size_t *n)
{
	struct unwinder *w = (struct unwinder *)u;
	struct unwind_binary *pub = realloc(w->pub, (u->nfiles ? u->nfiles : 1) * sizeof(*pub));

	first_chunk_wait(u);
	*n = 0;
	if (!pub)
		return NULL;
	w->pub = pub;
	for (size_t i = 0; i < u->nfiles; i++)
		pub[i] = u->files[i].pub;
	*n = u->nfiles;
	return pub;
}

/* ---- the same unwind as bpf/unwind.bpf.h, in user space, over a copied window ---- */

/* The rows of one table, mapped for the walk under way. */
struct raw_rows {
	const struct offcpu_umap *m;
	struct rows_view v;
};

/* Tables a walk keeps mapped; past them, the oldest is unmapped. */
#define RAW_TABLES 8

struct raw_walk {
	const struct offcpu_raw_ustack *r;
	size_t len; /* bytes of window present */
	uint64_t ip, sp, bp;
	bool bp_ok, exact_ip;
	bool leaf; /* at the interrupted frame: r->di is its rdi */
	uint8_t via_fp;
	struct raw_rows maps[RAW_TABLES];
	unsigned int nmaps;
};

static int raw_read(const struct raw_walk *w, uint64_t addr, uint64_t *val)
{
	uint64_t off = addr - w->r->sp;

	if (off >= w->len || w->len - off < sizeof(*val))
		return -1;
	memcpy(val, (const char *)w->r->win + off, sizeof(*val));
	return 0;
}

static const struct offcpu_umap *raw_umap(const struct offcpu_umaps *um, uint64_t addr)
{
	size_t lo = 0, hi = um->n < OFFCPU_MAX_UMAPS ? um->n : OFFCPU_MAX_UMAPS;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (addr < um->m[mid].start)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo && addr < um->m[lo - 1].end ? &um->m[lo - 1] : NULL;
}

/*
 * The rows of m's table, mapped for the rest of walk w (raw_unmap() ends
 * them); NULL when they cannot be. Only the pages of the table's rows: the
 * kernel makes every page of a mapping resident at once, and a whole chunk
 * is megabytes (mapped for each raw walk, they were the recorder's largest
 * peaks). Mapping them for each lookup instead cost a third of a host-wide
 * capture's CPU time.
 */
static const struct offcpu_cfi_row *raw_rows(const struct unwinder *u, struct raw_walk *w,
					     const struct offcpu_umap *m)
{
	struct rows_view v;
	struct raw_rows *t;

	for (unsigned int i = 0; i < w->nmaps && i < RAW_TABLES; i++)
		if (w->maps[i].m->chunk == m->chunk && w->maps[i].m->first == m->first)
			return w->maps[i].v.rows;
	if (rows_map(&u->chunks[m->chunk - 1], m->first, m->nrows, PROT_READ, &v))
		return NULL;
	t = &w->maps[w->nmaps++ % RAW_TABLES];
	if (w->nmaps > RAW_TABLES)
		munmap(t->v.mem, t->v.len);
	*t = (struct raw_rows){m, v};
	return v.rows;
}

/* The end of a raw walk: the rows it mapped are unmapped. */
static void raw_unmap(struct raw_walk *w)
{
	for (unsigned int i = 0; i < w->nmaps && i < RAW_TABLES; i++)
		munmap(w->maps[i].v.mem, w->maps[i].v.len);
	w->nmaps = 0;
}

/* The row of m's table that covers rel, or NULL. */
static const struct offcpu_cfi_row *raw_row(const struct unwinder *u, struct raw_walk *w,
					    const struct offcpu_umap *m, uint64_t rel)
{
	const struct offcpu_cfi_row *rows;
	size_t lo = 0, hi = m->nrows;

	if (!m->chunk || m->chunk > u->nchunks || rel >= (1ULL << 32) || !hi ||
	    m->first + hi > u->chunks[m->chunk - 1].used)
		return NULL;
	rows = raw_rows(u, w, m);
	if (!rows)
		return NULL;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (rows[mid].pc <= rel)
			lo = mid;
		else
			hi = mid;
	}
	return rows[lo].pc <= rel ? &rows[lo] : NULL;
}

/* One frame-pointer step; 0 or the marker. */
static unsigned int raw_fp_step(struct raw_walk *w, unsigned int why)
{
	uint64_t ra, bp;

	if (!w->bp_ok || w->bp <= w->sp || (w->bp & 7) || raw_read(w, w->bp + 8, &ra) ||
	    raw_read(w, w->bp, &bp))
		return why;
	w->sp = w->bp + 16;
	w->bp = bp;
	w->ip = ra;
	w->exact_ip = false;
	w->via_fp = why;
	return 0;
}

/* One step from the frame at w->ip: 0 to go on, -1 at the outermost frame, else a marker. */
static int raw_step(const struct unwinder *u, const struct offcpu_umap *m, struct raw_walk *w,
		    uint64_t look)
{
	const struct offcpu_cfi_row *row;
	uint64_t cfa, ra, bp, ip, sp;

	if (!m->chunk)
		return raw_fp_step(w, m->nrows && m->nrows < OFFCPU_UMARK_MAX
					      ? m->nrows
					      : OFFCPU_UMARK_NO_CFI);
	row = raw_row(u, w, m, look - m->base);
	switch (row ? OFFCPU_CFI_CFA(row->rule) : OFFCPU_CFA_NONE) {
	case OFFCPU_CFA_SP:
		cfa = w->sp + (uint64_t)row->cfa_off * 8;
		break;
	case OFFCPU_CFA_FP:
		if (!w->bp_ok)
			return OFFCPU_UMARK_UNSUPPORTED;
		cfa = w->bp + (uint64_t)row->cfa_off * 8;
		break;
	case OFFCPU_CFA_PLT:
		cfa = w->sp + (uint64_t)row->cfa_off * 8 +
		      ((w->ip & 15) >= (uint64_t)row->fp_off ? 8 : 0);
		break;
	case OFFCPU_CFA_SIGNAL:
		if (raw_read(w, w->sp + 168, &ip) || raw_read(w, w->sp + 160, &sp) ||
		    raw_read(w, w->sp + 120, &bp))
			return OFFCPU_UMARK_UNREADABLE;
		w->ip = ip;
		w->sp = sp;
		w->bp = bp;
		w->bp_ok = w->exact_ip = true;
		w->via_fp = 0;
		return 0;
	case OFFCPU_CFA_END:
		return -1;
	case OFFCPU_CFA_NONE:
		return raw_fp_step(w, OFFCPU_UMARK_NO_CFI);
	case OFFCPU_CFA_RA_RDI:
		/* vfork's system call: the return address in rdi, known at the leaf only */
		if (!w->leaf || !w->exact_ip)
			return OFFCPU_UMARK_UNSUPPORTED;
		if (OFFCPU_CFI_FP(row->rule) == OFFCPU_FP_UNKNOWN)
			w->bp_ok = false;
		w->sp += (uint64_t)row->cfa_off * 8;
		w->ip = w->r->di;
		w->exact_ip = w->leaf = false;
		w->via_fp = 0;
		return 0;
	default:
		return OFFCPU_UMARK_UNSUPPORTED;
	}
	if (cfa <= w->sp)
		return OFFCPU_UMARK_UNSUPPORTED;
	if (raw_read(w, cfa - 8, &ra))
		return OFFCPU_UMARK_UNREADABLE;
	if (OFFCPU_CFI_FP(row->rule) == OFFCPU_FP_SAVED) {
		if (raw_read(w, cfa + (int64_t)row->fp_off * 8, &bp))
			return OFFCPU_UMARK_UNREADABLE;
		w->bp = bp;
		w->bp_ok = true;
	} else if (OFFCPU_CFI_FP(row->rule) == OFFCPU_FP_UNKNOWN) {
		w->bp_ok = false;
	}
	w->sp = cfa;
	w->ip = ra;
	w->exact_ip = false;
	w->via_fp = 0;
	return 0;
}

static int file_need(struct unwinder *u, uint32_t fid);

size_t unwinder__unwind_raw(struct unwinder *u, const struct offcpu_raw_ustack *r, size_t len,
			    uint64_t *ips, size_t max)
{
	uint32_t key = r->tgid;
	const struct uproc *up = u ? ntable_find(&u->procs, &key) : NULL;
	struct raw_walk w = {
		.r = r,
		.len = len < r->len ? len : r->len,
		.ip = r->ip,
		.sp = r->sp,
		.bp = r->bp,
		.bp_ok = true,
		.exact_ip = true,
		.leaf = true,
	};
	unsigned int mark = 0;
	size_t n = 0;

	if (max < 2)
		return 0;
	if (u)
		first_chunk_wait(u);
	if (!up || !up->maps)
		mark = OFFCPU_UMARK_NO_MAPS;
	while (!mark && w.ip) {
		uint64_t look = w.exact_ip ? w.ip : w.ip - 1;
		const struct offcpu_umap *m = raw_umap(up->maps, look);
		int step;

		if (!m) {
			/*
			 * The first pc is code for sure: if no mapping holds it, the
			 * mappings read are another image's (an exec came first).
			 */
			mark = w.via_fp ? w.via_fp
			       : n	? OFFCPU_UMARK_OUTSIDE
					: OFFCPU_UMARK_NO_MAPS;
			break;
		}
		if (n + 1 >= max || n + 1 >= OFFCPU_MAX_STACK) {
			mark = OFFCPU_UMARK_TRUNCATED;
			break;
		}
		ips[n++] = w.ip;
		/* m is updated in place when its table is built (file_need()). */
		if (!m->chunk && m->nrows == OFFCPU_UMARK_PENDING)
			file_need(u, m->fid);
		step = raw_step(u, m, &w, look);
		w.leaf = false;
		if (step < 0)
			break;
		mark = step;
	}
	if (mark)
		ips[n++] = OFFCPU_UMARK_BASE | mark;
	raw_unmap(&w);
	return n;
}

bool unwinder__signal_frame(const struct unwinder *u, uint32_t tgid, uint64_t pc)
{
	const struct uproc *up = u ? ntable_find(&u->procs, &tgid) : NULL;
	const struct offcpu_umap *m = up && up->maps ? raw_umap(up->maps, pc) : NULL;
	const struct usig *g;
	uint64_t rel;
	size_t at;

	if (!m || !m->chunk || pc - m->base >= (1ULL << 32))
		return false;
	rel = pc - m->base;
	at = sigs_pos(u, m->chunk, m->first);
	if (at == u->nsigs)
		return false;
	g = &u->sigs[at];
	if (g->chunk != m->chunk || g->first != m->first)
		return false;
	for (size_t i = 0; i < g->n; i++)
		if (rel >= g->range[2 * i] && rel < g->range[2 * i + 1])
			return true;
	return false;
}

static struct ufile *file_by_id(struct unwinder *u, uint32_t id)
{
	size_t lo = 0, hi = u->nfiles;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (u->files[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < u->nfiles && u->files[lo].id == id ? &u->files[lo] : NULL;
}

/*
 * Build pending file fid's table now, and point every process's mappings of
 * it at the result (or at the marker saying why there is none), in the
 * kernel too. 1 when it was pending.
 */
static int file_need(struct unwinder *u, uint32_t fid)
{
	struct ufile *f = file_by_id(u, fid);
	const void *key;
	void *val;

	if (!f || f->pub.status != UNWIND_PENDING)
		return 0;
	first_chunk_wait(u); /* an entry point's wait, for unwinder__unwind_raw()'s calls */
	file_build(u, f, f->fd);
	file_undefer(u, f);
	for (size_t pos = 0; ntable_next(&u->procs, &pos, &key, &val);) {
		struct offcpu_umaps *um = ((struct uproc *)val)->maps;
		bool changed = false;

		for (uint32_t i = 0; um && i < um->n && i < OFFCPU_MAX_UMAPS; i++) {
			struct offcpu_umap *m = &um->m[i];

			if (m->fid != fid || m->chunk || m->nrows != OFFCPU_UMARK_PENDING)
				continue;
			umap_point(m, f);
			changed = true;
		}
		if (!changed)
			continue;
		memset(u->val, 0, sizeof(*u->val));
		memcpy(u->val, um, offsetof(struct offcpu_umaps, m) + um->n * sizeof(um->m[0]));
		/* Not put back when the kernel has dropped them (the process's exec or exit). */
		bpf_map_update_elem(u->umaps_fd, key, u->val, BPF_EXIST);
	}
	return 1;
}

int unwinder__need(struct unwinder *u, uint32_t tgid, uint64_t pc)
{
	const struct uproc *up = ntable_find(&u->procs, &tgid);
	const struct offcpu_umap *m = up && up->maps ? raw_umap(up->maps, pc) : NULL;

	if (!m)
		return -ENOENT;
	if (m->chunk || m->nrows != OFFCPU_UMARK_PENDING)
		return 0;
	return file_need(u, m->fid);
}

static bool uproc_keep(const void *key, void *val, void *arg)
{
	struct uproc *up = val;
	struct unwinder *u = arg;

	if (kill((pid_t) * (const uint32_t *)key, 0) && errno == ESRCH) {
		/* Its last raw stacks may still come: dropped the time after. */
		if (up->gone) {
			free(up->maps);
			free(up->fids);
			return false;
		}
		up->gone = true;
	}
	for (size_t i = 0; i < up->nfids; i++) {
		struct ufile *f = file_by_id(u, up->fids[i]);

		if (f)
			f->used = true;
	}
	return true;
}

/*
 * The files no process kept maps: their tables' rows become holes for
 * tables to come, and a process mapping them later has them built again.
 * Nothing reads those rows any more: the kernel deleted the mappings of the
 * processes that had them at their exec or exit (a process is dropped at
 * the second call that finds it gone), and a process whose mappings were
 * not kept here never had them written to the kernel.
 */
static void files_forget(struct unwinder *u)
{
	size_t kept = 0;

	for (size_t i = 0; i < u->nfiles; i++) {
		struct ufile *f = &u->files[i];

		if (f->used) {
			u->files[kept++] = *f;
			continue;
		}
		if (f->fd >= 0)
			file_undefer(u, f);
		if (f->chunk) {
			sigs_remove(u, f->chunk, f->first);
			hole_add(u, f->chunk, f->first, f->nrows);
			u->stats.tables--;
			u->stats.rows_bytes -= f->pub.bytes;
		}
		u->stats.forgotten++;
		free(f->segs);
		free((char *)f->pub.path);
	}
	u->nfiles = kept;
}

int unwinder__forget_gone(struct unwinder *u)
{
	if (!u)
		return 0;
	first_chunk_wait(u);
	for (size_t i = 0; i < u->nfiles; i++)
		u->files[i].used = false;
	ntable_keep(&u->procs, uproc_keep, u);
	files_forget(u);
	return 0;
}
