// SPDX-License-Identifier: GPL-2.0-only
#include "output/integrity_json.h"

void integrity_json__write(struct jw *w, const char *key, const struct integrity *in)
{
	const struct integrity_loss *lst;

	jw_key(w, key);
	if (!in) {
		jw_null(w);
		return;
	}
	lst = integrity__loss(in, "lost_stack_traces");
	jw_object_begin(w);
	jw_key(w, "status");
	jw_string(w, integrity_status__name(in->status));
	jw_key(w, "message");
	jw_string(w, in->message);
	jw_key(w, "lost_stack_trace_count");
	jw_u64(w, lst ? lst->count : 0);
	jw_key(w, "lost_total");
	jw_u64(w, integrity__total_lost(in));
	/* An object keyed by loss name, so that a reader asks for the loss it knows. */
	jw_key(w, "losses");
	jw_object_begin(w);
	for (size_t i = 0; i < in->nr_losses; i++) {
		jw_key(w, in->losses[i].name);
		jw_object_begin(w);
		jw_key(w, "count");
		jw_u64(w, in->losses[i].count);
		jw_key(w, "affected_ns");
		jw_u64(w, in->losses[i].affected_ns);
		jw_object_end(w);
	}
	jw_object_end(w);
	jw_object_end(w);
}
