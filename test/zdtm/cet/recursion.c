// SPDX-License-Identifier: GPL-2.0
/*
 * Scenario 1: one thread checkpointed deep in a recursion (16384 frames, a
 * 128 KiB shadow stack).  After restore every frame is unwound and checked
 * (its SSP and its regular-stack local), along with the thread's CET state,
 * the SSP at the checkpoint and the process's ss mappings.
 * deep.c builds the same test with a shadow stack deeper than 256 KiB.
 */
#include "cetlib.h"

const char *test_doc = "Shadow-stack process checkpointed deep in a recursion";
const char *test_author = "criu-cet";

#ifndef REC_DEPTH
#define REC_DEPTH 16384
#endif
#ifndef REC_NAME
#define REC_NAME "recursion"
#endif

static struct cet_thread_state before, after;
static struct cet_ss_maps maps_before, maps_after;

static int at_bottom(struct cet_rec *r)
{
	int bad = 0;

	if (cet_thread_state(&before) || cet_ss_maps(&maps_before))
		return 1;
	bad |= cet_thread_state_expect(&before, ARCH_SHSTK_SHSTK, "shstk", "", "before the dump");
	if (before.depth < (unsigned long)r->max)
		bad |= fail("shadow-stack depth %lu at the bottom of %d frames", before.depth, r->max);

	test_daemon();
	test_waitsig();

	if (cet_thread_state(&after) || cet_ss_maps(&maps_after))
		return 1;
	bad |= cet_thread_state_cmp(&before, &after, "main");
	bad |= cet_ss_maps_cmp(&maps_before, &maps_after, "process");
	return bad;
}

static CET_NOINLINE int run(void)
{
	struct cet_rec r;

	if (cet_rec_init(&r, REC_DEPTH, at_bottom, NULL))
		return 1;
	if (cet_rec_run(&r, REC_NAME))
		return 1;
	test_msg("%d frames unwound; ssp %#lx depth %lu (%lu KiB) in %lx-%lx, status %#lx '%s'\n", REC_DEPTH,
		 after.ssp, after.depth, after.depth * 8 / 1024, after.ss_start, after.ss_end, after.status,
		 after.features);
	pass();
	return 0;
}

CET_TEST_MAIN(run)
