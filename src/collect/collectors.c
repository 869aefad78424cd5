// SPDX-License-Identifier: GPL-2.0-only
#include <string.h>

#include "collect/collectors.h"

/* The built-in collector (collect/native.h): libbpf CO-RE, writes either mode. */
static const struct collector native_collector = {
	.kind = COLLECTOR_NATIVE,
	.name = "native",
	.match = "native",
	.builtin = true,
};

extern const struct collector bcc_collector;	  /* collect/bcc.c */
extern const struct collector bpftrace_collector; /* collect/bpftrace.c */

/*
 * In the order a tool name is matched against them: "bpftrace" before
 * "offcputime", so a name holding both is bpftrace. The first external row
 * writing a mode is the one an unknown tool in that mode is taken for. offcpu
 * doctor runs the rows' checks in this order too.
 */
static const struct collector *const table[] = {
	&bpftrace_collector,
	&bcc_collector,
	&native_collector,
};

#define NR_COLLECTORS (sizeof(table) / sizeof(table[0]))

const struct collector *collector__at(size_t i)
{
	return i < NR_COLLECTORS ? table[i] : NULL;
}

const struct collector *collector__get(enum collector_kind k)
{
	for (size_t i = 0; i < NR_COLLECTORS; i++)
		if (table[i]->kind == k)
			return table[i];
	return &native_collector;
}

const char *collector_kind__name(enum collector_kind c)
{
	return collector__get(c)->name;
}

enum collector_kind collector_kind__from_tool(const char *tool, enum lane_mode mode)
{
	const char *base = strrchr(tool, '/');

	base = base ? base + 1 : tool;
	for (size_t i = 0; i < NR_COLLECTORS; i++) {
		const struct collector *c = table[i];

		if (c->builtin ? !strcmp(base, c->match) : !!strstr(base, c->match))
			return c->kind;
	}
	for (size_t i = 0; i < NR_COLLECTORS; i++)
		if (!table[i]->builtin && table[i]->mode == mode)
			return table[i]->kind;
	return COLLECTOR_NATIVE;
}
