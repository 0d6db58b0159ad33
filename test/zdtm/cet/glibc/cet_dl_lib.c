// SPDX-License-Identifier: GPL-2.0
/*
 * The library glibc_dlopen loads: built twice, SHSTK-marked
 * (libcet_marked.so) and not (libcet_unmarked.so).
 */
unsigned long cet_dl_recurse(int depth);

unsigned long cet_dl_recurse(int depth)
{
	volatile unsigned long mine = depth;

	if (!depth)
		return 0;
	return cet_dl_recurse(depth - 1) + mine;
}
