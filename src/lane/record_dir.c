// SPDX-License-Identifier: GPL-2.0-only
/*
 * The lane directory of a record: created by fd, locked for the run, the new
 * capture staged under ".new" names and renamed into place whole, only what
 * offcpu created given to the invoking user; and the --json record.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lane/record_priv.h"
#include "util/atomic_file.h"
#include "util/vec.h"

/*
 * Create dir and its missing parents, walking from / (or .) by directory fd,
 * and leave dir open in *dir_fd. Each directory made here is kept open in
 * made[] (opened O_NOFOLLOW right after mkdirat): only those may later be
 * given to the user, by fd, never a directory that existed before. Existing
 * components are followed as the user named them (symlinks included).
 */
static int mkdir_p(const char *dir, int *dir_fd, int **made, size_t *nr_made)
{
	char buf[PATH_MAX], *save = NULL, *comp;
	int fd, nfd, err = 0;

	if (strlen(dir) >= sizeof(buf))
		return -ENAMETOOLONG;
	strcpy(buf, dir);
	fd = open(*dir == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (comp = strtok_r(buf, "/", &save); comp; comp = strtok_r(NULL, "/", &save)) {
		bool created = false;

		nfd = openat(fd, comp, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (nfd < 0 && errno == ENOENT) {
			created = !mkdirat(fd, comp, 0755);
			if (!created && errno != EEXIST) {
				err = -errno;
				break;
			}
			nfd = openat(fd, comp,
				     (created ? O_RDONLY | O_NOFOLLOW : O_PATH) | O_DIRECTORY |
					     O_CLOEXEC);
		}
		if (nfd < 0) {
			err = -errno;
			break;
		}
		close(fd);
		fd = nfd;
		if (created) {
			int *v = realloc(*made, (*nr_made + 1) * sizeof(**made));
			int kept = dup(fd);

			if (!v || kept < 0) {
				if (kept >= 0)
					close(kept);
				err = -ENOMEM;
				break;
			}
			*made = v;
			(*made)[(*nr_made)++] = kept;
		}
	}
	if (!err) {
		*dir_fd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (*dir_fd < 0)
			err = -errno;
	}
	close(fd);
	return err;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/*
 * Create a staged lane file in the (locked) lane directory: a planted
 * symlink or an old staged file is removed, never followed or truncated.
 */
static int open_out(int dir_fd, const char *path)
{
	int fd;

	if (unlinkat(dir_fd, base_name(path), 0) && errno != ENOENT)
		return -errno;
	fd = openat(dir_fd, base_name(path), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0644);
	return fd < 0 ? -errno : fd;
}

/* The pid holding an flock on the file open in fd, from /proc/locks; 0: unknown. */
static int lock_holder(int fd)
{
	unsigned int maj, min;
	unsigned long ino;
	struct stat st;
	char line[256];
	int pid, found = 0;
	FILE *f;

	if (fstat(fd, &st))
		return 0;
	f = fopen("/proc/locks", "re");
	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*d: FLOCK %*s %*s %d %x:%x:%lu", &pid, &maj, &min, &ino) == 4 &&
		    maj == major(st.st_dev) && min == minor(st.st_dev) && ino == st.st_ino)
			found = pid;
	fclose(f);
	return found;
}

/* Say on stderr why the record failed and keep it for the --json record. */
void rec__fail(struct rec *r, const char *kind, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->fail_msg, sizeof(r->fail_msg), fmt, ap);
	va_end(ap);
	r->fail_kind = kind;
	fprintf(stderr, "offcpu: %s\n", r->fail_msg);
}

/* The staged lane: the same files with ".new" appended, beside them. */
static int plan_staging(struct rec *r)
{
	char *paths[] = {r->st.capture_path, r->st.diagnostics_path, r->st.profile_path,
			 r->st.timeline_path};

	r->st = r->l;
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		size_t len = strlen(paths[i]);

		if (len + sizeof(".new") > PATH_MAX)
			return -ENAMETOOLONG;
		memcpy(paths[i] + len, ".new", sizeof(".new"));
	}
	return 0;
}

/* One record at a time per directory: the second would mix its files with the first's. */
static int lock_dir(struct rec *r)
{
	int pid;

	if (!flock(r->dir_fd, LOCK_EX | LOCK_NB)) {
		r->locked = true;
		return 0;
	}
	if (errno != EWOULDBLOCK) {
		rec__fail(r, "start_failed", "cannot lock %s: %s", r->o->out_dir, strerror(errno));
		return -errno;
	}
	pid = lock_holder(r->dir_fd);
	if (pid > 0)
		rec__fail(r, "directory_busy",
			  "%s is in use by another offcpu record (pid %d); wait for it or "
			  "choose another -o",
			  r->o->out_dir, pid);
	else
		rec__fail(r, "directory_busy",
			  "%s is in use by another offcpu record; wait for it or choose "
			  "another -o",
			  r->o->out_dir);
	return -EBUSY;
}

/*
 * The target must exist before anything is created or truncated: a process
 * or cgroup that is not there is a failed start (125), said in one line.
 */
