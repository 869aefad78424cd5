// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>

#include "analyze/reasons.h"
#include "model/profile.h"
#include "parse/bpftrace.h"
#include "parse/folded.h"
#include "unit.h"

/*
 * Intern a stack written root first as "u:frame;...;k:frame" (u user, k kernel,
 * m missing). Returns the stack id or -1.
 */
static int stack_of(struct profile *p, const char *spec)
{
	uint32_t ids[128];
	size_t n = 0;
	const char *s = spec;

	while (*s && n < 128) {
		const char *end = strchr(s, ';');
		size_t len = end ? (size_t)(end - s) : strlen(s);
		enum frame_kind k;
		int id;

		if (frame_kind__from_letter(s[0], &k))
			return -1;
		id = profile__frame(p, k, s + 2, len - 2);

		if (id < 0)
			return -1;
		ids[n++] = (uint32_t)id;
		s += len + (end ? 1 : 0);
	}
	return profile__stack(p, ids, n);
}

static enum reason classify(const char *spec, enum offcpu_state st)
{
	struct profile *p = profile__new();
	int s = p ? stack_of(p, spec) : -1;
	enum reason r = s < 0 ? REASON__COUNT : reasons__classify(p, (uint32_t)s, st);

	profile__free(p);
	return r;
}

/*
 * The heaviest stack of each thread of tests/data/reasons/blockers.bt.txt
 * (offsets dropped), and the reason its way of blocking stands for.
 */
