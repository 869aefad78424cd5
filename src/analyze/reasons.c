// SPDX-License-Identifier: GPL-2.0-only
/*
 * The reason rules. docs/reasons.md explains the order; keep it in step with
 * the table below.
 */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/reasons.h"
#include "model/frame_name.h"
#include "share/reasons.rules.h"

enum match {
	EXACT,	 /* the cleaned name equals the pattern */
	PREFIX,	 /* the cleaned name starts with the pattern */
	SYSCALL, /* a syscall wrapper of that name: __x64_sys_X, __do_sys_X, __se_sys_X, ksys_X, ...
		  */
};

enum tier {
	PLUMBING, /* scheduler and entry frames: say nothing, match nothing */
	SPECIFIC, /* kernel frames that name the wait */
	GENERIC,  /* kernel wait primitives that only hint */
	USER,	  /* user frames (names normalized, see user_name()) */
};

struct rule {
	const char *pattern;
	enum match how;
	enum tier tier;
	enum reason reason;
};

#define K(pat, how, r)                         \
	{                                      \
		pat, how, SPECIFIC, REASON_##r \
	}
#define G(pat, how, r)                        \
	{                                     \
		pat, how, GENERIC, REASON_##r \
	}
#define U(pat, how, r)                     \
	{                                  \
		pat, how, USER, REASON_##r \
	}
#define P(pat, how)                              \
	{                                        \
		pat, how, PLUMBING, REASON_OTHER \
	}

/*
 * The one table. Within a tier a frame takes the first rule it matches, so a
 * narrower pattern sits above a broader one that would also match.
 */
