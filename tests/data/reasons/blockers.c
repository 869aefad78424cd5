// SPDX-License-Identifier: GPL-2.0-only
/*
 * The program that produced the real stacks in this directory (see capture.sh):
 * one thread per way of blocking, each named "rsn_<way>" so a tracer can tell
 * them apart by comm. Runs until killed. Not built by the Makefile.
 *
 *     cc -O1 -g -fno-omit-frame-pointer -o blockers blockers.c -lpthread
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *dir = "/tmp";
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cv_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

static void name(const char *n)
{
	prctl(PR_SET_NAME, n);
}

static void ms_sleep(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Holds the mutex most of the time so rsn_mutex blocks in futex_wait. */
static void *holder(void *a)
{
	name("rsn_holder");
	for (;;) {
		pthread_mutex_lock(&held);
		ms_sleep(50);
		pthread_mutex_unlock(&held);
		ms_sleep(1);
	}
	return NULL;
}

static void *w_mutex(void *a)
{
	name("rsn_mutex");
	for (;;) {
		pthread_mutex_lock(&held);
		pthread_mutex_unlock(&held);
		ms_sleep(2);
	}
	return NULL;
}

static void *w_condvar(void *a)
{
	name("rsn_condvar");
	pthread_mutex_lock(&cv_mu);
	for (;;) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 20000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&cv, &cv_mu, &ts);
	}
	return NULL;
}

static void *w_nanosleep(void *a)
{
	name("rsn_nanosleep");
	for (;;)
		ms_sleep(10);
	return NULL;
}

static void *w_clocksleep(void *a)
{
	struct timespec ts = { 0, 10000000 };

	name("rsn_clocksleep");
	for (;;)
		clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
	return NULL;
}

static int pipefd[2];

static void *pipe_writer(void *a)
{
	name("rsn_pipewriter");
	for (;;) {
		ms_sleep(10);
		if (write(pipefd[1], "x", 1) < 0)
			break;
	}
	return NULL;
}

static void *w_pipe(void *a)
{
	char c;

	name("rsn_pipe");
	while (read(pipefd[0], &c, 1) > 0)
		;
	return NULL;
}

static void *w_poll(void *a)
{
	int fds[2];
	struct pollfd pfd;

	name("rsn_poll");
	if (pipe(fds))
		return NULL;
	pfd.fd = fds[0];
	pfd.events = POLLIN;
	for (;;)
		poll(&pfd, 1, 15);
	return NULL;
}

static void *w_epoll(void *a)
{
	int fds[2], ep = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN }, out;

	name("rsn_epoll");
	if (pipe(fds) || ep < 0)
		return NULL;
	ev.data.fd = fds[0];
	epoll_ctl(ep, EPOLL_CTL_ADD, fds[0], &ev);
	for (;;)
		epoll_wait(ep, &out, 1, 15);
	return NULL;
}

static void *w_select(void *a)
{
	int fds[2];

	name("rsn_select");
	if (pipe(fds))
		return NULL;
	for (;;) {
		fd_set r;
		struct timeval tv = { 0, 15000 };

		FD_ZERO(&r);
		FD_SET(fds[0], &r);
		select(fds[0] + 1, &r, NULL, NULL, &tv);
	}
	return NULL;
}

static void *w_fsync(void *a)
{
	char path[256], buf[65536];
	int fd;

	name("rsn_fsync");
	snprintf(path, sizeof(path), "%s/rsn_fsync.%d", dir, getpid());
	fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
	unlink(path);
	if (fd < 0)
		return NULL;
	memset(buf, 'a', sizeof(buf));
	for (;;) {
		if (write(fd, buf, sizeof(buf)) < 0)
			break;
		fsync(fd);
		if (lseek(fd, 0, SEEK_CUR) > (64 << 20))
			ftruncate(fd, 0), lseek(fd, 0, SEEK_SET);
	}
	return NULL;
}

