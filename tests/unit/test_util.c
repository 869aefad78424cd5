// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect/native_table.h"
#include "parse/parse.h"
#include "unit.h"
#include "util/arena.h"
#include "util/filepages.h"
#include "util/hash.h"
#include "util/hmap.h"
#include "util/procfs.h"
#include "util/vec.h"

/* Values that share a hash are all found, and a grown table keeps every one. */
TEST(hmap_keeps_every_value_through_growth_and_collisions)
{
	struct hmap m = {0};
	static int vals[1000];
	size_t pos, found;
	int *v;

	for (int i = 0; i < 1000; i++) {
		vals[i] = i;
		/* every 10 values share one hash: the caller tells them apart */
		CHECK_INT(hmap__add(&m, (uint64_t)(i / 10) * 0x9e3779b97f4a7c15ULL, &vals[i]), 0);
	}
	CHECK_INT(m.len, 1000);
	CHECK(m.len * 2 <= m.mask + 1); /* at most half full */
	for (int k = 0; k < 100; k++) {
		uint64_t h = (uint64_t)k * 0x9e3779b97f4a7c15ULL;
		unsigned seen = 0;

		found = 0;
		for (pos = hmap__first(&m, h); (v = hmap__next(&m, h, &pos));) {
			CHECK_INT(*v / 10, k);
			seen |= 1u << (*v % 10);
			found++;
		}
		CHECK_INT(found, 10);
		CHECK_INT(seen, 0x3ff);
	}
	/* a miss ends on a free slot, where a put goes */
	pos = hmap__first(&m, 12345);
	CHECK(!hmap__next(&m, 12345, &pos));
	CHECK_INT(hmap__reserve(&m), 0);
	hmap__put(&m, pos, 12345, hmap_idx(7));
	pos = hmap__first(&m, 12345);
	CHECK_INT(hmap_idx_of(hmap__next(&m, 12345, &pos)), 7);
	hmap__clear(&m);
	CHECK_INT(m.len, 0);
	pos = hmap__first(&m, 0);
	CHECK(!hmap__next(&m, 0, &pos));
	hmap__free(&m);
	hmap__free(NULL);
	/* an empty table finds nothing without allocating */
	pos = hmap__first(&m, 3);
	CHECK(!hmap__next(&m, 3, &pos));
	CHECK(!m.slots);
}

/*
 * The wide hash reads every byte of every length (the four lanes, the
 * overlapping tail, the short inputs it hands to hash_bytes()), and the same
 * bytes hash the same wherever they are in memory.
 */
TEST(hash_bytes_wide_sees_every_byte_and_the_length)
{
	static unsigned char buf[200], copy[201], zeros[200];
	uint64_t x = 88172645463325252ULL;

	for (size_t i = 0; i < sizeof(buf); i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		buf[i] = (unsigned char)x;
	}
	memcpy(copy + 1, buf, sizeof(buf));
	for (size_t len = 0; len <= 130; len++) {
		uint64_t h = hash_bytes_wide(buf, len, 7);

		CHECK(h == hash_bytes_wide(copy + 1, len, 7));
		CHECK(h != hash_bytes_wide(buf, len, 8));
		for (size_t i = 0; i < len; i++) {
			buf[i] ^= 1u << (i % 8);
			if (hash_bytes_wide(buf, len, 7) == h)
				UNIT_FAIL("len %zu: byte %zu changed, the hash did not", len, i);
			buf[i] ^= 1u << (i % 8);
		}
		CHECK(hash_bytes_wide(zeros, len, 0) != hash_bytes_wide(zeros, len + 1, 0));
	}
}

/* mem_eq() compares every byte of every length, wherever the buffers are. */
TEST(mem_eq_sees_every_byte)
{
	char a[48], b[49];

	for (size_t i = 0; i < sizeof(a); i++)
		a[i] = (char)('a' + i % 26);
	memcpy(b + 1, a, sizeof(a));
	for (size_t n = 0; n <= sizeof(a); n++) {
		CHECK(mem_eq(a, b + 1, n));
		for (size_t i = 0; i < n; i++) {
			b[1 + i] ^= 0x20;
			if (mem_eq(a, b + 1, n))
				UNIT_FAIL("n %zu: byte %zu differs, mem_eq says equal", n, i);
			b[1 + i] ^= 0x20;
		}
	}
}

