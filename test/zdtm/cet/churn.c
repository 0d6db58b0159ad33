// SPDX-License-Identifier: GPL-2.0
/*
 * Shadow stacks that never stop changing, for iterative migration (pre-dump
 * --track-mem, a page server, lazy pages): the dump may catch any of them
 * at any point, and a page of theirs written after a pre-dump must reach
 * the final images.
 *
 * The main thread, two worker threads and two fibers of a third thread go
 * round after round through a recursion whose every frame calls the next
 * one through one of two functions, picked by a bit of the round's key.
 * A frame's return address is therefore a property of the round: a shadow
 * stack page restored from an older round (a page the dump took from a
 * pre-dump although it changed since) no longer matches the ordinary stack,
 * and the CPU stops the task with a control-protection fault at the first
 * return through it.  Each thread also checks what the recursion returns
 * (the frames' own values), and at the end the test checks that every
 * thread kept going, its CET state, and the shadow-stack mappings (those of
 * the threads go away with them, the fibers' stay).
 */
#define CET_FIBERS
#include "cetlib.h"

const char *test_doc = "Shadow stacks changing all the time across pre-dumps, page server and lazy pages";
const char *test_author = "criu-cet";

#define NR_CHURNERS	2		/* worker threads going round */
#define NR_FIBERS	2		/* fibers of the fiber thread */
#define MAX_DEPTH	2048		/* 16 KiB of shadow stack: four pages */
#define FIBER_SS_SIZE	(64 << 10)
#define FIBER_STACK	(512 << 10)

struct churn {
	const char *who;
	unsigned long seed;		/* xorshift state: the rounds' keys */
	unsigned long key;		/* this round's: bit d picks frame d+1's function */
	int depth;			/* this round's frames below the first */
	unsigned long rounds;
	int bad;
	struct cet_thread_state first;	/* the state when it started */
};

static volatile int stop;

static unsigned long churn_a(struct churn *c, int d);
static unsigned long churn_b(struct churn *c, int d);

static inline unsigned long churn_mix(int d, int b)
{
	return cet_rec_mix(d) ^ (b ? 0xbbUL : 0xaaUL);
}

/* the bottom: a short pause so that the dump finds threads at every depth */
static CET_NOINLINE unsigned long churn_bottom(struct churn *c)
{
	volatile int spin;

	for (spin = 0; spin < 2000; spin++)
		;
	return 1;
}

/* the next frame, through churn_a or churn_b: two call sites, two return addresses */
static inline unsigned long churn_next(struct churn *c, int d)
{
	if (d == c->depth)
		return churn_bottom(c);
	if ((c->key >> (d & 63)) & 1)
		return churn_b(c, d + 1);
	return churn_a(c, d + 1);
}

static CET_NOINLINE unsigned long churn_a(struct churn *c, int d)
{
	volatile unsigned long mine = churn_mix(d, 0);
	unsigned long below = churn_next(c, d);

	if (mine != churn_mix(d, 0))
		c->bad++;
	asm volatile("" : "+r"(below)); /* keep the frame: no tail call */
	return below * 31 + mine;
}

static CET_NOINLINE unsigned long churn_b(struct churn *c, int d)
{
	volatile unsigned long mine = churn_mix(d, 1);
	unsigned long below = churn_next(c, d);

	if (mine != churn_mix(d, 1))
		c->bad++;
	asm volatile("" : "+r"(below));
	return below * 31 + mine;
}

/* what a round must return: frame 0 is churn_a, frame d+1 as key bit d says */
static unsigned long churn_expect(const struct churn *c)
{
	unsigned long v = 1;
	int d;

	for (d = c->depth; d >= 0; d--)
		v = v * 31 + churn_mix(d, d ? (c->key >> ((d - 1) & 63)) & 1 : 0);
	return v;
}

