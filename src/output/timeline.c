// SPDX-License-Identifier: GPL-2.0-only
/*
 * Writing the timeline text (format: parse/timeline.h). A stack line is
 * written before the first interval that uses it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>

#include "output/timeline.h"
#include "parse/timeline.h"

static bool needs_escape(unsigned char c)
{
	return c == '%' || c == ';' || c < 0x20 || c == 0x7f;
}

/*
 * A waker's name is one space-separated field: spaces are escaped too, and a
 * leading digit or '-', which would read as a tid.
 */
static void write_escaped(FILE *out, const char *s, bool field)
{
	for (const char *start = s; *s; s++) {
		unsigned char c = *s;

		if (needs_escape(c) ||
		    (field && (c == ' ' || (s == start && ((c >= '0' && c <= '9') || c == '-')))))
			fprintf(out, "%%%02X", c);
		else
			fputc(c, out);
	}
}

static int write_stack(FILE *out, const struct profile *p, uint32_t id)
{
	size_t n;
	const uint32_t *fr = profile__stack_at(p, id, &n);

	if (!fr && n)
		return -EINVAL;
	fprintf(out, "stack %" PRIu32, id);
	for (size_t i = 0; i < n; i++) {
		const struct profile_frame *f = profile__frame_at(p, fr[i]);

		if (!f || (unsigned)f->kind >= FRAME__COUNT)
			return -EINVAL;
		fprintf(out, "%c%c:", i ? ';' : ' ', frame_kind__letter(f->kind));
		write_escaped(out, f->name, false);
	}
	fputc('\n', out);
	return 0;
}

int timeline__write(FILE *out, const struct timeline *t, const struct profile *p)
{
	const struct timeline_info *info = timeline__info(t);
	size_t nr_stacks = profile__nr_stacks(p);
	uint8_t *written = NULL;
	int err = 0;

	for (size_t i = 0; i < timeline__nr(t); i++)
		if (timeline__at(t, i)->stack >= nr_stacks ||
		    (timeline__at(t, i)->waker_irq &&
		     !timeline__irq_name(t, timeline__at(t, i)->waker_irq)))
			return -EINVAL;
	written = calloc(nr_stacks ? nr_stacks : 1, 1);
	if (!written)
		return -ENOMEM;
	fprintf(out, "offcpu-timeline %d\n", TIMELINE_FORMAT_VERSION);
	fprintf(out, "threshold %" PRIu64 "\n", info->min_ns);
	fprintf(out, "lost %" PRIu64 " %" PRIu64 "\n", info->lost, info->lost_ns);
	for (size_t i = 0; i < timeline__nr(t); i++) {
		const struct timeline_interval *iv = timeline__at(t, i);

		if (!written[iv->stack]) {
			err = write_stack(out, p, iv->stack);
			if (err)
				goto cleanup;
			written[iv->stack] = 1;
		}
		fprintf(out, "interval %" PRIu64 " %" PRIu64 " %" PRIu64 " %d %d %s ", iv->start_ns,
			iv->dur_ns, iv->runq_ns, iv->pid, iv->tid, offcpu_state__letter(iv->state));
		if (iv->waker_irq)
			write_escaped(out, timeline__irq_name(t, iv->waker_irq), true);
		else
			fprintf(out, "%d", iv->waker_tid);
		fprintf(out, " %" PRIu32 "\n", iv->stack);
	}
	if (fflush(out) || ferror(out))
		err = -EIO;
cleanup:
	free(written);
	return err;
}