static int check_target(struct rec *r)
{
	const struct record_opts *o = r->o;
	char why[PATH_MAX + 256];

	if (o->target == TARGET_CGROUP && native__check_cgroup(o->target_arg, why, sizeof(why))) {
		rec__fail(r, "start_failed", "%s; nothing was recorded", why);
		return -ENOENT;
	}
	for (size_t i = 0; o->target == TARGET_PIDS && i < o->nr_pids; i++) {
		if (kill((pid_t)o->pids[i], 0) && errno == ESRCH) {
			rec__fail(r, "start_failed", "-p %d: no such process; nothing was recorded",
				  o->pids[i]);
			return -ESRCH;
		}
	}
	return 0;
}

int rec__prepare(struct rec *r)
{
	struct record_opts *o = r->o;
	char msg[256] = "";
	int err;

	err = identity__resolve(&r->id, o->user, o->as_root, msg, sizeof(msg));
	if (err) {
		fprintf(stderr, "offcpu: %s\n", msg);
		return err;
	}
	err = lane__plan(&r->l, o->out_dir, o->mode, o->tool ? o->tool : "native");
	if (!err)
		err = plan_staging(r);
	if (!err && check_target(r))
		return -ESRCH;
	if (!err)
		err = mkdir_p(o->out_dir, &r->dir_fd, &r->made_fds, &r->nr_made);
	if (err) {
		rec__fail(r, "start_failed", "cannot create output directory %s: %s", o->out_dir,
			  strerror(-err));
		return err;
	}
	err = lock_dir(r);
	if (err)
		return err;
	r->diag_fd = open_out(r->dir_fd, r->st.diagnostics_path);
	r->cap_fd = r->diag_fd < 0 ? r->diag_fd : open_out(r->dir_fd, r->st.capture_path);
	if (r->diag_fd < 0 || r->cap_fd < 0) {
		err = r->diag_fd < 0 ? r->diag_fd : r->cap_fd;
		rec__fail(r, "start_failed", "cannot write in %s: %s", o->out_dir, strerror(-err));
		return err;
	}
	return 0;
}

/* Writes failed with what ferror() cannot tell: a full disk is said as such. */
bool rec__disk_full(const struct rec *r)
{
	struct statvfs sv;

	return !fstatvfs(r->dir_fd, &sv) && (sv.f_bavail == 0 || (sv.f_files && !sv.f_favail));
}

/*
 * Put the staged capture in place. The old summary goes first: from here
 * until the new one is written, a summary would describe the wrong files.
 * Each lane file is the staged one or nothing, so no file of an earlier
 * capture (the other mode's, a profile an external collector does not
 * write, a timeline not asked for) is left for summarize to read.
 */
int rec__commit(struct rec *r)
{
	const char *final[] = {r->l.capture_path, r->l.diagnostics_path, r->l.profile_path,
			       r->l.timeline_path};
	const char *staged[] = {r->st.capture_path, r->st.diagnostics_path, r->st.profile_path,
				r->st.timeline_path};
	const char *other = r->o->mode == LANE_STACKS ? "offcpu.time.txt" : "offcpu.stacks.txt";
	const char *failed = r->l.summary_path;
	int err = 0;

	if (unlinkat(r->dir_fd, base_name(r->l.summary_path), 0) && errno != ENOENT)
		err = -errno;
	for (size_t i = 0; !err && i < sizeof(final) / sizeof(final[0]); i++) {
		failed = final[i];
		if (!renameat(r->dir_fd, base_name(staged[i]), r->dir_fd, base_name(final[i])))
			continue;
		if (errno != ENOENT ||
		    (unlinkat(r->dir_fd, base_name(final[i]), 0) && errno != ENOENT))
			err = -errno;
	}
	r->committed = true;
	if (!err && unlinkat(r->dir_fd, other, 0) && errno != ENOENT) {
		failed = other;
		err = -errno;
	}
	if (err)
		rec__fail(r, "write_failed", "cannot replace %s: %s", failed, strerror(-err));
	return err;
}

/*
 * Under sudo (or --user) the files this record wrote and the directories it
 * created belong to the user; nothing that existed before changes owner.
 * Files are opened O_NOFOLLOW relative to the locked directory and given
 * away by fd only when they are still what offcpu wrote: a regular file of
 * ours with one link (a hard link planted to another file has two).
 */
/*
 * Give the file name (in dir_fd) to the invoking user when it is a regular
 * file offcpu owns with one link: by its fd, opened without following a
 * symlink, never by a path someone could swap in between.
 */
static void give_file(const struct rec *r, int dir_fd, const char *name, const char *shown)
{
	int fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_nlink == 1 && st.st_uid == geteuid() &&
	    fchown(fd, r->id.uid, r->id.gid))
		fprintf(stderr, "offcpu: cannot give %s to uid %u: %s\n", shown,
			(unsigned int)r->id.uid, strerror(errno));
	close(fd);
}