static const struct rule rules[] = {
	/* Scheduler core, wait loops and syscall entry: never the reason. */
	P("__schedule", EXACT),
	P("schedule", EXACT),
	P("schedule_idle", EXACT),
	P("schedule_preempt_disabled", EXACT),
	P("schedule_timeout", EXACT),
	P("schedule_timeout_interruptible", EXACT),
	P("schedule_timeout_killable", EXACT),
	P("schedule_timeout_uninterruptible", EXACT),
	P("wait_woken", EXACT),
	P("__wait_on_bit", EXACT),
	P("out_of_line_wait_on_bit", PREFIX),
	P("wait_for_completion", EXACT),
	P("wait_for_completion_timeout", EXACT),
	P("wait_for_completion_killable", PREFIX),
	P("wait_for_completion_interruptible", PREFIX),
	P("wait_for_common", EXACT),
	P("do_wait_for_common", EXACT),
	P("__wait_for_common", EXACT),
	P("prepare_to_wait", PREFIX),
	P("finish_task_switch", EXACT),
	P("entry_SYSCALL_64", PREFIX),
	P("entry_SYSENTER", PREFIX),
	P("do_syscall_64", EXACT),
	P("x64_sys_call", EXACT),
	P("el0_svc", PREFIX),
	P("invoke_syscall", EXACT),
	P("ret_from_fork", PREFIX),
	P("kthread", EXACT),

	/* Runnable throughout: preempted or yielding, waiting only for a CPU. */
	K("preempt_schedule", PREFIX, RUNQUEUE),
	K("arm64_preempt_schedule_irq", EXACT, RUNQUEUE),
	K("__cond_resched", PREFIX, RUNQUEUE),
	K("_cond_resched", PREFIX, RUNQUEUE),
	K("cond_resched", PREFIX, RUNQUEUE),
	K("dynamic_cond_resched", PREFIX, RUNQUEUE),
	K("irqentry_exit_cond_resched", PREFIX, RUNQUEUE),
	K("raw_irqentry_exit_cond_resched", PREFIX, RUNQUEUE),
	K("irqentry_exit_to_user_mode", EXACT, RUNQUEUE),
	K("irqentry_exit", EXACT, RUNQUEUE),
	K("exit_to_user_mode_loop", EXACT, RUNQUEUE),
	K("exit_to_user_mode_prepare", EXACT, RUNQUEUE),
	K("do_sched_yield", EXACT, RUNQUEUE),
	K("sched_yield", SYSCALL, RUNQUEUE),

	/*
	 * Stopped by a signal or a tracer, frozen: listed so that an outer
	 * exit_to_user_mode_loop does not make them run-queue time.
	 */
	K("do_signal_stop", EXACT, OTHER),
	K("ptrace_stop", PREFIX, OTHER),
	K("do_freezer_trap", EXACT, OTHER),
	K("__refrigerator", EXACT, OTHER),

	/* Locks: futexes and the kernel's sleeping locks. */
	K("futex_", PREFIX, LOCK),
	K("__futex_", PREFIX, LOCK),
	K("do_futex", EXACT, LOCK),
	K("futex", SYSCALL, LOCK),
	K("futex_wait", SYSCALL, LOCK),
	K("futex_waitv", SYSCALL, LOCK),
	K("__mutex_lock", PREFIX, LOCK),
	K("mutex_lock", PREFIX, LOCK),
	K("__ww_mutex_lock", PREFIX, LOCK),
	K("ww_mutex_lock", PREFIX, LOCK),
	K("rt_mutex", PREFIX, LOCK),
	K("__rt_mutex", PREFIX, LOCK),
	K("rwsem_down_", PREFIX, LOCK),
	K("__rwsem_down_", PREFIX, LOCK),
	K("percpu_rwsem_wait", EXACT, LOCK),
	K("__percpu_down_", PREFIX, LOCK),
	K("percpu_down_", PREFIX, LOCK),
	K("down_", PREFIX, LOCK),
	K("down", EXACT, LOCK),
	K("__down", PREFIX, LOCK),
	K("flock_lock_inode_wait", EXACT, LOCK),
	K("locks_lock_inode_wait", EXACT, LOCK),
	K("flock", SYSCALL, LOCK),

	/* Sleeps and timers. */
	K("do_nanosleep", EXACT, SLEEP),
	K("hrtimer_nanosleep", EXACT, SLEEP),
	K("common_nsleep", PREFIX, SLEEP),
	K("alarmtimer_do_nsleep", EXACT, SLEEP),
	K("nanosleep", SYSCALL, SLEEP),
	K("clock_nanosleep", SYSCALL, SLEEP),
	K("msleep", PREFIX, SLEEP),
	K("usleep_range", PREFIX, SLEEP),
	K("ssleep", EXACT, SLEEP),
	K("timerfd_read", PREFIX, SLEEP),
	/* Waiting for a signal is sleeping until something happens. */
	K("pause", SYSCALL, SLEEP),
	K("rt_sigsuspend", SYSCALL, SLEEP),
	K("rt_sigtimedwait", SYSCALL, SLEEP),
	K("sigsuspend", SYSCALL, SLEEP),

	/* Poll, select, epoll (before the socket and pipe rules: the wait is here). */
	K("poll_schedule_timeout", PREFIX, POLL),
	K("do_sys_poll", EXACT, POLL),
	K("do_poll", EXACT, POLL),
	K("do_select", EXACT, POLL),
	K("core_sys_select", EXACT, POLL),
	K("do_pselect", PREFIX, POLL),
	K("do_epoll_wait", EXACT, POLL),
	K("do_epoll_pwait", PREFIX, POLL),
	K("ep_poll", EXACT, POLL),
	K("poll", SYSCALL, POLL),
	K("ppoll", SYSCALL, POLL),
	K("select", SYSCALL, POLL),
	K("pselect6", SYSCALL, POLL),
	K("epoll_wait", SYSCALL, POLL),
	K("epoll_pwait", SYSCALL, POLL),
	K("epoll_pwait2", SYSCALL, POLL),

	/* Pipes and FIFOs. */
	K("pipe_", PREFIX, PIPE),
	K("anon_pipe_", PREFIX, PIPE),
	K("wait_for_partner", EXACT, PIPE),
	K("fifo_open", EXACT, PIPE),

	/* Waiting for a child (or a vfork child to exec). */
	K("do_wait", EXACT, CHILD),
	K("kernel_wait4", EXACT, CHILD),
	K("kernel_waitid", EXACT, CHILD),
	K("wait4", SYSCALL, CHILD),
	K("waitid", SYSCALL, CHILD),
	K("waitpid", SYSCALL, CHILD),
	K("wait_for_vfork_done", EXACT, CHILD),
	/*
	 * ... which recent kernels inline into kernel_clone: a vfork parent
	 * (python's subprocess, posix_spawn's clone3 with CLONE_VFORK) waits
	 * there in wait_for_completion_state. A fork's other waits inside it
	 * (a lock, memory) have a frame of their own, innermost.
	 */
	K("kernel_clone", EXACT, CHILD),

	/* Sockets. */
	K("sk_wait_data", EXACT, NETWORK),
	K("sk_wait_event", EXACT, NETWORK),
	K("sk_stream_wait_", PREFIX, NETWORK),
	K("__skb_wait_for_more_packets", EXACT, NETWORK),
	K("__skb_recv_", PREFIX, NETWORK),
	K("skb_recv_", PREFIX, NETWORK),
	K("tcp_", PREFIX, NETWORK),
	K("inet_", PREFIX, NETWORK),
	K("inet6_", PREFIX, NETWORK),
	K("udp_", PREFIX, NETWORK),
	K("udpv6_", PREFIX, NETWORK),
	K("unix_", PREFIX, NETWORK),
	K("netlink_", PREFIX, NETWORK),
	K("sock_", PREFIX, NETWORK),
	K("lock_sock", PREFIX, NETWORK),
	K("recvfrom", SYSCALL, NETWORK),
	K("recvmsg", SYSCALL, NETWORK),
	K("recvmmsg", SYSCALL, NETWORK),
	K("sendto", SYSCALL, NETWORK),
	K("sendmsg", SYSCALL, NETWORK),
	K("sendmmsg", SYSCALL, NETWORK),
	K("accept", SYSCALL, NETWORK),
	K("accept4", SYSCALL, NETWORK),
	K("connect", SYSCALL, NETWORK),

	/* Page faults, reclaim, compaction, dirty throttling. */
	K("handle_mm_fault", EXACT, MEMORY),
	K("__handle_mm_fault", EXACT, MEMORY),
	K("do_fault", EXACT, MEMORY),
	K("__do_fault", EXACT, MEMORY),
	K("filemap_fault", EXACT, MEMORY),
	K("do_read_fault", EXACT, MEMORY),
	K("do_swap_page", EXACT, MEMORY),
	K("swap_read_folio", EXACT, MEMORY),
	K("swap_readpage", EXACT, MEMORY),
	K("migration_entry_wait", PREFIX, MEMORY),
	K("do_user_addr_fault", EXACT, MEMORY),
	K("exc_page_fault", EXACT, MEMORY),
	K("do_page_fault", EXACT, MEMORY),
	K("__alloc_pages_slowpath", EXACT, MEMORY),
	K("__alloc_pages_direct_", PREFIX, MEMORY),
	K("__alloc_frozen_pages_noprof", EXACT, MEMORY),
	K("try_to_free_pages", EXACT, MEMORY),
	K("try_to_free_mem_cgroup_pages", EXACT, MEMORY),
	K("shrink_", PREFIX, MEMORY),
	K("__perform_reclaim", EXACT, MEMORY),
	K("throttle_direct_reclaim", EXACT, MEMORY),
	K("reclaim_throttle", EXACT, MEMORY),
	K("mem_cgroup_handle_over_high", EXACT, MEMORY),
	K("compact_zone", PREFIX, MEMORY),
	K("balance_dirty_pages", PREFIX, MEMORY),

	/* Disk: block layer, direct I/O, fsync and writeback, journals, page-cache reads. */
	K("blk", PREFIX, DISK_IO),
	K("__blk", PREFIX, DISK_IO),
	K("submit_bio_wait", EXACT, DISK_IO),
	K("__iomap_dio_rw", EXACT, DISK_IO),
	K("iomap_dio_rw", EXACT, DISK_IO),
	K("__blockdev_direct_IO", EXACT, DISK_IO),
	K("do_blockdev_direct_IO", EXACT, DISK_IO),
	K("folio_wait_writeback", PREFIX, DISK_IO),
	K("wait_on_page_writeback", PREFIX, DISK_IO),
	K("__filemap_fdatawait_range", EXACT, DISK_IO),
	K("filemap_fdatawait", PREFIX, DISK_IO),
	K("file_fdatawait_range", EXACT, DISK_IO),
	K("filemap_write_and_wait", PREFIX, DISK_IO),
	K("file_write_and_wait_range", EXACT, DISK_IO),
	K("__wait_on_buffer", EXACT, DISK_IO),
	K("wait_on_buffer", EXACT, DISK_IO),
	K("__sync_dirty_buffer", EXACT, DISK_IO),
	K("sync_dirty_buffer", EXACT, DISK_IO),
	K("fsync_buffers_list", EXACT, DISK_IO),
	K("generic_buffers_fsync", PREFIX, DISK_IO),
	K("vfs_fsync", PREFIX, DISK_IO),
	K("do_fsync", EXACT, DISK_IO),
	K("fsync", SYSCALL, DISK_IO),
	K("fdatasync", SYSCALL, DISK_IO),
	K("sync", SYSCALL, DISK_IO),
	K("syncfs", SYSCALL, DISK_IO),
	K("sync_file_range", SYSCALL, DISK_IO),
	K("msync", SYSCALL, DISK_IO),
	K("jbd2", PREFIX, DISK_IO),
	K("__jbd2", PREFIX, DISK_IO),
	K("ext4_sync_file", EXACT, DISK_IO),
	K("ext4_fsync_", PREFIX, DISK_IO),
	K("xfs_file_fsync", EXACT, DISK_IO),
	K("xfs_log_force", PREFIX, DISK_IO),
	K("xfs_buf_iowait", EXACT, DISK_IO),
	K("btrfs_sync_file", EXACT, DISK_IO),
	K("filemap_read", EXACT, DISK_IO),
	K("filemap_get_pages", EXACT, DISK_IO),
	K("filemap_update_page", EXACT, DISK_IO),
	K("generic_file_buffered_read", EXACT, DISK_IO),
	K("read_pages", EXACT, DISK_IO),
	K("io_getevents", SYSCALL, DISK_IO),

	/* Wait primitives: only when no frame above said more. */
	G("io_schedule", PREFIX, DISK_IO),
	G("bit_wait_io", PREFIX, DISK_IO),
	G("wait_for_completion_io", PREFIX, DISK_IO),
	G("folio_wait_bit", PREFIX, DISK_IO),
	G("wait_on_page_bit", PREFIX, DISK_IO),
	G("__folio_lock", PREFIX, DISK_IO),
	G("__lock_page", PREFIX, DISK_IO),
	G("schedule_hrtimeout", PREFIX, SLEEP),

	/* User frames, for stacks whose kernel part is missing or says nothing. */
	U("lll_lock_wait", PREFIX, LOCK),
	U("pthread_mutex_lock", EXACT, LOCK),
	U("pthread_mutex_timedlock", PREFIX, LOCK),
	U("pthread_mutex_clocklock", PREFIX, LOCK),
	U("pthread_mutex_cond_lock", EXACT, LOCK),
	U("pthread_cond_", PREFIX, LOCK),
	U("pthread_rwlock_", PREFIX, LOCK),
	U("pthread_barrier_wait", EXACT, LOCK),
	U("pthread_join", EXACT, LOCK),
	U("pthread_clockjoin_ex", EXACT, LOCK),
	U("pthread_timedjoin_np", EXACT, LOCK),
	U("futex_", PREFIX, LOCK),
	U("sem_wait", EXACT, LOCK),
	U("sem_timedwait", EXACT, LOCK),
	U("sem_clockwait", EXACT, LOCK),
	U("std::mutex::lock", PREFIX, LOCK),
	U("std::condition_variable::wait", PREFIX, LOCK),
	U("nanosleep", EXACT, SLEEP),
	U("clock_nanosleep", PREFIX, SLEEP),
	U("usleep", EXACT, SLEEP),
	U("sleep", EXACT, SLEEP),
	U("thrd_sleep", EXACT, SLEEP),
	U("pause", EXACT, SLEEP),
	U("sigsuspend", EXACT, SLEEP),
	U("sigwait", PREFIX, SLEEP),
	U("sigtimedwait", EXACT, SLEEP),
	U("poll", EXACT, POLL),
	U("ppoll", PREFIX, POLL),
	U("select", EXACT, POLL),
	U("pselect", PREFIX, POLL),
	U("epoll_wait", EXACT, POLL),
	U("epoll_pwait", PREFIX, POLL),
	U("recv", PREFIX, NETWORK),
	U("send", EXACT, NETWORK),
	U("sendto", EXACT, NETWORK),
	U("sendmsg", EXACT, NETWORK),
	U("sendmmsg", EXACT, NETWORK),
	U("accept", PREFIX, NETWORK),
	U("connect", EXACT, NETWORK),
	U("waitpid", EXACT, CHILD),
	U("wait", EXACT, CHILD),
	U("wait3", EXACT, CHILD),
	U("wait4", EXACT, CHILD),
	U("waitid", EXACT, CHILD),
	U("fsync", EXACT, DISK_IO),
	U("fdatasync", EXACT, DISK_IO),
	U("sync", EXACT, DISK_IO),
	U("syncfs", EXACT, DISK_IO),
	U("sync_file_range", EXACT, DISK_IO),
	U("msync", EXACT, DISK_IO),
	U("io_getevents", EXACT, DISK_IO),
	U("sched_yield", EXACT, RUNQUEUE),
};

