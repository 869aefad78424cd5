// SPDX-License-Identifier: GPL-2.0-only
/*
 * offcpu record: run a workload (or watch pids, a cgroup, the host) under an
 * off-CPU collector and leave a lane directory with capture, diagnostics and
 * summary. Exits with the workload's status (128+N for signal N), like time(1).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "collect/native.h"
#include "lane/record.h"
#include "util/config.h"
#include "util/units.h"
#include "util/vec.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: offcpu record [OPTIONS] -- COMMAND [ARGS...]\n"
		"       offcpu record [OPTIONS] -p PID[,PID...] | -a | --cgroup DIR  [-d "
		"DURATION]\n"
		"\n"
		"Capture off-CPU time; write DIR/offcpu.{time,stacks}.txt, "
		"DIR/offcpu.diagnostics.txt\n"
		"and DIR/offcpu.summary.json.\n"
		"\n"
		"Target:\n"
		"  -- COMMAND             run COMMAND, traced with every process it forks\n"
		"  -p, --pid PIDS         running processes (all their threads), comma-separated\n"
		"  -a, --all              the whole host\n"
		"      --cgroup DIR       a cgroup v2 directory\n"
		"  -d, --duration T       stop after T (e.g. 10, 2.5s, 500ms, 1m); default: when\n"
		"                         the command ends, or ^C\n"
		"      --deadline-signal SIG  at -d, send SIG (TERM, INT, KILL, ... or a number;\n"
		"                         default TERM) to the command's process group\n"
		"      --kill-after T     then SIGKILL what is left of it after T (default 5s;\n"
		"                         0: at once); also the grace after an interrupt\n"
		"Collector:\n"
		"  -o, --output DIR       lane directory (default: offcpu-out)\n"
		"      --mode time|stacks time: folded blocked time; stacks: bpftrace-style dump\n"
		"      --tool NAME|PATH   native (default), offcputime-bpfcc, bpftrace, or a path "
		"to\n"
		"                         a compatible tool\n"
		"  -m, --min-block US     only intervals of at least US microseconds\n"
		"  -M, --max-block US     only intervals of at most US microseconds\n"
		"      --state MASK       only these states: letters of S, D, R (e.g. SD)\n"
		"      --timeline[=MIN]   also keep each interval of at least MIN (default 1ms; "
		"0:\n"
		"                         all) with its waker: DIR/offcpu.timeline.txt, for\n"
		"                         'offcpu export --format chrome-trace' (native only)\n"
		"      --kernel-threads   include kernel threads\n"
		"      --no-user-stacks, --no-kernel-stacks\n"
		"      --unwind dwarf|fp  user stacks from .eh_frame tables (default) or frame "
		"pointers only\n"
		"      --unwind-memory SIZE   kernel memory for unwind tables (default 64M)\n"
		"      --no-stack-cache   walk every stack (the cache is exact; this is for "
		"benchmarks)\n"
		"      --raw-tp           use the raw_tp programs even where tp_btf works\n"
		"      --no-inline        no frames for inlined functions (default: from the\n"
		"                         debug info, where there is some; native only)\n"
		"      --stack-entries N, --agg-entries N, --thread-entries N   map sizes\n"
		"      --ready-timeout T  wait at most T for an external collector to attach "
		"(60s)\n"
		"      --stop-timeout T   wait at most T for it to flush at the end (10s)\n"
		"Workload:\n"
		"      --user NAME        run the command as NAME (default under sudo: the "
		"invoking\n"
		"                         user)\n"
		"      --as-root          under sudo, run the command as root\n"
		"Continuous (with -p, -a or --cgroup; docs/continuous.md):\n"
		"      --every T          one lane directory per period under -o DIR, named by\n"
		"                         its start in UTC; periods end at multiples of T\n"
		"      --keep T, --keep-size SIZE   remove older periods (e.g. 24h, 2G)\n"
		"      --push URL         send each period to a Pyroscope server (docs/push.md)\n"
		"      --push-auth FILE   its credential; --push-spool DIR: the queue\n"
		"      --label K=V        a label on the pushed series (repeatable)\n"
		"      --config FILE      options from FILE, one 'key = value' a line; SIGHUP\n"
		"                         reads it again\n"
		"Output:\n"
		"      --json[=FILE]      write the result record as one JSON line: to FILE\n"
		"                         (/dev/fd/N: descriptor N), or to offcpu's stdout ('-',\n"
		"                         the default) once the command has ended, which may\n"
		"                         share a stream with its output\n"
		"  -q, --quiet            no summary on stderr, no status line\n"
		"      --progress         the live status line even when stderr is not a\n"
		"                         terminal (or with -q)\n"
		"  -h, --help             this help\n"
		"\n"
		"Exit status: the command's (128+N if killed by signal N, at -d too); 2 usage\n"
		"error; 125 offcpu could not run; 126/127 the command could not be\n"
		"executed/found; 128+N interrupted by signal N before the command started.\n");
}

static int parse_duration(const char *s, uint64_t *ns)
{
	size_t digits = strspn(s, "0123456789"), frac = 0;
	char *end;
	double v;

	/* Plain decimals only: strtod would also take "nan", "inf", "1e3" and hex. */
	if (s[digits] == '.')
		frac = strspn(s + digits + 1, "0123456789");
	if (!digits && !frac)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end != s + digits + (s[digits] == '.') + frac || v < 0 || v > 86400.0 * 365)
		return -EINVAL;
	if (!strcmp(end, "ms"))
		v /= 1000;
	else if (!strcmp(end, "us"))
		v /= 1e6;
	else if (!strcmp(end, "m"))
		v *= 60;
	else if (!strcmp(end, "h"))
		v *= 3600;
	else if (*end && strcmp(end, "s"))
		return -EINVAL;
	*ns = (uint64_t)(v * 1e9);
	return 0;
}

