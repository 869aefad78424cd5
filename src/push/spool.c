// SPDX-License-Identifier: GPL-2.0-only
/*
 * The spool keeps its index in memory (names and sizes, sorted) and the
 * truth on disk: the directory is read once at open, then every change is
 * made on disk first and mirrored in the index.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "push/spool.h"
#include "util/vec.h"

#define ENTRY_MAGIC "offcpu-push-entry 1"
#define TMP_PREFIX ".tmp-"

struct entry {
	uint64_t from_ns; /* the name */
	uint64_t size;	  /* of the file */
};

struct spool {
	int dfd, lockfd;
	uint64_t max_bytes;
	size_t max_entries;
	struct entry *e; /* sorted by from_ns */
	size_t nr, cap;
	uint64_t bytes;
	uint64_t *sent; /* names accepted, oldest first; a ring once full */
	size_t nsent, sent_cap, sent_lines;
	uint64_t dropped, failed;
};

static void entry_name(char name[SPOOL_NAME_MAX], uint64_t from_ns)
{
	snprintf(name, SPOOL_NAME_MAX, "%020" PRIu64 ".push", from_ns);
}

/* from_ns of an entry's name; false for anything else. */
static bool parse_name(const char *name, uint64_t *from_ns)
{
	char *end;

	if (strlen(name) != 25 || strspn(name, "0123456789") != 20 || strcmp(name + 20, ".push"))
		return false;
	*from_ns = strtoull(name, &end, 10);
	return end == name + 20;
}

static int sync_dir(struct spool *s)
{
	return fsync(s->dfd) ? -errno : 0;
}

static bool was_sent(const struct spool *s, uint64_t from_ns)
{
	for (size_t i = 0; i < s->nsent; i++)
		if (s->sent[i] == from_ns)
			return true;
	return false;
}

static int remember_sent(struct spool *s, uint64_t from_ns)
{
	if (s->nsent < SPOOL_SENT_KEEP) {
		if (vec_reserve(s->sent, s->sent_cap, s->nsent + 1))
			return -ENOMEM;
		s->sent[s->nsent++] = from_ns;
		return 0;
	}
	memmove(s->sent, s->sent + 1, (s->nsent - 1) * sizeof(*s->sent));
	s->sent[s->nsent - 1] = from_ns;
	return 0;
}

/* Write buf to a temporary file in DIR, fsync it, rename it to name, fsync DIR. */
static int write_atomic(struct spool *s, const char *name, const void *hdr, size_t hlen,
			const void *body, size_t blen)
{
	char tmp[SPOOL_NAME_MAX + 32];
	const void *part[2] = {hdr, body};
	size_t plen[2] = {hlen, blen};
	int fd, err = 0;

	snprintf(tmp, sizeof(tmp), TMP_PREFIX "%s.%d", name, (int)getpid());
	fd = openat(s->dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	for (int i = 0; i < 2 && !err; i++) {
		const char *p = part[i];
		size_t left = plen[i];

		while (left) {
			ssize_t n = write(fd, p, left);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				err = n < 0 ? -errno : -EIO;
				break;
			}
			p += n;
			left -= (size_t)n;
		}
	}
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && renameat(s->dfd, tmp, s->dfd, name))
		err = -errno;
	if (err)
		unlinkat(s->dfd, tmp, 0);
	else
		err = sync_dir(s);
	return err;
}

static int save_state(struct spool *s)
{
	char buf[128];
	int n = snprintf(buf, sizeof(buf), "dropped %" PRIu64 "\nfailed %" PRIu64 "\n", s->dropped,
			 s->failed);

	return write_atomic(s, "state", buf, (size_t)n, NULL, 0);
}

static void load_state(struct spool *s)
{
	char key[16];
	uint64_t v;
	FILE *f;
	int fd = openat(s->dfd, "state", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return;
	}
	while (fscanf(f, "%15s %" SCNu64, key, &v) == 2) {
		if (!strcmp(key, "dropped"))
			s->dropped = v;
		else if (!strcmp(key, "failed"))
			s->failed = v;
	}
	fclose(f);
}

/* Rewrite DIR/sent with what is remembered, so it does not grow without end. */
static int compact_sent(struct spool *s)
{
	char *buf = malloc(s->nsent * SPOOL_NAME_MAX + 1);
	size_t off = 0;
	int err;

	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < s->nsent; i++) {
		entry_name(buf + off, s->sent[i]);
		off += strlen(buf + off);
		buf[off++] = '\n';
	}
	err = write_atomic(s, "sent", buf, off, NULL, 0);
	free(buf);
	if (!err)
		s->sent_lines = s->nsent;
	return err;
}

static int load_sent(struct spool *s)
{
	char line[64];
	uint64_t from;
	FILE *f;
	int fd = openat(s->dfd, "sent", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return -errno;
	}
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		s->sent_lines++;
		/* A last line cut short by a crash is not a name: skipped. */
		if (parse_name(line, &from) && remember_sent(s, from)) {
			fclose(f);
			return -ENOMEM;
		}
	}
	fclose(f);
	return 0;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	return x->from_ns < y->from_ns ? -1 : x->from_ns > y->from_ns;
}