static const struct {
	const char *comm, *stack, *reason;
} real[] = {
	{"rsn_clocksleep",
	 "u:start_thread;u:clock_nanosleep;k:entry_SYSCALL_64_after_hwframe;k:do_syscall_64;k:__"
	 "x64_sys_clock_nanosleep;k:common_nsleep_timens;k:hrtimer_nanosleep;k:do_nanosleep;k:"
	 "schedule;k:__schedule",
	 "sleep"},
	{"rsn_condvar",
	 "u:__futex_abstimed_wait_common;k:entry_SYSCALL_64_after_hwframe;k:do_syscall_64;k:__x64_"
	 "sys_futex;k:do_futex;k:futex_wait;k:__futex_wait;k:futex_do_wait;k:schedule;k:__schedule",
	 "lock"},
	{"rsn_dread",
	 "u:start_thread;u:__libc_pread;k:entry_SYSCALL_64_after_hwframe;k:do_syscall_64;k:__x64_"
	 "sys_pread64;k:vfs_read;k:ext4_file_read_iter;k:iomap_dio_rw;k:__iomap_dio_rw;k:io_"
	 "schedule_timeout;k:schedule_timeout;k:schedule;k:__schedule",
	 "disk_io"},
	{"rsn_epoll",
	 "u:start_thread;u:epoll_wait;k:entry_SYSCALL_64_after_hwframe;k:do_syscall_64;k:__x64_sys_"
	 "epoll_wait;k:do_epoll_wait;k:schedule_hrtimeout_range_clock;k:schedule;k:__schedule",
	 "poll"},
	{"rsn_fault",
	 "u:start_thread;u:w_fault;k:asm_exc_page_fault;k:exc_page_fault;k:handle_mm_fault;k:__"
	 "handle_mm_fault;k:do_fault;k:__do_fault;k:filemap_fault;k:filemap_read_folio;k:folio_"
	 "wait_bit_common;k:io_schedule;k:schedule;k:__schedule",
	 "memory"},
	{"rsn_fsync",
	 "u:start_thread;u:__GI_fsync;k:entry_SYSCALL_64_after_hwframe;k:do_syscall_64;k:__x64_sys_"
	 "fsync;k:do_fsync;k:ext4_sync_file;k:ext4_fsync_nojournal.constprop.0;k:generic_buffers_"
	 "fsync_noflush;k:file_write_and_wait_range;k:__filemap_fdatawait_range;k:folio_wait_"
	 "writeback;k:folio_wait_bit;k:io_schedule;k:schedule;k:__schedule",
	 "disk_io"},
	{"rsn_mutex",
	 "u:start_thread;u:__GI___lll_lock_wait;k:entry_SYSCALL_64_after_hwframe;k:do_syscall_64;k:"
	 "__x64_sys_futex;k:do_futex;k:futex_wait;k:__futex_wait;k:futex_do_wait;k:schedule;k:__"
	 "schedule",
	 "lock"},
	{"rsn_nanosleep",
	 "u:start_thread;u:w_nanosleep;u:clock_nanosleep;k:entry_SYSCALL_64_after_hwframe;k:do_"
	 "syscall_64;k:__x64_sys_clock_nanosleep;k:common_nsleep;k:hrtimer_nanosleep;k:do_"
	 "nanosleep;k:schedule;k:__schedule",
	 "sleep"},
	{"rsn_pipe",
	 "u:start_thread;u:__libc_read;k:entry_SYSCALL_64_after_hwframe;k:do_syscall_64;k:ksys_"
	 "read;k:vfs_read;k:anon_pipe_read;k:schedule;k:__schedule",
	 "pipe"},
	{"rsn_poll",
	 "u:start_thread;u:__GI___poll;k:entry_SYSCALL_64_after_hwframe;k:do_syscall_64;k:__x64_"
	 "sys_poll;k:do_sys_poll;k:poll_schedule_timeout.constprop.0;k:schedule_hrtimeout_range_"
	 "clock;k:schedule;k:__schedule",
	 "poll"},
	{"rsn_select",
	 "u:0x3a98;u:__select;k:entry_SYSCALL_64_after_hwframe;k:do_syscall_64;k:__x64_sys_"
	 "pselect6;k:do_pselect.constprop.0;k:core_sys_select;k:do_select;k:poll_schedule_timeout."
	 "constprop.0;k:schedule_hrtimeout_range_clock;k:schedule;k:__schedule",
	 "poll"},
	{"rsn_spin",
	 "u:start_thread;u:w_spin;k:asm_sysvec_apic_timer_interrupt;k:irqentry_exit_to_user_mode;k:"
	 "schedule;k:__schedule",
	 "runqueue"},
	{"rsn_tcp",
	 "u:__GI___recv;k:entry_SYSCALL_64_after_hwframe;k:do_syscall_64;k:__x64_sys_recvfrom;k:__"
	 "sys_recvfrom;k:sock_recvmsg;k:tcp_recvmsg;k:tcp_recvmsg_locked;k:sk_wait_data;k:wait_"
	 "woken;k:schedule_timeout;k:schedule;k:__schedule",
	 "network"},
	{"rsn_unix",
	 "u:start_thread;u:__libc_read;k:entry_SYSCALL_64_after_hwframe;k:do_syscall_64;k:ksys_"
	 "read;k:vfs_read;k:sock_read_iter;k:sock_recvmsg;k:unix_stream_recvmsg;k:unix_stream_read_"
	 "generic;k:schedule_timeout;k:schedule;k:__schedule",
	 "network"},
	{"rsn_wait",
	 "u:start_thread;u:wait4;k:entry_SYSCALL_64_after_hwframe;k:do_syscall_64;k:__do_sys_wait4;"
	 "k:kernel_wait4;k:do_wait;k:schedule;k:__schedule",
	 "child"},
	/* python's subprocess on 6.18: wait_for_vfork_done inlined into kernel_clone */
	{"python3 (vfork)",
	 "u:do_fork_exec;u:__vfork;k:entry_SYSCALL_64_after_hwframe;k:do_syscall_64;k:__do_sys_"
	 "vfork;k:kernel_clone;k:wait_for_completion_state;k:__wait_for_common;k:schedule_timeout;"
	 "k:schedule;k:__schedule",
	 "child"},
	/* a fork waiting for a lock inside kernel_clone: the lock's frame is innermost */
	{"fork (mmap lock)",
	 "u:__libc_fork;k:entry_SYSCALL_64_after_hwframe;k:do_syscall_64;k:__do_sys_clone;k:kernel_"
	 "clone;k:copy_process;k:dup_mm;k:dup_mmap;k:down_write_killable;k:rwsem_down_write_"
	 "slowpath;k:schedule;k:__schedule",
	 "lock"},
};

TEST(reasons_real_stacks_get_their_way_of_blocking)
{
	for (size_t i = 0; i < sizeof(real) / sizeof(real[0]); i++) {
		enum reason r = classify(real[i].stack, OFFCPU_STATE_UNKNOWN);

		if (strcmp(reason__name(r), real[i].reason)) {
			UNIT_FAIL("%s: %s, expected %s", real[i].comm, reason__name(r),
				  real[i].reason);
			return;
		}
		/* S and D say nothing more than the stack does. */
		CHECK_INT(classify(real[i].stack, OFFCPU_STATE_SLEEP), r);
		CHECK_INT(classify(real[i].stack, OFFCPU_STATE_DISK), r);
	}
}

TEST(reasons_state_r_is_runqueue_whatever_the_stack)
{
	CHECK_INT(classify(real[6].stack, OFFCPU_STATE_PREEMPT), REASON_RUNQUEUE);
	CHECK_INT(classify("", OFFCPU_STATE_PREEMPT), REASON_RUNQUEUE);
	CHECK_INT(classify(real[6].stack, OFFCPU_STATE_OTHER), REASON_OTHER);
}