/* A signal by name (TERM, SIGTERM, term) or number. */
static int parse_signal(const char *s, int *sig)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (end != s) {
		if (errno || *end || v <= 0 || v >= SIGRTMIN)
			return -EINVAL;
		*sig = (int)v;
		return 0;
	}
	if (!strncasecmp(s, "SIG", 3))
		s += 3;
	for (int i = 1; i < SIGRTMIN; i++) {
		const char *name = sigabbrev_np(i);

		if (name && !strcasecmp(name, s)) {
			*sig = i;
			return 0;
		}
	}
	return -EINVAL;
}

static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* A byte count with an optional K, M or G suffix (powers of 1024). */
static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned int shift = 0;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		return -EINVAL;
	if (*end == 'K' || *end == 'k')
		shift = 10;
	else if (*end == 'M' || *end == 'm')
		shift = 20;
	else if (*end == 'G' || *end == 'g')
		shift = 30;
	if (shift)
		end++;
	if (*end || v > (UINT64_MAX >> shift))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

static int parse_states(const char *s, uint32_t *mask)
{
	*mask = 0;
	for (; *s; s++) {
		switch (*s) {
		case 'S':
			*mask |= 1u << OFFCPU_STATE_SLEEP;
			break;
		case 'D':
			*mask |= 1u << OFFCPU_STATE_DISK;
			break;
		case 'R':
			*mask |= 1u << OFFCPU_STATE_PREEMPT;
			break;
		case 'O':
			*mask |= 1u << OFFCPU_STATE_OTHER;
			break;
		default:
			return -EINVAL;
		}
	}
	return *mask ? 0 : -EINVAL;
}

/*
 * "PID[,PID...]" into *pids (appended to, *nr of them): each a decimal from 1
 * to the kernel's largest pid, no empty items. 0, -EINVAL or -ENOMEM.
 */
static int parse_pids(const char *s, int **pids, size_t *nr, size_t *cap)
{
	do {
		size_t n = strspn(s, "0123456789");
		uint64_t v;
		char num[16];

		if (!n || n >= sizeof(num) || (s[n] && s[n] != ','))
			return -EINVAL;
		memcpy(num, s, n);
		num[n] = '\0';
		if (parse_u64(num, 4194304, &v) || !v) /* PID_MAX_LIMIT */
			return -EINVAL;
		if (vec_reserve(*pids, *cap, *nr + 1))
			return -ENOMEM;
		(*pids)[(*nr)++] = (int)v;
		s += n;
	} while (*s && *++s);
	return s[-1] == ',' ? -EINVAL : 0;
}

