// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "parse/summary_json.h"

static const char *get_str(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static bool get_i64(struct json_object *o, const char *key, int64_t *out)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
		return false;
	*out = json_object_get_int64(v);
	return true;
}

static void copy(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

static int read_integrity(struct json_object *root, struct integrity *in)
{
	struct json_object *ci, *losses;
	const char *status;

	memset(in, 0, sizeof(*in));
	in->status = INTEGRITY_UNKNOWN;
	if (!json_object_object_get_ex(root, "capture_integrity", &ci))
		return 0;
	status = get_str(ci, "status");
	if (status && !strcmp(status, "complete"))
		in->status = INTEGRITY_COMPLETE;
	else if (status && !strcmp(status, "partial"))
		in->status = INTEGRITY_PARTIAL;
	copy(in->message, sizeof(in->message), get_str(ci, "message"));
	in->evidence = in->status != INTEGRITY_UNKNOWN;
	if (!json_object_object_get_ex(ci, "losses", &losses) ||
	    !json_object_is_type(losses, json_type_object))
		return 0;
	json_object_object_foreach(losses, name, l)
	{
		int64_t count = 0, affected = 0;
		struct json_object *sig;
		struct integrity_loss *lo;
		int err;

		get_i64(l, "count", &count);
		get_i64(l, "affected_ns", &affected);
		err = integrity__add_loss(in, name, count < 0 ? 0 : (uint64_t)count,
					  affected < 0 ? 0 : (uint64_t)affected);
		if (err)
			return err;
		lo = (struct integrity_loss *)integrity__loss(in, name);
		if (!lo)
			continue;
		/* Summaries from before the threshold: every real loss with a count counted. */
		if (json_object_object_get_ex(l, "significant", &sig))
			lo->significant = json_object_get_boolean(sig);
		else
			lo->significant = count > 0 && integrity__class(name) == INTEGRITY_LOSS;
	}
	return 0;
}

static int read_workload(struct json_object *root, struct summary_meta *m)
{
	struct json_object *w, *argv;
	int64_t v;

	if (!json_object_object_get_ex(root, "workload", &w) ||
	    !json_object_is_type(w, json_type_object))
		return 0;
	m->has_workload = true;
	copy(m->target, sizeof(m->target), get_str(w, "target"));
	copy(m->ended_by, sizeof(m->ended_by), get_str(w, "ended_by"));
	if (strcmp(m->ended_by, "exit") && strcmp(m->ended_by, "deadline") &&
	    strcmp(m->ended_by, "interrupt"))
		m->ended_by[0] = '\0';
	if (get_i64(w, "pid", &v))
		m->pid = (int)v;
	if (get_i64(w, "wall_ns", &v))
		m->wall_ns = (uint64_t)v;
	if (get_i64(w, "started_unix_ns", &v))
		m->started_unix_ns = v;
	{
		struct json_object *b;

		if (json_object_object_get_ex(w, "started", &b))
			m->workload.started = json_object_get_boolean(b);
	}
	if (get_i64(w, "exit_code", &v)) {
		m->workload.exited = true;
		m->workload.exit_code = (int)v;
	}
	if (get_i64(w, "signal", &v)) {
		m->workload.exited = true;
		m->workload.signal = (int)v;
		m->workload.exit_code = 128 + (int)v;
	}
	if (json_object_object_get_ex(w, "argv", &argv) &&
	    json_object_is_type(argv, json_type_array)) {
		size_t n = json_object_array_length(argv);

		m->argv = calloc(n + 1, sizeof(*m->argv));
		if (!m->argv)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++) {
			const char *s = json_object_get_string(json_object_array_get_idx(argv, i));

			m->argv[i] = strdup(s ? s : "");
			if (!m->argv[i])
				return -ENOMEM;
		}
	}
	return 0;
}

/*
 * Whether root is an offcpu summary of the schema this offcpu reads: 0 (the
 * version in *v), -EINVAL (not a summary) or -EPROTO (another or no version).
 */