TEST(reasons_specific_frame_beats_inner_wait_primitive)
{
	/* schedule_hrtimeout_range_clock (sleep) is inside do_epoll_wait (poll). */
	CHECK_INT(classify("k:do_epoll_wait;k:schedule_hrtimeout_range_clock;k:schedule", 0),
		  REASON_POLL);
	/* Alone, the primitive still hints. */
	CHECK_INT(classify("k:schedule_hrtimeout_range_clock;k:schedule", 0), REASON_SLEEP);
	CHECK_INT(classify("k:some_driver_wait;k:io_schedule;k:schedule", 0), REASON_DISK_IO);
	/* A major fault that waits for its read is the fault's time, not a read's. */
	CHECK_INT(classify("k:filemap_fault;k:folio_wait_bit_common;k:io_schedule", 0),
		  REASON_MEMORY);
}

TEST(reasons_innermost_specific_frame_decides)
{
	/* Real: a page fault inside poll() that waits for mmap_lock (fork holds it). */
	CHECK_INT(classify("u:__GI___poll;k:entry_SYSCALL_64_after_hwframe;k:do_syscall_64;"
			   "k:__x64_sys_poll;k:do_sys_poll;k:asm_exc_page_fault;k:exc_page_fault;"
			   "k:lock_mm_and_find_vma;k:down_read_killable;k:rwsem_down_read_slowpath;"
			   "k:schedule_preempt_disabled;k:schedule;k:__schedule",
			   OFFCPU_STATE_UNKNOWN),
		  REASON_LOCK);
	/* Real: preempted in cond_resched while pinning pages for O_DIRECT. */
	CHECK_INT(classify("u:__libc_pwrite;k:__x64_sys_pwrite64;k:__iomap_dio_rw;"
			   "k:iomap_dio_bio_iter;k:bio_iov_iter_get_pages;k:__get_user_pages;"
			   "k:__cond_resched;k:__schedule",
			   OFFCPU_STATE_UNKNOWN),
		  REASON_RUNQUEUE);
	/* Real: preempted on the way back from a syscall. */
	CHECK_INT(classify("u:__GI___write;k:entry_SYSCALL_64_after_hwframe;k:do_syscall_64;"
			   "k:exit_to_user_mode_loop;k:schedule;k:__schedule",
			   OFFCPU_STATE_UNKNOWN),
		  REASON_RUNQUEUE);
	/* A signal stop inside the return-to-user loop is not run-queue time. */
	CHECK_INT(classify("k:do_syscall_64;k:exit_to_user_mode_loop;k:get_signal;"
			   "k:do_signal_stop;k:schedule",
			   OFFCPU_STATE_UNKNOWN),
		  REASON_OTHER);
}

TEST(reasons_user_frames_decide_when_kernel_stack_is_missing)
{
	CHECK_INT(classify("u:main;u:pthread_mutex_lock;u:__GI___lll_lock_wait;m:[Missed Kernel "
			   "Stack]",
			   0),
		  REASON_LOCK);
	CHECK_INT(classify("u:main;u:__GI___poll", 0), REASON_POLL);
	CHECK_INT(classify("u:main;u:__GI___nanosleep", 0), REASON_SLEEP);
	CHECK_INT(classify("u:main;u:__waitpid", 0), REASON_CHILD);
	CHECK_INT(classify("u:main;u:__libc_recv", 0), REASON_NETWORK);
	CHECK_INT(classify("u:main;u:fdatasync", 0), REASON_DISK_IO);
	CHECK_INT(classify("u:main;u:pause", 0), REASON_SLEEP);
	/* Real: blockers.c's main thread in pause(). */
	CHECK_INT(classify("u:main;u:pause;k:entry_SYSCALL_64_after_hwframe;k:do_syscall_64;"
			   "k:__ia32_sys_pause;k:schedule;k:__schedule",
			   0),
		  REASON_SLEEP);
	/* The innermost user frame that matches decides. */
	CHECK_INT(classify("u:__GI___poll;u:pthread_mutex_lock", 0), REASON_LOCK);
	/* Plumbing only: the kernel said nothing, the user frames decide. */
	CHECK_INT(classify("u:epoll_wait;k:do_syscall_64;k:schedule;k:__schedule", 0), REASON_POLL);
	/* read() could be anything. */
	CHECK_INT(classify("u:main;u:__libc_read;k:schedule;k:__schedule", 0), REASON_OTHER);
	CHECK_INT(classify("", 0), REASON_OTHER);
	/* User names do not match kernel rules, nor the other way round. */
	CHECK_INT(classify("u:do_epoll_wait", 0), REASON_OTHER);
	CHECK_INT(classify("k:pthread_mutex_lock", 0), REASON_OTHER);
	/* An inlined user function is a user frame: user rules, not kernel ones. */
	CHECK_INT(classify("u:main;i:pthread_mutex_lock", 0), REASON_LOCK);
	CHECK_INT(classify("u:main;i:do_epoll_wait", 0), REASON_OTHER);
}

