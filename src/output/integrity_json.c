// SPDX-License-Identifier: GPL-2.0-only
#include "output/integrity_json.h"

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
	/* An object keyed by loss name, so that a reader asks for the loss it knows. */
	jw_object_field(w, "losses");
	for (size_t i = 0; i < in->nr_losses; i++) {
		jw_object_field(w, in->losses[i].name);
		jw_u64_field(w, "count", in->losses[i].count);
		jw_u64_field(w, "affected_ns", in->losses[i].affected_ns);
		jw_object_end(w);
	}
	jw_object_end(w);
	jw_object_end(w);
}
