// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "symbolize/procmaps.h"
#include "util/procfs.h"
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

/*
 * Whether pid was on its way out by the end of a read of its mappings (its
 * stat then: st, ok when read): the kernel tears an address space down
 * mapping by mapping while the pid stays, and a read meanwhile shows part of
 * it (tests/e2e/unwind.sh saw a program's own mapping without its libc, in 2
 * runs of 140). Every thread has PF_EXITING before the last one drops the
 * mappings, the group leader included (a leader that exited alone already
 * shows no mappings at all). Gone since: the read may have been partial too.
 * A tree without stat (a test's PROC_ROOT) says nothing.
 */
static bool leaving(const char *proc_root, int pid, const struct procfs_stat *st, bool ok)
{
	char dir[256];

	if (ok)
		return (st->flags & PROCFS_PF_EXITING) || st->state == 'Z' || st->state == 'X';
	snprintf(dir, sizeof(dir), "%s/%d", proc_root ? proc_root : "/proc", pid);
	return access(dir, F_OK) != 0;
}

/*
 * Whether an exec overlapped a read, by the stat before and after it: the
 * old address space is torn down under a reader that opened it (a part of
 * it read), and the new one is built mapping by mapping before the exec's
 * tracepoint (a part of it read, and taken for the old image's by a caller
 * that goes by the time). The exec moves where code and stack start
 * (address space layout randomisation; without it the same program maps at
 * the same places again), and startcode is 0 until the program is mapped.
 */
static bool exec_during(const struct procfs_stat *before, const struct procfs_stat *after)
{
	return !before->startcode || !after->startcode || before->startcode != after->startcode ||
	       before->startstack != after->startstack;
}

int procmaps__read(const char *proc_root, int pid, struct proc_map **maps, size_t *nr)
{
	struct procfs_stat before, after;
	bool have_before, have_after;
	char path[256];
	FILE *in;
	int err;

	snprintf(path, sizeof(path), "%s/%d/maps", proc_root ? proc_root : "/proc", pid);
	have_before = !procfs__stat(proc_root, pid, &before);
	in = fopen(path, "re");
	if (!in)
		return errno == ENOENT ? -ESRCH : -errno;
	err = procmaps__parse(in, maps, nr);
	fclose(in);
	if (err)
		return err;
	have_after = !procfs__stat(proc_root, pid, &after);
	if (leaving(proc_root, pid, &after, have_after))
		err = -ESRCH;
	else if (have_before && have_after && *nr && exec_during(&before, &after))
		err = -EAGAIN;
	if (err) {
		procmaps__free(*maps, *nr);
		*maps = NULL;
		*nr = 0;
	}
	return err;
}

static int open_ro(const char *path)
{
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* fd when it is m's file (same inode; and device, when same_dev); else closed, -ESTALE. */
static int same_file(int fd, const struct proc_map *m, bool same_dev)
{
	struct stat st;

	if (!fstat(fd, &st) && st.st_ino == m->inode &&
	    (!same_dev || (major(st.st_dev) == m->dev_major && minor(st.st_dev) == m->dev_minor)))
		return fd;
	close(fd);
	return -ESTALE;
}

int procmaps__open(const char *proc_root, int pid, const struct proc_map *m,
		   int (*open_fn)(const char *path), char *opened, size_t len)
{
	const char *root = proc_root ? proc_root : "/proc";
	int fd = -ENOENT;

	if (!open_fn)
		open_fn = open_ro;
	/* An overlay reports its own inode for the path: map_files then reaches the file. */
	if (!m->deleted) {
		snprintf(opened, len, "%s/%d/root%s", root, pid, m->path);
		fd = open_fn(opened);
		fd = fd >= 0 ? same_file(fd, m, false) : -errno;
		if (fd >= 0)
			return fd;
	}
	snprintf(opened, len, "%s/%d/map_files/%" PRIx64 "-%" PRIx64, root, pid, m->start, m->end);
	fd = open_fn(opened);
	if (fd >= 0)
		return fd;
	fd = -errno;
	/* Gone (no /proc/PID): only a path that leads to the very file is taken. */
	if (!m->deleted && m->path[0] == '/' && m->inode) {
		int own = open_fn(m->path);

		own = own >= 0 ? same_file(own, m, true) : -errno;
		if (own >= 0) {
			snprintf(opened, len, "%s", m->path);
			return own;
		}
	}
	return fd;
}
