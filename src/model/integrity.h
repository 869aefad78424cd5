/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * How complete a capture is: every loss a collector counted, by name.
 *
 * Collectors and diagnostics parsers add losses; analyze/ turns them into a
 * status. A loss with count 0 is still recorded (a counter that was read and
 * found zero is evidence, a counter never read is not), but only non-zero
 * losses make a capture partial.
 *
 * Loss names are stable snake_case identifiers documented in docs/summary.md,
 * e.g. "lost_stack_traces", "lost_events", "stack_errors_efault", "map_full_start".
 *
 * Not every counter is a loss (integrity__class): waits in progress at the
 * window's start or stop are edges, counted within the window; an interrupt
 * is a fact about the run. Only real losses can make a capture partial, and
 * only those analyze/outcome.c marks significant (docs/reliability.md).
 */
#ifndef OFFCPU_MODEL_INTEGRITY_H
#define OFFCPU_MODEL_INTEGRITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum integrity_status {
	INTEGRITY_COMPLETE = 0,
	INTEGRITY_PARTIAL,
	INTEGRITY_UNKNOWN,
};

#define INTEGRITY_MAX_LOSSES 48
#define INTEGRITY_NAME_MAX 48

struct integrity_loss {
	char name[INTEGRITY_NAME_MAX];
	uint64_t count;	      /* events, stacks or intervals lost */
	uint64_t affected_ns; /* off-CPU time known to be affected; 0 when not known */
	bool significant;     /* a real loss large enough to change an answer */
};

/* What a counter stands for. */
enum integrity_class {
	INTEGRITY_LOSS = 0, /* something the capture should hold is missing or may be wrong */
	INTEGRITY_EDGE, /* a wait in progress at the window's start or stop: counted inside it */
	INTEGRITY_FACT, /* how the run went (an interrupt): the window ends there, nothing lost */
};

struct integrity {
	enum integrity_status status;
	char message[320];
	/* True once some source of evidence (diagnostics file, kernel counters) was read. */
	int evidence;
	size_t nr_losses;
	struct integrity_loss losses[INTEGRITY_MAX_LOSSES];
};

const char *integrity_status__name(enum integrity_status s);
/* "loss", "edge" or "fact". */
const char *integrity_class__name(enum integrity_class c);
/* The class of the counter named name: edges and facts by name, anything else is a loss. */
enum integrity_class integrity__class(const char *name);
/*
 * Whether a loss's effect has no bound the capture can state (whole threads
 * or processes missing, a collector that ended abnormally, a capture cut
 * short): any count of it changes the answer.
 */
bool integrity__unbounded(const char *name);
/* Counts and affected time of the counters of class c, summed (saturating). */
void integrity__sum(const struct integrity *in, enum integrity_class c, uint64_t *count,
		    uint64_t *affected_ns);

/*
 * Add count to the loss named name (created on first use). Returns 0,
 * -ENOSPC when the table is full, -EOVERFLOW when a sum would wrap.
 */
int integrity__add_loss(struct integrity *in, const char *name, uint64_t count,
			uint64_t affected_ns);
/* The loss named name, or NULL. */
const struct integrity_loss *integrity__loss(const struct integrity *in, const char *name);
/* Sum of all loss counts (saturating). */
uint64_t integrity__total_lost(const struct integrity *in);
/*
 * Stack traces lost, whichever collector lost them (saturating): the
 * external collectors' "lost_stack_traces", the native collector's
 * "lost_stacks" (stacks that could not be sent) and its
 * "{user,kernel}_stack_errors_*" (stacks the kernel could not capture).
 */
uint64_t integrity__lost_stack_traces(const struct integrity *in);

#endif
