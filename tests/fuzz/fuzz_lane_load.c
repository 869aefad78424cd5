// SPDX-License-Identifier: GPL-2.0-only
/*
 * The one loader every reading subcommand uses (lane__load, lane/lane.h),
 * through the files of a lane directory, with every parser it calls: the
 * lossless profile (and its end-line check), folded stacks, a bpftrace dump
 * and the summary.
 * fuzz-needs: src/lane/lane.c
 *
 * The input is a lane: byte 0 says which files exist (bit 0 the profile, bit 1
 * the capture, bit 2 the capture is a bpftrace dump instead of folded stacks,
 * bit 3 the summary); the rest is their contents in that order, separated by
 * NUL bytes. Besides the parsers' contracts: the load succeeds exactly when
 * it returns a profile; a failure is one line naming a file of the lane (or
 * the lane); warnings are whole lines, each "offcpu CMD: ...".
 */
#include <unistd.h>

#include "fuzz.h"
#include "lane/lane.h"

static char dir[64];
static const char *const files[] = { "offcpu.profile.txt", "offcpu.time.txt", "offcpu.stacks.txt",
				     "offcpu.summary.json" };

/* The lane directory is one per process; leave nothing behind. */
static void remove_lane(void)
{
	char path[128];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		unlink(path);
	}
	rmdir(dir);
}

static void put(const char *name, bool present, const uint8_t **p, const uint8_t *end)
{
	char path[128];
	const uint8_t *nul = memchr(*p, '\0', (size_t)(end - *p));
	size_t len = (size_t)((nul ? nul : end) - *p);
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!present) {
		FUZZ_CHECK(!unlink(path) || errno == ENOENT);
		return;
	}
	f = fopen(path, "w");
	FUZZ_CHECK(f);
	FUZZ_CHECK(fwrite(*p, 1, len, f) == len);
	FUZZ_CHECK(!fclose(f));
	*p = nul ? nul + 1 : end;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data + 1, *end = data + size;
	struct profile *prof = NULL;
	struct lane_load ld;
	struct lane l;
	struct fuzz_out w;
	unsigned which;
	int err;

	if (!size)
		return 0;
	if (!dir[0]) {
		const char *base = access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm";

		snprintf(dir, sizeof(dir), "%s/fuzz_lane.XXXXXX", base);
		FUZZ_CHECK(mkdtemp(dir));
		atexit(remove_lane);
	}
	which = data[0];
	put(files[0], which & 1, &p, end);
	put(files[1], (which & 2) && !(which & 4), &p, end);
	put(files[2], (which & 2) && (which & 4), &p, end);
	put(files[3], which & 8, &p, end);

	err = lane__load(dir, &prof, &l, &ld);
	FUZZ_CHECK(err == 0 || err == -ENOENT || err == -EINVAL || err == -EBADMSG ||
		   err == -EOVERFLOW || err == -EPROTO);
	FUZZ_CHECK(!err == !!prof);
	FUZZ_CHECK(memchr(ld.error, '\0', sizeof(ld.error)));
	FUZZ_CHECK(memchr(ld.summary_problem, '\0', sizeof(ld.summary_problem)));
	if (err) {
		/* One line, starting with the lane or one of its files. */
		FUZZ_CHECK(!strncmp(ld.error, dir, strlen(dir)));
		FUZZ_CHECK(!strchr(ld.error, '\n'));
		FUZZ_CHECK(err != -ENOENT || !(which & 3));
		return 0;
	}
	FUZZ_CHECK(ld.capture_found && ld.from_profile == !!(which & 1));
	FUZZ_CHECK(!strncmp(ld.path, dir, strlen(dir)));
	fuzz_check_stats_unread(&ld.parse, 0, 1);
	fuzz_check_profile(prof);

	fuzz_out_open(&w);
	lane_load__warn(&ld, "fuzz", w.f);
	fuzz_out_close(&w);
	for (const char *s = w.buf; s < w.buf + w.len;) {
		const char *nl = memchr(s, '\n', (size_t)(w.buf + w.len - s));

		FUZZ_CHECK(nl && !strncmp(s, "offcpu fuzz: ", 13));
		s = nl + 1;
	}
	free(w.buf);
	profile__free(prof);
	return 0;
}