#define NR_RULES (sizeof(rules) / sizeof(rules[0]))

static const char *const reason_names[REASON__COUNT] = {
	[REASON_LOCK] = "lock",	      [REASON_SLEEP] = "sleep",	  [REASON_DISK_IO] = "disk_io",
	[REASON_NETWORK] = "network", [REASON_POLL] = "poll",	  [REASON_PIPE] = "pipe",
	[REASON_CHILD] = "child",     [REASON_MEMORY] = "memory", [REASON_RUNQUEUE] = "runqueue",
	[REASON_IDLE] = "idle",	      [REASON_OTHER] = "other",
};

const char *reason__name(enum reason r)
{
	if ((unsigned)r >= REASON__COUNT)
		return "other";
	return reason_names[r];
}

int reason__parse(const char *name, enum reason *r)
{
	for (int i = 0; i < REASON__COUNT; i++) {
		if (!strcmp(name, reason_names[i])) {
			*r = i;
			return 0;
		}
	}
	return -EINVAL;
}

char *reasons__clean_name(enum frame_kind kind, const char *name, char *buf, size_t size)
{
	size_t n = 0, len = strlen(name);
	/*
	 * "[postgres+0x4a3f0]" is an address the symbolizer could not name: the
	 * offset is the only thing that tells two of them apart, so it stays.
	 */
	bool address = len > 2 && name[0] == '[' && name[len - 1] == ']';

	/*
	 * "+0x1a/0x40" (kernel oops style) and "+123" (bpftrace) are offsets,
	 * a '+' anywhere else (C++ operator+) is part of the name.
	 */
	for (const char *s = name; *s && n + 1 < size; s++) {
		if (address) {
			buf[n++] = *s;
			continue;
		}
		if (s[0] == '+' && s[1] >= '0' && s[1] <= '9')
			break;
		if (kind == FRAME_KERNEL && s[0] == '.' && s != name)
			break;
		buf[n++] = *s;
	}
	buf[n] = '\0';
	return buf;
}