/* Set while the --config file's options are parsed: errors name its line. */
static const struct config_args *bad_cfg;

static void bad_prefix(void)
{
	char where[512];

	fputs("offcpu record: ", stderr);
	if (bad_cfg)
		fprintf(stderr, "%s: ", config__where(bad_cfg, optind - 1, where, sizeof(where)));
}

#define BAD(...)                              \
	do {                                  \
		bad_prefix();                 \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr);          \
		return -EINVAL;               \
	} while (0)

enum record_opt {
	OPT_MODE = 256,
	OPT_TOOL,
	OPT_JSON,
	OPT_READY,
	OPT_STOP,
	OPT_CGROUP,
	OPT_STATE,
	OPT_KTHREADS,
	OPT_NO_USTACK,
	OPT_NO_KSTACK,
	OPT_NO_CACHE,
	OPT_RAWTP,
	OPT_STACK_N,
	OPT_AGG_N,
	OPT_THREAD_N,
	OPT_USER,
	OPT_AS_ROOT,
	OPT_TIMELINE,
	OPT_DEADLINE_SIG,
	OPT_KILL_AFTER,
	OPT_UNWIND,
	OPT_UNWIND_MEM,
	OPT_NO_INLINE,
	OPT_PROGRESS,
	OPT_EVERY,
	OPT_KEEP,
	OPT_KEEP_SIZE,
	OPT_PUSH,
	OPT_PUSH_AUTH,
	OPT_PUSH_SPOOL,
	OPT_LABEL,
	OPT_CONFIG,
};
static const struct option longopts[] = {
	{"output", required_argument, NULL, 'o'},
	{"mode", required_argument, NULL, OPT_MODE},
	{"tool", required_argument, NULL, OPT_TOOL},
	{"json", optional_argument, NULL, OPT_JSON},
	{"ready-timeout", required_argument, NULL, OPT_READY},
	{"stop-timeout", required_argument, NULL, OPT_STOP},
	{"pid", required_argument, NULL, 'p'},
	{"all", no_argument, NULL, 'a'},
	{"cgroup", required_argument, NULL, OPT_CGROUP},
	{"duration", required_argument, NULL, 'd'},
	{"deadline-signal", required_argument, NULL, OPT_DEADLINE_SIG},
	{"kill-after", required_argument, NULL, OPT_KILL_AFTER},
	{"min-block", required_argument, NULL, 'm'},
	{"max-block", required_argument, NULL, 'M'},
	{"state", required_argument, NULL, OPT_STATE},
	{"kernel-threads", no_argument, NULL, OPT_KTHREADS},
	{"no-user-stacks", no_argument, NULL, OPT_NO_USTACK},
	{"no-kernel-stacks", no_argument, NULL, OPT_NO_KSTACK},
	{"no-stack-cache", no_argument, NULL, OPT_NO_CACHE},
	{"unwind", required_argument, NULL, OPT_UNWIND},
	{"unwind-memory", required_argument, NULL, OPT_UNWIND_MEM},
	{"no-inline", no_argument, NULL, OPT_NO_INLINE},
	{"raw-tp", no_argument, NULL, OPT_RAWTP},
	{"stack-entries", required_argument, NULL, OPT_STACK_N},
	{"agg-entries", required_argument, NULL, OPT_AGG_N},
	{"thread-entries", required_argument, NULL, OPT_THREAD_N},
	{"user", required_argument, NULL, OPT_USER},
	{"as-root", no_argument, NULL, OPT_AS_ROOT},
	{"timeline", optional_argument, NULL, OPT_TIMELINE},
	{"quiet", no_argument, NULL, 'q'},
	{"progress", no_argument, NULL, OPT_PROGRESS},
	{"every", required_argument, NULL, OPT_EVERY},
	{"keep", required_argument, NULL, OPT_KEEP},
	{"keep-size", required_argument, NULL, OPT_KEEP_SIZE},
	{"push", required_argument, NULL, OPT_PUSH},
	{"push-auth", required_argument, NULL, OPT_PUSH_AUTH},
	{"push-spool", required_argument, NULL, OPT_PUSH_SPOOL},
	{"label", required_argument, NULL, OPT_LABEL},
	{"config", required_argument, NULL, OPT_CONFIG},
	{"help", no_argument, NULL, 'h'},
	{},
};

