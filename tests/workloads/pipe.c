// SPDX-License-Identifier: GPL-2.0-only
/*
 * "writer" sleeps 30 ms (times SCALE) and writes one byte into a pipe, 8 times;
 * "reader" blocks in read() for each byte: about 240 ms blocked in S for each
 * thread, 8 waits each (the reader counts its read() calls).
 */
#include "workload.h"

#define ROUNDS 8

static double scale;
static int fds[2];

static void *writer(void *arg)
{
	struct truth t;
	int i;

	truth_begin(&t, "pipe", "writer", "S");
	for (i = 0; i < ROUNDS; i++) {
		wl_sleep_ns(30 * NSEC_PER_MSEC * scale);
		if (write(fds[1], "x", 1) != 1)
			wl_die("write to pipe: %s", strerror(errno));
	}
	truth_end(&t, ROUNDS);
	return NULL;
}

static void *reader(void *arg)
{
	struct truth t;
	long waits = 0;
	int got = 0;
	char c;

	truth_begin(&t, "pipe", "reader", "S");
	while (got < ROUNDS) {
		ssize_t n = read(fds[0], &c, 1);

		waits++;
		if (n < 0 && errno == EINTR)
			continue;
		if (n != 1)
			wl_die("read from pipe: %s", n ? strerror(errno) : "end of file");
		got++;
	}
	truth_end(&t, waits);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t w, r;

	scale = wl_scale(argc, argv,
			 "[SCALE]\n  \"writer\" writes a byte every 30 ms * SCALE, 8 times; "
			 "\"reader\" blocks in read()");
	if (pipe(fds))
		wl_die("pipe: %s", strerror(errno));
	wl_start();
	wl_check(pthread_create(&r, NULL, reader, NULL), "pthread_create");
	wl_check(pthread_create(&w, NULL, writer, NULL), "pthread_create");
	wl_check(pthread_join(w, NULL), "pthread_join");
	wl_check(pthread_join(r, NULL), "pthread_join");
	return 0;
}
