// SPDX-License-Identifier: GPL-2.0-only
/* Naming the interrupt contexts of timeline wakers (see wakers.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <linux/types.h>

#include "bpf/offcpu.h"
#include "collect/wakers.h"
#include "util/vec.h"

/* The kernel's softirq vectors, in its order (include/linux/interrupt.h). */
static const char *const softirq_names[] = {
	"HI",	    "TIMER",   "NET_TX", "NET_RX",  "BLOCK",
	"IRQ_POLL", "TASKLET", "SCHED",	 "HRTIMER", "RCU",
};

bool wakers__is_irq(uint32_t waker)
{
	uint32_t kind = OFFCPU_WAKER_KIND(waker);

	return (waker & OFFCPU_WAKER_IRQCTX) && kind >= OFFCPU_WAKER_SOFTIRQ &&
	       kind <= OFFCPU_WAKER_TIMER;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The handlers of irq nr: /proc/irq/N holds one directory per handler, named
 * as the driver named it, beside its files (smp_affinity, spurious, ...).
 * Returns how many names were written into buf.
 */
static size_t irq_handlers(const char *root, uint32_t nr, char *buf, size_t len)
{
	char dir[512], path[1024], *names[16];
	size_t n = 0, used = 0;
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/%u", root, nr);
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d)) && n < sizeof(names) / sizeof(names[0])) {
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (stat(path, &st) || !S_ISDIR(st.st_mode))
			continue;
		names[n] = strdup(de->d_name);
		if (names[n])
			n++;
	}
	closedir(d);
	qsort(names, n, sizeof(names[0]), cmp_str);
	for (size_t i = 0; i < n; i++) {
		int w = snprintf(buf + used, len - used, "%s%s", i ? "," : "", names[i]);

		if (w > 0)
			used += (size_t)w < len - used ? (size_t)w : len - used - 1;
		free(names[i]);
	}
	return n;
}

int wakers__name(uint32_t waker, const char *irq_root, char *buf, size_t len)
{
	uint32_t nr = OFFCPU_WAKER_NR(waker);

	if (!wakers__is_irq(waker) || len < 2)
		return -EINVAL;
	switch (OFFCPU_WAKER_KIND(waker)) {
	case OFFCPU_WAKER_SOFTIRQ:
		if (nr < sizeof(softirq_names) / sizeof(softirq_names[0]))
			snprintf(buf, len, "softirq:%s", softirq_names[nr]);
		else
			snprintf(buf, len, "softirq:%u", nr);
		return 0;
	case OFFCPU_WAKER_TIMER:
		snprintf(buf, len, "irq:timer");
		return 0;
	default:
		snprintf(buf, len, "irq:");
		if (!irq_handlers(irq_root, nr, buf + 4, len > 4 ? len - 4 : 1))
			snprintf(buf, len, "irq:%u", nr);
		return 0;
	}
}

int wakers__intern(struct wakers *w, struct timeline *t, uint32_t waker)
{
	char name[256];
	int id, err;

	for (size_t i = 0; i < w->nr; i++)
		if (w->names[i].waker == waker)
			return (int)w->names[i].id;
	err = wakers__name(waker, w->irq_root ? w->irq_root : WAKERS_IRQ_ROOT, name, sizeof(name));
	if (err)
		return err;
	id = timeline__irq(t, name);
	if (id < 0)
		return id;
	if (vec_reserve(w->names, w->cap, w->nr + 1))
		return -ENOMEM;
	w->names[w->nr++] = (struct wakers_name){waker, (uint32_t)id};
	return id;
}

void wakers__release(struct wakers *w)
{
	if (!w)
		return;
	free(w->names);
	w->names = NULL;
	w->nr = w->cap = 0;
}
