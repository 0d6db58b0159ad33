// SPDX-License-Identifier: GPL-2.0
/*
 * Scenario 4: fibers.  Four extra shadow stacks made with map_shadow_stack
 * (with a restore token), switched with rstorssp/saveprevssp.  Each fiber
 * recurses to its own depth and, at the bottom, switches to the next one; the
 * last one waits to be checkpointed while the other three and main() are
 * parked, each behind a restore token on its shadow stack.  After restore the
 * running fiber checks its state, then every parked fiber is resumed in turn
 * (its token checked first), unwinds its recursion and hands over to the
 * next; finally main() is resumed.
 */
#define CET_FIBERS
#include "cetlib.h"

const char *test_doc = "Fibers on map_shadow_stack shadow stacks";
const char *test_author = "criu-cet";

#define NR_FIBERS  4
#define SHSTK_SIZE (64UL << 10)
#define STACK_SIZE (256UL << 10)

struct fiber {
	struct cet_fiber ctx;	/* first: what the switch saves and restores */
	unsigned long ss_base, ss_top;
	struct cet_rec rec;
	struct cet_thread_state before, after;
	int bad;
};

#define fiber_switch(from, to) cet_fiber_switch(&(from)->ctx, &(to)->ctx)

static struct fiber main_fiber, fibers[NR_FIBERS];
static struct cet_ss_maps maps_before, maps_after;
static int bad;

static int depth_of(int i)
{
	return 400 + 250 * i;
}

static int fiber_bottom(struct cet_rec *r)
{
	struct fiber *f = r->arg;
	int i = f - fibers, b = 0;
	char who[16];

	snprintf(who, sizeof(who), "fiber %d", i);
	if (cet_thread_state(&f->before))
		return 1;
	if (f->before.ssp < f->ss_base || f->before.ssp >= f->ss_top)
		b |= fail("%s: SSP %#lx is not on its shadow stack %lx-%lx", who, f->before.ssp, f->ss_base,
			  f->ss_top);

	if (i < NR_FIBERS - 1) {
		fiber_switch(f, &fibers[i + 1]); /* park here */
	} else {
		int j;

		if (cet_ss_maps(&maps_before))
			return 1;
		test_daemon();
		test_waitsig();
		if (cet_ss_maps(&maps_after))
			return 1;
		bad |= cet_ss_maps_cmp(&maps_before, &maps_after, "process");
		bad |= cet_check_token(main_fiber.ctx.token, "main");
		for (j = 0; j < NR_FIBERS - 1; j++) {
			char w[16];

			snprintf(w, sizeof(w), "fiber %d", j);
			bad |= cet_check_token(fibers[j].ctx.token, w);
		}
		fiber_switch(f, &fibers[0]); /* resume the parked ones */
	}

	if (cet_thread_state(&f->after))
		return 1;
	b |= cet_thread_state_cmp(&f->before, &f->after, who);
	return b;
}

/* A fiber's first frame: it never returns, it hands over to the next one */
static void fiber_main(unsigned long arg)
{
	struct fiber *f = &fibers[arg];
	char who[16];

	snprintf(who, sizeof(who), "fiber %lu", arg);
	f->bad = cet_rec_run(&f->rec, who);
	if (arg < NR_FIBERS - 1)
		fiber_switch(f, &fibers[arg + 1]);
	else
		fiber_switch(f, &main_fiber);
	fail("%s resumed after it finished", who);
	exit(1);
}

static CET_NOINLINE int run(void)
{
	struct cet_thread_state mbefore, mafter;
	int i;

	for (i = 0; i < NR_FIBERS; i++) {
		struct fiber *f = &fibers[i];

		if (cet_fiber_init(&f->ctx, SHSTK_SIZE, STACK_SIZE, fiber_main, i, &f->ss_base))
			return pr_perror("a fiber's stacks");
		f->ss_top = f->ss_base + SHSTK_SIZE;
		if (cet_check_token(f->ctx.token, "new shadow stack"))
			return 1;
		if (cet_rec_init(&f->rec, depth_of(i), fiber_bottom, f))
			return 1;
	}

	if (cet_thread_state(&mbefore))
		return 1;
	fiber_switch(&main_fiber, &fibers[0]);
	if (cet_thread_state(&mafter))
		return 1;
	bad |= cet_thread_state_cmp(&mbefore, &mafter, "main");
	bad |= cet_expect_shstk(&mafter, "main");
	if (maps_before.nr != NR_FIBERS + 1)
		bad |= fail("%d shadow-stack mappings before the dump, want %d", maps_before.nr, NR_FIBERS + 1);
	for (i = 0; i < NR_FIBERS; i++)
		bad |= fibers[i].bad;
	return cet_pass(bad, "%d fibers (1 running, 3 parked + main) resumed and unwound; %d ss mappings kept\n",
			NR_FIBERS, maps_after.nr);
}

CET_TEST_MAIN(run)
