// SPDX-License-Identifier: GPL-2.0-only
/*
 * A small "service" for `make demo`, about 1 s (times SCALE), every thread named
 * and reporting truth:
 *   "acceptor"    takes a burst of 4 requests every 60 ms (nanosleep) and sends them
 *                 down a pipe
 *   "dispatcher"  reads requests from the pipe (blocks in read) and queues them
 *   "worker-1..3" take requests off a mutex-protected queue (condvar wait), do part
 *                 of the work while still holding the queue lock (the bug a profile
 *                 should reveal: lock contention) and the rest outside it, then log;
 *                 their waits count condvar waits, not the lock waits
 *   "logger"      every 100 ms writes the log to a file in $TMPDIR and fdatasync()s
 *                 it (D state)
 *   "ticker"      every 50 ms takes the queue lock to sample the queue depth
 *   "service"     the main thread: starts everything and waits in pthread_join
 */
#include <stdatomic.h>

#include "workload.h"

#define REQUESTS 64
#define BURST 4
#define WORKERS 3
#define QCAP 128

static double scale;
static int req_pipe[2];
static int log_fd;
static atomic_int shutting_down;

static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t qcond = PTHREAD_COND_INITIALIZER;
static int queue[QCAP], qhead, qtail, qclosed;

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char log_buf[1 << 20];
static size_t log_len;

static uint64_t ms(double v)
{
	return v * NSEC_PER_MSEC * scale;
}

static void *acceptor(void *arg)
{
	struct truth t;
	int i;

	truth_begin(&t, "demo", "acceptor", "S");
	for (i = 0; i < REQUESTS; i++) {
		if (i % BURST == 0)
			wl_sleep_ns(ms(60));
		if (write(req_pipe[1], &i, sizeof(i)) != sizeof(i))
			wl_die("write request: %s", strerror(errno));
	}
	close(req_pipe[1]);
	truth_end(&t, REQUESTS / BURST);
	return NULL;
}

static void *dispatcher(void *arg)
{
	struct truth t;
	long waits = 0;
	ssize_t n;
	int req;

	truth_begin(&t, "demo", "dispatcher", "S");
	for (;;) {
		n = read(req_pipe[0], &req, sizeof(req));
		waits++;
		if (n < 0 && errno == EINTR)
			continue;
		if (n != sizeof(req))
			break;
		pthread_mutex_lock(&qlock);
		queue[qtail++ % QCAP] = req;
		pthread_cond_signal(&qcond);
		pthread_mutex_unlock(&qlock);
	}
	pthread_mutex_lock(&qlock);
	qclosed = 1;
	pthread_cond_broadcast(&qcond);
	pthread_mutex_unlock(&qlock);
	truth_end(&t, waits);
	return NULL;
}

static void log_line(const char *who, int req)
{
	pthread_mutex_lock(&log_lock);
	if (log_len + 128 < sizeof(log_buf))
		log_len += snprintf(log_buf + log_len, 128, "%" PRIu64 " %s served request %d\n",
				    wl_now_ns(), who, req);
	pthread_mutex_unlock(&log_lock);
}

static void *worker(void *arg)
{
	char comm[16];
	struct truth t;
	long waits = 0;
	int req;

	snprintf(comm, sizeof(comm), "worker-%ld", (long)arg);
	truth_begin(&t, "demo", comm, "mixed");
	for (;;) {
		pthread_mutex_lock(&qlock);
		while (qhead == qtail && !qclosed) {
			pthread_cond_wait(&qcond, &qlock);
			waits++;
		}
		if (qhead == qtail) {
			pthread_mutex_unlock(&qlock);
			break;
		}
		req = queue[qhead++ % QCAP];
		wl_spin_ns(ms(2)); /* validating under the lock: what a profile should show */
		pthread_mutex_unlock(&qlock);
		wl_spin_ns(ms(3));
		log_line(comm, req);
	}
	truth_end(&t, waits);
	return NULL;
}

static void *logger(void *arg)
{
	static char out[sizeof(log_buf)];
	struct truth t;
	long waits = 0;
	size_t len;
	int last = 0;

	truth_begin(&t, "demo", "logger", "mixed");
	while (!last) {
		last = atomic_load(&shutting_down);
		if (!last) {
			wl_sleep_ns(ms(100));
			waits++;
		}
		pthread_mutex_lock(&log_lock);
		len = log_len;
		memcpy(out, log_buf, len);
		log_len = 0;
		pthread_mutex_unlock(&log_lock);
		if (len && write(log_fd, out, len) != (ssize_t)len)
			wl_die("write log: %s", strerror(errno));
		if (fdatasync(log_fd))
			wl_die("fdatasync log: %s", strerror(errno));
		waits++;
	}
	truth_end(&t, waits);
	return NULL;
}

static void *ticker(void *arg)
{
	struct truth t;
	long waits = 0;
	int depth, max_depth = 0;

	truth_begin(&t, "demo", "ticker", "S");
	while (!atomic_load(&shutting_down)) {
		wl_sleep_ns(ms(50));
		waits++;
		pthread_mutex_lock(&qlock);
		depth = qtail - qhead;
		pthread_mutex_unlock(&qlock);
		if (depth > max_depth)
			max_depth = depth;
	}
	truth_end(&t, waits);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t acc, disp, wrk[WORKERS], lg, tick;
	char path[4096];
	const char *dir;
	struct truth t;

	scale = wl_scale(argc, argv,
			 "[SCALE]\n  a small service (acceptor, dispatcher, 3 workers, logger, "
			 "ticker)\n  for about 1 s * SCALE");
	dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
	snprintf(path, sizeof(path), "%s/demo-log.XXXXXX", dir);
	log_fd = mkstemp(path);
	if (log_fd < 0)
		wl_die("cannot create a log file in %s: %s; set TMPDIR to a writable directory",
		       dir, strerror(errno));
	unlink(path);
	if (pipe(req_pipe))
		wl_die("pipe: %s", strerror(errno));
	wl_start();

	truth_begin(&t, "demo", "service", "S");
	wl_check(pthread_create(&lg, NULL, logger, NULL), "pthread_create");
	wl_check(pthread_create(&tick, NULL, ticker, NULL), "pthread_create");
	for (long i = 0; i < WORKERS; i++)
		wl_check(pthread_create(&wrk[i], NULL, worker, (void *)(i + 1)), "pthread_create");
	wl_check(pthread_create(&disp, NULL, dispatcher, NULL), "pthread_create");
	wl_check(pthread_create(&acc, NULL, acceptor, NULL), "pthread_create");
	wl_check(pthread_join(acc, NULL), "pthread_join");
	wl_check(pthread_join(disp, NULL), "pthread_join");
	for (int i = 0; i < WORKERS; i++)
		wl_check(pthread_join(wrk[i], NULL), "pthread_join");
	atomic_store(&shutting_down, 1);
	wl_check(pthread_join(tick, NULL), "pthread_join");
	wl_check(pthread_join(lg, NULL), "pthread_join");
	truth_end(&t, WORKERS + 4);
	close(log_fd);
	close(req_pipe[0]);
	return 0;
}