static void give_files_to_user(struct rec *r)
{
	const char *paths[] = {r->l.capture_path, r->l.diagnostics_path, r->l.summary_path,
			       r->l.profile_path, r->l.timeline_path};
	struct stat st;

	if (!r->id.drop || !r->locked)
		return;
	for (size_t i = 0; i < r->nr_made; i++)
		if (!fstat(r->made_fds[i], &st) && st.st_uid == geteuid() &&
		    fchown(r->made_fds[i], r->id.uid, r->id.gid))
			fprintf(stderr, "offcpu: cannot give a directory to uid %u: %s\n",
				(unsigned int)r->id.uid, strerror(errno));
	for (size_t i = 0; r->committed && i < sizeof(paths) / sizeof(paths[0]); i++)
		give_file(r, r->dir_fd, base_name(paths[i]), paths[i]);
}

/* Staged files of a record that did not commit; nothing else is removed. */
static void remove_staged(struct rec *r)
{
	const char *staged[] = {r->st.capture_path, r->st.diagnostics_path, r->st.profile_path,
				r->st.timeline_path};

	if (!r->locked)
		return;
	for (size_t i = 0; i < sizeof(staged) / sizeof(staged[0]); i++)
		unlinkat(r->dir_fd, base_name(staged[i]), 0);
}

static int put_record(FILE *f, const void *si)
{
	return summary__write_record(f, si);
}

/*
 * A dup of the descriptor that /dev/stdout, /dev/stderr, /dev/fd/N or
 * /proc/self/fd/N names; -ENOENT when path names none, -EBADF when it is
 * not open. The descriptor is used, the path never opened: nothing is
 * followed that someone else could have planted.
 */
static int path_fd(const char *path)
{
	const char *n = NULL;
	char *end;
	long v = 0;
	int fd;

	if (!strcmp(path, "/dev/stdout"))
		v = 1;
	else if (!strcmp(path, "/dev/stderr"))
		v = 2;
	else if (!strncmp(path, "/dev/fd/", 8))
		n = path + 8;
	else if (!strncmp(path, "/proc/self/fd/", 14))
		n = path + 14;
	else
		return -ENOENT;
	if (n) {
		v = strtol(n, &end, 10);
		if (!*n || *end || v < 0 || v > INT32_MAX)
			return -ENOENT;
	}
	fd = fcntl((int)v, F_DUPFD_CLOEXEC, 3);
	return fd < 0 ? -EBADF : fd;
}

/*
 * The --json record: always one, after the workload ended. When no summary
 * was written, its state is "record_failed" and the caveat says why.
 */
void rec__print_record(struct rec *r)
{
	struct outcome failed = {.state = "record_failed", .caveat_kind = r->fail_kind};
	struct integrity unknown = {.status = INTEGRITY_UNKNOWN};
	struct summary_input si = {.lane = &r->l,
				   .outcome = &r->res.outcome,
				   .integrity = &r->res.integrity,
				   .run = &r->run};
	const char *path = r->o->json_path;
	struct stat st;
	bool existed;
	int err, fd;

	if (r->fail_kind || !r->res.outcome.state) {
		if (!r->fail_kind) {
			failed.caveat_kind = "start_failed";
			snprintf(r->fail_msg, sizeof(r->fail_msg),
				 "offcpu could not start the record (exit 125)");
		}
		snprintf(failed.caveat_message, sizeof(failed.caveat_message), "%s", r->fail_msg);
		si.outcome = &failed;
		si.integrity = &unknown;
	}
	if (!path || !strcmp(path, "-")) {
		summary__write_record(stdout, &si);
		fflush(stdout);
		return;
	}
	/* A descriptor named as a file (/dev/fd/3, /dev/stderr) is written to, never replaced. */
	fd = path_fd(path);
	if (fd == -EBADF) {
		fprintf(stderr, "offcpu: cannot write %s: the descriptor is not open\n", path);
		return;
	}
	if (fd >= 0) {
		FILE *f = fdopen(fd, "w");

		if (!f)
			close(fd);
		err = f ? summary__write_record(f, &si) : -errno;
		if (f && fclose(f) && !err)
			err = -errno;
		if (err)
			fprintf(stderr, "offcpu: cannot write %s: %s\n", path, strerror(-err));
		return;
	}
	existed = !lstat(path, &st);
	err = atomic_file__write(path, put_record, &si);
	if (err) {
		fprintf(stderr, "offcpu: cannot write %s: %s\n", path, atomic_file__strerror(err));
		return;
	}
	/* A record file offcpu created is the user's, like the lane's files. */
	if (!existed && r->id.drop)
		give_file(r, AT_FDCWD, path, path);
}

void rec__close_dir(struct rec *r)
{
	remove_staged(r);
	give_files_to_user(r);
	for (size_t i = 0; i < r->nr_made; i++)
		close(r->made_fds[i]);
	free(r->made_fds);
	r->made_fds = NULL;
	r->nr_made = 0;
	if (r->dir_fd >= 0)
		close(r->dir_fd); /* releases the lock */
	r->dir_fd = -1;
}