/*
 * glibc exports the same entry under several names (__GI___poll, __poll,
 * __libc_read, __GI___lll_lock_wait); the rules use the plain one.
 */
static const char *user_name(const char *name)
{
	for (;;) {
		if (name[0] == '_')
			name++;
		else if (!strncmp(name, "GI_", 3))
			name += 3;
		else if (!strncmp(name, "libc_", 5))
			name += 5;
		else
			return name;
	}
}

/* The X of a syscall wrapper (__x64_sys_X, __do_sys_X, __se_sys_X, __sys_X, ksys_X, sys_X). */
static const char *syscall_name(const char *name)
{
	static const char *const wrappers[] = {
		"__x64_sys_", "__ia32_sys_", "__arm64_sys_", "__riscv_sys_", "__s390x_sys_",
		"__do_sys_",  "__se_sys_",   "__sys_",	     "ksys_",	     "sys_"};

	for (size_t i = 0; i < sizeof(wrappers) / sizeof(wrappers[0]); i++) {
		size_t n = strlen(wrappers[i]);

		if (!strncmp(name, wrappers[i], n))
			return name + n;
	}
	return NULL;
}

static bool rule_matches(const struct rule *r, const char *name, const char *sys)
{
	switch (r->how) {
	case EXACT:
		return !strcmp(name, r->pattern);
	case PREFIX:
		return !strncmp(name, r->pattern, strlen(r->pattern));
	case SYSCALL:
		return sys && !strcmp(sys, r->pattern);
	}
	return false;
}

/* The first rule of the frame's kind that its name matches; NULL if none. */
static const struct rule *frame_rule(enum frame_kind kind, const char *raw)
{
	char buf[256];
	const char *name, *sys;

	if (kind == FRAME_MISSING)
		return NULL;
	name = reasons__clean_name(kind, raw, buf, sizeof(buf));
	if (frame_kind__is_user(kind)) {
		name = user_name(name);
		for (size_t i = 0; i < NR_RULES; i++)
			if (rules[i].tier == USER && rule_matches(&rules[i], name, NULL))
				return &rules[i];
		return NULL;
	}
	sys = syscall_name(name);
	for (size_t i = 0; i < NR_RULES; i++)
		if (rules[i].tier != USER && rule_matches(&rules[i], name, sys))
			return &rules[i];
	return NULL;
}

int reasons__is_plumbing(const char *name)
{
	const struct rule *r = frame_rule(FRAME_KERNEL, name);

	return r && r->tier == PLUMBING;
}

static enum reason_step tier_step(enum tier t)
{
	switch (t) {
	case SPECIFIC:
		return REASON_BY_SPECIFIC;
	case GENERIC:
		return REASON_BY_GENERIC;
	case USER:
		return REASON_BY_USER;
	case PLUMBING:
		break;
	}
	return REASON_BY_NOTHING;
}

enum reason_step reasons__frame(enum frame_kind kind, const char *name, enum reason *r)
{
	const struct rule *rule = frame_rule(kind, name);

	if (!rule || rule->tier == PLUMBING)
		return REASON_BY_NOTHING;
	*r = rule->reason;
	return tier_step(rule->tier);
}

/* ---- rules files ---- */

enum glob_how { GLOB_EXACT, GLOB_PREFIX, GLOB_FNMATCH };

struct glob {
	char *pat;
	size_t len; /* GLOB_PREFIX: the part before the '*' */
	enum glob_how how;
};

