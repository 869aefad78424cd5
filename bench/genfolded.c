// SPDX-License-Identifier: GPL-2.0-only
/*
 * Writes realistic folded off-CPU input for the post-processing benchmarks:
 *
 *   genfolded [-l LINES] [-u UNIQUE] [-s SEED] [-z EXPONENT] VOCABDIR > out.folded
 *
 * VOCABDIR holds comm.txt, user.txt (one frame name a line) and kernel.txt (one real
 * kernel path a line, frames root first separated by ';'), as bench/vocab.sh writes
 * them from the fixtures in tests/data/.
 *
 * Shape of the output, and why:
 * - Exactly UNIQUE distinct stacks (when LINES >= UNIQUE), so that memory can be
 *   plotted against unique stacks. Stack i is a path in a call tree: the digits of i
 *   in base 16 choose a child at each branch level, and the first frame of each child
 *   differs from its siblings' (a distinct vocabulary entry), so distinct i give
 *   distinct strings while prefixes are shared the way a real program's are.
 * - Depth 10 to 60 frames, skewed towards 15-30 like real off-CPU stacks: a root
 *   prefix, the branch chains, padding frames, then one real kernel path.
 * - Zipf popularity: the stack of rank r gets a value proportional to 1/(r+1)^s
 *   (microseconds, as BCC writes them), and lines beyond UNIQUE repeat stacks drawn
 *   with the same Zipf law, as concatenated captures or unaggregated output do.
 * - Rank and tree position are decorrelated (a multiplicative permutation), and the
 *   first UNIQUE lines come in a scrambled order, as hash-ordered output does.
 * Everything derives from SEED, so a run is reproducible.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BRANCH 16
#define MIN_DEPTH 10
#define MAX_DEPTH 60

struct vocab {
	char **names;
	size_t *lens;
	size_t *depth; /* frames in the entry (kernel paths hold several) */
	size_t n;
};

struct gen {
	struct vocab comm, user, kernel;
	uint64_t unique;
	uint64_t lines;
	uint64_t seed;
	double zipf_s;
	int levels;
	double *cdf; /* Zipf CDF over ranks, for the repeated lines */
	char *line;
	size_t line_cap;
};

static uint64_t mix(uint64_t x)
{
	/* splitmix64's finaliser: cheap, and every output bit depends on every input bit */
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static double unit(uint64_t h)
{
	return (h >> 11) * (1.0 / 9007199254740992.0);
}

static int vocab__load(struct vocab *v, const char *dir, const char *name)
{
	char path[4096], *line = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "genfolded: cannot open %s: %s; run bench/vocab.sh first\n", path,
			strerror(errno));
		return -errno;
	}
	while ((n = getline(&line, &cap, f)) > 0) {
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (!n)
			continue;
		v->names = realloc(v->names, (v->n + 1) * sizeof(*v->names));
		v->lens = realloc(v->lens, (v->n + 1) * sizeof(*v->lens));
		v->depth = realloc(v->depth, (v->n + 1) * sizeof(*v->depth));
		if (!v->names || !v->lens || !v->depth || !(v->names[v->n] = strdup(line))) {
			fprintf(stderr, "genfolded: out of memory\n");
			exit(1);
		}
		v->depth[v->n] = 1;
		for (ssize_t i = 0; i < n; i++)
			v->depth[v->n] += line[i] == ';';
		v->lens[v->n++] = n;
	}
	free(line);
	fclose(f);
	if (!v->n) {
		fprintf(stderr, "genfolded: %s is empty\n", path);
		return -EINVAL;
	}
	return 0;
}

static void put(struct gen *g, size_t *len, const char *s, size_t n, bool sep)
{
	if (*len + n + 2 > g->line_cap) {
		g->line_cap = (*len + n + 2) * 2;
		g->line = realloc(g->line, g->line_cap);
		if (!g->line) {
			fprintf(stderr, "genfolded: out of memory\n");
			exit(1);
		}
	}
	if (sep)
		g->line[(*len)++] = ';';
	memcpy(g->line + *len, s, n);
	*len += n;
}

static void put_user(struct gen *g, size_t *len, uint64_t h)
{
	/* About one user frame in eight cannot be named, as in BCC output without debuginfo */
	if ((h & 7) == 0)
		put(g, len, "[unknown]", 9, true);
	else
		put(g, len, g->user.names[(h >> 3) % g->user.n], g->user.lens[(h >> 3) % g->user.n],
		    true);
}

