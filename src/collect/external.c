// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/collectors.h"
#include "collect/external.h"

extern char **environ;

void external__argv_free(char **argv)
{
	if (!argv)
		return;
	for (size_t i = 0; argv[i]; i++)
		free(argv[i]);
	free(argv);
}

char **external__vec(const char *const *items, size_t n)
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
	const struct collector *c = collector__get(l->collector);
	char pidbuf[16];

	if (!c->argv) {
		errno = EINVAL;
		return NULL;
	}
	snprintf(pidbuf, sizeof(pidbuf), "%d", pid);
	return c->argv(l, tool_path, pidbuf);
}

char **external__envp(const struct lane *l)
{
	const char *const *env = collector__get(l->collector)->env;
	size_t n = 0, extra = 0, k = 0;
	char **envp;

	while (env && env[extra])
		extra++;
	while (environ[n])
		n++;
	envp = calloc(n + extra + 1, sizeof(*envp));
	if (!envp)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		bool overridden = false;

		for (size_t e = 0; e < extra; e++) {
			size_t len = strchr(env[e], '=') - env[e] + 1;

			overridden |= !strncmp(environ[i], env[e], len);
		}
		if (!overridden && !(envp[k++] = strdup(environ[i])))
			goto nomem;
	}
	for (size_t e = 0; e < extra; e++)
		if (!(envp[k++] = strdup(env[e])))
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
