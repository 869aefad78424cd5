// SPDX-License-Identifier: GPL-2.0-only
#include "analyze/outcome.h"
#include "output/integrity_json.h"

static void write_sum(struct jw *w, const char *key, uint64_t count, uint64_t ns)
{
	jw_object_field(w, key);
	jw_u64_field(w, "count", count);
	jw_u64_field(w, "affected_ns", ns);
	jw_object_end(w);
}

/* Real losses, edges and the interrupt apart, and the threshold that makes a capture partial. */
static void write_sums(struct jw *w, const struct integrity *in)
{
	const struct integrity_loss *intr = integrity__loss(in, "interrupted");
	uint64_t n, ns;

	integrity__sum(in, INTEGRITY_LOSS, &n, &ns);
	write_sum(w, "lost", n, ns);
	integrity__sum(in, INTEGRITY_EDGE, &n, &ns);
	write_sum(w, "edges", n, ns);
	jw_bool_field(w, "interrupted", intr && intr->count);
	jw_object_field(w, "partial_threshold");
	jw_double_field(w, "lost_time_share", OUTCOME_LOST_TIME_SHARE, 4);
	jw_double_field(w, "lost_count_share", OUTCOME_LOST_COUNT_SHARE, 4);
	jw_object_end(w);
}

void integrity_json__write(struct jw *w, const char *key, const struct integrity *in)
{
	jw_key(w, key);
	if (!in) {
		jw_null(w);
		return;
	}
	jw_object_begin(w);
	jw_str_field(w, "status", integrity_status__name(in->status));
	jw_str_field(w, "message", in->message);
	jw_u64_field(w, "lost_stack_trace_count", integrity__lost_stack_traces(in));
	jw_u64_field(w, "lost_total", integrity__total_lost(in));
	write_sums(w, in);
	/* An object keyed by loss name, so that a reader asks for the loss it knows. */
	jw_object_field(w, "losses");
	for (size_t i = 0; i < in->nr_losses; i++) {
		jw_object_field(w, in->losses[i].name);
		jw_u64_field(w, "count", in->losses[i].count);
		jw_u64_field(w, "affected_ns", in->losses[i].affected_ns);
		jw_str_field(w, "class",
			     integrity_class__name(integrity__class(in->losses[i].name)));
		jw_bool_field(w, "significant", in->losses[i].significant);
		jw_object_end(w);
	}
	jw_object_end(w);
	jw_object_end(w);
}
