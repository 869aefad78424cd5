// SPDX-License-Identifier: GPL-2.0-only
/*
 * Waits inside a library loaded after the capture began (tests/e2e/unwind.sh):
 * the recorder must read the process's mappings again to unwind and name it.
 *
 * First ROUNDS sleeps from main alone (the process is tracked with the
 * mappings it started with), then dlopen("libz.so.1"), which the program is
 * not linked with, and ROUNDS more sleeps from a callback of its inflateBack():
 *
 *   main -> through_zlib -> inflateBack (libz, no frame pointers) -> lib_wait
 *        -> clock_nanosleep
 *
 * A stack that names inflateBack between through_zlib and lib_wait went
 * through libz's own unwind table, read after the dlopen.
 */
#include <dlfcn.h>
#include <zlib.h>

#include "workload.h"

#define ROUNDS 20

typedef int (*back_init_fn)(z_streamp, int, unsigned char *, const char *, int);
typedef int (*back_fn)(z_streamp, in_func, void *, out_func, void *);
typedef int (*back_end_fn)(z_streamp);

static volatile long work_done; /* written after each call: no call is a tail call */

static __attribute__((noipa)) unsigned int lib_wait(void *desc, z_const unsigned char **buf)
{
	(void)desc;
	*buf = NULL;
	wl_sleep_ns(10 * NSEC_PER_MSEC);
	work_done++;
	return 0; /* no input: inflateBack() returns Z_BUF_ERROR */
}

static int out_none(void *desc, unsigned char *buf, unsigned int len)
{
	(void)desc;
	(void)buf;
	(void)len;
	return 0;
}

static __attribute__((noipa)) void through_zlib(back_fn back, z_streamp z)
{
	back(z, lib_wait, NULL, out_none, NULL);
	work_done++;
}

int main(int argc, char **argv)
{
	static unsigned char window[1 << 15];
	back_init_fn init;
	back_end_fn end;
	back_fn back;
	z_stream z;
	void *lib;

	wl_args(argc, argv, "", NULL, 0);
	wl_start();
	for (int i = 0; i < ROUNDS; i++)
		wl_sleep_ns(10 * NSEC_PER_MSEC);
	lib = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		wl_die("dlopen libz.so.1: %s", dlerror());
	init = (back_init_fn)dlsym(lib, "inflateBackInit_");
	back = (back_fn)dlsym(lib, "inflateBack");
	end = (back_end_fn)dlsym(lib, "inflateBackEnd");
	if (!init || !back || !end)
		wl_die("libz.so.1 has no inflateBack");
	for (int i = 0; i < ROUNDS; i++) {
		memset(&z, 0, sizeof(z));
		if (init(&z, 15, window, ZLIB_VERSION, (int)sizeof(z)) != Z_OK)
			wl_die("inflateBackInit_ failed");
		through_zlib(back, &z);
		end(&z);
	}
	return 0;
}
