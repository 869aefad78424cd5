// SPDX-License-Identifier: GPL-2.0-only
#include <json-c/json.h>
#include <stdbool.h>
#include <unistd.h>

#include "unit.h"

#include "exports_fixture.h"
#include "output/speedscope.h"

static int write_ss(FILE *out, const void *arg)
{
	struct speedscope_opts o = {.name = "fixture", .exporter = "offcpu test"};

	return speedscope__write(out, arg, &o);
}

static struct json_object *field(struct json_object *o, const char *key, enum json_type type)
{
	struct json_object *v = NULL;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, type))
		return NULL;
	return v;
}

TEST(speedscope_matches_golden)
{
	struct profile *p = fixture_profile();
	const char *why;
	char *text;
	int err;

	CHECK(p);
	text = fixture_capture(write_ss, p, &err, NULL);
	CHECK_INT(err, 0);
	why = fixture_golden("speedscope_small.json", text);
	if (why)
		UNIT_FAIL("%s", why);
	free(text);
	profile__free(p);
}

TEST(speedscope_has_one_sampled_profile_per_thread_heaviest_first)
{
	struct profile *p = fixture_profile();
	struct json_object *root, *frames, *profiles, *shared;
	const char *want_names[] = {"worker pid 100 tid 101", "server pid 100 tid 100"};
	const uint64_t want_end[] = {12300000, 8000000};
	uint64_t all = 0;
	char *text;
	int err;

	CHECK(p);
	text = fixture_capture(write_ss, p, &err, NULL);
	CHECK_INT(err, 0);
	root = json_tokener_parse(text);
	CHECK(root);
	CHECK_STR(json_object_get_string(field(root, "$schema", json_type_string)),
		  "https://www.speedscope.app/file-format-schema.json");
	CHECK_STR(json_object_get_string(field(root, "exporter", json_type_string)), "offcpu test");
	CHECK_STR(json_object_get_string(field(root, "name", json_type_string)), "fixture");
	CHECK_INT(json_object_get_int(field(root, "activeProfileIndex", json_type_int)), 0);
	shared = field(root, "shared", json_type_object);
	CHECK(shared);
	frames = field(shared, "frames", json_type_array);
	CHECK(frames);
	CHECK_INT(json_object_array_length(frames), profile__nr_frames(p));
	for (size_t i = 0; i < profile__nr_frames(p); i++) {
		struct json_object *f = json_object_array_get_idx(frames, i);
		const struct profile_frame *pf = profile__frame_at(p, (uint32_t)i);
		struct json_object *file = field(f, "file", json_type_string);

		CHECK_STR(json_object_get_string(field(f, "name", json_type_string)), pf->name);
		CHECK(pf->kind == FRAME_KERNEL ? file != NULL : file == NULL);
	}
	profiles = field(root, "profiles", json_type_array);
	CHECK(profiles);
	CHECK_INT(json_object_array_length(profiles), 2);
	for (size_t i = 0; i < 2; i++) {
		struct json_object *pr = json_object_array_get_idx(profiles, i);
		struct json_object *samples = field(pr, "samples", json_type_array);
		struct json_object *weights = field(pr, "weights", json_type_array);
		uint64_t sum = 0;

		CHECK_STR(json_object_get_string(field(pr, "type", json_type_string)), "sampled");
		CHECK_STR(json_object_get_string(field(pr, "unit", json_type_string)),
			  "nanoseconds");
		CHECK_STR(json_object_get_string(field(pr, "name", json_type_string)),
			  want_names[i]);
		CHECK_INT(json_object_get_int64(field(pr, "startValue", json_type_int)), 0);
		CHECK_U64(json_object_get_int64(field(pr, "endValue", json_type_int)), want_end[i]);
		CHECK(samples && weights);
		CHECK_INT(json_object_array_length(samples), json_object_array_length(weights));
		for (size_t j = 0; j < json_object_array_length(samples); j++) {
			struct json_object *s = json_object_array_get_idx(samples, j);
			size_t n = json_object_array_length(s);
			int64_t first = json_object_get_int64(json_object_array_get_idx(s, 0));
			int64_t last = json_object_get_int64(json_object_array_get_idx(s, n - 1));

			/* root first: main (or the missing-stack placeholder) ... __schedule */
			CHECK(first >= 0 && (size_t)first < profile__nr_frames(p));
			CHECK(last >= 0 && (size_t)last < profile__nr_frames(p));
			CHECK(!strcmp(profile__frame_at(p, (uint32_t)first)->name, "main") ||
			      !strcmp(profile__frame_at(p, (uint32_t)first)->name,
				      "[Missed User Stack]"));
			CHECK_STR(profile__frame_at(p, (uint32_t)last)->name, "__schedule");
			sum += (uint64_t)json_object_get_int64(
				json_object_array_get_idx(weights, j));
		}
		CHECK_U64(sum, want_end[i]);
		all += sum;
	}
	CHECK_U64(all, FIXTURE_TOTAL_NS);
	json_object_put(root);
	free(text);
	profile__free(p);
}