TEST(reasons_names_have_offsets_and_suffixes_removed)
{
	char buf[64];

	CHECK_STR(reasons__clean_name(FRAME_KERNEL, "schedule+35", buf, sizeof(buf)), "schedule");
	CHECK_STR(reasons__clean_name(FRAME_KERNEL, "do_select+0x5ec/0x8f0", buf, sizeof(buf)),
		  "do_select");
	CHECK_STR(reasons__clean_name(FRAME_KERNEL, "poll_schedule_timeout.constprop.0", buf,
				      sizeof(buf)),
		  "poll_schedule_timeout");
	CHECK_STR(reasons__clean_name(FRAME_USER, "runtime.futex+12", buf, sizeof(buf)),
		  "runtime.futex");
	CHECK_STR(reasons__clean_name(FRAME_USER, "operator+", buf, sizeof(buf)), "operator+");
	CHECK_STR(reasons__clean_name(FRAME_USER, "abcdefgh", buf, 4), "abc");
	/* An address the symbolizer could not name is shown whole, never "[postgres". */
	CHECK_STR(reasons__clean_name(FRAME_USER, "[postgres+0x4a3f0]", buf, sizeof(buf)),
		  "[postgres+0x4a3f0]");
	CHECK_STR(reasons__clean_name(FRAME_USER, "[redis-check-rdb+0x5a3b0]", buf, sizeof(buf)),
		  "[redis-check-rdb+0x5a3b0]");
	CHECK_STR(reasons__clean_name(FRAME_KERNEL, "[unknown]", buf, sizeof(buf)), "[unknown]");
	CHECK_INT(classify("k:ep_poll+0x2a1/0x310", 0), REASON_POLL);
	CHECK_INT(classify("k:__arm64_sys_futex", 0), REASON_LOCK);
	CHECK_INT(classify("k:ksys_fdatasync", 0), REASON_DISK_IO);
}

TEST(reasons_plumbing_is_recognized)
{
	CHECK(reasons__is_plumbing("__schedule+1576"));
	CHECK(reasons__is_plumbing("schedule_timeout"));
	CHECK(reasons__is_plumbing("entry_SYSCALL_64_after_hwframe"));
	CHECK(!reasons__is_plumbing("futex_do_wait"));
	CHECK(!reasons__is_plumbing("io_schedule"));
}

TEST(reasons_explain_names_the_deciding_frame)
{
	struct profile *p = profile__new();
	struct reason_match m;
	int s;

	CHECK(p);
	s = stack_of(p, real[12].stack); /* rsn_tcp */
	CHECK(s >= 0);
	reasons__explain(p, (uint32_t)s, OFFCPU_STATE_SLEEP, &m);
	CHECK_INT(m.reason, REASON_NETWORK);
	CHECK_INT(m.step, REASON_BY_SPECIFIC);
	CHECK_STR(profile__frame_at(p, profile__stack_at(p, (uint32_t)s, &(size_t){0})[m.frame])
			  ->name,
		  "sk_wait_data");
	CHECK_STR(m.pattern, "sk_wait_data");
	reasons__explain(p, (uint32_t)s, OFFCPU_STATE_PREEMPT, &m);
	CHECK_INT(m.step, REASON_BY_STATE);
	CHECK_INT(m.frame, -1);
	profile__free(p);
}

TEST(reasons_memo_agrees_with_plain_classifier)
{
	struct profile *p = profile__new();
	struct reasons *rs;

	CHECK(p);
	rs = reasons__new(p);
	CHECK(rs);
	for (size_t i = 0; i < sizeof(real) / sizeof(real[0]); i++) {
		/* Frames interned after reasons__new(): the memo must grow. */
		int s = stack_of(p, real[i].stack);

		CHECK(s >= 0);
		for (int st = 0; st < OFFCPU_STATE__COUNT; st++)
			CHECK_INT(reasons__get(rs, (uint32_t)s, st),
				  reasons__classify(p, (uint32_t)s, st));
		/* Asked twice: from the memo now. */
		CHECK_INT(reasons__get(rs, (uint32_t)s, 0), reasons__classify(p, (uint32_t)s, 0));
	}
	reasons__free(rs);
	reasons__free(NULL);
	profile__free(p);
}

