// SPDX-License-Identifier: GPL-2.0-only
/* The kernel's BTF, walked once for a few names: see kbtf.h. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <bpf/btf.h>

#include "collect/kbtf.h"

#define KBTF_MAGIC 0xeb9f

static int kind_of(const struct btf_type *t)
{
	return BTF_INFO_KIND(t->info);
}

static uint32_t vlen_of(const struct btf_type *t)
{
	return BTF_INFO_VLEN(t->info);
}

/* Bytes after struct btf_type for this kind, or -1 for a kind this walk does not know. */
static long extra_of(const struct btf_type *t)
{
	switch (kind_of(t)) {
	case BTF_KIND_INT:
	case BTF_KIND_VAR:
	case 17: /* BTF_KIND_DECL_TAG */
		return 4;
	case BTF_KIND_PTR:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC:
	case 16: /* BTF_KIND_FLOAT */
	case 18: /* BTF_KIND_TYPE_TAG */
		return 0;
	case BTF_KIND_ARRAY:
		return sizeof(struct btf_array);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		return (long)vlen_of(t) * sizeof(struct btf_member);
	case BTF_KIND_ENUM:
		return (long)vlen_of(t) * sizeof(struct btf_enum);
	case BTF_KIND_FUNC_PROTO:
		return (long)vlen_of(t) * sizeof(struct btf_param);
	case BTF_KIND_DATASEC:
		return (long)vlen_of(t) * sizeof(struct btf_var_secinfo);
	case 19: /* BTF_KIND_ENUM64: name_off, val_lo32, val_hi32 */
		return (long)vlen_of(t) * 12;
	default:
		return -1;
	}
}

long kbtf__type_len(const struct btf_type *t)
{
	long extra = extra_of(t);

	return extra < 0 ? -1 : (long)sizeof(*t) + extra;
}

int kbtf__from_mem(struct kbtf *k, const void *data, size_t len)
{
	const struct btf_header *h = data;
	size_t cap = 1024, pos = 0;
	uint32_t *offs;

	memset(k, 0, sizeof(*k));
	if (len < sizeof(*h) || h->magic != KBTF_MAGIC || h->version != 1 ||
	    h->hdr_len < sizeof(*h) || h->hdr_len > len ||
	    (uint64_t)h->hdr_len + h->type_off + h->type_len > len ||
	    (uint64_t)h->hdr_len + h->str_off + h->str_len > len || !h->str_len)
		return -EINVAL;
	k->data = data;
	k->size = len;
	k->types = (const uint8_t *)data + h->hdr_len + h->type_off;
	k->strs = (const char *)data + h->hdr_len + h->str_off;
	k->str_len = h->str_len;
	if (k->strs[k->str_len - 1])
		return -EINVAL;
	offs = malloc(cap * sizeof(*offs));
	if (!offs)
		return -ENOMEM;
	offs[0] = 0;
	k->nr = 1;
	while (pos + sizeof(struct btf_type) <= h->type_len) {
		const struct btf_type *t = (const void *)(k->types + pos);
		long extra = extra_of(t);

		if (extra < 0 || pos + sizeof(*t) + (size_t)extra > h->type_len) {
			free(offs);
			return -EINVAL;
		}
		if (k->nr == cap) {
			uint32_t *more = realloc(offs, 2 * cap * sizeof(*offs));

			if (!more) {
				free(offs);
				return -ENOMEM;
			}
			offs = more;
			cap *= 2;
		}
		offs[k->nr++] = (uint32_t)pos;
		pos += sizeof(*t) + (size_t)extra;
	}
	k->offs = offs;
	return pos == h->type_len ? 0 : -EINVAL;
}

int kbtf__open(struct kbtf *k, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;
	struct stat st;
	void *p = MAP_FAILED;
	size_t got = 0;
	ssize_t r;

	memset(k, 0, sizeof(*k));
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || st.st_size <= 0) {
		err = st.st_size <= 0 ? -EINVAL : -errno;
		close(fd);
		return err;
	}
	/* sysfs hands the file out a page per read(): mapping it spares 1,300 calls. */
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		p = malloc((size_t)st.st_size);
		while (p && got < (size_t)st.st_size &&
		       (r = read(fd, (char *)p + got, (size_t)st.st_size - got)) > 0)
			got += (size_t)r;
		if (!p || got != (size_t)st.st_size) {
			err = p ? -EIO : -ENOMEM;
			free(p);
			close(fd);
			return err;
		}
	}
	close(fd);
	err = kbtf__from_mem(k, p, (size_t)st.st_size);
	k->map = p;
	k->map_len = (size_t)st.st_size;
	k->mapped = got == 0;
	if (err)
		kbtf__close(k);
	return err;
}

