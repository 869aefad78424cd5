// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/identity.h"

extern char **environ;

static int from_passwd(struct identity *id, const struct passwd *pw, gid_t gid)
{
	int n = IDENTITY_MAX_GROUPS;

	id->drop = true;
	id->uid = pw->pw_uid;
	id->gid = gid;
	snprintf(id->name, sizeof(id->name), "%s", pw->pw_name);
	snprintf(id->home, sizeof(id->home), "%s", pw->pw_dir);
	if (getgrouplist(pw->pw_name, gid, id->groups, &n) < 0)
		n = IDENTITY_MAX_GROUPS; /* truncated: keep what fits */
	id->nr_groups = n;
	return 0;
}

int identity__resolve(struct identity *id, const char *user, bool as_root, char *msg, size_t len)
{
	const char *sudo_uid = getenv("SUDO_UID"), *sudo_gid = getenv("SUDO_GID");
	struct passwd *pw;

	memset(id, 0, sizeof(*id));
	if (user) {
		char *end;
		long uid = strtol(user, &end, 10);

		pw = *end || end == user ? getpwnam(user) : getpwuid((uid_t)uid);
		if (!pw) {
			snprintf(msg, len, "no such user '%s'", user);
			return -ENOENT;
		}
		if (geteuid() != 0 && pw->pw_uid != geteuid()) {
			snprintf(msg, len, "running the workload as '%s' needs root", user);
			return -EPERM;
		}
		if (pw->pw_uid == geteuid())
			return 0;
		return from_passwd(id, pw, pw->pw_gid);
	}
	if (as_root || geteuid() != 0 || !sudo_uid || !*sudo_uid)
		return 0;
	pw = getpwuid((uid_t)strtoul(sudo_uid, NULL, 10));
	if (!pw) {
		snprintf(msg, len, "SUDO_UID=%s names no user; use --user or --as-root", sudo_uid);
		return -ENOENT;
	}
	if (pw->pw_uid == 0)
		return 0;
	return from_passwd(id, pw,
			   sudo_gid && *sudo_gid ? (gid_t)strtoul(sudo_gid, NULL, 10) : pw->pw_gid);
}

char **identity__env(const struct identity *id)
{
	static const char *const keys[] = {"HOME=", "USER=", "LOGNAME="};
	size_t n = 0, k = 0;
	char **env;

	while (environ[n])
		n++;
	env = calloc(n + 4, sizeof(*env));
	if (!env)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		bool replaced = false;

		for (size_t j = 0; id->drop && j < 3; j++)
			replaced |= !strncmp(environ[i], keys[j], strlen(keys[j]));
		if (!replaced && !(env[k++] = strdup(environ[i])))
			goto nomem;
	}
	if (id->drop) {
		if (asprintf(&env[k++], "HOME=%s", id->home) < 0 ||
		    asprintf(&env[k++], "USER=%s", id->name) < 0 ||
		    asprintf(&env[k++], "LOGNAME=%s", id->name) < 0) {
			env[k - 1] = NULL;
			goto nomem;
		}
	}
	return env;
nomem:
	identity__env_free(env);
	errno = ENOMEM;
	return NULL;
}

void identity__env_free(char **env)
{
	if (!env)
		return;
	for (size_t i = 0; env[i]; i++)
		free(env[i]);
	free(env);
}