/* The way each rsn_ thread of tests/data/reasons/blockers.c blocks. */
static const struct {
	const char *comm, *reason;
} ways[] = {
	{"rsn_mutex", "lock"},	     {"rsn_condvar", "lock"},	  {"rsn_holder", "sleep"},
	{"rsn_nanosleep", "sleep"},  {"rsn_clocksleep", "sleep"}, {"rsn_pipe", "pipe"},
	{"rsn_pipewriter", "sleep"}, {"rsn_poll", "poll"},	  {"rsn_epoll", "poll"},
	{"rsn_select", "poll"},	     {"rsn_fsync", "disk_io"},	  {"rsn_dread", "disk_io"},
	{"rsn_wait", "child"},	     {"rsn_tcp", "network"},	  {"rsn_tcpsend", "sleep"},
	{"rsn_unix", "network"},     {"rsn_unixsend", "sleep"},	  {"rsn_fault", "memory"},
	{"rsn_spin", "runqueue"},
};

/* Each rsn_ thread's time lands on the reason of its way of blocking; none is other. */
static void check_ways(struct profile *p)
{
	uint64_t by[64][REASON__COUNT] = {{0}};
	size_t nth;

	nth = profile__nr_threads(p);
	CHECK(nth > 15 && nth <= 64);
	for (size_t i = 0; i < profile__nr_rows(p); i++) {
		const struct profile_row *r = profile__row_at(p, i);

		by[r->thread][reasons__classify(p, r->stack, r->state)] += r->w.off_ns;
	}
	for (size_t w = 0; w < sizeof(ways) / sizeof(ways[0]); w++) {
		size_t t;
		int best = 0;

		for (t = 0; t < nth; t++)
			if (!strcmp(profile__thread_at(p, (uint32_t)t)->comm, ways[w].comm))
				break;
		if (t == nth) {
			UNIT_FAIL("%s is not in the capture", ways[w].comm);
			return;
		}
		for (int r = 1; r < REASON__COUNT; r++)
			if (by[t][r] > by[t][best])
				best = r;
		if (strcmp(reason__name(best), ways[w].reason)) {
			UNIT_FAIL("%s: most time is %s, expected %s", ways[w].comm,
				  reason__name(best), ways[w].reason);
			return;
		}
		/* Nothing the classifier could not place, in any thread. */
		if (by[t][REASON_OTHER]) {
			UNIT_FAIL("%s: %" PRIu64 " ns classified other", ways[w].comm,
				  by[t][REASON_OTHER]);
			return;
		}
	}
}

TEST(reasons_real_bcc_folded_capture)
{
	FILE *f = fopen("tests/data/reasons/blockers.folded", "r");
	struct folded_opts fo = {0};
	struct parse_stats ps = {0};
	struct profile *p = profile__new();

	CHECK(f && p);
	CHECK_INT(folded__parse(f, p, &fo, &ps), 0);
	fclose(f);
	CHECK_INT(ps.malformed, 0);
	check_ways(p);
	profile__free(p);
}

TEST(reasons_real_bpftrace_capture)
{
	FILE *f = fopen("tests/data/reasons/blockers.bt.txt", "r");
	struct parse_stats ps = {0};
	struct profile *p = profile__new();

	CHECK(f && p);
	CHECK_INT(bpftrace__parse(f, p, &ps), 0);
	fclose(f);
	CHECK_INT(ps.malformed, 0);
	CHECK_INT(ps.records, 77);
	check_ways(p);
	profile__free(p);
}

TEST(reasons_names_round_trip)
{
	enum reason r;

	for (int i = 0; i < REASON__COUNT; i++) {
		CHECK_INT(reason__parse(reason__name(i), &r), 0);
		CHECK_INT(r, i);
	}
	CHECK_STR(reason__name(REASON_DISK_IO), "disk_io");
	CHECK_STR(reason__name(REASON_RUNQUEUE), "runqueue");
	CHECK_INT(reason__parse("disk", &r), -EINVAL);
}

/* ---- rules files ---- */

static struct reason_rules *rules_of(const char *text, char *err, size_t errlen)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	struct reason_rules *rr = f ? reason_rules__parse(f, "my.rules", err, errlen) : NULL;

	if (f)
		fclose(f);
	return rr;
}

/* The reason and detail of a stack (root first, as stack_of) in state st. */
static enum reason classify_detail(const char *spec, enum offcpu_state st, char *detail,
				   size_t size)
{
	struct profile *p = profile__new();
	int s = p ? stack_of(p, spec) : -1;
	struct reasons *rs = p ? reasons__new(p) : NULL;
	enum reason r = REASON__COUNT;
	const char *d = NULL;

	if (s >= 0 && rs) {
		struct reason_match m;

		r = reasons__get_detail(rs, (uint32_t)s, st, &d);
		/* The memo and the plain classifier agree, detail included. */
		reasons__explain(p, (uint32_t)s, st, &m);
		if (m.reason != r || (m.detail != d && (!m.detail || !d || strcmp(m.detail, d))))
			r = REASON__COUNT;
	}
	snprintf(detail, size, "%s", d ? d : "");
	reasons__free(rs);
	profile__free(p);
	return r;
}