/* Writes stack number idx (0 <= idx < unique) into g->line; returns its length. */
static size_t stack(struct gen *g, uint64_t idx)
{
	static const char *const roots[] = {"__libc_start_main;main", "__clone3;start_thread",
					    "_start;__libc_start_main;main", ""};
	uint64_t node = mix(g->seed), digits = idx, h;
	size_t len = 0, depth, target, k, kp;
	const char *root;

	h = mix(node ^ (digits % BRANCH));
	put(g, &len, g->comm.names[h % g->comm.n], g->comm.lens[h % g->comm.n], false);
	root = roots[(h >> 20) % 4];
	depth = 1;
	if (*root) {
		put(g, &len, root, strlen(root), true);
		for (const char *c = root; *c; c++)
			depth += *c == ';';
		depth++;
	}
	for (int lvl = 0; lvl < g->levels; lvl++) {
		uint64_t d = digits % BRANCH;
		uint64_t base = mix(node);
		size_t u = (base + d) % g->user.n;

		digits /= BRANCH;
		/* The branch frame: siblings differ here, so the whole stack is unique. */
		put(g, &len, g->user.names[u], g->user.lens[u], true);
		depth++;
		node = mix(node * 31 + d + 1);
		for (k = 0; k < mix(node) % 3; k++, depth++)
			put_user(g, &len, mix(node ^ (0x1000 + k)));
	}
	kp = mix(node ^ 0xdead) % g->kernel.n;
	/* depth = 10 + 50 x^2: mostly 15-30 frames, a tail to 60 */
	h = mix(node ^ 0xbeef);
	target = MIN_DEPTH + (size_t)((MAX_DEPTH - MIN_DEPTH) * unit(h) * unit(mix(h)));
	for (k = 0; depth + k + g->kernel.depth[kp] < target; k++)
		put_user(g, &len, mix(node ^ (0x2000 + k)));
	put(g, &len, g->kernel.names[kp], g->kernel.lens[kp], true);
	return len;
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* A multiplier coprime with n, so that i -> (i * m + c) % n is a permutation. */
static uint64_t coprime(uint64_t n, uint64_t h)
{
	uint64_t m = (h % n) | 1;

	if (n <= 2)
		return 1;
	while (gcd(m, n) != 1)
		m += 2;
	return m % n ? m % n : 1;
}

static uint64_t zipf_rank(const struct gen *g, double u)
{
	uint64_t lo = 0, hi = g->unique - 1;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (g->cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: genfolded [-l LINES] [-u UNIQUE] [-s SEED] [-z EXPONENT] VOCABDIR\n"
		     "  writes LINES (1000000) folded lines with UNIQUE (100000) distinct stacks\n"
		     "  and Zipf(EXPONENT=1.0) popularity to stdout\n");
}

int main(int argc, char **argv)
{
	struct gen g = {.unique = 100000, .lines = 1000000, .seed = 1, .zipf_s = 1.0};
	uint64_t perm_m, perm_c, pos_m, pos_c, first;
	static char obuf[1 << 20];
	int opt;

	while ((opt = getopt(argc, argv, "l:u:s:z:h")) != -1) {
		switch (opt) {
		case 'l':
			g.lines = strtoull(optarg, NULL, 0);
			break;
		case 'u':
			g.unique = strtoull(optarg, NULL, 0);
			break;
		case 's':
			g.seed = strtoull(optarg, NULL, 0);
			break;
		case 'z':
			g.zipf_s = strtod(optarg, NULL);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind + 1 != argc || !g.unique || !g.lines) {
		usage(stderr);
		return 2;
	}
	if (vocab__load(&g.comm, argv[optind], "comm.txt") ||
	    vocab__load(&g.user, argv[optind], "user.txt") ||
	    vocab__load(&g.kernel, argv[optind], "kernel.txt"))
		return 1;
	if (g.user.n < BRANCH) {
		fprintf(stderr,
			"genfolded: user.txt needs at least %d names for the stacks to be "
			"distinct\n",
			BRANCH);
		return 1;
	}
	for (uint64_t u = g.unique - 1; u; u /= BRANCH)
		g.levels++;
	if (!g.levels)
		g.levels = 1;

	setvbuf(stdout, obuf, _IOFBF, sizeof(obuf));
	perm_m = coprime(g.unique, mix(g.seed ^ 1));
	perm_c = mix(g.seed ^ 2) % g.unique;
	first = g.lines < g.unique ? g.lines : g.unique;
	pos_m = coprime(first, mix(g.seed ^ 3));
	pos_c = mix(g.seed ^ 4) % first;

	if (g.lines > g.unique) {
		double sum = 0;

		g.cdf = malloc(g.unique * sizeof(*g.cdf));
		if (!g.cdf) {
			fprintf(stderr, "genfolded: out of memory\n");
			return 1;
		}
		for (uint64_t r = 0; r < g.unique; r++)
			g.cdf[r] = sum += pow(r + 1, -g.zipf_s);
		for (uint64_t r = 0; r < g.unique; r++)
			g.cdf[r] /= sum;
	}
	for (uint64_t i = 0; i < g.lines; i++) {
		uint64_t rank, h = mix(g.seed ^ (i * 0x100000001b3ULL));
		uint64_t value;
		size_t len;

		if (i < first)
			rank = (i * pos_m + pos_c) % first;
		else
			rank = zipf_rank(&g, unit(h));
		len = stack(&g, (rank * perm_m + perm_c) % g.unique);
		value = 1 + (uint64_t)(1e6 * pow(rank + 1, -g.zipf_s) * (0.5 + unit(mix(h))));
		fwrite(g.line, 1, len, stdout);
		printf(" %" PRIu64 "\n", value);
	}
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "genfolded: write error: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}