static int check_summary(struct json_object *root, int64_t *v, char *why, size_t why_len)
{
	if (!json_object_is_type(root, json_type_object) || !get_str(root, "kind") ||
	    strcmp(get_str(root, "kind"), "offcpu_time")) {
		if (why)
			snprintf(why, why_len,
				 "not an offcpu summary (no \"kind\": \"offcpu_time\")");
		return -EINVAL;
	}
	/* A version this offcpu does not know may mean anything: refuse it, never guess. */
	if (!get_i64(root, "schema_version", v) || *v != SUMMARY_SCHEMA_VERSION) {
		if (why && get_i64(root, "schema_version", v))
			snprintf(why, why_len,
				 "schema_version %lld is not %d, the one this offcpu reads",
				 (long long)*v, SUMMARY_SCHEMA_VERSION);
		else if (why)
			snprintf(why, why_len, "no schema_version (this offcpu reads %d)",
				 SUMMARY_SCHEMA_VERSION);
		return -EPROTO;
	}
	return 0;
}

int summary_json__read(FILE *in, struct summary_meta *m, char *why, size_t why_len)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *root = NULL;
	enum json_tokener_error jerr = json_tokener_continue;
	char buf[65536];
	int64_t v;
	size_t n;
	int err = 0;

	memset(m, 0, sizeof(*m));
	if (!tok)
		return -ENOMEM;
	while (!root && (n = fread(buf, 1, sizeof(buf), in)) > 0) {
		root = json_tokener_parse_ex(tok, buf, (int)n);
		jerr = json_tokener_get_error(tok);
		if (jerr != json_tokener_continue && jerr != json_tokener_success)
			break;
	}
	if (!root) {
		if (why)
			snprintf(why, why_len, "not valid JSON at byte %zu: %s",
				 (size_t)json_tokener_get_parse_end(tok),
				 jerr == json_tokener_continue ? "unexpected end of file"
							       : json_tokener_error_desc(jerr));
		err = ferror(in) ? -EIO : -EINVAL;
		goto cleanup;
	}
	err = check_summary(root, &v, why, why_len);
	if (err)
		goto cleanup;
	m->schema_version = (int)v;
	copy(m->tool, sizeof(m->tool), get_str(root, "tool"));
	copy(m->mode, sizeof(m->mode), get_str(root, "mode"));
	copy(m->collector, sizeof(m->collector), get_str(root, "collector"));
	copy(m->state, sizeof(m->state), get_str(root, "state"));
	err = read_integrity(root, &m->integrity);
	if (!err)
		err = read_workload(root, m);
	if (err)
		summary_meta__free(m);
cleanup:
	json_object_put(root);
	json_tokener_free(tok);
	return err;
}

int summary_json__read_path(const char *path, struct summary_meta *m, char *why, size_t why_len)
{
	FILE *f = fopen(path, "r");
	int err;

	if (!f) {
		memset(m, 0, sizeof(*m));
		return -errno;
	}
	err = summary_json__read(f, m, why, why_len);
	fclose(f);
	return err;
}

void summary_meta__free(struct summary_meta *m)
{
	if (!m || !m->argv)
		return;
	for (size_t i = 0; m->argv[i]; i++)
		free(m->argv[i]);
	free(m->argv);
	m->argv = NULL;
}

static bool get_u64(struct json_object *o, const char *key, uint64_t *v)
{
	struct json_object *x;

	if (!json_object_object_get_ex(o, key, &x) || !json_object_is_type(x, json_type_int))
		return false;
	*v = json_object_get_uint64(x);
	return true;
}

static void read_weight(struct json_object *o, struct summary_weight *w)
{
	w->has_runq = get_u64(o, "runq_ns", &w->runq_ns);
	get_u64(o, "off_ns", &w->off_ns);
	get_u64(o, "count", &w->count);
	w->has_blocked = get_u64(o, "blocked_ns", &w->blocked_ns);
}

/* One of top_stacks: its frames interned into p. -EINVAL: no frames, a frame without name or kind.
 */
