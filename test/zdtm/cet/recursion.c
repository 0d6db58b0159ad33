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

static int check(struct cet_ckpt *c, int restored, const char *when)
{
	int bad = 0;

	if (restored)
		return 0;
	bad |= cet_expect_shstk(&c->before.st, when);
	if (c->before.st.depth < REC_DEPTH)
		bad |= fail("shadow-stack depth %lu at the bottom of %d frames", c->before.st.depth, REC_DEPTH);
	return bad;
}

static struct cet_ckpt ckpt = { .who = "main", .check = check };

static CET_NOINLINE int run(void)
{
	struct cet_thread_state *s = &ckpt.after.st;

	return cet_pass(cet_recurse(REC_DEPTH, cet_rec_checkpoint, &ckpt, REC_NAME),
			"%d frames unwound; ssp %#lx depth %lu (%lu KiB) in %lx-%lx, status %#lx '%s'\n", REC_DEPTH,
			s->ssp, s->depth, s->depth * 8 / 1024, s->ss_start, s->ss_end, s->status, s->features);
}

CET_TEST_MAIN(run)
