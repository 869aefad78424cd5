// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "cmd_filters.h"
#include "output/term_opts.h"

int cmd_filters__option(const char *cmd, struct filter **fp, int c, const char *arg)
{
	struct filter *f = *fp ? *fp : (*fp = filter__new());
	int n, err;

	if (!f) {
		fprintf(stderr, "offcpu %s: out of memory\n", cmd);
		return 1;
	}
	switch (c) {
	case CMD_FILTER_PID:
		err = filter__add_pids(f, arg);
		if (err == -EINVAL)
			fprintf(stderr,
				"offcpu %s: --pid wants process ids from 1, comma-separated, not "
				"'%s'\n",
				cmd, arg);
		break;
	case CMD_FILTER_COMM:
		err = filter__add_comm(f, arg);
		if (err == -EINVAL)
			fprintf(stderr, "offcpu %s: --comm wants a process or thread name\n", cmd);
		break;
	case CMD_FILTER_TOP:
		err = term_opts__int(arg, 1, 1000000, &n);
		if (err)
			fprintf(stderr, "offcpu %s: --top wants a number from 1, not '%s'\n", cmd,
				arg);
		else
			filter__set_top(f, (size_t)n);
		break;
	default:
		err = -EINVAL;
	}
	if (err == -ENOMEM) {
		fprintf(stderr, "offcpu %s: out of memory\n", cmd);
		return 1;
	}
	return err ? EXIT_USAGE : 0;
}

int cmd_filters__apply(const char *cmd, const struct filter *f, struct profile **p,
		       struct timeline **t, struct filter_result *res)
{
	struct profile *q = NULL;
	struct timeline *u = NULL;
	char what[512];
	int err;

	memset(res, 0, sizeof(*res));
	if (!filter__active(f))
		return 0;
	err = filter__apply(f, *p, t ? *t : NULL, &q, t ? &u : NULL, res);
	if (err == -ESRCH) {
		filter__describe(f, what, sizeof(what));
		fprintf(stderr,
			"offcpu %s: no thread of the capture matches %s (it has %zu %s in %zu "
			"%s)\n",
			cmd, what, res->threads_total,
			res->threads_total == 1 ? "thread" : "threads", res->procs_total,
			res->procs_total == 1 ? "process" : "processes");
		return EXIT_INPUT;
	}
	if (err) {
		fprintf(stderr, "offcpu %s: filtering the capture failed: %s\n", cmd,
			strerror(-err));
		return 1;
	}
	profile__free(*p);
	*p = q;
	if (t) {
		timeline__free(*t);
		*t = u;
	}
	return 0;
}