static int read_stack(struct json_object *st, struct profile *p, struct summary_stack *out)
{
	struct json_object *frames;
	uint32_t *ids = NULL;
	size_t n;
	int id, err = -ENOMEM;

	if (!json_object_object_get_ex(st, "frames", &frames) ||
	    !json_object_is_type(frames, json_type_array))
		return -EINVAL;
	n = json_object_array_length(frames);
	ids = calloc(n ? n : 1, sizeof(*ids));
	if (!ids)
		goto cleanup;
	err = -EINVAL;
	for (size_t i = 0; i < n; i++) {
		struct json_object *f = json_object_array_get_idx(frames, i);
		const char *name = get_str(f, "name"), *kind = get_str(f, "kind");
		enum frame_kind k;

		if (!name || !kind)
			goto cleanup;
		if (frame_kind__from_name(kind, &k))
			k = FRAME_USER;
		id = profile__frame(p, k, name, strlen(name));
		if (id < 0) {
			err = id;
			goto cleanup;
		}
		ids[i] = (uint32_t)id;
	}
	id = profile__stack(p, ids, n);
	if (id < 0) {
		err = id;
		goto cleanup;
	}
	out->stack = (uint32_t)id;
	read_weight(st, &out->w);
	err = 0;
cleanup:
	free(ids);
	return err;
}

static int read_threads(struct json_object *arr, struct summary_weights *w)
{
	size_t n = json_object_array_length(arr);

	w->threads = calloc(n ? n : 1, sizeof(*w->threads));
	if (!w->threads)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct json_object *th = json_object_array_get_idx(arr, i);
		const char *comm = get_str(th, "comm");
		struct summary_thread *t = &w->threads[w->nr_threads++];

		read_weight(th, &t->w);
		t->comm = strdup(comm ? comm : "");
		if (!t->comm)
			return -ENOMEM;
	}
	return 0;
}

static int read_stacks(struct json_object *arr, struct profile *p, struct summary_weights *w,
		       char *why, size_t why_len)
{
	size_t n = json_object_array_length(arr);

	w->has_stacks = true;
	w->stacks = calloc(n ? n : 1, sizeof(*w->stacks));
	if (!w->stacks)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		int err = read_stack(json_object_array_get_idx(arr, i), p, &w->stacks[i]);

		if (err == -EINVAL)
			snprintf(why, why_len, "top_stacks[%zu]: a frame without name or kind", i);
		if (err)
			return err;
		w->nr_stacks++;
	}
	return 0;
}

int summary_json__read_weights(FILE *in, struct profile *p, struct summary_weights *w, char *why,
			       size_t why_len)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *root = NULL, *totals, *arr, *wl;
	char buf[65536];
	int64_t ver;
	size_t n;
	int err = -ENOMEM;

	memset(w, 0, sizeof(*w));
	if (!tok)
		goto cleanup;
	err = -EINVAL;
	do {
		enum json_tokener_error jerr;

		n = fread(buf, 1, sizeof(buf), in);
		root = json_tokener_parse_ex(tok, buf, (int)n);
		jerr = json_tokener_get_error(tok);
		if (jerr != json_tokener_continue && jerr != json_tokener_success) {
			snprintf(why, why_len, "not JSON: %s", json_tokener_error_desc(jerr));
			goto cleanup;
		}
	} while (!root && n == sizeof(buf));
	if (!root) {
		snprintf(why, why_len, "not JSON: the document ends early");
		goto cleanup;
	}
	/* Whatever is wrong, the weights are unusable: one code for the caller. */
	if (check_summary(root, &ver, why, why_len))
		goto cleanup;
	if (!json_object_object_get_ex(root, "totals", &totals) ||
	    !json_object_is_type(totals, json_type_object)) {
		snprintf(why, why_len, "not an offcpu summary: no \"totals\" object");
		goto cleanup;
	}
	read_weight(totals, &w->totals);
	if (json_object_object_get_ex(root, "workload", &wl) &&
	    json_object_is_type(wl, json_type_object))
		get_u64(wl, "wall_ns", &w->wall_ns);
	err = 0;
	if (json_object_object_get_ex(root, "threads", &arr) &&
	    json_object_is_type(arr, json_type_array))
		err = read_threads(arr, w);
	if (!err && json_object_object_get_ex(root, "top_stacks", &arr) &&
	    json_object_is_type(arr, json_type_array))
		err = read_stacks(arr, p, w, why, why_len);
cleanup:
	if (err)
		summary_weights__free(w);
	json_object_put(root);
	if (tok)
		json_tokener_free(tok);
	return err;
}

void summary_weights__free(struct summary_weights *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->nr_threads; i++)
		free(w->threads[i].comm);
	free(w->threads);
	free(w->stacks);
	memset(w, 0, sizeof(*w));
}
