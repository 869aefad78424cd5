// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/external.h"
#include "offcpu_bt.h"

extern char **environ;

void external__argv_free(char **argv)
{
	if (!argv)
		return;
	for (size_t i = 0; argv[i]; i++)
		free(argv[i]);
	free(argv);
}

static char **vec(const char *const *items, size_t n)
{
	char **v = calloc(n + 1, sizeof(*v));

	if (!v)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		v[i] = strdup(items[i]);
		if (!v[i]) {
			external__argv_free(v);
			errno = ENOMEM;
			return NULL;
		}
	}
	return v;
}

char **external__argv(const struct lane *l, const char *tool_path, int pid)
{
	char pidbuf[16];

	snprintf(pidbuf, sizeof(pidbuf), "%d", pid);
	if (l->collector == COLLECTOR_BPFTRACE) {
		const char *argv[] = { tool_path, "-o", l->capture_path, "-e", offcpu_bt_script,
				       pidbuf };

		return vec(argv, sizeof(argv) / sizeof(argv[0]));
	}
	if (l->collector == COLLECTOR_BCC) {
		const char *argv[] = { tool_path, "-f", "-d", "-p", pidbuf };

		return vec(argv, sizeof(argv) / sizeof(argv[0]));
	}
	errno = EINVAL;
	return NULL;
}

/*
 * bpftrace's default of 4096 keys per map would drop stacks of a busy process
 * tree without a word; raise it. BCC sizes its own maps.
 */
static const char *const bpftrace_env[] = { "BPFTRACE_MAP_KEYS_MAX=65536",
					    "BPFTRACE_NO_CPP_DEMANGLE=0" };

char **external__envp(const struct lane *l)
{
	size_t n = 0, extra = l->collector == COLLECTOR_BPFTRACE ? 2 : 0, k = 0;
	char **envp;

	while (environ[n])
		n++;
	envp = calloc(n + extra + 1, sizeof(*envp));
	if (!envp)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		bool overridden = false;

		for (size_t e = 0; e < extra; e++) {
			size_t len = strchr(bpftrace_env[e], '=') - bpftrace_env[e] + 1;

			overridden |= !strncmp(environ[i], bpftrace_env[e], len);
		}
		if (!overridden && !(envp[k++] = strdup(environ[i])))
			goto nomem;
	}
	for (size_t e = 0; e < extra; e++)
		if (!(envp[k++] = strdup(bpftrace_env[e])))
			goto nomem;
	return envp;
nomem:
	external__envp_free(envp);
	errno = ENOMEM;
	return NULL;
}

void external__envp_free(char **envp)
{
	external__argv_free(envp);
}
