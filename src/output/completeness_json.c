// SPDX-License-Identifier: GPL-2.0-only
#include "output/completeness_json.h"

static void u64_or_null(struct jw *w, const char *key, bool known, uint64_t v)
{
	jw_key(w, key);
	if (known)
		jw_u64(w, v);
	else
		jw_null(w);
}

static void share_or_null(struct jw *w, const char *key, bool known, uint64_t part, uint64_t whole)
{
	jw_key(w, key);
	if (known && whole)
		jw_double(w, (double)part / (double)whole, 4);
	else
		jw_null(w);
}

void completeness_json__write(struct jw *w, const char *key, const struct completeness *c)
{
	jw_object_field(w, key);
	jw_str_field(w, "unwinder", unwinder__name(c->unwinder));
	jw_bool_field(w, "known", c->known);
	jw_u64_field(w, "with_user_stack_ns", c->with_user_ns);
	/* An unwinder that stops silently makes "complete" a guess: null, never 1. */
	u64_or_null(w, "complete_ns", c->known, c->complete_ns);
	share_or_null(w, "complete_share", c->known, c->complete_ns, c->with_user_ns);
	u64_or_null(w, "incomplete_ns", c->known, c->incomplete_ns);
	jw_u64_field(w, "stack_missing_ns", c->missing_ns);
	jw_u64_field(w, "no_user_stack_ns", c->no_user_ns);
	jw_u64_field(w, "unsymbolized_ns", c->unsymbolized_ns);
	share_or_null(w, "unsymbolized_share", true, c->unsymbolized_ns, c->off_ns);
	jw_array_field(w, "incomplete");
	for (size_t i = 0; i < c->nr_losses; i++) {
		const struct completeness_loss *l = &c->losses[i];

		jw_object_begin(w);
		jw_str_field(w, "binary", l->binary);
		jw_str_field(w, "reason", l->reason);
		jw_u64_field(w, "off_ns", l->off_ns);
		share_or_null(w, "share", true, l->off_ns, c->with_user_ns);
		jw_object_end(w);
	}
	jw_array_end(w);
	jw_object_end(w);
}