TEST(speedscope_validates_against_the_published_schema)
{
	struct profile *p = fixture_profile();
	const char *tmp = getenv("TMPDIR");
	char path[512], cmd[1536];
	FILE *f;
	int rc;

	CHECK(p);
	if (system("python3 -c 'import jsonschema' >/dev/null 2>&1"))
		SKIP("python3 with jsonschema is not installed (Debian: python3-jsonschema)");
	snprintf(path, sizeof(path), "%s/offcpu-ss-%d.json", tmp ? tmp : "/tmp", (int)getpid());
	f = fopen(path, "w");
	CHECK(f);
	CHECK_INT(speedscope__write(f, p, NULL), 0);
	CHECK_INT(fclose(f), 0);
	snprintf(cmd, sizeof(cmd),
		 "python3 -c 'import json, sys, jsonschema\n"
		 "s = json.load(open(sys.argv[1])); d = json.load(open(sys.argv[2]))\n"
		 "jsonschema.Draft6Validator(s).validate(d)' "
		 "tests/data/exports/speedscope-file-format-schema.json %s",
		 path);
	rc = system(cmd);
	CHECK_INT(rc, 0);
	/* and the validator does reject a file without weights */
	snprintf(cmd, sizeof(cmd),
		 "python3 -c 'import json, sys, jsonschema\n"
		 "s = json.load(open(sys.argv[1])); d = json.load(open(sys.argv[2]))\n"
		 "del d[\"profiles\"][0][\"weights\"]\n"
		 "jsonschema.Draft6Validator(s).validate(d)' "
		 "tests/data/exports/speedscope-file-format-schema.json %s 2>/dev/null",
		 path);
	rc = system(cmd);
	CHECK(rc != 0);
	unlink(path);
	profile__free(p);
}

TEST(speedscope_counts_only_profile_uses_counts_and_unit_none)
{
	struct profile *p = profile__new();
	struct json_object *root, *pr;
	char *text;
	int err;

	CHECK(p);
	CHECK(fixture_row(p, 0, 0, "app", "main;-;schedule", OFFCPU_STATE_UNKNOWN, 42, 0, 0) >= 0);
	CHECK(fixture_row(p, 0, 0, "app", "main;poll;-;schedule", OFFCPU_STATE_UNKNOWN, 8, 0, 0) >=
	      0);
	text = fixture_capture(write_ss, p, &err, NULL);
	CHECK_INT(err, 0);
	root = json_tokener_parse(text);
	CHECK(root);
	pr = json_object_array_get_idx(field(root, "profiles", json_type_array), 0);
	CHECK(pr);
	CHECK_STR(json_object_get_string(field(pr, "unit", json_type_string)), "none");
	CHECK_STR(json_object_get_string(field(pr, "name", json_type_string)), "app");
	CHECK_INT(json_object_get_int64(field(pr, "endValue", json_type_int)), 50);
	CHECK_INT(json_object_get_int64(
			  json_object_array_get_idx(field(pr, "weights", json_type_array), 1)),
		  8);
	json_object_put(root);
	free(text);
	profile__free(p);
}

TEST(speedscope_escapes_names_and_skips_threads_without_rows)
{
	struct profile *p = profile__new();
	const char *odd = "a\"b\\c\nd\xff";
	struct json_object *root, *frames, *profiles;
	char *text;
	int err;

	CHECK(p);
	CHECK(profile__thread(p, 5, 5, "idle") >= 0);
	CHECK(fixture_row(p, 1, 2, "we\"ird", odd, OFFCPU_STATE_SLEEP, 1, 10, 0) >= 0);
	text = fixture_capture(write_ss, p, &err, NULL);
	CHECK_INT(err, 0);
	root = json_tokener_parse(text);
	CHECK(root);
	frames = field(field(root, "shared", json_type_object), "frames", json_type_array);
	CHECK(frames);
	/* the invalid byte becomes U+FFFD, the rest survives */
	CHECK_STR(json_object_get_string(
			  field(json_object_array_get_idx(frames, 0), "name", json_type_string)),
		  "a\"b\\c\nd\xef\xbf\xbd");
	profiles = field(root, "profiles", json_type_array);
	CHECK_INT(json_object_array_length(profiles), 1);
	CHECK_STR(json_object_get_string(
			  field(json_object_array_get_idx(profiles, 0), "name", json_type_string)),
		  "we\"ird pid 1 tid 2");
	json_object_put(root);
	free(text);
	profile__free(p);
}

/* speedscope has no inline flag: an inlined frame's name says it, and stays its own frame. */
TEST(speedscope_marks_inlined_frames)
{
	struct profile *p = profile__new();
	struct json_object *root, *frames, *samples;
	uint32_t fr[3];
	char *text;
	int err, th, sk;

	CHECK(p);
	fr[0] = profile__frame(p, FRAME_USER, "main", 4);
	fr[1] = profile__frame(p, FRAME_INLINE, "work", 4);
	fr[2] = profile__frame(p, FRAME_USER, "work", 4);
	sk = profile__stack(p, fr, 3);
	th = profile__thread(p, 1, 1, "app");
	CHECK_INT(profile__add(p, th, sk, OFFCPU_STATE_SLEEP,
			       &(struct profile_weight){.count = 1, .off_ns = 10}),
		  0);
	text = fixture_capture(write_ss, p, &err, NULL);
	CHECK_INT(err, 0);
	root = json_tokener_parse(text);
	CHECK(root);
	frames = field(field(root, "shared", json_type_object), "frames", json_type_array);
	CHECK(frames);
	CHECK_INT(json_object_array_length(frames), 3);
	CHECK_STR(json_object_get_string(
			  field(json_object_array_get_idx(frames, 1), "name", json_type_string)),
		  "work (inlined)");
	CHECK_STR(json_object_get_string(
			  field(json_object_array_get_idx(frames, 2), "name", json_type_string)),
		  "work");
	samples = field(json_object_array_get_idx(field(root, "profiles", json_type_array), 0),
			"samples", json_type_array);
	CHECK(samples);
	CHECK_STR(json_object_to_json_string_ext(json_object_array_get_idx(samples, 0),
						 JSON_C_TO_STRING_PLAIN),
		  "[0,1,2]");
	json_object_put(root);
	free(text);
	profile__free(p);
}

int main(void)
{
	return unit_run();
}