struct file_rule {
	enum reason reason;
	char *detail; /* NULL: none */
	struct glob *globs;
	size_t nr_globs;
	int line;
};

struct reason_rules {
	char *name;
	struct file_rule *v;
	size_t n;
	size_t nr_globs; /* of all its rules */
};

const char *const reasons__default_rules_text = reasons_rules;

static struct reason_rules *user_rules, *shipped_rules;
static bool shipped_tried;

void reason_rules__free(struct reason_rules *rr)
{
	if (!rr)
		return;
	for (size_t i = 0; i < rr->n; i++) {
		for (size_t g = 0; g < rr->v[i].nr_globs; g++)
			free(rr->v[i].globs[g].pat);
		free(rr->v[i].globs);
		free(rr->v[i].detail);
	}
	free(rr->v);
	free(rr->name);
	free(rr);
}

size_t reason_rules__count(const struct reason_rules *rr)
{
	return rr ? rr->n : 0;
}

static int glob_init(struct glob *g, const char *pat, size_t len)
{
	size_t wild = strcspn(pat, "*?[\\");

	g->pat = strndup(pat, len);
	if (!g->pat)
		return -ENOMEM;
	if (wild >= len) {
		g->how = GLOB_EXACT;
	} else if (wild == len - 1 && pat[wild] == '*') {
		g->how = GLOB_PREFIX;
		g->len = wild;
	} else {
		g->how = GLOB_FNMATCH;
	}
	return 0;
}

static bool glob_matches(const struct glob *g, const char *name)
{
	switch (g->how) {
	case GLOB_EXACT:
		return !strcmp(name, g->pat);
	case GLOB_PREFIX:
		return !strncmp(name, g->pat, g->len);
	case GLOB_FNMATCH:
		return !fnmatch(g->pat, name, 0);
	}
	return false;
}

static bool detail_char(int c)
{
	return isalnum(c) || c == '_' || c == '-' || c == '.';
}

/* A word of the file, for a message: at most 40 bytes, control bytes as '?'. */
static const char *shown(const char *word, char *buf, size_t size)
{
	size_t n = 0;

	for (; word[n] && n + 1 < size && n < 40; n++)
		buf[n] = (unsigned char)word[n] < 0x20 || word[n] == 0x7f ? '?' : word[n];
	buf[n] = '\0';
	return buf;
}

/* One rule line (comments and blanks already dropped); 0, or -EINVAL with why. */
static int parse_rule(char *line, struct file_rule *r, char *why, size_t whylen)
{
	char *save = NULL, *word = strtok_r(line, " \t", &save), *colon, buf[48];
	size_t cap = 0;

	colon = strchr(word, ':');
	if (colon)
		*colon = '\0';
	if (reason__parse(word, &r->reason)) {
		snprintf(why, whylen,
			 "unknown reason '%s' (lock, sleep, disk_io, network, poll, pipe, child, "
			 "memory, runqueue, idle, other)",
			 shown(word, buf, sizeof(buf)));
		return -EINVAL;
	}
	if (colon) {
		const char *d = colon + 1;
		size_t len = strlen(d), ok = 0;

		while (d[ok] && detail_char((unsigned char)d[ok]))
			ok++;
		if (!len || len > 40 || ok != len) {
			snprintf(why, whylen,
				 "the detail after '%s:' must be 1 to 40 letters, digits, '_', '-' "
				 "or '.'",
				 word);
			return -EINVAL;
		}
		r->detail = strdup(d);
		if (!r->detail)
			return -ENOMEM;
	}
	while ((word = strtok_r(NULL, " \t", &save))) {
		struct glob *grown;

		if (r->nr_globs == cap) {
			cap = cap ? 2 * cap : 4;
			grown = realloc(r->globs, cap * sizeof(*grown));
			if (!grown)
				return -ENOMEM;
			r->globs = grown;
		}
		if (glob_init(&r->globs[r->nr_globs], word, strlen(word)))
			return -ENOMEM;
		r->nr_globs++;
	}
	if (!r->nr_globs) {
		snprintf(why, whylen, "a rule needs at least one frame pattern after '%s'",
			 reason__name(r->reason));
		return -EINVAL;
	}
	return 0;
}

struct reason_rules *reason_rules__parse(FILE *in, const char *name, char *err, size_t errlen)
{
	struct reason_rules *rr = calloc(1, sizeof(*rr));
	char *line = NULL, why[200];
	size_t linecap = 0, cap = 0;
	int nr = 0, e = -ENOMEM;
	ssize_t len;

	if (err && errlen)
		err[0] = '\0';
	if (!rr || !(rr->name = strdup(name ? name : "rules")))
		goto cleanup;
	while ((len = getline(&line, &linecap, in)) >= 0) {
		char *s = line, *hash = strchr(line, '#');
		struct file_rule *r;

		nr++;
		if (hash)
			*hash = '\0';
		while (*s == ' ' || *s == '\t')
			s++;
		len = (ssize_t)strlen(s);
		while (len > 0 && isspace((unsigned char)s[len - 1]))
			s[--len] = '\0';
		if (!*s)
			continue;
		if (rr->n == cap) {
			struct file_rule *grown;

			cap = cap ? 2 * cap : 32;
			grown = realloc(rr->v, cap * sizeof(*grown));
			e = -ENOMEM;
			if (!grown)
				goto cleanup;
			rr->v = grown;
		}
		r = &rr->v[rr->n++];
		*r = (struct file_rule){.line = nr};
		e = parse_rule(s, r, why, sizeof(why));
		if (e == -EINVAL && err)
			snprintf(err, errlen, "%s:%d: %s", rr->name, nr, why);
		if (e)
			goto cleanup;
		rr->nr_globs += r->nr_globs;
	}
	e = 0;
	if (ferror(in)) {
		e = -EIO;
		if (err)
			snprintf(err, errlen, "%s: cannot read: %s", rr->name, strerror(EIO));
	} else if (!rr->n) {
		e = -EINVAL;
		if (err)
			snprintf(err, errlen, "%s:%d: no rules in the file", rr->name, nr);
	}
cleanup:
	free(line);
	if (e) {
		reason_rules__free(rr);
		errno = -e;
		return NULL;
	}
	return rr;
}

