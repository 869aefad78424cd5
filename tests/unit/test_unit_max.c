// SPDX-License-Identifier: GPL-2.0-only
/*
 * The harness itself: a program registering more tests than UNIT_MAX fails
 * loudly instead of running the first UNIT_MAX and passing. Three tests
 * against a limit of two; their run is captured and checked here.
 */
#include <unistd.h>

#define UNIT_MAX 2
#include "unit.h"

TEST(first)
{
}
TEST(second)
{
}
TEST(third)
{
}

int main(void)
{
	FILE *cap = tmpfile();
	int saved = dup(STDOUT_FILENO), rc;
	char *out = NULL;
	size_t len = 0;

	if (!cap || saved < 0) {
		printf("FAIL unit_max_overflow_fails: cannot capture stdout\n");
		return 1;
	}
	fflush(stdout);
	dup2(fileno(cap), STDOUT_FILENO);
	rc = unit_run();
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	rewind(cap);
	if (getdelim(&out, &len, '\0', cap) < 0) {
		printf("FAIL unit_max_overflow_fails: nothing captured\n");
		return 1;
	}
	fclose(cap);
	if (rc != 1)
		printf("FAIL unit_max_overflow_fails: unit_run() returned %d, expected 1\n", rc);
	else if (!strstr(out, "ok first\n") || !strstr(out, "ok second\n"))
		printf("FAIL unit_max_overflow_fails: the tests within UNIT_MAX did not run: %s\n",
		       out);
	else if (!strstr(out, "FAIL unit_max: 1 tests beyond UNIT_MAX (2)"))
		printf("FAIL unit_max_overflow_fails: no FAIL line for the dropped test: %s\n",
		       out);
	else
		printf("ok unit_max_overflow_fails\n");
	free(out);
	return 0;
}