#define EPOLL_K                                                                               \
	"k:entry_SYSCALL_64_after_hwframe;k:do_syscall_64;k:__x64_sys_epoll_wait;k:do_epoll_" \
	"wait;k:schedule_hrtimeout_range_clock;k:schedule;k:__schedule"
#define FUTEX_K                                                                                  \
	"k:entry_SYSCALL_64_after_hwframe;k:do_syscall_64;k:__x64_sys_futex;k:do_futex;k:futex_" \
	"wait;k:futex_do_wait;k:schedule;k:__schedule"

TEST(reasons_shipped_rules_parse)
{
	char err[256];
	struct reason_rules *rr = rules_of(reasons__default_rules_text, err, sizeof(err));

	if (!rr)
		UNIT_FAIL("share/reasons.rules: %s", err);
	CHECK(rr);
	CHECK(reason_rules__count(rr) > 40);
	reason_rules__free(rr);
}

TEST(reasons_rules_file_errors_name_the_line)
{
	static const struct {
		const char *text, *err;
	} bad[] = {
		{"lock ProcSleep\nlocks foo\n", "my.rules:2: unknown reason 'locks'"},
		{"# only\n\n  # comments\n", "my.rules:3: no rules in the file"},
		{"lock:\tProcSleep\n", "my.rules:1: the detail after 'lock:' must be"},
		{"lock:a/b ProcSleep\n", "my.rules:1: the detail after 'lock:' must be"},
		{"\nidle:events\n", "my.rules:2: a rule needs at least one frame pattern"},
		{"runqueue:x x\nother:y y\nsleepy z\n", "my.rules:3: unknown reason 'sleepy'"},
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char err[256] = "";
		struct reason_rules *rr = rules_of(bad[i].text, err, sizeof(err));

		if (rr)
			UNIT_FAIL("case %zu parsed", i);
		CHECK(!rr);
		CHECK_INT(errno, EINVAL);
		if (strncmp(err, bad[i].err, strlen(bad[i].err)))
			UNIT_FAIL("case %zu: '%s', want '%s...'", i, err, bad[i].err);
	}
}

