// SPDX-License-Identifier: GPL-2.0-only
/*
 * native-attach: run the built-in collector on its own, for benchmarks and
 * debugging (offcpu record does the same with everything else around it).
 *
 *   native-attach [options] -a                  the whole host, until SIGINT/SIGTERM
 *   native-attach [options] -p PID[,PID...]     these processes
 *   native-attach [options] -- CMD [ARG...]     a command followed from exec
 *
 * Options: --no-cache (walk every stack), --raw-tp, --no-user, --no-kernel,
 * --top N (print the N heaviest rows to stdout, hex or symbolized),
 * --ready FILE (create FILE once attached, for scripts), --sym (symbolize),
 * --timeline NS (keep every interval of at least NS ns, as record --timeline).
 * Collector notes and the integrity go to stderr.
 *
 * Build: see bench/Makefile.inc (or: cc -O2 -Isrc -Ibuild bench/native_attach.c
 * build/liboffcpu.a -lbpf -lelf -ldw -ljson-c -lz -lpthread).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collect/native.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static int cmp_rows(const void *a, const void *b)
{
	const struct profile_row *x = *(const struct profile_row *const *)a;
	const struct profile_row *y = *(const struct profile_row *const *)b;

	return x->w.off_ns < y->w.off_ns ? 1 : x->w.off_ns > y->w.off_ns ? -1 : 0;
}

static void print_top(const struct profile *p, size_t top)
{
	size_t nr = profile__nr_rows(p);
	const struct profile_row **rows = calloc(nr ? nr : 1, sizeof(*rows));

	if (!rows)
		return;
	for (size_t i = 0; i < nr; i++)
		rows[i] = profile__row_at(p, i);
	qsort(rows, nr, sizeof(*rows), cmp_rows);
	for (size_t i = 0; i < nr && i < top; i++) {
		const struct profile_thread *t = profile__thread_at(p, rows[i]->thread);
		size_t n;
		const uint32_t *ids = profile__stack_at(p, rows[i]->stack, &n);

		const struct profile_thread_time *tt = profile__thread_time(p, rows[i]->thread);

		printf("%s %d/%d %s count=%" PRIu64 " off_ns=%" PRIu64 " runq_ns=%" PRIu64, t->comm,
		       t->pid, t->tid, offcpu_state__letter(rows[i]->state), rows[i]->w.count,
		       rows[i]->w.off_ns, rows[i]->w.runq_ns);
		if (tt)
			printf(" (thread: wall %" PRIu64 " oncpu %" PRIu64 " runq %" PRIu64 ")",
			       tt->wall_ns, tt->oncpu_ns, tt->runq_ns);
		printf("\n");
		for (size_t j = n; j-- > 0;)
			printf("    %s\n", profile__frame_at(p, ids[j])->name);
	}
	free(rows);
}

int main(int argc, char **argv)
{
	struct native_opts o = {.diag = stderr};
	struct integrity in = {};
	struct symbolizer *sym = NULL;
	struct profile *p = NULL;
	struct native *n;
	const char *ready = NULL;
	int *pids = NULL, hold[2] = {-1, -1}, status, i, err;
	size_t top = 0;
	bool want_sym = false;
	pid_t child = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-a")) {
			o.all = true;
		} else if (!strcmp(argv[i], "-p") && i + 1 < argc) {
			char *s = argv[++i];

			while (*s) {
				pids = realloc(pids, (o.nr_pids + 1) * sizeof(*pids));
				pids[o.nr_pids++] = strtol(s, &s, 10);
				s += *s == ',';
			}
			o.pids = pids;
		} else if (!strcmp(argv[i], "--cgroup") && i + 1 < argc) {
			o.cgroup = argv[++i];
		} else if (!strcmp(argv[i], "--no-cache")) {
			o.no_stack_cache = true;
		} else if (!strcmp(argv[i], "--raw-tp")) {
			o.force_raw_tp = true;
		} else if (!strcmp(argv[i], "--no-user")) {
			o.no_user_stacks = true;
		} else if (!strcmp(argv[i], "--no-kernel")) {
			o.no_kernel_stacks = true;
		} else if (!strcmp(argv[i], "--kernel-threads")) {
			o.kernel_threads = true;
		} else if (!strcmp(argv[i], "--top") && i + 1 < argc) {
			top = strtoul(argv[++i], NULL, 10);
		} else if (!strcmp(argv[i], "--ready") && i + 1 < argc) {
			ready = argv[++i];
		} else if (!strcmp(argv[i], "--sym")) {
			want_sym = true;
		} else if (!strcmp(argv[i], "--timeline") && i + 1 < argc) {
			o.timeline = timeline__new();
			o.timeline_min_ns = strtoull(argv[++i], NULL, 10);
		} else if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else {
			fprintf(stderr, "usage: native-attach [--no-cache] [--raw-tp] [--no-user] "
					"[--no-kernel] [--top N] [--sym] [--ready FILE] [--timeline NS] "
					"(-a | -p PIDS | --cgroup DIR | -- CMD...)\n");
			return 2;
		}
	}
	if (i < argc) {
		char c;

		if (pipe(hold))
			return 1;
		child = fork();
		if (child == 0) {
			close(hold[1]);
			if (read(hold[0], &c, 1) != 1)
				_exit(127);
			execvp(argv[i], argv + i);
			_exit(127);
		}
		close(hold[0]);
		o.follow_pid = child;
	}
	if (want_sym) {
		struct symbolizer_opts so = {};

		sym = symbolizer__new(&so);
		o.sym = sym;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	n = native__start(&o);
	if (!n) {
		fprintf(stderr, "native-attach: %s\n", strerror(errno));
		return 1;
	}
	if (ready)
		close(open(ready, O_CREAT | O_WRONLY, 0644));
	if (child) {
		if (write(hold[1], "x", 1) != 1)
			return 1;
		close(hold[1]);
	}
	while (!stop) {
		native__poll(n, 100);
		if (child && waitpid(child, &status, WNOHANG) == child)
			break;
	}
	p = profile__new();
	err = native__stop(n, p, &in, sym);
	if (err)
		fprintf(stderr, "native-attach: stop: %s\n", strerror(-err));
	for (size_t l = 0; l < in.nr_losses; l++)
		if (in.losses[l].count)
			fprintf(stderr, "loss %s: %" PRIu64 " (%" PRIu64 " ns)\n",
				in.losses[l].name, in.losses[l].count, in.losses[l].affected_ns);
	fprintf(stderr, "rows %zu, stacks %zu, threads %zu, off_ns %" PRIu64 "\n",
		profile__nr_rows(p), profile__nr_stacks(p), profile__nr_threads(p),
		profile__totals(p)->all.off_ns);
	if (o.timeline)
		fprintf(stderr, "timeline: %zu intervals, %" PRIu64 " lost\n",
			timeline__nr(o.timeline), timeline__info(o.timeline)->lost);
	print_top(p, top);
	native__free(n);
	timeline__free(o.timeline);
	profile__free(p);
	symbolizer__free(sym);
	free(pids);
	return err ? 1 : 0;
}