/* The settings of continuous mode that SIGHUP may change: 0, or -EINVAL and why. */
static int cont_apply(int c, const char *arg, struct continuous_opts *co, size_t *cap, char *why,
		      size_t whylen)
{
	switch (c) {
	case OPT_KEEP:
		if (units__parse_duration(arg, &co->keep_ns) || !co->keep_ns)
			goto bad_duration;
		return 0;
	case OPT_KEEP_SIZE:
		if (units__parse_size(arg, &co->keep_bytes) || !co->keep_bytes) {
			snprintf(why, whylen, "--keep-size takes a size (e.g. 500M, 10G), not '%s'",
				 arg);
			return -EINVAL;
		}
		return 0;
	case OPT_PUSH:
		co->push_url = arg;
		return 0;
	case OPT_PUSH_AUTH:
		co->push_auth = arg;
		return 0;
	case OPT_PUSH_SPOOL:
		co->push_spool = arg;
		return 0;
	case OPT_LABEL:
		if (!strchr(arg, '=') || *arg == '=') {
			snprintf(why, whylen, "--label takes KEY=VALUE, not '%s'", arg);
			return -EINVAL;
		}
		if (vec_reserve(co->labels, *cap, co->nr_labels + 1))
			return -ENOMEM;
		co->labels[co->nr_labels++] = arg;
		return 0;
	}
	return 1; /* not one of them */
bad_duration:
	snprintf(why, whylen, "--keep takes a duration (e.g. 24h, 7d), not '%s'", arg);
	return -EINVAL;
}

/* The --config given on the command line (before the command), or NULL. */
static const char *config_path(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strncmp(argv[i], "--config=", 9))
			return argv[i] + 9;
		if (!strcmp(argv[i], "--config") && i + 1 < argc)
			return argv[i + 1];
	}
	return NULL;
}

/* What SIGHUP reads again: the config file, then the command line over it. */
static int saved_argc;
static char **saved_argv;

struct cont_owner {
	struct config_args cfg;
	const char **labels;
};

static void cont_owner_free(void *p)
{
	struct cont_owner *w = p;

	config__free(&w->cfg);
	free(w->labels);
	free(w);
}

static int reload_cont(const struct record_opts *o, struct continuous_opts *out, char *why,
		       size_t whylen)
{
	struct cont_owner *w = calloc(1, sizeof(*w));
	size_t cap = 0;
	int c, err = 0;

	if (!w)
		return -ENOMEM;
	memset(out, 0, sizeof(*out));
	if (config__load(o->config, longopts, &w->cfg, why, whylen)) {
		free(w);
		return -EINVAL;
	}
	for (int pass = 0; pass < 2 && !err; pass++) {
		int ac = pass ? saved_argc : w->cfg.argc;
		char **av = pass ? saved_argv : w->cfg.argv;

		optind = 0;
		opterr = 0;
		while (!err && (c = getopt_long(ac, av, "+o:p:ad:m:M:qh", longopts, NULL)) != -1)
			err = cont_apply(c, optarg, out, &cap, why, whylen) < 0 ? -EINVAL : 0;
	}
	w->labels = out->labels;
	out->owner = w;
	out->free_owner = cont_owner_free;
	if (err) {
		cont_owner_free(w);
		memset(out, 0, sizeof(*out));
	}
	return err;
}

