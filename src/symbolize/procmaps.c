// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/procmaps.h"
#include "util/vec.h"

static int parse_line(char *line, struct proc_map *m)
{
	static const char deleted[] = " (deleted)";
	size_t dn = sizeof(deleted) - 1, n;
	char perms[5] = "";
	int path_at = -1;

	memset(m, 0, sizeof(*m));
	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %" SCNu64 " %n", &m->start,
		   &m->end, perms, &m->offset, &m->dev_major, &m->dev_minor, &m->inode,
		   &path_at) < 7 ||
	    path_at < 0 || strlen(perms) != 4 || m->end <= m->start)
		return -EINVAL;
	m->readable = perms[0] == 'r';
	m->writable = perms[1] == 'w';
	m->executable = perms[2] == 'x';
	m->shared = perms[3] == 's';
	n = strcspn(line + path_at, "\n");
	line[path_at + n] = '\0';
	if (n >= dn && !strcmp(line + path_at + n - dn, deleted)) {
		m->deleted = true;
		line[path_at + n - dn] = '\0';
	}
	m->path = strdup(line + path_at);
	return m->path ? 0 : -ENOMEM;
}

int procmaps__parse(FILE *in, struct proc_map **maps, size_t *nr)
{
	struct proc_map *out = NULL, m;
	size_t n = 0, cap = 0, len = 0;
	char *line = NULL;
	int err = 0;

	while (getline(&line, &len, in) > 0) {
		err = parse_line(line, &m);
		if (err == -EINVAL) {
			err = 0;
			continue;
		}
		if (err)
			goto cleanup;
		if (vec_reserve(out, cap, n + 1)) {
			free(m.path);
			err = -ENOMEM;
			goto cleanup;
		}
		out[n++] = m;
	}
	if (ferror(in))
		err = -EIO;
cleanup:
	free(line);
	if (err) {
		procmaps__free(out, n);
		return err;
	}
	*maps = out;
	*nr = n;
	return 0;
}

void procmaps__free(struct proc_map *maps, size_t nr)
{
	for (size_t i = 0; maps && i < nr; i++)
		free(maps[i].path);
	free(maps);
}

int procmaps__read(const char *proc_root, int pid, struct proc_map **maps, size_t *nr)
{
	char path[256];
	FILE *in;
	int err;

	snprintf(path, sizeof(path), "%s/%d/maps", proc_root ? proc_root : "/proc", pid);
	in = fopen(path, "re");
	if (!in)
		return errno == ENOENT ? -ESRCH : -errno;
	err = procmaps__parse(in, maps, nr);
	fclose(in);
	return err;
}
