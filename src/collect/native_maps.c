// SPDX-License-Identifier: GPL-2.0-only
/*
 * The collector's preallocated maps (threads, procs, agg0/agg1, stacks) and
 * the events ring buffer, made in a thread while the main one reads the
 * kernel's features and libbpf's copy of its BTF is parsed: libbpf would make
 * them inside bpf_object__load(), after that parse, one after the other.
 * Making them touches every page of their values (9.7 MB for 8192 threads):
 * 20-25 ms of a record's start-up on a VM where a page costs 10 us, which
 * then overlaps the parse (20 ms) instead of following it.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "collect/native_priv.h"
#include "offcpu.skel.h"

static int premade_make(struct native_premade_map *p)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = p->flags);
	int fd = bpf_map_create(p->type, p->name, p->key, p->value, p->max, &o);

	return fd < 0 ? -errno : fd;
}

static void *premade_run(void *arg)
{
	struct native_premade *pm = arg;

	for (size_t i = 0; i < pm->nr; i++)
		pm->maps[i].fd = premade_make(&pm->maps[i]);
	return NULL;
}

/* The thread reads only these copies: the object stays the main thread's. */
static void premade_add(struct native_premade *pm, struct bpf_map *m)
{
	struct native_premade_map *p;

	/* One more than the array holds is left to libbpf's load. */
	if (pm->nr == sizeof(pm->maps) / sizeof(pm->maps[0]))
		return;
	p = &pm->maps[pm->nr++];

	*p = (struct native_premade_map){
		.m = m,
		.type = bpf_map__type(m),
		.key = bpf_map__key_size(m),
		.value = bpf_map__value_size(m),
		.max = bpf_map__max_entries(m),
		.flags = bpf_map__map_flags(m),
		.fd = -ENOENT,
	};
	snprintf(p->name, sizeof(p->name), "%s", bpf_map__name(m));
}

void native_maps_start(struct native *n)
{
	struct native_premade *pm = &n->premade;
	struct offcpu_bpf *s = n->skel;

	native_maps_drop(n);
	/* The largest first: it is the one the load would wait for. */
	premade_add(pm, s->maps.threads);
	premade_add(pm, s->maps.agg0);
	premade_add(pm, s->maps.agg1);
	premade_add(pm, s->maps.stacks);
	premade_add(pm, s->maps.procs);
	premade_add(pm, s->maps.events);
	pm->pending = !pthread_create(&pm->thread, NULL, premade_run, pm);
	if (!pm->pending)
		premade_run(pm);
}

static void premade_join(struct native_premade *pm)
{
	if (pm->pending)
		pthread_join(pm->thread, NULL);
	pm->pending = false;
}

int native_maps_take(struct native *n)
{
	struct native_premade *pm = &n->premade;
	int taken = 0;

	premade_join(pm);
	for (size_t i = 0; i < pm->nr; i++) {
		struct native_premade_map *p = &pm->maps[i];

		/* A map not made here, or not taken, is made by libbpf at load, as before. */
		if (p->fd >= 0 && !bpf_map__reuse_fd(p->m, p->fd)) /* takes a duplicate */
			taken++;
		if (p->fd >= 0)
			close(p->fd);
		p->fd = -ENOENT;
	}
	pm->nr = 0;
	return taken;
}

void native_maps_drop(struct native *n)
{
	struct native_premade *pm = &n->premade;

	premade_join(pm);
	for (size_t i = 0; i < pm->nr; i++) {
		if (pm->maps[i].fd >= 0)
			close(pm->maps[i].fd);
	}
	pm->nr = 0;
}