static int parse_args(int argc, char **argv, struct record_opts *o, struct config_args *cfg)
{
	bool mode_given = false;
	size_t pids_cap = 0, labels_cap = 0;
	int targets = 0, c, err;
	uint64_t v, ns;
	char why[512];

	o->out_dir = "offcpu-out";
	o->ready_timeout_ms = 60000;
	o->stop_timeout_ms = 10000;
	o->deadline_signal = SIGTERM;
	o->kill_after_ns = 5000000000ull;
	o->config = config_path(argc, argv);
	if (o->config && config__load(o->config, longopts, cfg, why, sizeof(why)))
		BAD("%s", why);
	/* The config's options first, then the command line's: the command line wins. */
	for (int pass = o->config ? 0 : 1; pass < 2; pass++) {
		int ac = pass ? argc : cfg->argc;
		char **av = pass ? argv : cfg->argv;

		bad_cfg = pass ? NULL : cfg;
		optind = 0;
		opterr = pass;
		while ((c = getopt_long(ac, av, "+o:p:ad:m:M:qh", longopts, NULL)) != -1) {
			err = cont_apply(c, optarg, &o->cont, &labels_cap, why, sizeof(why));
			if (err < 0)
				BAD("%s", why);
			if (!err)
				continue;
			switch (c) {
			case OPT_EVERY:
				if (units__parse_duration(optarg, &o->every_ns) ||
				    o->every_ns < 1000000000ull)
					BAD("--every takes a duration of 1s or more (e.g. 15s, "
					    "1m), not '%s'",
					    optarg);
				break;
			case OPT_CONFIG:
				if (!pass)
					BAD("a config file cannot name another one");
				break;
			case 'o':
				o->out_dir = optarg;
				break;
			case OPT_MODE:
				if (lane_mode__parse(optarg, &o->mode))
					BAD("--mode is 'time' or 'stacks', not '%s'", optarg);
				mode_given = true;
				break;
			case OPT_TOOL:
				o->tool = optarg;
				break;
			case OPT_JSON:
				o->json = true;
				o->json_path = optarg;
				if (optarg && !*optarg)
					BAD("--json=FILE needs a file name ('-' for standard "
					    "output)");
				break;
			case OPT_READY:
			case OPT_STOP:
				if (parse_duration(optarg, &ns) || ns / 1000000 > INT32_MAX)
					BAD("'%s' is not a duration (e.g. 10, 2.5s, 500ms)",
					    optarg);
				*(c == OPT_READY ? &o->ready_timeout_ms : &o->stop_timeout_ms) =
					(int)(ns / 1000000);
				break;
			case 'p':
				o->target = TARGET_PIDS;
				o->target_arg = optarg;
				o->nr_pids = 0;
				if (parse_pids(optarg, &o->pids, &o->nr_pids, &pids_cap))
					BAD("-p takes process ids (1 and up) separated by single "
					    "commas, "
					    "e.g. -p 123,456; not '%s'",
					    optarg);
				targets++;
				break;
			case 'a':
				o->target = TARGET_HOST;
				targets++;
				break;
			case OPT_CGROUP:
				o->target = TARGET_CGROUP;
				o->target_arg = optarg;
				targets++;
				break;
			case 'd':
				if (parse_duration(optarg, &o->duration_ns) || !o->duration_ns)
					BAD("-d takes a positive duration (e.g. 10, 2.5s, 500ms), "
					    "not '%s'",
					    optarg);
				break;
			case OPT_DEADLINE_SIG:
				if (parse_signal(optarg, &o->deadline_signal))
					BAD("--deadline-signal takes a signal name or number (e.g. "
					    "TERM, "
					    "INT, 9), not '%s'",
					    optarg);
				break;
			case OPT_KILL_AFTER:
				if (parse_duration(optarg, &o->kill_after_ns))
					BAD("--kill-after takes a duration (e.g. 0, 500ms, 5s), "
					    "not '%s'",
					    optarg);
				break;
			case 'm':
			case 'M':
				if (parse_u64(optarg, UINT64_MAX / 1000, &v))
					BAD("-%c takes microseconds, not '%s'", c, optarg);
				*(c == 'm' ? &o->native.min_block_ns : &o->native.max_block_ns) =
					v * 1000;
				break;
			case OPT_STATE:
				if (parse_states(optarg, &o->native.state_mask))
					BAD("--state takes letters among S, D, R, O, not '%s'",
					    optarg);
				break;
			case OPT_KTHREADS:
				o->native.kernel_threads = true;
				break;
			case OPT_NO_USTACK:
				o->native.no_user_stacks = true;
				break;
			case OPT_NO_KSTACK:
				o->native.no_kernel_stacks = true;
				break;
			case OPT_NO_CACHE:
				o->native.no_stack_cache = true;
				break;
			case OPT_RAWTP:
				o->native.force_raw_tp = true;
				break;
			case OPT_UNWIND:
				if (strcmp(optarg, "dwarf") && strcmp(optarg, "fp"))
					BAD("--unwind is 'dwarf' or 'fp', not '%s'", optarg);
				o->native.fp_unwind = !strcmp(optarg, "fp");
				break;
			case OPT_UNWIND_MEM:
				if (parse_size(optarg, &o->native.unwind_budget) ||
				    o->native.unwind_budget < 4096)
					BAD("--unwind-memory is a size like 64M or 1G (at least "
					    "4K), not "
					    "'%s'",
					    optarg);
				break;
			case OPT_NO_INLINE:
				o->no_inline = true;
				break;
			case OPT_STACK_N:
			case OPT_AGG_N:
			case OPT_THREAD_N:
				if (parse_u64(optarg, 1u << 26, &v) || !v)
					BAD("map sizes are whole numbers from 1 to %u, not '%s'",
					    1u << 26, optarg);
				*(c == OPT_STACK_N ? &o->native.stack_entries
				  : c == OPT_AGG_N ? &o->native.agg_entries
						   : &o->native.thread_entries) = (uint32_t)v;
				break;
			case OPT_USER:
				o->user = optarg;
				break;
			case OPT_AS_ROOT:
				o->as_root = true;
				break;
			case OPT_TIMELINE:
				o->timeline = true;
				o->timeline_min_ns = 1000000;
				if (optarg && parse_duration(optarg, &o->timeline_min_ns))
					BAD("--timeline=MIN takes a duration (e.g. 0, 500us, "
					    "10ms), not "
					    "'%s'",
					    optarg);
				break;
			case 'q':
				o->quiet = true;
				break;
			case OPT_PROGRESS:
				o->progress = true;
				break;
			case 'h':
				if (!pass)
					BAD("'help' is no setting");
				usage(stdout);
				return 1;
			default:
				BAD("try 'offcpu record --help'");
			}
		}
	}
	bad_cfg = NULL;
	if (targets > 1)
		BAD("give one target: a command, -p, -a or --cgroup");
	if (o->every_ns) {
		if (!targets)
			BAD("--every records -p, -a or --cgroup, not a command");
		if (o->timeline)
			BAD("--every and --timeline exclude each other");
		if (o->json)
			BAD("--every writes a summary per period; --json goes with one capture");
		if (o->tool && collector_kind__from_tool(o->tool, o->mode) != COLLECTOR_NATIVE)
			BAD("--every needs the native collector");
		if (o->config)
			o->reload = reload_cont;
		o->native.long_run = true;
	} else if (o->cont.keep_ns || o->cont.keep_bytes || o->cont.push_url || o->cont.nr_labels) {
		BAD("--keep, --keep-size, --push and --label go with --every");
	}
	if ((o->cont.push_auth || o->cont.push_spool) && !o->cont.push_url)
		BAD("--push-auth and --push-spool go with --push");
	if (o->timeline && o->tool &&
	    collector_kind__from_tool(o->tool, o->mode) != COLLECTOR_NATIVE)
		BAD("--timeline needs the native collector; %s keeps no intervals", o->tool);
	if (o->native.max_block_ns && o->native.min_block_ns > o->native.max_block_ns)
		BAD("-m is larger than -M");
	if (targets && optind < argc)
		BAD("a command and -p/-a/--cgroup exclude each other");
	if (!targets && optind >= argc)
		BAD("no command to run; usage: offcpu record [OPTIONS] -- COMMAND [ARGS...]");
	/* An external collector has one output format: the mode follows it. */
	if (o->tool) {
		enum collector_kind k = collector_kind__from_tool(o->tool, o->mode);
		const struct collector *coll = collector__get(k);
		enum lane_mode want = coll->mode;

		if (!coll->builtin && o->mode != want) {
			if (mode_given)
				BAD("%s writes %s captures; use --mode %s", o->tool,
				    lane_mode__name(want), lane_mode__name(want));
			o->mode = want;
		}
	}
	o->argv = argv + optind;
	return 0;
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o = {};
	struct config_args cfg = {0};
	int err;

	saved_argc = argc;
	saved_argv = argv;
	err = parse_args(argc, argv, &o, &cfg);

	if (!err)
		err = record__run(&o);
	else
		err = err > 0 ? 0 : 2;
	free(o.pids);
	free(o.cont.labels);
	config__free(&cfg);
	return err;
}