void reasons__set_rules(struct reason_rules *rr)
{
	reason_rules__free(user_rules);
	user_rules = rr;
}

static const struct reason_rules *shipped(void)
{
	if (!shipped_tried) {
		/* The build drops the file's SPDX line: a blank one keeps the line numbers. */
		size_t len = strlen(reasons_rules) + 2;
		char *text = malloc(len);
		FILE *f = NULL;

		shipped_tried = true;
		if (text) {
			snprintf(text, len, "\n%s", reasons_rules);
			f = fmemopen(text, len - 1, "r");
		}
		/* A shipped file that does not parse fails test_reasons; here: no rules. */
		shipped_rules = f ? reason_rules__parse(f, "share/reasons.rules", NULL, 0) : NULL;
		if (f)
			fclose(f);
		free(text);
	}
	return shipped_rules;
}

/*
 * Rule matching works on bitsets: per frame, which globs of the rules in force
 * (the user's, then the shipped ones, numbered in that order) its name
 * matches. The memoizing classifier computes a frame's set once.
 */
struct rule_view {
	const struct reason_rules *sets[2];
	size_t base[2]; /* number of the set's first glob */
	size_t words;	/* uint64_t words of a frame's set */
};

static void rule_view_init(struct rule_view *v)
{
	v->sets[0] = user_rules;
	v->sets[1] = shipped();
	v->base[0] = 0;
	v->base[1] = user_rules ? user_rules->nr_globs : 0;
	v->words = (v->base[1] + (v->sets[1] ? v->sets[1]->nr_globs : 0) + 63) / 64;
}

static bool bit(const uint64_t *bits, size_t i)
{
	return bits[i / 64] >> (i % 64) & 1;
}

/* Which globs the frame's name matches, into bits (v->words words). */
static void frame_globs(const struct rule_view *v, const struct profile_frame *f, uint64_t *bits)
{
	char clean[256], plain[256], *at;
	size_t g;

	memset(bits, 0, v->words * sizeof(*bits));
	if (!f || f->kind == FRAME_KERNEL || f->kind == FRAME_MISSING)
		return;
	reasons__clean_name(f->kind, f->name, clean, sizeof(clean));
	/* The plain name: no glibc prefix, no symbol version (clock_nanosleep@@GLIBC_2.17). */
	snprintf(plain, sizeof(plain), "%s", user_name(clean));
	if ((at = strchr(plain, '@')) && at != plain)
		*at = '\0';
	for (size_t s = 0; s < 2; s++) {
		g = v->base[s];
		for (size_t k = 0; v->sets[s] && k < v->sets[s]->n; k++) {
			const struct file_rule *r = &v->sets[s]->v[k];

			for (size_t i = 0; i < r->nr_globs; i++, g++)
				if (glob_matches(&r->globs[i], clean) ||
				    (strcmp(plain, clean) && glob_matches(&r->globs[i], plain)))
					bits[g / 64] |= 1ull << (g % 64);
		}
	}
}

/*
 * Whether the frames (their glob sets: bits_of(ctx, i) for the stack's i-th
 * frame, root first) hold r's globs innermost first; the index of the frame
 * that matched the first glob, or -1.
 */
static int rule_frame(const struct file_rule *r, size_t g0, size_t lo, size_t n,
		      const uint64_t *(*bits_of)(void *ctx, size_t i), void *ctx)
{
	size_t g = 0, i = n;
	int first = -1;

	while (g < r->nr_globs && i-- > lo) {
		if (bit(bits_of(ctx, i), g0 + g)) {
			if (!g)
				first = (int)i;
			g++;
		}
	}
	return g == r->nr_globs ? first : -1;
}

/*
 * The first frame (root first) a rule may look at: the one above the
 * innermost signal trampoline, if any. What lies under it is the code the
 * signal interrupted (a select() in a parent's loop, for a child forked in a
 * signal handler), not a caller of the wait above it.
 */
static size_t rules_floor(const struct profile *p, const uint32_t *frames, size_t n)
{
	for (size_t i = n; i-- > 0;) {
		const struct profile_frame *f = profile__frame_at(p, frames[i]);

		if (f && !strcmp(f->name, FRAME_NAME_SIGNAL))
			return i + 1;
	}
	return 0;
}

/* The first rule (user's, then shipped) that the stack's user frames from lo match. */
static void apply_rules(const struct rule_view *v, size_t lo, size_t n,
			const uint64_t *(*bits_of)(void *ctx, size_t i), void *ctx,
			struct reason_match *m)
{
	uint64_t any[8] = {0}, *seen = v->words <= 8 ? any : calloc(v->words, sizeof(*seen));

	if (m->reason == REASON_RUNQUEUE || m->reason == REASON_MEMORY || !n || !v->words)
		goto cleanup;
	if (!seen)
		goto cleanup; /* no refinement: the kernel's reason stands */
	/* The globs some frame matches: a rule with a glob outside them cannot match. */
	for (size_t i = lo; i < n; i++) {
		const uint64_t *b = bits_of(ctx, i);

		for (size_t w = 0; w < v->words; w++)
			seen[w] |= b[w];
	}
	for (size_t s = 0; s < 2; s++) {
		size_t g = v->base[s];

		for (size_t k = 0; v->sets[s] && k < v->sets[s]->n; k++) {
			const struct file_rule *r = &v->sets[s]->v[k];
			bool possible = true;
			int at;

			for (size_t i = 0; i < r->nr_globs && possible; i++)
				possible = bit(seen, g + i);
			at = possible ? rule_frame(r, g, lo, n, bits_of, ctx) : -1;
			g += r->nr_globs;
			if (at < 0)
				continue;
			m->reason = r->reason;
			m->step = REASON_BY_RULE;
			m->frame = at;
			m->pattern = r->globs[0].pat;
			m->detail = r->detail;
			m->file = v->sets[s]->name;
			m->line = r->line;
			goto cleanup;
		}
	}
cleanup:
	if (seen != any)
		free(seen);
}

