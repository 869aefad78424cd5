// SPDX-License-Identifier: GPL-2.0-only
/*
 * The built-in collector while it runs: the counters of the live status line
 * and whether the followed processes are still there. Neither touches the
 * aggregation maps nor the threads map: a status line redrawn a few times a
 * second must cost a syscall or two, whatever the number of threads.
 */
#include <errno.h>
#include <signal.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "collect/native_priv.h"
#include "offcpu.skel.h"

int native__live(struct native *n, struct native_live *out)
{
	struct offcpu_stats st;
	int err;

	if (!n || !out || n->stopped)
		return -EINVAL;
	err = native_read_stats(n, &st);
	if (err)
		return err;
	*out = (struct native_live){
		.switches = st.switches,
		.threads = st.threads_tracked,
		.stacks = n->stacks.n,
		.lost = st.map_full_threads + st.map_full_procs + st.map_full_agg +
			st.unmatched_switch_in + st.unseen_switch_out + st.unmatched_wakeups +
			st.cache_mismatch + st.lost_records,
	};
	return 0;
}

/*
 * The procs map holds the followed processes: the kernel side adds a
 * target's forks and removes a process when its last thread exits. A process
 * that exited before the programs were attached left its entry: it counts
 * only while its pid is alive.
 */
int native__targets_alive(struct native *n)
{
	uint32_t key, next;
	int fd, err;
	void *prev = NULL;

	if (!n || n->stopped)
		return -EINVAL;
	if (n->target != OFFCPU_TARGET_TGIDS)
		return 1;
	fd = bpf_map__fd(n->skel->maps.procs);
	while (!(err = bpf_map_get_next_key(fd, prev, &next))) {
		if (!kill((pid_t)next, 0) || errno == EPERM)
			return 1;
		key = next;
		prev = &key;
	}
	return errno == ENOENT ? 0 : -errno;
}
