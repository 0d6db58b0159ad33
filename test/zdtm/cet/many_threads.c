// SPDX-License-Identifier: GPL-2.0
/*
 * A thousand threads, each on its own kernel-made shadow stack, parked
 * mid-recursion: every stack comes back at its address, kernel-owned (after
 * the join only main's mapping is left), however many gaps the placement
 * has to fill.  The rest is threads.c.
 */
const char *test_doc = "1000 shadow-stack threads";
const char *test_author = "criu-cet";

#define NR_THREADS		1000
#define THREAD_DEPTH(i)		(8 + (i) % 64)
#define THREAD_STACK_SIZE	(64 << 10)
static int before_checkpoint(void)
{
	return 0;
}
static int after_restore(void)
{
	return 0;
}

#include "threads.c"
