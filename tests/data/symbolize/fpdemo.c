// SPDX-License-Identifier: GPL-2.0-only
/*
 * A program for the symbolizer tests, compiled by them at run time with and
 * without frame pointers, PIE and not, stripped and not. It prints where
 * fpdemo_target is, at run time and in the file ("RUNTIME VADDR" in hex),
 * then waits to be killed. Its functions call each other so that every one
 * needs a stack frame of its own.
 */
#define _GNU_SOURCE
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

volatile int fpdemo_sink;

#ifdef FPDEMO_GO
/* what a Go toolchain leaves in every binary it links */
__attribute__((section(".note.go.buildid"), used)) static const char go_buildid[] = "fpdemo";
#endif

NOINLINE int fpdemo_leaf(int x)
{
	fpdemo_sink += x;
	return fpdemo_sink * 3;
}

NOINLINE int fpdemo_target(int x)
{
	int a[8];

	for (int i = 0; i < 8; i++)
		a[i] = fpdemo_leaf(x + i);
	return a[x & 7] + fpdemo_leaf(a[0]);
}

NOINLINE int fpdemo_b(int x)
{
	return fpdemo_target(x) * fpdemo_leaf(x + 1) + 7;
}

NOINLINE int fpdemo_c(int x)
{
	int s = 0;

	for (int i = 0; i < x; i++)
		s += fpdemo_b(i) ^ fpdemo_target(s);
	return s;
}

NOINLINE int fpdemo_d(int x)
{
	return fpdemo_c(x) + fpdemo_b(x) + fpdemo_leaf(x);
}

NOINLINE int fpdemo_e(int x)
{
	return fpdemo_d(x & 3) - fpdemo_c(x & 1);
}

NOINLINE int fpdemo_f(int x)
{
	return fpdemo_e(x) * fpdemo_d(x + 2);
}

NOINLINE int fpdemo_g(int x)
{
	return fpdemo_f(x) + fpdemo_e(x + fpdemo_leaf(x));
}

static int main_bias(struct dl_phdr_info *info, size_t size, void *data)
{
	*(uintptr_t *)data = info->dlpi_addr; /* the first object is the program */
	return 1;
}

int main(void)
{
	uintptr_t bias = 0, at = (uintptr_t)&fpdemo_target;

	dl_iterate_phdr(main_bias, &bias);
	printf("%lx %lx\n", (unsigned long)at, (unsigned long)(at - bias));
	fflush(stdout);
	fpdemo_sink = fpdemo_g(fpdemo_sink);
	for (;;)
		pause();
}
