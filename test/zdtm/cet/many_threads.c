// SPDX-License-Identifier: GPL-2.0
/*
 * 300 threads (the first placement could fill only 256 gaps), each on its
 * own kernel-made shadow stack, parked mid-recursion: every
 * stack comes back at its address, kernel-owned (after the join only main's
 * mapping is left).  The rest is threads.c.  Each thread records its state
 * without the smaps walk (its SSP, features and locks; the main thread
 * compares the mappings): walks of every mapping by every thread do not
 * fit in the emulated machine's start-up time.  --threads=N (up to 1000)
 * is for the lab's cost suite, which times the restore against N.
 */
#include "cetlib.h"

const char *test_doc = "300 shadow-stack threads";
const char *test_author = "criu-cet";

static int threads = 300;
TEST_OPTION(threads, int, "threads to start (300, at most 1000)", 0);

#define NR_THREADS		1000
#define THREAD_COUNT		(threads > 0 && threads <= NR_THREADS ? threads : NR_THREADS)
#define THREAD_DEPTH(i)		(8 + (i) % 64)
#define THREAD_STACK_SIZE	(64 << 10)
static int light_state(struct cet_thread_state *s)
{
	cet_thread_state_own(s);
	s->ss_end = 1;	/* cet_thread_state_expect(): "in a mapping", checked by main */
	return 0;
}
#define THREAD_STATE light_state

static int before_checkpoint(void)
{
	return 0;
}
static int after_restore(void)
{
	return 0;
}

#include "threads.c"
