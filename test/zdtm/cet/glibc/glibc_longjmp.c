// SPDX-License-Identifier: GPL-2.0
/*
 * glibc's longjmp across checkpoint/restore: __longjmp unwinds the shadow
 * stack with incssp to the SSP setjmp saved (and checks it got there).
 * The checkpoint is taken 1500 frames below a setjmp; after restore the
 * test longjmps out of there, so the restored SSP and every shadow-stack
 * word between it and the setjmp frame must be what they were.  Then
 * setjmp/longjmp pairs across 1, 10, 300 and 2000 frames on the restored
 * stack, and a recursion that returns normally.
 */
#include <setjmp.h>

#include "cetlib.h"

const char *test_doc = "glibc setjmp/longjmp across many frames after restore";
const char *test_author = "criu-cet";

#define CKPT_DEPTH	1500

static jmp_buf env;
static int ckpt_bad = -1;

static struct cet_ckpt ckpt = { .who = "main", .check = cet_glibc_check };

static int checkpoint_and_jump(struct cet_rec *r)
{
	ckpt_bad = cet_checkpoint(&ckpt);
	longjmp(env, 1);
}

static int jump_bottom(struct cet_rec *r)
{
	longjmp(*(jmp_buf *)r->arg, 1);
}

/* setjmp here, longjmp from @depth frames below: SSP must be back where it was */
static CET_NOINLINE int jump_across(int depth)
{
	jmp_buf to;
	volatile unsigned long ssp = cet_rdssp();

	if (!setjmp(to)) {
		cet_recurse(depth, jump_bottom, &to, "recursion");
		return fail("longjmp across %d frames returned", depth);
	}
	if (cet_rdssp() != ssp)
		return fail("SSP %#lx after a longjmp across %d frames, %#lx at setjmp", cet_rdssp(), depth, ssp);
	return 0;
}

static int run(void)
{
	static const int depths[] = { 1, 10, 300, 2000 };
	volatile unsigned long ssp = cet_rdssp();
	struct cet_rec r;
	unsigned int i;
	int bad;

	if (cet_rec_init(&r, CKPT_DEPTH, checkpoint_and_jump, NULL))
		return 1;
	if (!setjmp(env)) {
		cet_rec_frame(&r, 0);
		return fail("the recursion returned instead of longjmp'ing");
	}
	bad = ckpt_bad;
	if (cet_rdssp() != ssp)
		bad |= fail("SSP %#lx after the longjmp out of the restored recursion, %#lx at setjmp",
			    cet_rdssp(), ssp);
	for (i = 0; i < sizeof(depths) / sizeof(depths[0]); i++)
		bad |= jump_across(depths[i]);
	bad |= cet_recurse(1000, cet_rec_turn, NULL, "recursion after the longjmps");
	return cet_pass(bad, "longjmp out of %d restored frames back to SSP %#lx; longjmps across 1..2000 "
			"frames after restore\n", CKPT_DEPTH, ssp);
}

CET_GLIBC_TEST_MAIN(run)
