/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Who the workload runs as. offcpu needs root for BPF; the workload should not
 * get more privilege than the person who asked for it:
 *
 *   offcpu run by root directly          -> the workload runs as root
 *   under sudo (SUDO_UID/SUDO_GID set)   -> as the invoking user, with their
 *                                           groups and HOME, unless --as-root
 *   --user NAME                          -> as NAME (their groups and HOME)
 *
 * The files offcpu writes and the directories it creates belong to that user
 * too (lane/record.c gives them away by fd; nothing that existed changes owner).
 */
#ifndef OFFCPU_COLLECT_IDENTITY_H
#define OFFCPU_COLLECT_IDENTITY_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#define IDENTITY_MAX_GROUPS 256

struct identity {
	bool drop; /* false: run as we are */
	uid_t uid;
	gid_t gid;
	gid_t groups[IDENTITY_MAX_GROUPS];
	int nr_groups;
	char name[64];
	char home[PATH_MAX];
};

/*
 * Decide the identity. user: --user NAME or NULL; as_root: --as-root.
 * Returns 0, -ENOENT (no such user: msg says), -EPERM (dropping needs root).
 */
int identity__resolve(struct identity *id, const char *user, bool as_root, char *msg, size_t len);

/* environ with HOME, USER and LOGNAME set for id (when dropping); free with identity__env_free. */
char **identity__env(const struct identity *id);
void identity__env_free(char **env);

#endif
