// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "analyze/reasons.h"
#include "output/term_opts.h"

int term_opts__color(const char *when, bool *color)
{
	const char *no = getenv("NO_COLOR");

	if (!strcmp(when, "always"))
		*color = true;
	else if (!strcmp(when, "never"))
		*color = false;
	else if (!strcmp(when, "auto"))
		*color = isatty(STDOUT_FILENO) && !(no && *no);
	else
		return -EINVAL;
	return 0;
}

int term_opts__width(void)
{
	struct winsize ws;
	const char *cols = getenv("COLUMNS");
	int w;

	if (isatty(STDOUT_FILENO) && !ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_col)
		return ws.ws_col < 40 ? 40 : ws.ws_col;
	if (cols && !term_opts__int(cols, 40, 10000, &w))
		return w;
	return 80;
}

int term_opts__int(const char *s, int min, int max, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (end == s || *end || errno || v < min || v > max)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

void term_opts__settle_integrity(struct integrity *in)
{
	if (in->evidence || in->status != INTEGRITY_COMPLETE || in->nr_losses)
		return;
	in->status = INTEGRITY_UNKNOWN;
	if (!in->message[0])
		snprintf(in->message, sizeof(in->message),
			 "no collector diagnostics or loss counters were found with this capture");
}

int term_opts__reasons(const char *cmd, const char *path)
{
	FILE *f = fopen(path, "r");
	struct reason_rules *rr;
	char err[320];
	int e;

	if (!f) {
		e = errno;
		fprintf(stderr, "offcpu %s: cannot read the rules file %s: %s\n", cmd, path,
			strerror(e));
		return -e;
	}
	rr = reason_rules__parse(f, path, err, sizeof(err));
	e = rr ? 0 : errno;
	fclose(f);
	if (!rr) {
		if (e == EINVAL || e == EIO)
			fprintf(stderr, "offcpu %s: %s\n", cmd, err);
		else
			fprintf(stderr, "offcpu %s: reading %s: %s\n", cmd, path, strerror(e));
		return -e;
	}
	reasons__set_rules(rr);
	return 0;
}