static unsigned long xorshift(unsigned long *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* one round: a new key and depth, down and back up, checked */
static CET_NOINLINE void churn_round(struct churn *c)
{
	unsigned long got;

	c->key = xorshift(&c->seed);
	c->depth = 16 + (int)(xorshift(&c->seed) % (MAX_DEPTH - 16));
	got = churn_a(c, 0);
	if (got != churn_expect(c) && !c->bad++)
		fail("%s: round %lu (depth %d) returned %#lx, expected %#lx", c->who, c->rounds, c->depth, got,
		     churn_expect(c));
	c->rounds++;
}

static void churn_init(struct churn *c, const char *who, unsigned long seed)
{
	memset(c, 0, sizeof(*c));
	c->who = who;
	c->seed = seed;
}

static struct churn churners[NR_CHURNERS], fiber_churn[NR_FIBERS], main_churn;

static void *churner_fn(void *arg)
{
	struct churn *c = arg;

	cet_thread_state(&c->first);
	while (!stop)
		churn_round(c);
	return NULL;
}

/* the fiber thread: it switches to each fiber in turn, which does a round and switches back */
struct fiber {
	struct cet_fiber ctx;	/* first: what the switch saves and restores */
	struct churn *churn;
	unsigned long ss_base;
};
static struct fiber fibers[NR_FIBERS], home;

static void fiber_main(unsigned long i)
{
	struct fiber *f = &fibers[i];

	for (;;) {
		churn_round(f->churn);
		cet_fiber_switch(&f->ctx, &home.ctx);
	}
}

static void *fiber_thread_fn(void *arg)
{
	unsigned long n;

	for (n = 0; !stop; n++)
		cet_fiber_switch(&home.ctx, &fibers[n % NR_FIBERS].ctx);
	return NULL;
}

static int check_thread(struct churn *c)
{
	int bad = c->bad ? fail("%s: %d frames or rounds came back wrong", c->who, c->bad) : 0;

	if (!c->rounds)
		bad |= fail("%s: never went round", c->who);
	bad |= cet_expect_shstk(&c->first, c->who);
	return bad;
}

static CET_NOINLINE int run(void)
{
	static const char *names[] = { "thread 0", "thread 1" }, *fnames[] = { "fiber 0", "fiber 1" };
	struct cet_ss_maps before, running, joined;
	struct cet_thread_state now;
	pthread_t th[NR_CHURNERS + 1];
	unsigned long total = 0;
	int i, bad = 0;

	churn_init(&main_churn, "main", 0x9e3779b97f4a7c15UL);
	cet_thread_state(&main_churn.first);
	for (i = 0; i < NR_FIBERS; i++) {
		churn_init(&fiber_churn[i], fnames[i], 0x1234567UL * (i + 3));
		fibers[i].churn = &fiber_churn[i];
		if (cet_fiber_init(&fibers[i].ctx, FIBER_SS_SIZE, FIBER_STACK, fiber_main, i, &fibers[i].ss_base))
			return pr_perror("fiber %d", i);
	}
	for (i = 0; i < NR_CHURNERS; i++) {
		churn_init(&churners[i], names[i], 0xabcdef12345UL * (i + 1));
		if (cet_thread_start(&th[i], NULL, churner_fn, &churners[i]))
			return 1;
	}
	if (cet_thread_start(&th[NR_CHURNERS], NULL, fiber_thread_fn, NULL))
		return 1;
	if (cet_ss_maps(&before))
		return 1;

	test_daemon();
	while (test_go())
		churn_round(&main_churn);

	cet_thread_state(&now);
	bad |= cet_thread_state_cmp(&main_churn.first, &now, "main");
	if (cet_ss_maps(&running))
		return 1;
	bad |= cet_ss_maps_cmp(&before, &running, "running");
	stop = 1;
	for (i = 0; i <= NR_CHURNERS; i++)
		pthread_join(th[i], NULL);
	bad |= check_thread(&main_churn);
	for (i = 0; i < NR_CHURNERS; i++)
		bad |= check_thread(&churners[i]);
	for (i = 0; i < NR_FIBERS; i++)
		bad |= fiber_churn[i].bad ? fail("fiber %d: %d frames or rounds came back wrong", i,
						 fiber_churn[i].bad) : 0;
	if (before.nr != NR_CHURNERS + 2 + NR_FIBERS)
		bad |= fail("%d shadow-stack mappings while churning, want %d", before.nr,
			    NR_CHURNERS + 2 + NR_FIBERS);
	if (cet_ss_maps(&joined))
		return 1;
	if (joined.nr != 1 + NR_FIBERS)
		bad |= fail("%d shadow-stack mappings after joining the threads, want %d (main, fibers)", joined.nr,
			    1 + NR_FIBERS);
	total = main_churn.rounds;
	for (i = 0; i < NR_CHURNERS; i++)
		total += churners[i].rounds;
	for (i = 0; i < NR_FIBERS; i++)
		total += fiber_churn[i].rounds;
	return cet_pass(bad, "%lu rounds of up to %d frames in 3 threads and 2 fibers, every return intact\n", total,
			MAX_DEPTH);
}

CET_TEST_MAIN(run)
