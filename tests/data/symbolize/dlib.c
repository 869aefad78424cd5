// SPDX-License-Identifier: GPL-2.0-only
/* A shared object the symbolizer tests dlopen after tracking, to see it found. */
__attribute__((noinline)) int dlib_function(int x)
{
	return x * 3 + 1;
}
