// SPDX-License-Identifier: GPL-2.0-only
/* Run once on every online CPU (cpuvisit.h says why). */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "collect/cpuvisit.h"

/* Whether preemption may stop a BPF program midway (PREEMPT_RT). */
static int preempt_rt(void)
{
	static int rt = -1;
	struct utsname u;

	if (rt < 0)
		rt = !uname(&u) && strstr(u.version, "PREEMPT_RT") != NULL;
	return rt;
}

/* Parse "0-3,8\n" into set: 0, or -EINVAL. */
static int cpulist_parse(const char *s, cpu_set_t *set)
{
	CPU_ZERO(set);
	while (*s && *s != '\n') {
		char *end;
		unsigned long lo = strtoul(s, &end, 10), hi = lo;

		if (end == s)
			return -EINVAL;
		s = end;
		if (*s == '-') {
			hi = strtoul(s + 1, &end, 10);
			if (end == s + 1)
				return -EINVAL;
			s = end;
		}
		if (hi < lo || hi >= CPU_SETSIZE)
			return -EINVAL;
		for (unsigned long c = lo; c <= hi; c++)
			CPU_SET(c, set);
		if (*s == ',')
			s++;
		else if (*s && *s != '\n')
			return -EINVAL;
	}
	return CPU_COUNT(set) ? 0 : -EINVAL;
}

int cpus__visit(const char *online)
{
	cpu_set_t want, old, one;
	int err = 0;

	if (preempt_rt())
		return -EOPNOTSUPP;
	if (cpulist_parse(online, &want))
		return -EINVAL;
	if (sched_getaffinity(0, sizeof(old), &old))
		return -errno;
	for (int c = 0; c < CPU_SETSIZE && !err; c++) {
		if (!CPU_ISSET(c, &want))
			continue;
		CPU_ZERO(&one);
		CPU_SET(c, &one);
		/* Returns once the thread runs there (the migration is synchronous). */
		if (sched_setaffinity(0, sizeof(one), &one))
			err = -errno;
		else if (sched_getcpu() != c)
			err = -EAGAIN;
	}
	if (sched_setaffinity(0, sizeof(old), &old) && !err)
		err = -errno;
	return err;
}

int cpus__visit_online(void)
{
	char buf[4096];
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	int err;

	if (!f)
		return -errno;
	err = fgets(buf, sizeof(buf), f) ? 0 : -EIO;
	fclose(f);
	return err ? err : cpus__visit(buf);
}
