// SPDX-License-Identifier: GPL-2.0-only
/* record's live status line: what it says, in how many columns. */
#include "output/status_line.h"
#include "unit.h"

#define S 1000000000ull

TEST(status_line_says_elapsed_left_and_the_counters)
{
	struct status_counters c = {.elapsed_ns = 12400000000ull,
				    .counted = true,
				    .switches = 183220,
				    .threads = 96,
				    .stacks = 1204};
	char buf[256];

	status_line__format(buf, sizeof(buf), 100, 60 * S, &c);
	CHECK_STR(buf,
		  "offcpu: 12.4s, 47.6s left: 183.2k switches, 96 threads, 1204 stacks, 0 lost");
	/* Without -d nothing is left; minutes and hours stay short. */
	c.elapsed_ns = 725 * S;
	c.switches = 4100000;
	status_line__format(buf, sizeof(buf), 100, 0, &c);
	CHECK_STR(buf, "offcpu: 12m05s: 4.1M switches, 96 threads, 1204 stacks, 0 lost");
	/* Left rounds up: 0.05 s after the start of a 2 s capture, 2.0 s are left. */
	c = (struct status_counters){.elapsed_ns = 50000000};
	status_line__format(buf, sizeof(buf), 100, 2 * S, &c);
	CHECK_STR(buf, "offcpu: 0.0s, 2.0s left");
	c.elapsed_ns = 3 * S;
	status_line__format(buf, sizeof(buf), 100, 2 * S, &c);
	CHECK_STR(buf, "offcpu: 3.0s, 0.0s left");
}

/* A line that wraps cannot be redrawn in place: it stops a column short of the edge. */
TEST(status_line_never_reaches_the_last_column)
{
	struct status_counters c = {.elapsed_ns = S, .counted = true, .switches = 1};
	char buf[256];

	for (int w = 1; w < 90; w++) {
		status_line__format(buf, sizeof(buf), w, 10 * S, &c);
		if ((int)strlen(buf) > w - 1) {
			UNIT_FAIL("width %d: %zu columns", w, strlen(buf));
			return;
		}
	}
	status_line__format(buf, sizeof(buf), 20, 10 * S, &c);
	CHECK_STR(buf, "offcpu: 1.0s, 9.0s ");
}

int main(void)
{
	return unit_run();
}