static void *w_odirect(void *a)
{
	char path[256];
	void *buf;
	int fd;

	name("rsn_dread");
	snprintf(path, sizeof(path), "%s/rsn_dread.%d", dir, getpid());
	fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
	unlink(path);
	if (fd < 0 || posix_memalign(&buf, 4096, 1 << 20))
		return NULL;
	memset(buf, 'b', 1 << 20);
	for (int i = 0; i < 16; i++)
		if (write(fd, buf, 1 << 20) < 0)
			return NULL;
	fsync(fd);
	close(fd);
	for (;;) {
		snprintf(path, sizeof(path), "%s/rsn_dread2.%d", dir, getpid());
		fd = open(path, O_CREAT | O_RDWR | O_DIRECT, 0600);
		if (fd < 0)
			return NULL;
		for (int i = 0; i < 8; i++)
			if (pwrite(fd, buf, 1 << 20, (off_t)i << 20) < 0)
				break;
		for (int i = 0; i < 8; i++)
			if (pread(fd, buf, 1 << 20, (off_t)i << 20) < 0)
				break;
		close(fd);
		unlink(path);
	}
	return NULL;
}

static void *w_child(void *a)
{
	name("rsn_wait");
	for (;;) {
		pid_t c = fork();

		if (c == 0) {
			name("rsn_child");
			ms_sleep(20);
			_exit(0);
		}
		if (c > 0)
			waitpid(c, NULL, 0);
	}
	return NULL;
}

static void *w_tcp(void *a)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	int ls = socket(AF_INET, SOCK_STREAM, 0), cs, as;
	char c;

	name("rsn_tcp");
	if (ls < 0 || bind(ls, (void *)&sa, sizeof(sa)) || listen(ls, 1) ||
	    getsockname(ls, (void *)&sa, &sl))
		return NULL;
	cs = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(cs, (void *)&sa, sizeof(sa)))
		return NULL;
	as = accept(ls, NULL, NULL);
	if (fork() == 0) {
		name("rsn_tcpsend");
		for (;;) {
			ms_sleep(10);
			if (send(as, "y", 1, 0) < 0)
				_exit(0);
		}
	}
	while (recv(cs, &c, 1, 0) > 0)
		;
	return NULL;
}

static void *w_unix(void *a)
{
	int sv[2];
	char c;

	name("rsn_unix");
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return NULL;
	if (fork() == 0) {
		name("rsn_unixsend");
		for (;;) {
			ms_sleep(10);
			if (write(sv[1], "z", 1) < 0)
				_exit(0);
		}
	}
	while (read(sv[0], &c, 1) > 0)
		;
	return NULL;
}

/*
 * Reads a file mapping page by page after dropping its page cache: each first
 * touch is a major fault that waits for the read.
 */
static void *w_fault(void *a)
{
	char path[256], buf[65536];
	size_t len = 32 << 20;
	int fd;

	name("rsn_fault");
	snprintf(path, sizeof(path), "%s/rsn_fault.%d", dir, getpid());
	fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
	unlink(path);
	if (fd < 0)
		return NULL;
	memset(buf, 'c', sizeof(buf));
	for (size_t off = 0; off < len; off += sizeof(buf))
		if (write(fd, buf, sizeof(buf)) < 0)
			return NULL;
	fsync(fd);
	for (;;) {
		volatile char *m;
		unsigned long sum = 0;

		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED)
			return NULL;
		madvise((void *)m, len, MADV_RANDOM);
		for (size_t off = 0; off < len; off += 4096)
			sum += m[off];
		munmap((void *)m, len);
	}
	return NULL;
}

/* One spinner more than CPUs: each is preempted by the others (state R). */
static void *w_spin(void *a)
{
	volatile unsigned long x = 0;

	name("rsn_spin");
	for (;;)
		x++;
	return NULL;
}

int main(int argc, char **argv)
{
	void *(*fns[])(void *) = { holder,	w_mutex, w_condvar, w_nanosleep, w_clocksleep,
				    pipe_writer, w_pipe,  w_poll,    w_epoll,	  w_select,
				    w_fsync,	 w_odirect, w_child, w_tcp,	  w_unix,
				    w_fault };
	long nspin = sysconf(_SC_NPROCESSORS_ONLN) + 1;
	pthread_t t;

	if (argc > 1)
		dir = argv[1];
	signal(SIGPIPE, SIG_IGN);
	if (pipe(pipefd))
		return 1;
	name("rsn_main");
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		pthread_create(&t, NULL, fns[i], NULL);
	for (long i = 0; i < nspin; i++)
		pthread_create(&t, NULL, w_spin, NULL);
	pause();
	return 0;
}