TEST(reasons_shipped_rules_refine_postgres_redis_and_glibc)
{
	static const struct {
		const char *stack, *reason, *detail;
	} cases[] = {
		/* A row lock and a client wait both sleep in epoll_wait: poll, says the kernel. */
		{"u:main;u:PostgresMain;u:exec_simple_query;u:ProcSleep;u:WaitLatch;u:"
		 "WaitEventSetWait;u:epoll_wait;" EPOLL_K,
		 "lock", "heavyweight"},
		{"u:main;u:PostgresMain;u:pq_getbyte;u:pq_recvbuf;u:secure_read;u:WaitEventSetWait;"
		 "u:"
		 "epoll_wait;" EPOLL_K,
		 "idle", "client"},
		{"u:PostgresMain;u:LWLockAcquire;u:PGSemaphoreLock;u:do_futex_wait.constprop.0;u:__"
		 "new_"
		 "sem_wait_slow64.constprop.0;" FUTEX_K,
		 "lock", "lwlock"},
		{"u:PostgresMain;u:XLogFlush;u:issue_xlog_fsync;u:pg_fsync;u:__GI_fdatasync;k:do_"
		 "fsync;"
		 "k:schedule",
		 "disk_io", "wal"},
		{"u:main;u:aeMain;u:aeProcessEvents;u:epoll_wait;" EPOLL_K, "idle", "events"},
		{"u:main;u:aeMain;u:aeProcessEvents;u:aeApiPoll;u:epoll_wait;" EPOLL_K, "idle",
		 "events"},
		/* Debian's Redis: aeProcessEvents is static, an address. */
		{"u:main;u:aeMain;u:[redis-server+0x5a1c2];u:epoll_wait;" EPOLL_K, "idle",
		 "events"},
		{"u:start_thread;u:bioProcessBackgroundJobs;u:___pthread_cond_wait;u:__pthread_"
		 "cond_"
		 "wait_common;u:__futex_abstimed_wait_common;" FUTEX_K,
		 "idle", "background"},
		/* jemalloc's background thread, in Debian's build (no symbol) and with them */
		{"u:start_thread;u:[libjemalloc.so.2+0x3a0ea];u:[libjemalloc.so.2+0x39a46];u:"
		 "pthread_cond_timedwait@@GLIBC_2.3.2;u:__futex_abstimed_wait_common;" FUTEX_K,
		 "idle", "background"},
		{"u:start_thread;u:background_thread_entry;u:background_thread_sleep;u:"
		 "pthread_cond_wait@@GLIBC_2.3.2;u:__futex_abstimed_wait_common;" FUTEX_K,
		 "idle", "background"},
		/* Without the loop under it, epoll_wait is only poll. */
		{"u:main;u:epoll_wait;" EPOLL_K, "poll", ""},
		{"u:start_thread;u:worker;u:pthread_mutex_lock;m:[Missed Kernel Stack]", "lock",
		 "mutex"},
		{"u:start_thread;u:worker;u:pthread_cond_wait@@GLIBC_2.3.2;u:__futex_abstimed_wait_"
		 "common;" FUTEX_K,
		 "lock", "condvar"},
		{"u:start_thread;u:worker;u:__new_sem_wait;" FUTEX_K, "lock", "semaphore"},
		/* CPython's threading.Lock: its own rule before the glibc semaphore's */
		{"u:_PyEval_EvalFrameDefault;u:lock_PyThread_acquire_lock.lto_priv.0;u:"
		 "PyThread_acquire_lock_timed;u:__new_sem_wait_slow64.constprop.0;" FUTEX_K,
		 "lock", "python"},
		/* pthread_join jumps to __pthread_clockjoin_ex: only the latter is seen */
		{"u:__libc_start_call_main;u:main;u:__pthread_clockjoin_ex;u:__futex_abstimed_wait_"
		 "common;" FUTEX_K,
		 "lock", "join"},
		/* An inner rule's frame wins over an outer loop only by file order, not depth. */
		{"u:uv_run;u:uv__io_poll;u:epoll_wait;" EPOLL_K, "idle", "events"},
		/*
		 * A child forked in the postmaster's signal handler: the select()
		 * under the trampoline was interrupted, it is not what waits.
		 */
		{"u:main;u:PostmasterMain;u:[postgres+0x3ee64e];u:__select;u:[signal handler "
		 "called];u:[postgres+0x3edd61];u:StartAutoVacLauncher;u:[postgres+0x3e58ce];u:"
		 "WaitLatch;u:WaitEventSetWait;u:epoll_wait;" EPOLL_K,
		 "idle", "background"},
		{"u:main;u:PostmasterMain;u:__select;u:[signal handler called];u:handler;u:epoll_"
		 "wait;" EPOLL_K,
		 "poll", ""},
		/* Kernel-only stacks are untouched; so is synchronize_rcu, "other" everywhere. */
		{"k:synchronize_rcu;k:wait_for_completion;k:__wait_for_common;k:schedule", "other",
		 ""},
	};
	char detail[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum reason r =
			classify_detail(cases[i].stack, OFFCPU_STATE_SLEEP, detail, sizeof(detail));

		if (r >= REASON__COUNT || strcmp(reason__name(r), cases[i].reason) ||
		    strcmp(detail, cases[i].detail))
			UNIT_FAIL("case %zu: %s:%s, want %s:%s", i,
				  r < REASON__COUNT ? reason__name(r) : "?", detail,
				  cases[i].reason, cases[i].detail);
	}
}

TEST(reasons_rules_leave_runqueue_and_memory_alone)
{
	char detail[64];

	/* Preempted (state R) or in preempt frames: the thread was not in its wait. */
	CHECK_INT(classify_detail("u:PostgresMain;u:ProcSleep;u:WaitLatch;u:epoll_wait;" EPOLL_K,
				  OFFCPU_STATE_PREEMPT, detail, sizeof(detail)),
		  REASON_RUNQUEUE);
	CHECK_INT(classify_detail("u:PostgresMain;u:ProcSleep;k:asm_sysvec_apic_timer_interrupt;k:"
				  "irqentry_exit_to_user_mode;k:schedule",
				  OFFCPU_STATE_UNKNOWN, detail, sizeof(detail)),
		  REASON_RUNQUEUE);
	CHECK_STR(detail, "");
	/* A page fault taken inside LWLockAcquire waits for the page, not the lock. */
	CHECK_INT(classify_detail("u:PostgresMain;u:LWLockAcquire;k:asm_exc_page_fault;k:exc_page_"
				  "fault;k:handle_mm_fault;k:filemap_fault;k:io_schedule",
				  OFFCPU_STATE_DISK, detail, sizeof(detail)),
		  REASON_MEMORY);
	CHECK_STR(detail, "");
}

