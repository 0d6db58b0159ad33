// SPDX-License-Identifier: GPL-2.0
/*
 * Scenario 8: one thread that turned its shadow stack off (ARCH_SHSTK_DISABLE
 * unmaps it) beside threads that have it on.  After restore the disabled one
 * is still off (STATUS 0, no SSP) and the others are on with their SSPs; no
 * shadow-stack mapping appears for the disabled thread.
 */
#include "cetlib.h"

const char *test_doc = "A thread with its shadow stack off beside threads with it on";
const char *test_author = "criu-cet";

#define NR_THREADS 4
#define OFF_THREAD 2

static struct cet_worker workers[NR_THREADS];
static struct cet_park park = CET_PARK_INIT;

static void *worker_fn(void *arg)
{
	struct cet_worker *w = arg;
	long ret;

	if (w->idx == OFF_THREAD) {
		/* nothing below this frame is checked any more: returning is fine */
		ret = cet_arch_prctl(ARCH_SHSTK_DISABLE, ARCH_SHSTK_SHSTK);
		if (ret) {
			w->bad = fail("ARCH_SHSTK_DISABLE: %ld", ret);
			return NULL;
		}
	}
	return cet_worker_fn(w);
}

static int check(struct cet_ckpt *c, int restored, const char *when)
{
	if (!restored && c->before.maps.nr != NR_THREADS)
		return fail("%d shadow-stack mappings, want %d (main + %d threads on)", c->before.maps.nr, NR_THREADS,
			    NR_THREADS - 1);
	return 0;
}

static struct cet_ckpt ckpt = { .who = "main", .check = check };

static CET_NOINLINE int run(void)
{
	struct cet_worker *off = &workers[OFF_THREAD];
	int i, bad;

	for (i = 0; i < NR_THREADS; i++) {
		struct cet_worker *w = &workers[i];

		if (cet_worker_init(w, i, 500 + 100 * i, &park))
			return 1;
		snprintf(w->who, sizeof(w->who), "thread %d (shstk %s)", i, w == off ? "off" : "on");
		if (w == off) {
			w->want_status = 0;
			w->want_features = "";
		}
		if (cet_thread_start(&w->th, NULL, worker_fn, w))
			return 1;
	}
	cet_park_wait(&park, NR_THREADS);

	bad = cet_checkpoint(&ckpt);
	bad |= cet_workers_finish(&park, workers, NR_THREADS);
	return cet_pass(bad, "thread %d stayed off (status %#lx ssp %#lx), %d threads on; %d ss mappings kept\n",
			OFF_THREAD, off->after.status, off->after.ssp, NR_THREADS - 1, ckpt.after.maps.nr);
}

CET_TEST_MAIN(run)
