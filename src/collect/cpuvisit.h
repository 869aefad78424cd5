/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A cheap wait for BPF programs in flight: run this thread once on every
 * online CPU. Tracepoint programs run with preemption disabled (not on
 * PREEMPT_RT kernels), so once this thread has been switched in on a CPU,
 * whatever program was running there before the call has finished. It
 * costs tens of microseconds a CPU where an RCU grace period
 * (membarrier(MEMBARRIER_CMD_GLOBAL)) costs 10-20 ms. A CPU held by a
 * real-time task that never sleeps makes the visit wait for the kernel's RT
 * throttling (up to 50 ms of each second go to other tasks by default).
 */
#ifndef OFFCPU_COLLECT_CPUVISIT_H
#define OFFCPU_COLLECT_CPUVISIT_H

/*
 * Visit every CPU listed in online (the text of /sys/devices/system/cpu/online,
 * "0-3,8"), then give the thread its affinity back. 0, or -errno when some
 * CPU could not be visited (a cpuset that excludes it, a hot-unplug, a
 * PREEMPT_RT kernel: -EOPNOTSUPP) and the caller must wait another way.
 */
int cpus__visit(const char *online);

/* The same, with the online CPUs read from sysfs. */
int cpus__visit_online(void);

#endif