/* The native collector holds one entry while it creates the next. */
TEST(ntable_entries_stay_put_and_iterate_in_creation_order)
{
	struct ntable t;
	uint64_t key, *first, *v;
	const void *k;
	size_t pos, n = 0;
	bool created;

	CHECK_INT(ntable_init(&t, sizeof(key), 3 * sizeof(uint64_t)), 0);
	CHECK(!ntable_find(&t, &(uint64_t){1}));
	key = 1000;
	first = ntable_get(&t, &key, &created);
	CHECK(first && created);
	CHECK(first[0] == 0 && first[1] == 0 && first[2] == 0);
	first[0] = 42;
	for (key = 1001; key < 3000; key++) {
		v = ntable_get(&t, &key, &created);
		CHECK(v && created);
		v[2] = key * 3;
	}
	key = 1000;
	CHECK(ntable_find(&t, &key) == first);
	CHECK(ntable_get(&t, &key, &created) == first && !created);
	CHECK_U64(first[0], 42);
	for (pos = 0; ntable_next(&t, &pos, &k, (void **)&v); n++) {
		CHECK_U64(*(const uint64_t *)k, 1000 + n);
		if (n)
			CHECK_U64(v[2], (1000 + n) * 3);
	}
	CHECK_INT(n, 2000);
	key = 5000;
	CHECK(!ntable_find(&t, &key));
	ntable_free(&t);
	ntable_free(NULL);
}

TEST(vec_grows_by_doubling_and_refuses_overflow)
{
	uint64_t *a = NULL;
	size_t cap = 0, n;

	for (n = 0; n < 100; n++) {
		CHECK_INT(vec_reserve(a, cap, n + 1), 0);
		a[n] = n;
	}
	CHECK_INT(cap, 128); /* 16, 32, 64, 128 */
	for (n = 0; n < 100; n++)
		CHECK_U64(a[n], n);
	CHECK_INT(vec_reserve(a, cap, 50), 0); /* enough room: nothing changes */
	CHECK_INT(cap, 128);
	CHECK_INT(vec_reserve(a, cap, SIZE_MAX / 4), -ENOMEM);
	CHECK_INT(vec_reserve(a, cap, SIZE_MAX), -ENOMEM);
	CHECK_INT(cap, 128); /* unchanged on failure */
	CHECK_U64(a[99], 99);
	free(a);
}

/* comm may hold spaces and parentheses: the fields count from the last ')'. */
TEST(procfs_stat_fields_count_from_the_last_paren)
{
	struct procfs_stat st;

	CHECK_INT(procfs__parse_stat("42 (a) b (c) D 1 42 42 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 "
				     "1 0 123456 1000 10 18446744073709551615 94000 95000 140000\n",
				     &st),
		  0);
	CHECK_INT(st.state, 'D');
	CHECK_U64(st.flags, 4194560);
	CHECK_U64(st.starttime, 123456);
	CHECK_U64(st.startcode, 94000);
	CHECK_U64(st.startstack, 140000);
	/* a truncated line keeps its state and has no flags or start time */
	CHECK_INT(procfs__parse_stat("7 (x) S 1 7", &st), 0);
	CHECK_INT(st.state, 'S');
	CHECK_U64(st.flags, 0);
	CHECK_U64(st.starttime, 0);
	CHECK_U64(st.startcode, 0);
	CHECK_INT(procfs__parse_stat("7 (x", &st), -EINVAL);
	CHECK_INT(st.state, 0);
	CHECK_INT(procfs__parse_stat("7 (x)", &st), -EINVAL);
}

TEST(procfs_stat_reads_a_live_process_and_a_proc_root)
{
	char root[] = "/tmp/offcpu-procfs-XXXXXX", dir[64], file[96];
	struct procfs_stat st;
	FILE *f;

	CHECK_INT(procfs__stat(NULL, getpid(), &st), 0);
	CHECK_INT(st.state, 'R'); /* the reader itself is running */
	CHECK(st.starttime > 0);
	CHECK(st.startcode > 0 && st.startstack > st.startcode);
	CHECK(mkdtemp(root));
	snprintf(dir, sizeof(dir), "%s/77", root);
	snprintf(file, sizeof(file), "%s/stat", dir);
	CHECK_INT(procfs__stat(root, 77, &st), -ENOENT);
	CHECK_INT(mkdir(dir, 0700), 0);
	f = fopen(file, "w");
	CHECK(f);
	fputs("77 (w) Z 1 77 77 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 0 0\n", f);
	fclose(f);
	CHECK_INT(procfs__stat(root, 77, &st), 0);
	CHECK_INT(st.state, 'Z');
	CHECK_U64(st.starttime, 99);
	unlink(file);
	rmdir(dir);
	rmdir(root);
}

