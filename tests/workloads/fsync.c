// SPDX-License-Identifier: GPL-2.0-only
/*
 * Disk waits in D state: "syncer" overwrites MIB MiB (default 32, times SCALE) of a
 * file under $TMPDIR and fdatasync()s it, 5 times; fdatasync waits for the writeback
 * in TASK_UNINTERRUPTIBLE. How long depends on the disk, so the truth line carries
 * what was measured. The size is large because a virtual disk with a host cache
 * takes a 1 MiB fdatasync in about 1 ms: 5 x 32 MiB gives 20-35 ms of D time there
 * (checked with sched_switch prev_state == TASK_UNINTERRUPTIBLE). On tmpfs there
 * is nothing to wait for, so that is refused.
 */
#include <sys/statfs.h>
#include <sys/vfs.h>

#include "workload.h"

#define DEFAULT_MIB 32
#define ROUNDS 5
#define TMPFS_MAGIC_ 0x01021994

static const char *path;
static size_t chunk;
static char *buf;
static int fd;

static void write_all(const char *p, size_t len)
{
	size_t done;

	if (lseek(fd, 0, SEEK_SET))
		wl_die("lseek %s: %s", path, strerror(errno));
	for (done = 0; done < len;) {
		ssize_t n = write(fd, p + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			wl_die("write to %s: %s", path, strerror(errno));
		done += n;
	}
}

/*
 * The file is set up and closed by main: the last close of the unlinked file frees
 * its blocks, which can wait in D too, and that wait belongs to no measured thread.
 */
static void *syncer(void *arg)
{
	struct truth t;
	int i;

	truth_begin(&t, "fsync", "syncer", "D");
	for (i = 0; i < ROUNDS; i++) {
		buf[0] = (char)i;
		write_all(buf, chunk);
		if (fdatasync(fd))
			wl_die("fdatasync %s: %s", path, strerror(errno));
	}
	truth_end(&t, ROUNDS);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *pos[2], *dir;
	static char tmpl[4096];
	struct statfs sfs;
	double scale, mib;
	pthread_t th;

	wl_args(argc, argv,
		"[SCALE [MIB]]\n  \"syncer\" overwrites MIB (default 32) * SCALE MiB of a "
		"file in $TMPDIR\n  and fdatasync()s it, 5 times (D state)",
		pos, 2);
	scale = pos[0] ? wl_parse_num(pos[0], "SCALE") : 1.0;
	mib = pos[1] ? wl_parse_num(pos[1], "MIB") : DEFAULT_MIB;
	chunk = mib * scale * 1024 * 1024;
	if (chunk < 4096)
		chunk = 4096;
	dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
	snprintf(tmpl, sizeof(tmpl), "%s/fsync-workload.XXXXXX", dir);
	path = tmpl;
	fd = mkstemp(tmpl);
	if (fd < 0)
		wl_die("cannot create a file in %s: %s; set TMPDIR to a writable directory", dir,
		       strerror(errno));
	unlink(path);
	if (!fstatfs(fd, &sfs) && sfs.f_type == TMPFS_MAGIC_)
		wl_die("%s is on tmpfs, where fdatasync never waits; set TMPDIR to a disk", dir);
	buf = malloc(chunk);
	if (!buf)
		wl_die("out of memory");
	/* Not zeros, and different each round, so nothing can skip the write. */
	for (size_t k = 0; k < chunk; k++)
		buf[k] = (char)(k * 7 + 1);
	/*
	 * The syncer overwrites blocks that exist and pages that are cached, so its
	 * time on the CPU is a copy, not block allocation, and its off-CPU time is
	 * the writeback it waits for.
	 */
	write_all(buf, chunk);
	if (fdatasync(fd))
		wl_die("fdatasync %s: %s", path, strerror(errno));
	wl_start();
	wl_check(pthread_create(&th, NULL, syncer, NULL), "pthread_create");
	wl_check(pthread_join(th, NULL), "pthread_join");
	close(fd);
	free(buf);
	return 0;
}
