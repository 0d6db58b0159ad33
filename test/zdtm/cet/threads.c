// SPDX-License-Identifier: GPL-2.0
/*
 * Scenario 2: eight threads, each with its own (kernel-allocated) shadow
 * stack and each checkpointed mid-recursion at a different depth.  After
 * restore every thread checks its own CET state and SSP, unwinds and checks
 * its recursion; the main thread checks the ss mappings, and after joining
 * the threads that their shadow stacks went away with them (the kernel still
 * knows each thread owns its shadow stack).
 */
#include "cetlib.h"

/*
 * Variants (many_threads.c, limits.c) set these and include this file:
 * how many threads, how deep each one is, their stack size, and hooks run
 * once every thread is parked, just before the checkpoint, and right after
 * restore.
 */
#ifndef NR_THREADS
const char *test_doc = "Eight shadow-stack threads checkpointed mid-recursion";
const char *test_author = "criu-cet";

#define NR_THREADS		8
#define THREAD_DEPTH(i)		(300 * ((i) + 1) + 7 * (i))
#define THREAD_STACK_SIZE	(512 << 10)
static int before_checkpoint(void)
{
	return 0;
}
static int after_restore(void)
{
	return 0;
}
#endif
#ifndef THREAD_STATE
#define THREAD_STATE cet_thread_state
#endif
#ifndef BEFORE_START
#define BEFORE_START(argc, argv) do { } while (0)
#endif
/* how many of the NR_THREADS workers run (a variant may take it from an option) */
#ifndef THREAD_COUNT
#define THREAD_COUNT		NR_THREADS
#endif

static struct cet_worker workers[NR_THREADS];
static struct cet_park park = CET_PARK_INIT;

/* the main thread: all the workers parked, and the variant's hooks */
static int check(struct cet_ckpt *c, int restored, const char *when)
{
	int bad = 0;

	if (restored)
		return after_restore();
	if (c->before.maps.nr != THREAD_COUNT + 1)
		bad |= fail("%d shadow-stack mappings for %d threads", c->before.maps.nr, THREAD_COUNT + 1);
	if (before_checkpoint())
		return -1;
	return bad;
}

static struct cet_ckpt ckpt = { .who = "main", .check = check };

static CET_NOINLINE int run(void)
{
	struct cet_ss_maps joined;
	pthread_attr_t attr;
	int i, bad;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, THREAD_STACK_SIZE);
	for (i = 0; i < THREAD_COUNT; i++) {
		struct cet_worker *w = &workers[i];

		if (cet_worker_init(w, i, THREAD_DEPTH(i), &park))
			return 1;
		w->state = THREAD_STATE;
		if (cet_thread_start(&w->th, &attr, cet_worker_fn, w))
			return 1;
	}
	cet_park_wait(&park, THREAD_COUNT);

	bad = cet_checkpoint(&ckpt);
	bad |= cet_workers_finish(&park, workers, THREAD_COUNT);

	if (cet_ss_maps(&joined))
		return 1;
	if (joined.nr != 1 || cet_ss_find(&joined, ckpt.after.st.ssp) != 0)
		bad |= fail("%d shadow-stack mappings left after joining the threads (want main's only)", joined.nr);
	return cet_pass(bad, "%d threads at depths %d..%d resumed and unwound; %d ss mappings kept, 1 after join\n",
			THREAD_COUNT, workers[0].depth, workers[THREAD_COUNT - 1].depth, ckpt.after.maps.nr);
}

int main(int argc, char **argv)
{
	BEFORE_START(argc, argv);
	CET_TEST_INIT(argc, argv);
	exit(run());
}