TEST(reasons_user_rules_come_first_globs_innermost_first)
{
	char err[256], detail[64];
	const char *redis = "u:main;u:aeMain;u:aeProcessEvents;u:epoll_wait;" EPOLL_K;
	struct reason_rules *rr;

	/* "B A" (outer first) does not match a stack where A is called from B. */
	rr = rules_of("sleep:wrong-order  aeMain epoll_wait\n", err, sizeof(err));
	CHECK(rr);
	reasons__set_rules(rr);
	CHECK_INT(classify_detail(redis, OFFCPU_STATE_SLEEP, detail, sizeof(detail)), REASON_IDLE);
	CHECK_STR(detail, "events");
	/* Innermost first, and before the shipped rules; the first matching line wins. */
	rr = rules_of("# mine\nnetwork:mine  ep*_wait ae[A-Z]ain\nsleep:second  epoll_wait\n", err,
		      sizeof(err));
	CHECK(rr);
	reasons__set_rules(rr);
	CHECK_INT(classify_detail(redis, OFFCPU_STATE_SLEEP, detail, sizeof(detail)),
		  REASON_NETWORK);
	CHECK_STR(detail, "mine");
	/* A rule with no detail gives the reason alone. */
	rr = rules_of("poll  aeProcessEvents\n", err, sizeof(err));
	CHECK(rr);
	reasons__set_rules(rr);
	CHECK_INT(classify_detail(redis, OFFCPU_STATE_SLEEP, detail, sizeof(detail)), REASON_POLL);
	CHECK_STR(detail, "");
	reasons__set_rules(NULL);
	CHECK_INT(classify_detail(redis, OFFCPU_STATE_SLEEP, detail, sizeof(detail)), REASON_IDLE);
}

TEST(reasons_explain_names_the_rule)
{
	struct profile *p = profile__new();
	int s = stack_of(p, "u:main;u:PostgresMain;u:ProcSleep;u:WaitLatch;u:epoll_wait;" EPOLL_K);
	struct reason_match m;

	CHECK(s >= 0);
	reasons__explain(p, (uint32_t)s, OFFCPU_STATE_SLEEP, &m);
	CHECK_INT(m.step, REASON_BY_RULE);
	CHECK_INT(m.reason, REASON_LOCK);
	CHECK_STR(m.detail, "heavyweight");
	CHECK_STR(m.pattern, "ProcSleep");
	CHECK_STR(m.file, "share/reasons.rules");
	CHECK_INT(m.frame, 2);
	/* The line in the source file (the build drops its SPDX line). */
	CHECK(m.line > 1);
	{
		const char *t = reasons__default_rules_text;
		int line = 2; /* the embedded text starts at the file's line 2 */

		for (const char *q = t; q && *q; q = strchr(q, '\n') ? strchr(q, '\n') + 1 : NULL) {
			if (!strncmp(q, "lock:heavyweight\tProcSleep\n", 27))
				break;
			line++;
		}
		CHECK_INT(m.line, line);
	}
	profile__free(p);
}

TEST(reasons_detail_sums_split_rows_like_the_budget)
{
	struct profile *p = profile__new();
	int pg = stack_of(p, "u:PostgresMain;u:ProcSleep;u:WaitLatch;u:epoll_wait;" EPOLL_K);
	int lw = stack_of(p, "u:PostgresMain;u:LWLockAcquire;u:PGSemaphoreLock;" FUTEX_K);
	int th = profile__thread(p, 1, 1, "postgres");
	struct reason_detail_sum *v = NULL;
	size_t n = 0;

	CHECK(pg >= 0 && lw >= 0 && th >= 0);
	profile__set_runq_known(p, true);
	CHECK_INT(
		profile__add(p, th, pg, OFFCPU_STATE_SLEEP,
			     &(struct profile_weight){.count = 2, .off_ns = 1000, .runq_ns = 100}),
		0);
	CHECK_INT(profile__add(p, th, pg, OFFCPU_STATE_PREEMPT,
			       &(struct profile_weight){.count = 1, .off_ns = 50, .runq_ns = 50}),
		  0);
	CHECK_INT(profile__add(p, th, lw, OFFCPU_STATE_SLEEP,
			       &(struct profile_weight){.count = 4, .off_ns = 3000, .runq_ns = 10}),
		  0);
	CHECK_INT(reasons__detail_sums(p, &v, &n), 0);
	CHECK_INT(n, 2);
	/* Both lock; the heavier first. The preempted row and run-queue parts are not blocked. */
	CHECK_STR(v[0].detail, "lwlock");
	CHECK_U64(v[0].blocked_ns, 2990);
	CHECK_STR(v[1].detail, "heavyweight");
	CHECK_U64(v[1].blocked_ns, 900);
	CHECK_U64(v[1].count, 2);
	free(v);
	profile__free(p);
}

int main(void)
{
	return unit_run();
}
