// SPDX-License-Identifier: GPL-2.0
/*
 * A thread checkpointed while it runs on a fiber's shadow stack (glibc's
 * swapcontext, green threads).  The kernel owns the thread's own stack,
 * not the fiber's, and frees only that one when the thread exits.  After
 * restore the thread switches back to its own stack, unmaps the fiber's
 * shadow stack, maps ordinary memory at its address and exits.  That
 * memory must survive the exit (the kernel did not take the fiber's range
 * for the thread's), and no shadow-stack mapping may be left but main's
 * (the thread's own one went with it).
 */
#define CET_FIBERS
#include "cetlib.h"

/*
 * A variant (fiber_thread_unknown.c) sets these and includes this file: a
 * hook run just before the checkpoint and how many shadow-stack mappings a
 * restore may add (0 here; the variant also passes without C/R, where none
 * are added: the lab runner checks the restore added exactly that many).
 * After the join, main's stack is left and every one added.
 */
#ifndef NEW_SS
const char *test_doc = "A thread dumped on a fiber's shadow stack; after restore it frees the fiber and exits";
const char *test_author = "criu-cet";

#define NEW_SS			0
static int before_checkpoint(void)
{
	return 0;
}
#endif
#ifndef AFTER_TEST
#define AFTER_TEST() do { } while (0)
#endif

#define FIBER_SS_SIZE		(64UL << 10)
#define FIBER_STACK_SIZE	(256UL << 10)
#define PATTERN			0x5a

static struct cet_fiber thread_ctx, fiber;
static unsigned long fiber_ss;
static struct cet_thread_state on_fiber_before, on_fiber_after;
static volatile int restored, on_fiber;
static int bad;

/* The fiber: record the state, wait for the restore, record again, go home. */
static void fiber_main(unsigned long arg)
{
	if (cet_thread_state(&on_fiber_before))
		bad = 1;
	on_fiber = 1;
	while (!restored)
		usleep(1000);
	if (cet_thread_state(&on_fiber_after))
		bad = 1;
	cet_fiber_switch(&fiber, &thread_ctx);
	fail("the fiber was resumed");
	exit(1);
}

static void *thread_fn(void *arg)
{
	char *mem;

	if (cet_fiber_init(&fiber, FIBER_SS_SIZE, FIBER_STACK_SIZE, fiber_main, 0, &fiber_ss)) {
		bad = pr_perror("the fiber's stacks");
		on_fiber = 1;
		return NULL;
	}
	cet_fiber_switch(&thread_ctx, &fiber);
	/* back on the thread's own shadow stack: free the fiber, reuse its range */
	if (munmap((void *)fiber_ss, FIBER_SS_SIZE)) {
		bad = pr_perror("munmap of the fiber's shadow stack");
		return NULL;
	}
	mem = mmap((void *)fiber_ss, FIBER_SS_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (mem != (void *)fiber_ss) {
		bad = pr_perror("mmap at the fiber's old range");
		return NULL;
	}
	memset(mem, PATTERN, FIBER_SS_SIZE);
	return NULL;
}

/* The ordinary memory the thread left where the fiber's shadow stack was */
static int check_left_memory(void)
{
	unsigned char vec;
	unsigned long i;

	if (mincore((void *)fiber_ss, FIBER_SS_SIZE, &vec))
		return fail("the memory mapped at %#lx is gone after the thread exited (%m)", fiber_ss);
	for (i = 0; i < FIBER_SS_SIZE; i++)
		if (((unsigned char *)fiber_ss)[i] != PATTERN)
			return fail("the memory at %#lx changed after the thread exited", fiber_ss + i);
	return 0;
}

/* @after is @before and none or NEW_SS new mappings */
static int check_maps_after(const struct cet_ss_maps *before, const struct cet_ss_maps *after)
{
	int i, bad = 0;

	if (!NEW_SS)
		return cet_ss_maps_cmp(before, after, "process");
	if (after->nr != before->nr && after->nr != before->nr + NEW_SS)
		bad |= fail("%d shadow-stack mappings after restore, want %d (+ %d new)", after->nr, before->nr,
			    NEW_SS);
	for (i = 0; i < before->nr; i++)
		if (cet_ss_find(after, before->start[i]) < 0)
			bad |= fail("ss mapping %lx-%lx is gone after restore", before->start[i], before->end[i]);
	return bad;
}

static CET_NOINLINE int run(void)
{
	struct cet_ss_maps before, after, joined;
	pthread_t th;

	if (cet_thread_start(&th, NULL, thread_fn, NULL))
		return 1;
	while (!on_fiber)
		usleep(1000);
	if (bad || cet_ss_maps(&before))
		return 1;
	if (before.nr != 3)
		bad |= fail("%d shadow-stack mappings (main, thread, fiber), want 3", before.nr);
	if (cet_ss_find(&before, on_fiber_before.ssp) != cet_ss_find(&before, fiber_ss))
		bad |= fail("the thread's SSP %#lx is not on the fiber's shadow stack", on_fiber_before.ssp);
	if (before_checkpoint())
		return 1;

	test_daemon();
	test_waitsig();

	if (cet_ss_maps(&after))
		return 1;
	bad |= check_maps_after(&before, &after);
	restored = 1;
	pthread_join(th, NULL);
	bad |= cet_thread_state_cmp(&on_fiber_before, &on_fiber_after, "thread on the fiber");
	bad |= check_left_memory();
	AFTER_TEST();
	if (cet_ss_maps(&joined))
		return 1;
	if (joined.nr != 1 + after.nr - before.nr)
		bad |= fail("%d shadow-stack mappings after the thread exited, want %d", joined.nr,
			    1 + after.nr - before.nr);
	return cet_pass(bad, "thread back from its fiber, fiber freed, %#lx reused: the memory survived the thread's "
			"exit: ss=%d ss_after_join=%d\n", fiber_ss, after.nr, joined.nr);
}

CET_TEST_MAIN(run)
