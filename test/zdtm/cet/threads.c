// SPDX-License-Identifier: GPL-2.0
/*
 * Scenario 2: eight threads, each with its own (kernel-allocated) shadow
 * stack and each checkpointed mid-recursion at a different depth.  After
 * restore every thread checks its own CET state and SSP, unwinds and checks
 * its recursion; the main thread checks the ss mappings, and after joining
 * the threads that their shadow stacks went away with them (the kernel still
 * knows each thread owns its shadow stack).
 */
#include <pthread.h>
#include <signal.h>

#include "cetlib.h"

/*
 * Variants (many_threads.c, limits.c) set these and include this file:
 * how many threads, how deep each one is, their stack size, and hooks run
 * once every thread is parked, just before the checkpoint, and right after
 * restore.
 */
#ifndef NR_THREADS
const char *test_doc = "Eight shadow-stack threads checkpointed mid-recursion";
const char *test_author = "criu-cet";

#define NR_THREADS		8
#define THREAD_DEPTH(i)		(300 * ((i) + 1) + 7 * (i))
#define THREAD_STACK_SIZE	(512 << 10)
static int before_checkpoint(void)
{
	return 0;
}
static int after_restore(void)
{
	return 0;
}
#endif
#ifndef THREAD_STATE
#define THREAD_STATE(s) cet_thread_state(s)
#endif
#ifndef BEFORE_START
#define BEFORE_START(argc, argv) do { } while (0)
#endif
/* how many of the NR_THREADS workers run (a variant may take it from an option) */
#ifndef THREAD_COUNT
#define THREAD_COUNT		NR_THREADS
#endif

struct worker {
	int idx, depth;
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
	char who[32];
	int bad = 0;

	snprintf(who, sizeof(who), "thread %d", w->idx);
	if (THREAD_STATE(&w->before))
		return 1;
	bad |= cet_thread_state_expect(&w->before, ARCH_SHSTK_SHSTK, "shstk", "", who);

	pthread_mutex_lock(&lock);
	ready++;
	pthread_cond_broadcast(&cond);
	while (!go)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);

	if (THREAD_STATE(&w->after))
		return 1;
	bad |= cet_thread_state_cmp(&w->before, &w->after, who);
	return bad;
}

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	char who[32];

	snprintf(who, sizeof(who), "thread %d", w->idx);
	w->bad = cet_rec_run(&w->rec, who);
	return NULL;
}

static CET_NOINLINE int run(void)
{
	struct cet_ss_maps maps_before, maps_after, maps_joined;
	struct cet_thread_state mbefore, mafter;
	pthread_attr_t attr;
	sigset_t set, old;
	int i, bad = 0;

	/* only the main thread takes SIGTERM */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, THREAD_STACK_SIZE);
	for (i = 0; i < THREAD_COUNT; i++) {
		struct worker *w = &workers[i];

		w->idx = i;
		w->depth = THREAD_DEPTH(i);
		if (cet_rec_init(&w->rec, w->depth, worker_bottom, w))
			return 1;
		if (pthread_create(&w->th, &attr, worker_fn, w)) {
			pr_perror("pthread_create");
			return 1;
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);

	pthread_mutex_lock(&lock);
	while (ready < THREAD_COUNT)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);

	if (cet_thread_state(&mbefore) || cet_ss_maps(&maps_before))
		return 1;
	if (maps_before.nr != THREAD_COUNT + 1)
		bad |= fail("%d shadow-stack mappings for %d threads", maps_before.nr, THREAD_COUNT + 1);
	if (before_checkpoint())
		return 1;

	test_daemon();
	test_waitsig();

	if (cet_thread_state(&mafter) || cet_ss_maps(&maps_after))
		return 1;
	bad |= cet_thread_state_cmp(&mbefore, &mafter, "main");
	bad |= cet_ss_maps_cmp(&maps_before, &maps_after, "process");
	bad |= after_restore();

	pthread_mutex_lock(&lock);
	go = 1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	for (i = 0; i < THREAD_COUNT; i++) {
		pthread_join(workers[i].th, NULL);
		bad |= workers[i].bad;
	}

	if (cet_ss_maps(&maps_joined))
		return 1;
	if (maps_joined.nr != 1 || cet_ss_find(&maps_joined, mafter.ssp) != 0)
		bad |= fail("%d shadow-stack mappings left after joining the threads (want main's only)",
			    maps_joined.nr);
	if (bad)
		return 1;
	test_msg("%d threads at depths %d..%d resumed and unwound; %d ss mappings kept, 1 after join\n", THREAD_COUNT,
		 workers[0].depth, workers[THREAD_COUNT - 1].depth, maps_after.nr);
	pass();
	return 0;
}

int main(int argc, char **argv)
{
	long ret;

	BEFORE_START(argc, argv);
	test_init(argc, argv);
	ret = cet_enable_shstk();
	if (ret) {
		pr_err("ARCH_SHSTK_ENABLE: %ld\n", ret);
		exit(1);
	}
	exit(run());
}
