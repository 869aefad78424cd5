// SPDX-License-Identifier: GPL-2.0-only
/*
 * The symbolizer's tracking of processes, on a thread of its own while the
 * collector runs: opening a binary's debug information can take tens of
 * milliseconds (a compressed separate debug file), and the event loop must
 * meanwhile read the next process's mappings for the unwinder, or that
 * process's stacks end early. The symbolizer is touched by this thread only
 * until native_symq_finish(), by the caller only after.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "collect/native_priv.h"
#include "symbolize/symbolize.h"
#include "util/vec.h"

struct native_symq {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct symbolizer *sym;
	int *pids;
	size_t head, n, cap;
	bool stop;
};

static void *symq_main(void *arg)
{
	struct native_symq *q = arg;

	pthread_mutex_lock(&q->mu);
	for (;;) {
		int pid;

		while (q->head == q->n && !q->stop)
			pthread_cond_wait(&q->cv, &q->mu);
		if (q->head == q->n)
			break;
		pid = q->pids[q->head++];
		pthread_mutex_unlock(&q->mu);
		symbolizer__track(q->sym, pid);
		pthread_mutex_lock(&q->mu);
	}
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

int native_symq_start(struct native *n)
{
	struct native_symq *q;

	if (!n->sym)
		return 0;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->sym = n->sym;
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->cv, NULL);
	if (pthread_create(&q->thread, NULL, symq_main, q)) {
		pthread_mutex_destroy(&q->mu);
		pthread_cond_destroy(&q->cv);
		free(q);
		return 0; /* tracked inline instead */
	}
	n->symq = q;
	return 0;
}

void native_symq_push(struct native *n, int pid)
{
	struct native_symq *q = n->symq;
	bool queued = false;

	if (!n->sym)
		return;
	if (q) {
		pthread_mutex_lock(&q->mu);
		/* A request already waiting covers this one. */
		queued = q->n > q->head && q->pids[q->n - 1] == pid;
		if (!queued && !vec_reserve(q->pids, q->cap, q->n + 1)) {
			q->pids[q->n++] = pid;
			queued = true;
			pthread_cond_signal(&q->cv);
		}
		pthread_mutex_unlock(&q->mu);
	}
	if (!queued)
		symbolizer__track(n->sym, pid);
}

void native_symq_finish(struct native *n)
{
	struct native_symq *q = n->symq;

	if (!q)
		return;
	pthread_mutex_lock(&q->mu);
	q->stop = true;
	pthread_cond_signal(&q->cv);
	pthread_mutex_unlock(&q->mu);
	pthread_join(q->thread, NULL);
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->cv);
	free(q->pids);
	free(q);
	n->symq = NULL;
}