void kbtf__close(struct kbtf *k)
{
	free(k->offs);
	if (k->map && k->mapped)
		munmap(k->map, k->map_len);
	else
		free(k->map);
	memset(k, 0, sizeof(*k));
}

const struct btf_type *kbtf__type(const struct kbtf *k, uint32_t id)
{
	return id && id < k->nr ? (const void *)(k->types + k->offs[id]) : NULL;
}

const char *kbtf__str(const struct kbtf *k, uint32_t off)
{
	return off < k->str_len ? k->strs + off : "";
}

void kbtf__find(const struct kbtf *k, struct kbtf_want *w, size_t n)
{
	size_t left = n;

	for (size_t i = 0; i < n; i++)
		w[i].id = 0;
	for (uint32_t id = 1; id < k->nr && left; id++) {
		const struct btf_type *t = kbtf__type(k, id);

		for (size_t i = 0; i < n; i++)
			if (!w[i].id && w[i].kind == kind_of(t) &&
			    !strcmp(kbtf__str(k, t->name_off), w[i].name)) {
				w[i].id = (int)id;
				left--;
			}
	}
}

int kbtf__has_member(const struct kbtf *k, int id, const char *member)
{
	const struct btf_type *t = id > 0 ? kbtf__type(k, (uint32_t)id) : NULL;
	const struct btf_member *m = t ? (const void *)(t + 1) : NULL;

	if (!t || (kind_of(t) != BTF_KIND_STRUCT && kind_of(t) != BTF_KIND_UNION))
		return 0;
	for (uint32_t i = 0; i < vlen_of(t); i++)
		if (!strcmp(kbtf__str(k, m[i].name_off), member))
			return 1;
	return 0;
}

int kbtf__has_enumerator(const struct kbtf *k, int id, const char *name)
{
	const struct btf_type *t = id > 0 ? kbtf__type(k, (uint32_t)id) : NULL;
	const struct btf_enum *e = t ? (const void *)(t + 1) : NULL;

	if (!t || kind_of(t) != BTF_KIND_ENUM)
		return 0;
	for (uint32_t i = 0; i < vlen_of(t); i++)
		if (!strcmp(kbtf__str(k, e[i].name_off), name))
			return 1;
	return 0;
}

/* The kernel's BTF parsed by libbpf from the mapped file, or NULL. */
static struct btf *vmlinux_parse(void)
{
	int fd = open("/sys/kernel/btf/vmlinux", O_RDONLY | O_CLOEXEC);
	struct btf *btf = NULL;
	struct stat st;
	void *p = MAP_FAILED;

	if (fd >= 0 && !fstat(fd, &st) && st.st_size > 0)
		p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (fd >= 0)
		close(fd);
	if (p != MAP_FAILED) {
		btf = btf__new(p, (__u32)st.st_size);
		munmap(p, (size_t)st.st_size);
	}
	return btf;
}

/*
 * The parse ahead of time, in a thread (kbtf__preload()): bpf_object__load()
 * asks for it after the skeleton's open and libbpf's own probes, which the
 * main thread does meanwhile.
 */
static struct {
	pthread_t thread;
	bool pending;
	struct btf *btf;
} pre;

static void *preload_run(void *arg)
{
	pre.btf = vmlinux_parse();
	return arg;
}

void kbtf__preload(void)
{
	if (!pre.pending && !pre.btf)
		pre.pending = !pthread_create(&pre.thread, NULL, preload_run, NULL);
}

/* The preloaded BTF (the caller owns it), or NULL. */
static struct btf *preload_take(void)
{
	struct btf *btf;

	if (pre.pending)
		pthread_join(pre.thread, NULL);
	pre.pending = false;
	btf = pre.btf;
	pre.btf = NULL;
	return btf;
}

void kbtf__preload_end(void)
{
	btf__free(preload_take());
}

/*
 * libbpf's own loader of the kernel's BTF, which bpf_object__load() calls
 * for CO-RE, reads /sys/kernel/btf/vmlinux a page per read() (1,300 calls
 * for 5 MB: 4 ms of a record's start-up). This definition takes its place
 * (libbpf calls it through its PLT): the file mapped (6.16+) and parsed from
 * memory. Anything else (no sysfs BTF, a kernel that cannot map it) goes to
 * libbpf's, which also looks outside sysfs.
 */
struct btf *btf__load_vmlinux_btf(void)
{
	static struct btf *(*libbpf_load)(void);
	struct btf *btf = preload_take();

	if (!btf)
		btf = vmlinux_parse();
	if (btf)
		return btf;
	if (!libbpf_load)
		libbpf_load = (struct btf * (*)(void)) dlsym(RTLD_NEXT, "btf__load_vmlinux_btf");
	if (!libbpf_load) {
		errno = ENOENT;
		return NULL;
	}
	return libbpf_load();
}
