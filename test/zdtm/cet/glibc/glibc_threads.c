// SPDX-License-Identifier: GPL-2.0
/*
 * glibc's threads across checkpoint/restore: every thread glibc creates
 * gets a shadow stack the kernel allocates and frees when the thread
 * exits.  Three threads are checkpointed parked deep in a recursion, their
 * features and glibc's lock (inherited from main) recorded.  After
 * restore they unwind, exit and are joined, and their shadow stacks must
 * be gone with them (a restored thread's stack is the kernel's to free,
 * as it was).  Then 40 new threads, in batches of 10, recurse, exit and
 * are joined: each starts with the shadow stack on and all locked, and
 * none leaves a shadow-stack mapping behind.
 *
 * The threads exit by returning from their start routine: pthread_exit()
 * unwinds through libgcc_s.so.1, which glibc dlopens, and Debian 12's is
 * not SHSTK-marked, so glibc refuses to load it under
 * glibc.cpu.hwcaps=SHSTK (a CET distribution ships a marked one).
 */
#include "cetlib.h"

const char *test_doc = "glibc pthread create/exit/join after restore: no shadow stack leaked";
const char *test_author = "criu-cet";

#define NR_PARKED	3
#define NR_BATCHES	4
#define BATCH		10

struct parked {
	int idx;
	char who[32];
	struct cet_thread_state before, after;
	int bad;
};

static struct cet_park park = CET_PARK_INIT;
static struct parked parked[NR_PARKED];

static int parked_bottom(struct cet_rec *r)
{
	struct parked *p = r->arg;
	int bad;

	if (cet_thread_state(&p->before))
		return 1;
	bad = cet_expect_glibc_shstk(&p->before, p->who);
	cet_park(&park);
	if (cet_thread_state(&p->after))
		return 1;
	bad |= cet_thread_state_cmp(&p->before, &p->after, p->who);
	bad |= cet_glibc_expect_shstk(p->who);
	return bad;
}

static void *parked_fn(void *arg)
{
	struct parked *p = arg;

	p->bad = cet_recurse(200 + 150 * p->idx, parked_bottom, p, p->who);
	return (void *)(long)(p->bad ? 1 : 2);
}

static void *fresh_fn(void *arg)
{
	int bad = cet_glibc_expect_shstk("a thread made after restore");

	bad |= cet_recurse(300, cet_rec_turn, NULL, "a thread made after restore");
	return (void *)(long)(bad ? 1 : 2);
}

static int join(pthread_t th, const char *who)
{
	void *ret;
	int err = pthread_join(th, &ret);

	if (err) {
		errno = err;
		return pr_perror("pthread_join %s", who);
	}
	if (ret != (void *)2L)
		return fail("%s ended with %ld", who, (long)ret);
	return 0;
}

/* The ss mappings now are @base's: no thread's shadow stack outlived it */
static int no_leak(const struct cet_ss_maps *base, const char *when)
{
	struct cet_ss_maps now;

	if (cet_ss_maps(&now))
		return 1;
	return cet_ss_maps_cmp(base, &now, when);
}

static int check(struct cet_ckpt *c, int restored, const char *when)
{
	int bad = cet_glibc_check(c, restored, when);
	if (!restored && c->before.maps.nr != 1 + NR_PARKED)
		bad |= fail("%d shadow-stack mappings with %d threads, not %d", c->before.maps.nr, NR_PARKED,
			    1 + NR_PARKED);
	return bad;
}

static struct cet_ckpt ckpt = { .who = "main", .check = check };

static int after_restore(const struct cet_ss_maps *base)
{
	pthread_t th[BATCH];
	int b, i, bad = 0;

	for (b = 0; b < NR_BATCHES; b++) {
		for (i = 0; i < BATCH; i++)
			if (cet_thread_start(&th[i], NULL, fresh_fn, NULL))
				return 1;
		for (i = 0; i < BATCH; i++)
			bad |= join(th[i], "a thread made after restore");
		bad |= no_leak(base, "after a batch of threads joined");
	}
	return bad;
}

static int run(void)
{
	pthread_t th[NR_PARKED];
	struct cet_ss_maps base;
	int i, bad;

	if (cet_ss_maps(&base))
		return 1;
	for (i = 0; i < NR_PARKED; i++) {
		parked[i].idx = i;
		snprintf(parked[i].who, sizeof(parked[i].who), "parked thread %d", i);
		if (cet_thread_start(&th[i], NULL, parked_fn, &parked[i]))
			return 1;
	}
	cet_park_wait(&park, NR_PARKED);
	bad = cet_checkpoint(&ckpt);
	cet_park_release(&park);
	for (i = 0; i < NR_PARKED; i++)
		bad |= join(th[i], parked[i].who);
	bad |= no_leak(&base, "after the restored threads were joined");
	bad |= after_restore(&base);
	return cet_pass(bad, "%d restored threads unwound and joined, %d new threads; ss mappings %d with the "
			"parked threads, %d after every join\n", NR_PARKED, NR_BATCHES * BATCH, ckpt.before.maps.nr,
			base.nr);
}

CET_GLIBC_TEST_MAIN(run)