/* The plain classifier's glob sets: computed for the one stack, in a buffer. */
struct plain_bits {
	uint64_t *bits;
	size_t words;
};

static const uint64_t *plain_bits_of(void *ctx, size_t i)
{
	struct plain_bits *pb = ctx;

	return pb->bits + i * pb->words;
}

static void apply_rules_plain(const struct profile *p, const uint32_t *frames, size_t n,
			      struct reason_match *m)
{
	struct rule_view v;
	struct plain_bits pb;

	if (m->reason == REASON_RUNQUEUE || m->reason == REASON_MEMORY || !n)
		return;
	rule_view_init(&v);
	if (!v.words)
		return;
	pb.words = v.words;
	pb.bits = malloc(n * v.words * sizeof(*pb.bits));
	if (!pb.bits)
		return;
	for (size_t i = 0; i < n; i++)
		frame_globs(&v, profile__frame_at(p, frames[i]), pb.bits + i * v.words);
	apply_rules(&v, rules_floor(p, frames, n), n, plain_bits_of, &pb, m);
	free(pb.bits);
}

/*
 * Steps 2-5 of reasons.h over a stack's frames whose built-in rules are given
 * by rule_of(i), so the memoizing and the plain classifiers share one walk;
 * the callers apply the state before and the rules files after.
 */
static void decide_frames(const struct profile *p, uint32_t stack,
			  const struct rule *(*rule_of)(void *ctx, uint32_t frame), void *ctx,
			  struct reason_match *m)
{
	static const enum tier passes[] = {SPECIFIC, GENERIC, USER};
	const uint32_t *frames;
	size_t n = 0;

	*m = (struct reason_match){.reason = REASON_OTHER, .step = REASON_BY_NOTHING, .frame = -1};
	frames = profile__stack_at(p, stack, &n);
	if (!frames)
		return;
	for (size_t t = 0; t < sizeof(passes) / sizeof(passes[0]); t++) {
		/* Root first: the innermost frame is the last. */
		for (size_t i = n; i-- > 0;) {
			const struct rule *r = rule_of(ctx, frames[i]);

			if (r && r->tier == passes[t]) {
				m->reason = r->reason;
				m->step = tier_step(r->tier);
				m->frame = (int)i;
				m->pattern = r->pattern;
				return;
			}
		}
	}
}

/* State R is run-queue time and state O other, whatever the stack says. */
static bool by_state(enum offcpu_state st, struct reason_match *m)
{
	if (st != OFFCPU_STATE_PREEMPT && st != OFFCPU_STATE_OTHER)
		return false;
	*m = (struct reason_match){
		.reason = st == OFFCPU_STATE_PREEMPT ? REASON_RUNQUEUE : REASON_OTHER,
		.step = REASON_BY_STATE,
		.frame = -1,
	};
	return true;
}

static const struct rule *plain_rule(void *ctx, uint32_t frame)
{
	const struct profile_frame *f = profile__frame_at(ctx, frame);

	return f ? frame_rule(f->kind, f->name) : NULL;
}

void reasons__explain(const struct profile *p, uint32_t stack, enum offcpu_state st,
		      struct reason_match *m)
{
	const uint32_t *frames;
	size_t n = 0;

	if (by_state(st, m))
		return;
	decide_frames(p, stack, plain_rule, (void *)p, m);
	frames = profile__stack_at(p, stack, &n);
	if (frames)
		apply_rules_plain(p, frames, n, m);
}

enum reason reasons__classify(const struct profile *p, uint32_t stack, enum offcpu_state st)
{
	struct reason_match m;

	reasons__explain(p, stack, st, &m);
	return m.reason;
}

/*
 * Memo: per frame, the index of its rule + 2 (0 = not looked up, 1 = no rule);
 * per stack, what its frames decided.
 */
struct stack_memo {
	const char *detail;
	uint8_t reason;
	bool known;
};

struct reasons {
	const struct profile *p;
	uint16_t *frame_rule;
	size_t nr_frames;
	struct stack_memo *stack;
	size_t nr_stacks;
	/* Per frame, its glob set (view.words words) once known. */
	struct rule_view view;
	bool have_view;
	uint64_t *glob_bits;
	bool *glob_known;
	size_t nr_glob_frames;
};

struct reasons *reasons__new(const struct profile *p)
{
	struct reasons *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->p = p;
	return r;
}

void reasons__free(struct reasons *r)
{
	if (!r)
		return;
	free(r->frame_rule);
	free(r->stack);
	free(r->glob_bits);
	free(r->glob_known);
	free(r);
}

static const struct rule *memo_rule(void *ctx, uint32_t frame)
{
	struct reasons *r = ctx;
	const struct rule *rule;

	if (frame >= r->nr_frames) {
		size_t n = profile__nr_frames(r->p);
		uint16_t *grown;

		if (frame >= n)
			return NULL;
		grown = realloc(r->frame_rule, n * sizeof(*grown));
		if (!grown)
			return plain_rule((void *)r->p, frame); /* slower, still right */
		memset(grown + r->nr_frames, 0, (n - r->nr_frames) * sizeof(*grown));
		r->frame_rule = grown;
		r->nr_frames = n;
	}
	if (r->frame_rule[frame])
		return r->frame_rule[frame] == 1 ? NULL : &rules[r->frame_rule[frame] - 2];
	rule = plain_rule((void *)r->p, frame);
	r->frame_rule[frame] = rule ? (uint16_t)(rule - rules + 2) : 1;
	return rule;
}

