// SPDX-License-Identifier: GPL-2.0
/*
 * Scenario 8: one thread that turned its shadow stack off (ARCH_SHSTK_DISABLE
 * unmaps it) beside threads that have it on.  After restore the disabled one
 * is still off (STATUS 0, no SSP) and the others are on with their SSPs; no
 * shadow-stack mapping appears for the disabled thread.
 */
#include <pthread.h>
#include <signal.h>

#include "cetlib.h"

const char *test_doc = "A thread with its shadow stack off beside threads with it on";
const char *test_author = "criu-cet";

#define NR_THREADS 4
#define OFF_THREAD 2

struct worker {
	int idx;
	pthread_t th;
	struct cet_rec rec;
	struct cet_thread_state before, after;
	int bad;
};

static struct worker workers[NR_THREADS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int ready, go;

static int worker_bottom(struct cet_rec *r)
{
	struct worker *w = r->arg;
	int off = w->idx == OFF_THREAD;
	char who[48];
	int bad = 0;

	snprintf(who, sizeof(who), "thread %d (shstk %s)", w->idx, off ? "off" : "on");
	if (cet_thread_state(&w->before))
		return 1;
	bad |= cet_thread_state_expect(&w->before, off ? 0 : ARCH_SHSTK_SHSTK, off ? "" : "shstk", "", who);

	pthread_mutex_lock(&lock);
	ready++;
	pthread_cond_broadcast(&cond);
	while (!go)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);

	if (cet_thread_state(&w->after))
		return 1;
	bad |= cet_thread_state_cmp(&w->before, &w->after, who);
	return bad;
}

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	char who[32];
	long ret;

	if (w->idx == OFF_THREAD) {
		/* nothing below this frame is checked any more: returning is fine */
		ret = cet_arch_prctl(ARCH_SHSTK_DISABLE, ARCH_SHSTK_SHSTK);
		if (ret) {
			w->bad = fail("ARCH_SHSTK_DISABLE: %ld", ret);
			return NULL;
		}
	}
	snprintf(who, sizeof(who), "thread %d", w->idx);
	w->bad = cet_rec_run(&w->rec, who);
	return NULL;
}

static CET_NOINLINE int run(void)
{
	struct cet_ss_maps maps_before, maps_after;
	struct cet_thread_state mbefore, mafter;
	sigset_t set, old;
	int i, bad = 0;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	for (i = 0; i < NR_THREADS; i++) {
		struct worker *w = &workers[i];

		w->idx = i;
		if (cet_rec_init(&w->rec, 500 + 100 * i, worker_bottom, w))
			return 1;
		if (pthread_create(&w->th, NULL, worker_fn, w)) {
			pr_perror("pthread_create");
			return 1;
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);

	pthread_mutex_lock(&lock);
	while (ready < NR_THREADS)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);

	if (cet_thread_state(&mbefore) || cet_ss_maps(&maps_before))
		return 1;
	if (maps_before.nr != NR_THREADS)
		bad |= fail("%d shadow-stack mappings, want %d (main + %d threads on)", maps_before.nr, NR_THREADS,
			    NR_THREADS - 1);

	test_daemon();
	test_waitsig();

	if (cet_thread_state(&mafter) || cet_ss_maps(&maps_after))
		return 1;
	bad |= cet_thread_state_cmp(&mbefore, &mafter, "main");
	bad |= cet_ss_maps_cmp(&maps_before, &maps_after, "process");

	pthread_mutex_lock(&lock);
	go = 1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	for (i = 0; i < NR_THREADS; i++) {
		pthread_join(workers[i].th, NULL);
		bad |= workers[i].bad;
	}
	if (bad)
		return 1;
	test_msg("thread %d stayed off (status %#lx ssp %#lx), %d threads on; %d ss mappings kept\n", OFF_THREAD,
		 workers[OFF_THREAD].after.status, workers[OFF_THREAD].after.ssp, NR_THREADS - 1, maps_after.nr);
	pass();
	return 0;
}

CET_TEST_MAIN(run)
