// SPDX-License-Identifier: GPL-2.0-only
/* collect/cpuvisit: running once on every CPU, then back to the old affinity. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>

#include "collect/cpuvisit.h"
#include "unit.h"

/* The CPUs this thread may run on, as a list cpus__visit() reads. */
static int allowed_list(char *buf, size_t len, cpu_set_t *set)
{
	size_t used = 0;

	if (sched_getaffinity(0, sizeof(*set), set))
		return -errno;
	buf[0] = 0;
	for (int c = 0; c < CPU_SETSIZE && used + 16 < len; c++)
		if (CPU_ISSET(c, set))
			used += snprintf(buf + used, len - used, "%s%d", used ? "," : "", c);
	return 0;
}

TEST(cpuvisit_visits_and_gives_the_affinity_back)
{
	cpu_set_t before, after;
	char list[1024];

	CHECK_INT(allowed_list(list, sizeof(list), &before), 0);
	CHECK_INT(cpus__visit(list), 0);
	CHECK_INT(sched_getaffinity(0, sizeof(after), &after), 0);
	CHECK(CPU_EQUAL(&before, &after));
}

TEST(cpuvisit_ranges_and_newline)
{
	cpu_set_t before, after;

	/* CPU 0 alone, written as a range: every machine has it online. */
	CHECK_INT(sched_getaffinity(0, sizeof(before), &before), 0);
	if (CPU_ISSET(0, &before))
		CHECK_INT(cpus__visit("0-0\n"), 0);
	CHECK_INT(sched_getaffinity(0, sizeof(after), &after), 0);
	CHECK(CPU_EQUAL(&before, &after));
}

TEST(cpuvisit_bad_lists_refused)
{
	CHECK_INT(cpus__visit(""), -EINVAL);
	CHECK_INT(cpus__visit("x"), -EINVAL);
	CHECK_INT(cpus__visit("3-1"), -EINVAL);
	CHECK_INT(cpus__visit("0-"), -EINVAL);
	CHECK_INT(cpus__visit("0;1"), -EINVAL);
	CHECK_INT(cpus__visit("99999"), -EINVAL);
}

TEST(cpuvisit_a_cpu_not_there_is_an_error)
{
	/* CPU_SETSIZE - 1 exists on no machine this runs on: the caller must wait another way. */
	CHECK(cpus__visit("1023") < 0);
}

int main(void)
{
	return unit_run();
}
