// SPDX-License-Identifier: GPL-2.0-only
/*
 * Context switches as fast as they come: THREADS threads (default 256, even) in
 * pairs ping-pong for SECONDS (default 10). Even pairs pass a byte through two
 * pipes, odd pairs pass a turn through a futex word. Threads are "stress-N".
 *
 * Every thread reports truth like any workload. Its waits is the number of wait
 * calls it made (futex waits that slept, pipe reads that got the byte); a pipe read
 * may find its byte already there and not sleep, so waits is an upper bound there.
 */
#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <sys/syscall.h>

#include "workload.h"

struct pair {
	int kind;	  /* 0: pipes, 1: futex */
	int ab[2], ba[2]; /* side 0 writes ab and reads ba */
	atomic_int turn;  /* futex word: side whose turn it is, or 2 when ending */
	atomic_int done;
};

struct side {
	struct pair *pair;
	int side;
	int index;
};

static atomic_int stop;

static long futex(atomic_int *word, int op, int val)
{
	return syscall(SYS_futex, word, op, val, NULL, NULL, 0);
}

static long futex_side(struct pair *p, int me)
{
	long waits = 0;
	int v;

	for (;;) {
		while ((v = atomic_load(&p->turn)) != me) {
			if (atomic_load(&p->done))
				goto out;
			if (futex(&p->turn, FUTEX_WAIT_PRIVATE, v) == 0)
				waits++;
			else if (errno != EAGAIN && errno != EINTR)
				wl_die("futex wait: %s", strerror(errno));
		}
		if (atomic_load(&stop))
			break;
		atomic_store(&p->turn, !me);
		futex(&p->turn, FUTEX_WAKE_PRIVATE, 1);
	}
out:
	/* A turn value nobody waits for, so a partner about to wait cannot sleep on. */
	atomic_store(&p->done, 1);
	atomic_store(&p->turn, 2);
	futex(&p->turn, FUTEX_WAKE_PRIVATE, INT_MAX);
	return waits;
}

/* Ends when stop is seen or the partner has closed its end (read gives 0). */
static long pipe_side(struct pair *p, int me)
{
	int rd = me ? p->ab[0] : p->ba[0];
	int wr = me ? p->ba[1] : p->ab[1];
	long waits = 0;
	char c = 'x';
	ssize_t n;

	for (;;) {
		if (me == 0) {
			if (atomic_load(&stop) || write(wr, &c, 1) != 1)
				break;
		}
		do
			n = read(rd, &c, 1);
		while (n < 0 && errno == EINTR);
		if (n != 1)
			break;
		waits++;
		if (me == 1) {
			if (atomic_load(&stop) || write(wr, &c, 1) != 1)
				break;
		}
	}
	close(wr);
	return waits;
}

static void *stresser(void *arg)
{
	struct side *s = arg;
	struct truth t;
	char comm[16];
	long waits;

	snprintf(comm, sizeof(comm), "stress-%d", s->index);
	truth_begin(&t, "stress", comm, "S");
	if (s->pair->kind)
		waits = futex_side(s->pair, s->side);
	else
		waits = pipe_side(s->pair, s->side);
	truth_end(&t, waits);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *pos[2];
	struct pair *pairs;
	struct side *sides;
	pthread_attr_t attr;
	pthread_t *th;
	double secs;
	long n;

	wl_args(argc, argv,
		"[THREADS [SECONDS]]\n  THREADS (default 256, even) threads \"stress-N\" "
		"ping-pong in pairs\n  through pipes and futexes for SECONDS (default 10)",
		pos, 2);
	n = pos[0] ? (long)wl_parse_num(pos[0], "THREADS") : 256;
	secs = pos[1] ? wl_parse_num(pos[1], "SECONDS") : 10;
	if (n < 2 || n % 2 || n > 100000)
		wl_die("THREADS must be an even number from 2, not %ld", n);
	pairs = calloc(n / 2, sizeof(*pairs));
	sides = calloc(n, sizeof(*sides));
	th = calloc(n, sizeof(*th));
	if (!pairs || !sides || !th)
		wl_die("out of memory");
	for (long i = 0; i < n / 2; i++) {
		pairs[i].kind = i % 2;
		if (!pairs[i].kind && (pipe(pairs[i].ab) || pipe(pairs[i].ba)))
			wl_die("pipe: %s; raise the open file limit (ulimit -n) or use fewer "
			       "THREADS",
			       strerror(errno));
	}
	/* Small stacks: the threads only loop, and many of them must fit. */
	wl_check(pthread_attr_init(&attr), "pthread_attr_init");
	wl_check(pthread_attr_setstacksize(&attr, 128 * 1024), "pthread_attr_setstacksize");
	wl_start();
	for (long i = 0; i < n; i++) {
		sides[i] = (struct side){.pair = &pairs[i / 2], .side = i % 2, .index = i};
		wl_check(pthread_create(&th[i], &attr, stresser, &sides[i]), "pthread_create");
	}
	wl_sleep_ns(secs * NSEC_PER_SEC);
	atomic_store(&stop, 1);
	for (long i = 0; i < n; i++)
		wl_check(pthread_join(th[i], NULL), "pthread_join");
	for (long i = 0; i < n / 2; i++) {
		if (!pairs[i].kind) {
			close(pairs[i].ab[0]);
			close(pairs[i].ba[0]);
		}
	}
	pthread_attr_destroy(&attr);
	free(pairs);
	free(sides);
	free(th);
	return 0;
}
