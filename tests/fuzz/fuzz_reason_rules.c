// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reason rules files (analyze/reasons.h), which users write and pass with
 * --reasons. A file parses or fails with "NAME:LINE: why" in one line; the
 * rules of one that parses then classify a few stacks, by the memo and by the
 * plain classifier, to the same reason and detail.
 */
#include <errno.h>

#include "analyze/reasons.h"
#include "fuzz.h"

static const char *const stacks[] = {
	"main;aeMain;aeProcessEvents;epoll_wait;-;do_epoll_wait;schedule",
	"main;PostgresMain;ProcSleep;WaitLatch;epoll_wait;-;do_epoll_wait;schedule",
	"start_thread;worker;__GI___pthread_mutex_lock;pthread_cond_wait@@GLIBC_2.3.2",
	"[unwind: no CFI in libx.so];foo;std::mutex::lock();-;futex_do_wait;schedule",
	"main;[postgres+0x1234];read;-;anon_pipe_read;schedule",
};

/* Intern "user;user;-;kernel;kernel" (root first). */
static int stack_of(struct profile *p, const char *spec)
{
	uint32_t ids[16];
	size_t n = 0;
	int kernel = 0;

	for (const char *s = spec; *s && n < 16;) {
		size_t len = strcspn(s, ";");
		int id;

		if (len == 1 && *s == '-') {
			kernel = 1;
		} else {
			id = profile__frame(p,
					    kernel		       ? FRAME_KERNEL
					    : *s == '[' && s[1] == 'u' ? FRAME_MISSING
								       : FRAME_USER,
					    s, len);
			if (id < 0)
				return -1;
			ids[n++] = (uint32_t)id;
		}
		s += len + (s[len] == ';');
	}
	return profile__stack(p, ids, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *f = fuzz_open(data, size);
	char err[320] = "";
	struct reason_rules *rr = reason_rules__parse(f, "fuzz.rules", err, sizeof(err));
	struct profile *p;
	struct reasons *rs;

	fclose(f);
	if (!rr) {
		FUZZ_CHECK(errno == EINVAL || errno == ENOMEM || errno == EIO);
		if (errno == EINVAL)
			FUZZ_CHECK(!strncmp(err, "fuzz.rules:", 11) && !strchr(err, '\n'));
		return 0;
	}
	FUZZ_CHECK(reason_rules__count(rr) > 0);
	reasons__set_rules(rr);
	p = profile__new();
	rs = p ? reasons__new(p) : NULL;
	FUZZ_CHECK(p && rs);
	for (size_t i = 0; i < sizeof(stacks) / sizeof(stacks[0]); i++) {
		int s = stack_of(p, stacks[i]);
		struct reason_match m;
		const char *detail;
		enum reason r;

		FUZZ_CHECK(s >= 0);
		r = reasons__get_detail(rs, (uint32_t)s, OFFCPU_STATE_SLEEP, &detail);
		reasons__explain(p, (uint32_t)s, OFFCPU_STATE_SLEEP, &m);
		FUZZ_CHECK(r < REASON__COUNT && m.reason == r);
		FUZZ_CHECK(!detail == !m.detail &&
			   (!detail || (detail[0] && !strcmp(detail, m.detail))));
		FUZZ_CHECK(reasons__get(rs, (uint32_t)s, OFFCPU_STATE_PREEMPT) == REASON_RUNQUEUE);
	}
	reasons__free(rs);
	profile__free(p);
	reasons__set_rules(NULL);
	return 0;
}
