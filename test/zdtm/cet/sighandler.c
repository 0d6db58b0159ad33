// SPDX-License-Identifier: GPL-2.0
/*
 * Scenario 5: checkpointed inside a signal handler.  The handler (SIGUSR1,
 * raised by the test itself) recurses and waits at the bottom to be
 * checkpointed.  After restore it checks its state and the kernel's signal
 * frame on the shadow stack (the sa_restorer return address and the SSP
 * token), unwinds and returns normally: rt_sigreturn must accept the token,
 * and main() checks it is back at the SSP it had before raise().
 * sigaltstack.c builds it with the handler on an alternate signal stack.
 */
#include <signal.h>

#include "cetlib.h"

#ifdef CET_SIGALTSTACK
const char *test_doc = "Checkpointed inside a signal handler on a sigaltstack";
#define ALTSTACK_SIZE (256 << 10)
static char altstack[ALTSTACK_SIZE] __attribute__((aligned(16)));
#else
const char *test_doc = "Checkpointed inside a signal handler";
#endif
const char *test_author = "criu-cet";

static unsigned long frame_before[2], *frame_at;
static volatile int handled, handler_bad;

static int on_altstack(void *p)
{
#ifdef CET_SIGALTSTACK
	return (char *)p >= altstack && (char *)p < altstack + ALTSTACK_SIZE;
#else
	return 1;
#endif
}

static int check(struct cet_ckpt *c, int restored, const char *when)
{
	int bad = 0, local;

	if (!restored) {
		bad |= cet_expect_shstk(&c->before.st, "handler, before the dump");
		if (!on_altstack(&local))
			bad |= fail("the handler does not run on the sigaltstack (%p)", (void *)&local);
		return bad;
	}
	if (!on_altstack(&local))
		bad |= fail("the handler left the sigaltstack (%p)", (void *)&local);
#ifdef CET_SIGALTSTACK
	{
		stack_t ss;

		if (sigaltstack(NULL, &ss) || !(ss.ss_flags & SS_ONSTACK))
			bad |= fail("sigaltstack() does not say SS_ONSTACK after restore (flags %#x)", ss.ss_flags);
	}
#endif
	return bad;
}

static struct cet_ckpt ckpt = { .who = "handler", .check = check };

static CET_NOINLINE void handler(int sig)
{
	struct cet_rec r;
	int bad = 0;

	/* the kernel's shadow-stack signal frame: our return address, then its token */
	frame_at = (unsigned long *)cet_rdssp();
	frame_before[0] = frame_at[0];
	frame_before[1] = frame_at[1];
	if (frame_before[0] != (unsigned long)__builtin_return_address(0))
		bad |= fail("shadow stack holds %#lx, the handler returns to %p", frame_before[0],
			    __builtin_return_address(0));
	if (!(frame_before[1] & CET_SIGFRAME_DATA))
		bad |= fail("no SSP token above the handler's return address (%#lx)", frame_before[1]);

	if (cet_rec_init(&r, 1000, cet_rec_checkpoint, &ckpt)) {
		handler_bad = 1;
		return;
	}
	bad |= cet_rec_run(&r, "handler");

	if (frame_at[0] != frame_before[0] || frame_at[1] != frame_before[1])
		bad |= fail("signal frame on the shadow stack changed: %#lx %#lx -> %#lx %#lx", frame_before[0],
			    frame_before[1], frame_at[0], frame_at[1]);
	if ((unsigned long *)cet_rdssp() != frame_at)
		bad |= fail("handler SSP %#lx, was %p at entry", cet_rdssp(), (void *)frame_at);
	handler_bad = bad;
	handled = 1;
}

static CET_NOINLINE int run(void)
{
	struct sigaction sa = { .sa_handler = handler };
	unsigned long ssp0, ssp1;

#ifdef CET_SIGALTSTACK
	stack_t ss = { .ss_sp = altstack, .ss_size = ALTSTACK_SIZE };

	if (sigaltstack(&ss, NULL))
		return pr_perror("sigaltstack");
	sa.sa_flags = SA_ONSTACK;
#endif
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL))
		return pr_perror("sigaction");

	ssp0 = cet_rdssp();
	raise(SIGUSR1);
	ssp1 = cet_rdssp();
	if (!handled)
		return fail("the handler did not finish");
	if (handler_bad)
		return 1;
	if (ssp0 != ssp1)
		return fail("SSP %#lx after the handler returned, %#lx before raise()", ssp1, ssp0);
	return cet_pass(0, "handler%s resumed at ssp %#lx depth %lu, signal frame intact, returned to ssp %#lx\n",
#ifdef CET_SIGALTSTACK
			" on the sigaltstack",
#else
			"",
#endif
			ckpt.after.st.ssp, ckpt.after.st.depth, ssp1);
}

CET_TEST_MAIN(run)
