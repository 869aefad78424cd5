// SPDX-License-Identifier: GPL-2.0-only
/*
 * /proc/PID/maps (symbolize/procmaps.h). The kernel writes it, but paths are
 * whatever a process named its files (spaces, newlines, " (deleted)"), and
 * tests and other tools hand the parser saved copies. Every mapping is a
 * non-empty range with a path that is a C string.
 * fuzz-needs: src/symbolize/procmaps.c
 */
#include "fuzz.h"
#include "symbolize/procmaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *f = fuzz_open(data, size);
	struct proc_map *maps = NULL;
	size_t nr = 0, lines = 0;
	int err;

	err = procmaps__parse(f, &maps, &nr);
	fclose(f);
	FUZZ_CHECK(err == 0);
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	FUZZ_CHECK(nr <= lines + 1);
	FUZZ_CHECK(!nr || maps);
	for (size_t i = 0; i < nr; i++) {
		FUZZ_CHECK(maps[i].start < maps[i].end);
		FUZZ_CHECK(maps[i].path && strlen(maps[i].path) < size);
		FUZZ_CHECK(!strchr(maps[i].path, '\n'));
	}
	procmaps__free(maps, nr);
	return 0;
}