TEST(parse_u64_takes_digits_only_and_refuses_wrap)
{
	uint64_t v;

	CHECK_INT(parse__u64("18446744073709551615", 20, &v), 0);
	CHECK_U64(v, UINT64_MAX);
	CHECK_INT(parse__u64("18446744073709551616", 20, &v), -EOVERFLOW);
	CHECK_INT(parse__u64("120x", 3, &v), 0); /* only len bytes count */
	CHECK_U64(v, 120);
	CHECK_INT(parse__u64("", 0, &v), -EINVAL);
	CHECK_INT(parse__u64("-1", 2, &v), -EINVAL);
	CHECK_INT(parse__u64(" 1", 2, &v), -EINVAL);
}

/* Whether p[0..n) is all zero. */
static bool all_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/*
 * Pieces are zeroed, aligned and apart (each keeps what was written into it
 * while thousands more are carved), and the blocks grow so that the memory
 * mapped stays within a bounded tail of what was asked for.
 */
TEST(arena_pieces_are_zeroed_aligned_apart_and_blocks_grow)
{
	enum { N = 20000 };
	static unsigned char *piece[N];
	static size_t len[N];
	struct arena a = {0};
	size_t asked = 0;

	for (int i = 0; i < N; i++) {
		size_t align = (size_t)1 << (i % 7); /* 1 .. 64 */

		len[i] = 1 + (size_t)(i * 37) % 1500;
		piece[i] = arena__alloc(&a, len[i], align);
		CHECK(piece[i]);
		CHECK_INT((uintptr_t)piece[i] & (align - 1), 0);
		CHECK(all_zero(piece[i], len[i]));
		memset(piece[i], i & 0xff, len[i]);
		asked += len[i];
	}
	for (int i = 0; i < N; i++)
		for (size_t k = 0; k < len[i]; k++)
			if (piece[i][k] != (unsigned char)(i & 0xff)) {
				CHECK(!"a piece was overwritten by another");
				break;
			}
	/* About 15 MB asked: blocks of 256 KiB doubling to 4 MiB, at most one 4 MiB spare. */
	CHECK(a.mapped >= asked);
	CHECK(a.mapped <= asked + (4u << 20) + (256u << 10));
	arena__free(&a);
	CHECK_INT(a.mapped, 0);
	CHECK(!a.head);
	arena__free(&a); /* freeing twice, or an empty arena, is fine */
	arena__free(NULL);
}

/*
 * A piece bigger than a block gets a block of its own and the block being
 * filled keeps being filled; a piece that cannot be had (out of memory, or a
 * size that would wrap) is NULL and changes nothing.
 */
TEST(arena_big_pieces_and_exhaustion_leave_the_current_block)
{
	struct arena a = {0};
	unsigned char *x, *big, *y, *z;

	x = arena__alloc(&a, 100, 8);
	CHECK(x);
	big = arena__alloc(&a, (size_t)9 << 20, 64);
	CHECK(big);
	CHECK_INT((uintptr_t)big & 63, 0);
	CHECK(all_zero(big, (size_t)9 << 20));
	big[((size_t)9 << 20) - 1] = 1;
	y = arena__alloc(&a, 100, 8);
	CHECK(y == x + 104); /* right after x, in x's block */
	/* 128 TiB: more than a process can map; then a size that would wrap. */
	CHECK(!arena__alloc(&a, (size_t)1 << 47, 8));
	CHECK(!arena__alloc(&a, SIZE_MAX - 8, 8));
	z = arena__alloc(&a, 8, 8);
	CHECK(z == y + 104);
	arena__free(&a);
}

/* Big blocks start on a huge page and are zeroed; small ones come from the heap. */
TEST(bigmem_blocks_are_zeroed_and_big_ones_huge_page_aligned)
{
	size_t sizes[] = {1, 4096, BIGMEM_HUGE - 1, BIGMEM_HUGE, BIGMEM_HUGE + 1, 3 * BIGMEM_HUGE};

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		unsigned char *p = bigmem__alloc(sizes[i]);

		CHECK(p);
		if (sizes[i] >= BIGMEM_HUGE)
			CHECK_INT((uintptr_t)p & (BIGMEM_HUGE - 1), 0);
		CHECK(all_zero(p, sizes[i]));
		memset(p, 0xa5, sizes[i]);
		bigmem__free(p, sizes[i]);
	}
	CHECK(!bigmem__alloc((size_t)1 << 47));
	bigmem__free(NULL, BIGMEM_HUGE);
}

