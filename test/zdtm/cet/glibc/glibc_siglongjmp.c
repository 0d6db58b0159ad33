// SPDX-License-Identifier: GPL-2.0
/*
 * A signal handler that siglongjmps out, across checkpoint/restore.  The
 * kernel puts a token on the shadow stack for the signal frame; glibc's
 * siglongjmp unwinds past it with incssp to the SSP sigsetjmp saved.  The
 * checkpoint is taken inside a SIGUSR1 handler (100 frames down in the
 * handler, 700 below the sigsetjmp); after restore the handler jumps out,
 * and SSP, the signal mask and the shadow stack must be as at sigsetjmp.
 * Handlers raised at depths 1 to 500 then jump out 50 more times.
 */
#include <setjmp.h>

#include "cetlib.h"

const char *test_doc = "siglongjmp out of a signal handler after restore";
const char *test_author = "criu-cet";

static sigjmp_buf env;
static volatile int checkpoint_in_handler;
static int ckpt_bad = -1;

static struct cet_ckpt ckpt = { .who = "SIGUSR1 handler", .check = cet_glibc_check };

static int handler_bottom(struct cet_rec *r)
{
	ckpt_bad = cet_checkpoint(&ckpt);
	siglongjmp(env, 1);
}

static void on_usr1(int sig)
{
	if (checkpoint_in_handler)
		cet_recurse(100, handler_bottom, NULL, "SIGUSR1 handler");
	siglongjmp(env, 1);
}

static int raise_usr1(struct cet_rec *r)
{
	raise(SIGUSR1);
	return fail("the SIGUSR1 handler returned");
}

/* sigsetjmp, a handler @depth frames below, and back: SSP and mask as they were */
static CET_NOINLINE int jump_out(int depth, const char *when)
{
	volatile unsigned long ssp = cet_rdssp();
	sigset_t mask;

	if (!sigsetjmp(env, 1)) {
		cet_recurse(depth, raise_usr1, NULL, "signalled recursion");
		return fail("%s: the recursion returned", when);
	}
	if (cet_rdssp() != ssp)
		return fail("%s: SSP %#lx after siglongjmp from %d frames, %#lx at sigsetjmp", when, cet_rdssp(),
			    depth, ssp);
	sigprocmask(SIG_SETMASK, NULL, &mask);
	if (sigismember(&mask, SIGUSR1))
		return fail("%s: SIGUSR1 still blocked after siglongjmp", when);
	return 0;
}

static int run(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	int i, bad = 0;

	if (sigaction(SIGUSR1, &sa, NULL))
		return pr_perror("sigaction");
	for (i = 0; i < 3; i++)
		bad |= jump_out(50 * i, "before the dump");
	checkpoint_in_handler = 1;
	bad |= jump_out(700, "out of the restored handler");
	bad |= ckpt_bad;
	checkpoint_in_handler = 0;
	for (i = 0; i < 50; i++)
		bad |= jump_out(1 + 10 * i, "after restore");
	bad |= cet_recurse(1000, cet_rec_turn, NULL, "recursion after the jumps");
	return cet_pass(bad, "checkpointed in a SIGUSR1 handler 800 frames down, jumped out after restore; "
			"50 more handlers jumped out\n");
}

CET_GLIBC_TEST_MAIN(run)
