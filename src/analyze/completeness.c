// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analyze/completeness.h"
#include "model/frame_name.h"

enum ustack_class { CLASS_NO_USER = 0, CLASS_MISSING, CLASS_COMPLETE, CLASS_INCOMPLETE };

struct stack_class {
	unsigned char cls;
	bool unsymbolized;
	uint32_t marker; /* CLASS_INCOMPLETE: the marker's frame id */
};

const char *unwinder__name(enum unwinder u)
{
	switch (u) {
	case UNWINDER_FP_BCC:
		return "frame pointers (bcc)";
	case UNWINDER_FP_BPFTRACE:
		return "frame pointers (bpftrace)";
	case UNWINDER_DWARF:
		break;
	}
	return "dwarf";
}

enum unwinder unwinder__of_collector(enum collector_kind c)
{
	switch (c) {
	case COLLECTOR_BCC:
		return UNWINDER_FP_BCC;
	case COLLECTOR_BPFTRACE:
		return UNWINDER_FP_BPFTRACE;
	case COLLECTOR_NATIVE:
		break;
	}
	return UNWINDER_DWARF;
}

bool unwinder__marks_incomplete(enum unwinder u)
{
	return u == UNWINDER_DWARF;
}

/*
 * A placeholder that stands for the user side: the native collector's
 * "[missing user stack: ...]", "[stack unknown: ...]" (both sides),
 * "[new thread: ...]", BCC's "[Missed User Stack]". Kernel-side ones say so.
 */
static bool user_placeholder(const char *name)
{
	return !strcasestr(name, "kernel stack");
}

static struct stack_class classify(const struct profile *p, uint32_t stack)
{
	struct stack_class c = {.cls = CLASS_NO_USER};
	bool user = false, placeholder = false, marker = false;
	size_t n = 0;
	const uint32_t *frames = profile__stack_at(p, stack, &n);

	for (size_t i = 0; i < n; i++) {
		const struct profile_frame *f = profile__frame_at(p, frames[i]);

		if (f->kind == FRAME_MISSING) {
			if (!marker && frame_name__unwind_marker(f->name, NULL)) {
				marker = true;
				c.marker = frames[i];
			} else if (user_placeholder(f->name)) {
				placeholder = true;
			}
			continue;
		}
		if (frame_name__unsymbolized(f->name))
			c.unsymbolized = true;
		/* Every kind but kernel and missing is a user frame (inlined ones too). */
		if (f->kind != FRAME_KERNEL)
			user = true;
	}
	if (marker)
		c.cls = CLASS_INCOMPLETE;
	else if (user)
		c.cls = CLASS_COMPLETE;
	else if (placeholder)
		c.cls = CLASS_MISSING;
	return c;
}

static int cmp_loss(const void *a, const void *b)
{
	const struct completeness_loss *x = a, *y = b;
	int c;

	if (x->off_ns != y->off_ns)
		return x->off_ns > y->off_ns ? -1 : 1;
	c = strcmp(x->binary ? x->binary : "", y->binary ? y->binary : "");
	return c ? c : strcmp(x->reason, y->reason);
}

/* One loss per marker frame with time: distinct marker names are distinct (binary, reason). */
static int collect_losses(struct completeness *c, const struct profile *p, const uint64_t *by_frame,
			  size_t nf)
{
	size_t n = 0;

	for (size_t i = 0; i < nf; i++)
		n += by_frame[i] != 0;
	c->losses = calloc(n ? n : 1, sizeof(*c->losses));
	if (!c->losses)
		return -ENOMEM;
	for (size_t i = 0; i < nf; i++) {
		struct unwind_marker m;
		char *s;

		if (!by_frame[i])
			continue;
		frame_name__unwind_marker(profile__frame_at(p, i)->name, &m);
		/* reason and binary in one allocation, freed through reason. */
		s = malloc(m.reason_len + m.binary_len + 2);
		if (!s)
			return -ENOMEM;
		memcpy(s, m.reason, m.reason_len);
		s[m.reason_len] = '\0';
		memcpy(s + m.reason_len + 1, m.binary ? m.binary : "", m.binary_len);
		s[m.reason_len + 1 + m.binary_len] = '\0';
		c->losses[c->nr_losses++] = (struct completeness_loss){
			.reason = s,
			.binary = m.binary ? s + m.reason_len + 1 : NULL,
			.off_ns = by_frame[i],
		};
	}
	qsort(c->losses, c->nr_losses, sizeof(*c->losses), cmp_loss);
	return 0;
}

struct completeness *completeness__new(const struct profile *p, enum unwinder u)
{
	size_t nst = profile__nr_stacks(p), nf = profile__nr_frames(p), nr = profile__nr_rows(p);
	struct completeness *c = calloc(1, sizeof(*c));
	struct stack_class *cls = calloc(nst ? nst : 1, sizeof(*cls));
	bool *done = calloc(nst ? nst : 1, sizeof(*done));
	uint64_t *by_frame = calloc(nf ? nf : 1, sizeof(*by_frame));
	int err = -ENOMEM;

	if (!c || !cls || !done || !by_frame)
		goto cleanup;
	c->unwinder = u;
	c->known = unwinder__marks_incomplete(u);
	for (size_t i = 0; i < nr; i++) {
		const struct profile_row *r = profile__row_at(p, i);
		uint64_t ns = r->w.off_ns;
		struct stack_class *sc = &cls[r->stack];

		if (!done[r->stack]) {
			*sc = classify(p, r->stack);
			done[r->stack] = true;
		}
		c->off_ns += ns;
		if (sc->unsymbolized)
			c->unsymbolized_ns += ns;
		switch (sc->cls) {
		case CLASS_COMPLETE:
			c->complete_ns += ns;
			break;
		case CLASS_INCOMPLETE:
			c->incomplete_ns += ns;
			by_frame[sc->marker] += ns;
			break;
		case CLASS_MISSING:
			c->missing_ns += ns;
			break;
		default:
			c->no_user_ns += ns;
			break;
		}
	}
	c->with_user_ns = c->complete_ns + c->incomplete_ns;
	err = c->known ? collect_losses(c, p, by_frame, nf) : 0;
cleanup:
	free(by_frame);
	free(done);
	free(cls);
	if (err) {
		completeness__free(c);
		errno = -err;
		return NULL;
	}
	return c;
}

void completeness__free(struct completeness *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nr_losses; i++)
		free((char *)c->losses[i].reason);
	free(c->losses);
	free(c);
}

double completeness__share(const struct completeness *c)
{
	if (!c->known || !c->with_user_ns)
		return -1.0;
	return (double)c->complete_ns / (double)c->with_user_ns;
}