/* A table grown past BIGMEM_HUGE (huge-page slots) keeps every value, and clearing empties it. */
TEST(hmap_grown_into_huge_pages_keeps_every_value)
{
	enum { N = 100000 };
	struct hmap m = {0};
	size_t pos;
	void *v;

	for (size_t i = 0; i < N; i++)
		CHECK_INT(hmap__add(&m, hash_mix64(i), hmap_idx(i)), 0);
	CHECK_INT(m.len, N);
	CHECK((m.mask + 1) * sizeof(*m.slots) >= BIGMEM_HUGE);
	for (size_t i = 0; i < N; i++) {
		uint64_t h = hash_mix64(i);
		bool seen = false;

		for (pos = hmap__first(&m, h); (v = hmap__next(&m, h, &pos));)
			seen |= hmap_idx_of(v) == i;
		if (!seen) {
			CHECK(!"a value was lost when the table grew");
			break;
		}
	}
	hmap__clear(&m);
	pos = hmap__first(&m, hash_mix64(7));
	CHECK(!hmap__next(&m, hash_mix64(7), &pos));
	hmap__free(&m);
}

int main(void)
{
	return unit_run();
}

/* Whether this process has the page at p resident (pagemap's present bit). */
static int page_present(const void *p)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t e = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	ssize_t got = fd < 0 ? -1 : pread(fd, &e, sizeof(e), (off_t)((uintptr_t)p / page * 8));

	if (fd >= 0)
		close(fd);
	return got == sizeof(e) ? !!(e & (1ULL << 63)) : -1;
}

/*
 * A private file mapping read in part gives its resident pages back, but the
 * one this process wrote (its own copy): that keeps what was written, and
 * the others read the file again. Pages never read are not counted as given
 * back. Memory that is no file mapping is left alone.
 */
TEST(filepages_drop_gives_back_read_pages_and_keeps_written_ones)
{
	long page = sysconf(_SC_PAGESIZE);
	char path[] = "/tmp/offcpu-filepages.XXXXXX", *buf = malloc(64 * page), *m;
	int fd = mkstemp(path);
	volatile char sum = 0;
	long got, present = 0;

	CHECK(fd >= 0 && buf);
	for (long i = 0; i < 64 * page; i++)
		buf[i] = (char)(i / page + 1);
	CHECK_INT(write(fd, buf, 64 * page), 64 * page);
	m = mmap(NULL, 64 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	close(fd);
	unlink(path);
	CHECK(m != MAP_FAILED);
	/* pages 0-15 read, the rest never: holes are no copies, and not counted */
	for (long i = 0; i < 16; i++)
		sum += m[i * page];
	m[3 * page] = 'w';
	CHECK_INT(page_present(m + 5 * page), 1);
	CHECK_INT(page_present(m + 40 * page), 0);
	/* the kernel maps up to 16 pages around a read fault: count what it did */
	for (long i = 0; i < 64; i++)
		present += page_present(m + i * page) == 1;
	CHECK(present >= 16 && present < 40);

	got = filepages__drop(m + 7 * page, 0);
	CHECK_INT(got, (present - 1) * page);
	CHECK_INT(page_present(m + 5 * page), 0);
	CHECK_INT(page_present(m + 3 * page), 1);
	CHECK_INT(m[3 * page], 'w');
	CHECK_INT(m[5 * page], 6);
	CHECK_INT(m[40 * page], 41);
	CHECK_INT(filepages__drop(buf, 0), 0);
	CHECK_INT(buf[5 * page], 6);
	/* a range given: the same, without /proc/self/maps; a heap range keeps its data */
	for (long i = 0; i < 16; i++)
		sum += m[i * page];
	CHECK_INT(page_present(m + 5 * page), 1);
	CHECK_INT(filepages__drop(m + 5 * page, 2 * page), 2 * page);
	CHECK_INT(page_present(m + 5 * page), 0);
	CHECK_INT(page_present(m + 7 * page), 1);
	CHECK_INT(m[3 * page], 'w');
	CHECK_INT(filepages__drop(buf, 64 * page), 0);
	CHECK_INT(buf[5 * page], 6);
	(void)sum;
	munmap(m, 64 * page);
	free(buf);
}
