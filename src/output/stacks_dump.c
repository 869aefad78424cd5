// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>

#include "output/stacks_dump.h"

static void put_name(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\n' || *s == '\r')
			fputc('_', out);
		else if (*s == ',' && s[1] == ' ')
			fputc(';', out);
		else
			fputc(*s, out);
	}
}

static void put_frames(FILE *out, const struct profile *p, const uint32_t *f, size_t n, bool kernel)
{
	for (size_t i = n; i-- > 0;) {
		const struct profile_frame *fr = profile__frame_at(p, f[i]);

		if ((fr->kind == FRAME_KERNEL) != kernel)
			continue;
		fputs("    ", out);
		put_name(out, fr->name);
		fputc('\n', out);
	}
}

int stacks_dump__write(FILE *out, const struct profile *p)
{
	for (size_t i = 0, nr = profile__nr_rows(p); i < nr; i++) {
		const struct profile_row *r = profile__row_at(p, i);
		const struct profile_thread *t = profile__thread_at(p, r->thread);
		size_t nf = 0;
		const uint32_t *f = profile__stack_at(p, r->stack, &nf);

		fputs("@offcpu_ns[\n", out);
		put_frames(out, p, f, nf, true);
		fputs(",\n", out);
		put_frames(out, p, f, nf, false);
		fputs(", ", out);
		put_name(out, t->comm[0] ? t->comm : "?");
		fprintf(out, ", %d, %d]: %" PRIu64 "\n", t->pid, t->tid, r->w.off_ns);
	}
	return ferror(out) ? -EIO : 0;
}
