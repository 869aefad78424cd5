// SPDX-License-Identifier: GPL-2.0-only
/*
 * The unwind table builder (collect/cfi.c) on real binaries: for each file,
 * REPS builds (default 5), and one Markdown table row: the CFI it read, the
 * median wall and CPU time of a build, rows, bytes (8 a row), FDEs, and the
 * rows the BPF side cannot evaluate. Used by bench/cfi-tables.sh.
 *
 *   build/bench/cfi-tables [-r REPS] FILE...
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collect/cfi.h"

static double now_ms(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return a < b ? -1 : a > b;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int bench_file(const char *path, int reps)
{
	double wall[64], cpu[64];
	struct cfi_table t = {0};
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;

	if (fd < 0) {
		printf("| %s | not installed (%s) | | | | | | |\n", base, path);
		return 0;
	}
	for (int i = 0; i < reps; i++) {
		double w0 = now_ms(CLOCK_MONOTONIC), c0 = now_ms(CLOCK_THREAD_CPUTIME_ID);

		err = cfi_table__build(fd, path, &t);
		cpu[i] = now_ms(CLOCK_THREAD_CPUTIME_ID) - c0;
		wall[i] = now_ms(CLOCK_MONOTONIC) - w0;
		if (err)
			break;
		if (i + 1 < reps)
			cfi_table__free(&t);
	}
	close(fd);
	if (err) {
		printf("| %s | error: %s | | | | | | |\n", base, strerror(-err));
		cfi_table__free(&t);
		return err == -ENOENT ? 0 : err;
	}
	printf("| %s | %s | %.1f | %.1f | %zu | %zu | %zu | %zu |\n", base, t.source,
	       median(wall, reps), median(cpu, reps), t.n, t.n * sizeof(*t.rows), t.stats.fdes,
	       t.stats.unsupported);
	cfi_table__free(&t);
	return 0;
}

int main(int argc, char **argv)
{
	int reps = 5, opt, err = 0;

	while ((opt = getopt(argc, argv, "r:")) != -1) {
		if (opt == 'r')
			reps = atoi(optarg);
		else
			return 2;
	}
	if (reps < 1 || reps > 64 || optind >= argc) {
		fprintf(stderr, "usage: cfi-tables [-r REPS (1-64)] FILE...\n");
		return 2;
	}
	printf("| binary | CFI | build ms (wall) | build ms (CPU) | rows | bytes | FDEs | "
	       "unsupported rows |\n");
	printf("|---|---|---:|---:|---:|---:|---:|---:|\n");
	for (int i = optind; i < argc; i++)
		err |= bench_file(argv[i], reps);
	return err ? 1 : 0;
}
