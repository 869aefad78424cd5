// SPDX-License-Identifier: GPL-2.0-only
/* Whether a process's mappings may have changed: see mmstamp.h. */
#include "collect/mmstamp.h"

#include <fcntl.h>
#include <inttypes.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct mmstamp {
	uint64_t starttime, vsize, startcode, startstack;
};

/* Fields 22, 23, 26 and 28 of /proc/PID/stat; 0 or -1. */
static int stamp_read(const char *root, uint32_t tgid, struct mmstamp *st)
{
	char path[64], buf[1024];
	const char *p;
	uint64_t v[27];
	ssize_t len;
	int fd, i;

	snprintf(path, sizeof(path), "%s/%" PRIu32 "/stat", root ? root : "/proc", tgid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return -1;
	buf[len] = '\0';
	/* the command name may hold spaces and parentheses: fields follow the last ')' */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || p[2] == '\0')
		return -1;
	p += 3; /* field 3, the state: one character */
	for (i = 0; i < 26; i++) {
		char *end;

		p = strchr(p, ' ');
		if (!p)
			return -1;
		v[i] = strtoull(p + 1, &end, 10);
		if (end == p + 1)
			return -1;
		p = end;
	}
	/* v[0] is field 4 */
	st->starttime = v[18];
	st->vsize = v[19];
	st->startcode = v[22];
	st->startstack = v[24];
	return 0;
}

bool mmstamps__changed(struct mmstamps *m, uint32_t tgid)
{
	struct mmstamp now, *old;
	bool created;

	if (stamp_read(m->proc_root, tgid, &now))
		return true;
	if (!m->by_tgid.stride && ntable_init(&m->by_tgid, sizeof(uint32_t), sizeof(now)))
		return true;
	old = ntable_get(&m->by_tgid, &tgid, &created);
	if (!old)
		return true;
	if (!created && !memcmp(old, &now, sizeof(now))) {
		m->same++;
		return false;
	}
	*old = now;
	m->changed++;
	return true;
}

void mmstamps__free(struct mmstamps *m)
{
	if (m->by_tgid.stride)
		ntable_free(&m->by_tgid);
	memset(&m->by_tgid, 0, sizeof(m->by_tgid));
}

static bool stamp_alive(const void *key, void *val, void *arg)
{
	(void)val;
	(void)arg;
	return !kill((pid_t) * (const uint32_t *)key, 0) || errno != ESRCH;
}

int mmstamps__forget_gone(struct mmstamps *m)
{
	return m->by_tgid.stride ? ntable_keep(&m->by_tgid, stamp_alive, NULL) : 0;
}