struct memo_frames {
	struct reasons *r;
	const uint32_t *frames;
	uint64_t *scratch; /* when the memo cannot grow */
};

static const uint64_t *memo_bits_of(void *ctx, size_t i)
{
	struct memo_frames *mf = ctx;
	struct reasons *r = mf->r;
	uint32_t frame = mf->frames[i];
	size_t w = r->view.words;

	if (frame >= r->nr_glob_frames) {
		size_t n = profile__nr_frames(r->p);
		uint64_t *bits = frame < n ? realloc(r->glob_bits, n * w * sizeof(*bits)) : NULL;
		bool *known = bits ? realloc(r->glob_known, n * sizeof(*known)) : NULL;

		if (bits)
			r->glob_bits = bits;
		if (!known) {
			frame_globs(&r->view, profile__frame_at(r->p, frame), mf->scratch);
			return mf->scratch; /* slower, still right */
		}
		memset(known + r->nr_glob_frames, 0, (n - r->nr_glob_frames) * sizeof(*known));
		r->glob_known = known;
		r->nr_glob_frames = n;
	}
	if (!r->glob_known[frame]) {
		frame_globs(&r->view, profile__frame_at(r->p, frame), r->glob_bits + frame * w);
		r->glob_known[frame] = true;
	}
	return r->glob_bits + frame * w;
}

static void apply_rules_memo(struct reasons *r, uint32_t stack, struct reason_match *m)
{
	struct memo_frames mf = {.r = r};
	size_t n = 0;

	if (m->reason == REASON_RUNQUEUE || m->reason == REASON_MEMORY)
		return;
	if (!r->have_view) {
		rule_view_init(&r->view);
		r->have_view = true;
	}
	mf.frames = profile__stack_at(r->p, stack, &n);
	if (!mf.frames || !n || !r->view.words)
		return;
	mf.scratch = malloc(r->view.words * sizeof(*mf.scratch));
	if (!mf.scratch)
		return;
	apply_rules(&r->view, rules_floor(r->p, mf.frames, n), n, memo_bits_of, &mf, m);
	free(mf.scratch);
}

enum reason reasons__get_detail(struct reasons *r, uint32_t stack, enum offcpu_state st,
				const char **detail)
{
	struct reason_match m;

	*detail = NULL;
	if (by_state(st, &m))
		return m.reason;
	if (stack >= r->nr_stacks) {
		size_t n = profile__nr_stacks(r->p);
		struct stack_memo *grown = stack < n ? realloc(r->stack, n * sizeof(*grown)) : NULL;

		if (!grown) {
			decide_frames(r->p, stack, memo_rule, r, &m);
			apply_rules_memo(r, stack, &m);
			*detail = m.detail;
			return m.reason;
		}
		memset(grown + r->nr_stacks, 0, (n - r->nr_stacks) * sizeof(*grown));
		r->stack = grown;
		r->nr_stacks = n;
	}
	if (!r->stack[stack].known) {
		decide_frames(r->p, stack, memo_rule, r, &m);
		apply_rules_memo(r, stack, &m);
		r->stack[stack] = (struct stack_memo){
			.detail = m.detail, .reason = (uint8_t)m.reason, .known = true};
	}
	*detail = r->stack[stack].detail;
	return (enum reason)r->stack[stack].reason;
}

enum reason reasons__get(struct reasons *r, uint32_t stack, enum offcpu_state st)
{
	const char *detail;

	return reasons__get_detail(r, stack, st, &detail);
}

static int cmp_detail_sum(const void *a, const void *b)
{
	const struct reason_detail_sum *x = a, *y = b;

	if (x->reason != y->reason)
		return x->reason < y->reason ? -1 : 1;
	if (x->blocked_ns != y->blocked_ns)
		return x->blocked_ns > y->blocked_ns ? -1 : 1;
	return strcmp(x->detail, y->detail);
}

int reasons__detail_sums(const struct profile *p, struct reason_detail_sum **out, size_t *n)
{
	struct reasons *rs = reasons__new(p);
	struct reason_detail_sum *v = NULL;
	bool runq_known = profile__runq_known(p);
	size_t nr = 0, cap = 0;
	int err = -ENOMEM;

	*out = NULL;
	*n = 0;
	if (!rs)
		return -ENOMEM;
	for (size_t i = 0; i < profile__nr_rows(p); i++) {
		const struct profile_row *row = profile__row_at(p, i);
		const char *detail;
		enum reason r = reasons__get_detail(rs, row->stack, row->state, &detail);
		uint64_t rq = runq_known ? row->w.runq_ns : 0;
		size_t k;

		if (!detail || r == REASON_RUNQUEUE)
			continue;
		/* Details come from rules: pointers of one rule set, and few of them. */
		for (k = 0; k < nr; k++)
			if (v[k].reason == r &&
			    (v[k].detail == detail || !strcmp(v[k].detail, detail)))
				break;
		if (k == nr) {
			if (nr == cap) {
				struct reason_detail_sum *grown;

				cap = cap ? 2 * cap : 16;
				grown = realloc(v, cap * sizeof(*grown));
				if (!grown)
					goto cleanup;
				v = grown;
			}
			v[nr++] = (struct reason_detail_sum){.reason = r, .detail = detail};
		}
		v[k].blocked_ns += row->w.off_ns - (rq < row->w.off_ns ? rq : row->w.off_ns);
		v[k].count += row->w.count;
	}
	if (nr)
		qsort(v, nr, sizeof(*v), cmp_detail_sum);
	*out = v;
	*n = nr;
	v = NULL;
	err = 0;
cleanup:
	free(v);
	reasons__free(rs);
	return err;
}
