// SPDX-License-Identifier: GPL-2.0-only
/*
 * JIT symbol maps, /tmp/perf-PID.map (symbolize/perfmap.h), which any process
 * on the machine can write. Each line's start address is looked up, and its
 * neighbours: an answer is a whole name of one line, at an offset within it.
 * fuzz-needs: src/symbolize/perfmap.c
 */
#include "fuzz.h"
#include "symbolize/perfmap.h"

static void probe(const struct perfmap *m, uint64_t addr)
{
	uint64_t off = UINT64_MAX;
	const char *name = perfmap__resolve(m, addr, &off);

	if (!name)
		return;
	FUZZ_CHECK(name[0] && off <= addr);
	FUZZ_CHECK(!strpbrk(name, "\r\n"));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *f = fuzz_open(data, size);
	struct perfmap *m = perfmap__load(f);
	const char *s = (const char *)data, *end = s + size;
	size_t lines = 0;

	fclose(f);
	FUZZ_CHECK(m);
	for (; s < end; lines++) {
		const char *nl = memchr(s, '\n', end - s);
		char buf[40];
		size_t n = (size_t)((nl ? nl : end) - s);
		uint64_t addr;

		if (n >= sizeof(buf))
			n = sizeof(buf) - 1;
		memcpy(buf, s, n);
		buf[n] = '\0';
		addr = strtoull(buf, NULL, 16);
		probe(m, addr);
		probe(m, addr - 1);
		probe(m, addr + 1);
		s = nl ? nl + 1 : end;
	}
	probe(m, 0);
	probe(m, UINT64_MAX);
	FUZZ_CHECK(perfmap__count(m) <= lines);
	perfmap__free(m);
	return 0;
}