static int scan(struct spool *s)
{
	struct dirent *d;
	struct stat st;
	DIR *dir;
	int fd = openat(s->dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int err = 0;

	if (fd < 0)
		return -errno;
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return -errno;
	}
	while ((d = readdir(dir))) {
		uint64_t from;

		if (!strncmp(d->d_name, TMP_PREFIX, strlen(TMP_PREFIX))) {
			/* Half written by a process that died: never queued. */
			unlinkat(s->dfd, d->d_name, 0);
			continue;
		}
		if (!parse_name(d->d_name, &from) ||
		    fstatat(s->dfd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (was_sent(s, from)) {
			/* Accepted, but the process died before the unlink. */
			unlinkat(s->dfd, d->d_name, 0);
			continue;
		}
		if (vec_reserve(s->e, s->cap, s->nr + 1)) {
			err = -ENOMEM;
			break;
		}
		s->e[s->nr++] = (struct entry){from, (uint64_t)st.st_size};
		s->bytes += (uint64_t)st.st_size;
	}
	closedir(dir);
	if (s->nr)
		qsort(s->e, s->nr, sizeof(*s->e), cmp_entry);
	return err ? err : sync_dir(s);
}

struct spool *spool__open(const struct spool_opts *o, char *why, size_t whylen)
{
	struct spool *s = calloc(1, sizeof(*s));
	int err = 0;

	if (!s) {
		snprintf(why, whylen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	s->dfd = s->lockfd = -1;
	s->max_bytes = o->max_bytes ? o->max_bytes : SPOOL_DEFAULT_MAX_BYTES;
	s->max_entries = o->max_entries ? o->max_entries : SPOOL_DEFAULT_MAX_ENTRIES;
	if (mkdir(o->dir, 0700) && errno != EEXIST) {
		err = -errno;
		snprintf(why, whylen, "cannot create the push spool %s: %s", o->dir,
			 strerror(errno));
		goto cleanup;
	}
	s->dfd = open(o->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->dfd < 0) {
		err = -errno;
		snprintf(why, whylen, "cannot open the push spool %s: %s", o->dir, strerror(errno));
		goto cleanup;
	}
	s->lockfd = openat(s->dfd, "lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (s->lockfd < 0 || flock(s->lockfd, LOCK_EX | LOCK_NB)) {
		err = errno == EWOULDBLOCK ? -EBUSY : -errno;
		snprintf(why, whylen,
			 err == -EBUSY ? "the push spool %s is in use by another offcpu; give "
					 "another one"
				       : "cannot lock the push spool %s",
			 o->dir);
		goto cleanup;
	}
	mkdirat(s->dfd, "failed", 0700);
	load_state(s);
	err = load_sent(s);
	if (!err)
		err = scan(s);
	if (err)
		snprintf(why, whylen, "cannot read the push spool %s: %s", o->dir, strerror(-err));
cleanup:
	if (err) {
		spool__close(s);
		errno = -err;
		return NULL;
	}
	return s;
}

static ssize_t find(const struct spool *s, uint64_t from_ns)
{
	for (size_t i = 0; i < s->nr; i++)
		if (s->e[i].from_ns == from_ns)
			return (ssize_t)i;
	return -1;
}

static void forget(struct spool *s, size_t i)
{
	s->bytes -= s->e[i].size;
	memmove(s->e + i, s->e + i + 1, (s->nr - i - 1) * sizeof(*s->e));
	s->nr--;
}

int spool__put(struct spool *s, const struct spool_meta *m, const void *body, size_t len)
{
	char name[SPOOL_NAME_MAX], hdr[SPOOL_SERIES_MAX + 256];
	uint64_t size;
	size_t at;
	int hlen, err;

	if (find(s, m->from_ns) >= 0 || was_sent(s, m->from_ns))
		return 1;
	if (strchr(m->series, '\n'))
		return -EINVAL;
	hlen = snprintf(hdr, sizeof(hdr),
			ENTRY_MAGIC "\nfrom_ns %" PRIu64 "\nuntil_ns %" PRIu64
				    "\nseries %s\nsize %zu\n\n",
			m->from_ns, m->until_ns, m->series, len);
	size = (uint64_t)hlen + len;
	if (size > s->max_bytes) {
		s->dropped++;
		save_state(s);
		return -EFBIG;
	}
	/* Make room first: the bounds hold on disk at every moment. */
	while (s->nr && (s->nr + 1 > s->max_entries || s->bytes + size > s->max_bytes)) {
		entry_name(name, s->e[0].from_ns);
		if (unlinkat(s->dfd, name, 0) && errno != ENOENT)
			return -errno;
		forget(s, 0);
		s->dropped++;
	}
	entry_name(name, m->from_ns);
	err = write_atomic(s, name, hdr, (size_t)hlen, body, len);
	if (err)
		return err;
	if (vec_reserve(s->e, s->cap, s->nr + 1))
		return -ENOMEM;
	for (at = s->nr; at > 0 && s->e[at - 1].from_ns > m->from_ns; at--)
		;
	memmove(s->e + at + 1, s->e + at, (s->nr - at) * sizeof(*s->e));
	s->e[at] = (struct entry){m->from_ns, size};
	s->nr++;
	s->bytes += size;
	return save_state(s);
}

/* Read name back; -EBADMSG when it is not a whole entry. */
static int read_entry(struct spool *s, const char *name, struct spool_meta *m, uint8_t **body,
		      size_t *len)
{
	char line[SPOOL_SERIES_MAX + 16];
	uint64_t size = 0;
	bool magic;
	long off;
	FILE *f;
	int fd, err = 0;

	*body = NULL;
	fd = openat(s->dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return -errno;
	}
	memset(m, 0, sizeof(*m));
	magic = fgets(line, sizeof(line), f) && !strcmp(line, ENTRY_MAGIC "\n");
	while (magic && fgets(line, sizeof(line), f) && strcmp(line, "\n")) {
		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "from_ns ", 8))
			m->from_ns = strtoull(line + 8, NULL, 10);
		else if (!strncmp(line, "until_ns ", 9))
			m->until_ns = strtoull(line + 9, NULL, 10);
		else if (!strncmp(line, "series ", 7) && strlen(line + 7) < sizeof(m->series))
			memcpy(m->series, line + 7, strlen(line + 7) + 1);
		else if (!strncmp(line, "size ", 5))
			size = strtoull(line + 5, NULL, 10);
	}
	off = ftell(f);
	if (!magic || !m->series[0] || off < 0 || fseek(f, 0, SEEK_END) ||
	    (uint64_t)ftell(f) != (uint64_t)off + size || fseek(f, off, SEEK_SET)) {
		err = -EBADMSG;
		goto cleanup;
	}
	*body = malloc(size ? size : 1);
	if (!*body) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (fread(*body, 1, size, f) != size) {
		err = -EBADMSG;
		free(*body);
		*body = NULL;
		goto cleanup;
	}
	*len = size;
cleanup:
	fclose(f);
	return err;
}

static int move_aside(struct spool *s, const char *name)
{
	char to[SPOOL_NAME_MAX + 8];
	ssize_t i;
	uint64_t from;
	int err = 0;

	snprintf(to, sizeof(to), "failed/%s", name);
	if (renameat(s->dfd, name, s->dfd, to) && errno != ENOENT)
		err = -errno;
	if (parse_name(name, &from) && (i = find(s, from)) >= 0)
		forget(s, (size_t)i);
	s->failed++;
	sync_dir(s);
	save_state(s);
	return err;
}

int spool__oldest(struct spool *s, struct spool_meta *m, uint8_t **body, size_t *len,
		  char name[SPOOL_NAME_MAX])
{
	while (s->nr) {
		int err;

		entry_name(name, s->e[0].from_ns);
		err = read_entry(s, name, m, body, len);
		if (!err)
			return 0;
		if (err == -ENOENT) {
			forget(s, 0);
			continue;
		}
		if (err != -EBADMSG)
			return err;
		move_aside(s, name);
	}
	return -ENOENT;
}

int spool__sent(struct spool *s, const char *name)
{
	char line[SPOOL_NAME_MAX + 1];
	uint64_t from;
	ssize_t i;
	int fd, err = 0;

	if (!parse_name(name, &from))
		return -EINVAL;
	/*
	 * First the record that it was accepted (synced), then the unlink. The
	 * entry goes even when the record cannot be written: it was accepted,
	 * and sending it again and again would be worse.
	 */
	fd = openat(s->dfd, "sent", O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	snprintf(line, sizeof(line), "%s\n", name);
	errno = 0;
	if (fd < 0 || write(fd, line, strlen(line)) != (ssize_t)strlen(line) || fsync(fd))
		err = errno ? -errno : -EIO;
	if (fd >= 0)
		close(fd);
	s->sent_lines++;
	if (remember_sent(s, from) && !err)
		err = -ENOMEM;
	if (!err && s->sent_lines > 2 * SPOOL_SENT_KEEP)
		err = compact_sent(s);
	if (unlinkat(s->dfd, name, 0) && errno != ENOENT && !err)
		err = -errno;
	i = find(s, from);
	if (i >= 0)
		forget(s, (size_t)i);
	sync_dir(s);
	return err;
}

int spool__reject(struct spool *s, const char *name)
{
	return move_aside(s, name);
}

void spool__stats(const struct spool *s, struct spool_stats *st)
{
	st->queued = s->nr;
	st->queued_bytes = s->bytes;
	st->dropped = s->dropped;
	st->failed = s->failed;
}

void spool__close(struct spool *s)
{
	if (!s)
		return;
	if (s->dfd >= 0)
		close(s->dfd);
	if (s->lockfd >= 0)
		close(s->lockfd);
	free(s->e);
	free(s->sent);
	free(s);
}
