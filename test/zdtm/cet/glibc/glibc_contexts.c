// SPDX-License-Identifier: GPL-2.0
/*
 * glibc's own contexts across checkpoint/restore: makecontext() gives each
 * context a shadow stack of its own (map_shadow_stack with a restore
 * token), swapcontext() switches SSP with restore tokens.  Four contexts
 * dive to depths 1, 64, 512 and 2000 and swap back to main from there,
 * parked on their own shadow stacks; main is checkpointed.  After restore
 * each is resumed: its whole recursion returns (every ret checked by the
 * CPU against its restored shadow stack) and ends through uc_link.  Two
 * more contexts then ping-pong 500 times, and a context made after the
 * restore runs like the others.
 */
#include <ucontext.h>

#include "cetlib.h"

const char *test_doc = "glibc makecontext/swapcontext contexts parked at several depths";
const char *test_author = "criu-cet";

#define NR_PARKED	4
#define STACK_SIZE	(1 << 20)
#define PING_PONGS	500

static const int depths[NR_PARKED] = { 1, 64, 512, 2000 };
static ucontext_t main_ctx, parked[NR_PARKED], ping, pong;
static volatile int bottom_reached[NR_PARKED], done[NR_PARKED];
static volatile unsigned long results[NR_PARKED];
static volatile int pings, pongs;

static unsigned long expect(int i)
{
	return (unsigned long)depths[i] * (depths[i] + 1) / 2 + 1000 * i;
}

/* Recurse to @depth, park there (swap back to main), then return up. */
static CET_NOINLINE unsigned long dive(int i, int depth)
{
	volatile unsigned long mine = depth;

	if (!depth) {
		bottom_reached[i] = 1;
		if (swapcontext(&parked[i], &main_ctx))
			return ~0UL;
		return 1000UL * i;
	}
	return dive(i, depth - 1) + mine;
}

static void parked_entry(int i)
{
	results[i] = dive(i, depths[i]);
	done[i] = 1;	/* and on to uc_link, main */
}

static int make(ucontext_t *c, void (*fn)(void), int arg)
{
	if (getcontext(c))
		return pr_perror("getcontext");
	c->uc_stack.ss_sp = malloc(STACK_SIZE);
	c->uc_stack.ss_size = STACK_SIZE;
	c->uc_link = &main_ctx;
	if (!c->uc_stack.ss_sp)
		return pr_perror("malloc");
	makecontext(c, fn, 1, arg);
	return 0;
}

static void ping_entry(int n)
{
	while (pings < n) {
		pings++;
		if (swapcontext(&ping, &pong))
			return;
	}
}

static void pong_entry(int n)
{
	while (pongs < n) {
		pongs++;
		if (swapcontext(&pong, &ping))
			return;
	}
}

static int park_all(void)
{
	int i;

	for (i = 0; i < NR_PARKED; i++) {
		if (make(&parked[i], (void (*)(void))parked_entry, i))
			return 1;
		if (swapcontext(&main_ctx, &parked[i]))
			return pr_perror("swapcontext");
		if (!bottom_reached[i] || done[i])
			return fail("context %d did not park at depth %d", i, depths[i]);
	}
	return 0;
}

/* After restore: resume the parked contexts, deepest first. */
static int resume_all(void)
{
	int i, bad = 0;

	for (i = NR_PARKED - 1; i >= 0; i--) {
		if (swapcontext(&main_ctx, &parked[i]))
			return pr_perror("swapcontext");
		if (!done[i])
			bad |= fail("context %d (depth %d) did not come back through uc_link", i, depths[i]);
		else if (results[i] != expect(i))
			bad |= fail("context %d (depth %d) returned %lu, expected %lu", i, depths[i], results[i],
				    expect(i));
	}
	return bad;
}

static int ping_pong(void)
{
	if (make(&ping, (void (*)(void))ping_entry, PING_PONGS) || make(&pong, (void (*)(void))pong_entry, PING_PONGS))
		return 1;
	/* ping ends first and goes to main; pong is left parked */
	if (swapcontext(&main_ctx, &ping))
		return pr_perror("swapcontext");
	if (pings != PING_PONGS || pongs < PING_PONGS - 1)
		return fail("ping-pong: %d pings, %d pongs of %d", pings, pongs, PING_PONGS);
	return 0;
}

static int check(struct cet_ckpt *c, int restored, const char *when)
{
	int bad = cet_glibc_check(c, restored, when);

	/* main's own shadow stack and one per context glibc made */
	if (!restored && c->before.maps.nr != 1 + NR_PARKED)
		bad |= fail("%d shadow-stack mappings with %d contexts, not %d", c->before.maps.nr, NR_PARKED,
			    1 + NR_PARKED);
	return bad;
}

static struct cet_ckpt ckpt = { .who = "main", .check = check };

static int run(void)
{
	struct cet_ss_maps end;
	int bad;

	if (park_all())
		return 1;
	bad = cet_checkpoint(&ckpt);
	bad |= resume_all();
	bad |= ping_pong();
	if (cet_ss_maps(&end))
		return 1;
	return cet_pass(bad, "%d contexts parked at depths 1..2000 resumed and unwound; %d ping-pongs on "
			"contexts made after restore; ss mappings %d -> %d\n",
			NR_PARKED, pings + pongs, ckpt.before.maps.nr, end.nr);
}

CET_GLIBC_TEST_MAIN(run)
