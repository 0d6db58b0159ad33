// SPDX-License-Identifier: GPL-2.0
/*
 * Scenario 3: a process tree, all with shadow stacks: the test process, three
 * forked children and a grandchild (forked by child 1), each checkpointed at
 * the bottom of its own recursion depth.  After restore each process checks
 * its CET state, SSP and ss mappings, unwinds its recursion and reports by
 * its exit status.
 */
#include "cetlib.h"

const char *test_doc = "A tree of shadow-stack processes";
const char *test_author = "criu-cet";

#define NR_CHILDREN 3
#define NR_PROCS    (NR_CHILDREN + 2) /* with the test process and the grandchild */

static int ready_pipe[2];
static int my_idx;
static pid_t grandchild;

static int depth_of(int idx)
{
	return 1000 + 450 * idx;
}

static int bottom(struct cet_rec *r)
{
	static struct cet_snap before, after;
	char who[32];
	int bad = 0;

	snprintf(who, sizeof(who), "process %d (pid %d)", my_idx, getpid());
	if (cet_snap(&before))
		return 1;
	bad |= cet_expect_shstk(&before.st, who);
	if (before.maps.nr != 1)
		bad |= fail("%s: %d shadow-stack mappings", who, before.maps.nr);

	if (my_idx == 0) {
		char c;
		int i;

		for (i = 1; i < NR_PROCS; i++)
			if (read(ready_pipe[0], &c, 1) != 1)
				return pr_perror("ready pipe");
		test_daemon();
	} else if (write(ready_pipe[1], "r", 1) != 1) {
		return pr_perror("ready pipe");
	}
	test_waitsig();
	if (grandchild)
		kill(grandchild, SIGTERM);

	if (cet_snap(&after))
		return 1;
	return bad | cet_snap_cmp(&before, &after, who, who);
}

static CET_NOINLINE int proc_run(void)
{
	char who[32];
	int bad;

	snprintf(who, sizeof(who), "process %d", my_idx);
	bad = cet_recurse(depth_of(my_idx), bottom, NULL, who);
	if (grandchild)
		bad |= cet_wait_child(grandchild, "grandchild");
	return bad;
}

/* a child never returns from here: it leaves with _exit() */
static CET_NOINLINE pid_t spawn(int idx)
{
	pid_t pid = test_fork();

	if (pid)
		return pid;
	my_idx = idx;
	grandchild = 0;
	if (idx == 1) {
		grandchild = spawn(NR_PROCS - 1);
		if (grandchild < 0)
			_exit(1);
	}
	_exit(proc_run());
}

static CET_NOINLINE int run(void)
{
	pid_t kids[NR_CHILDREN];
	int i, bad;

	if (pipe(ready_pipe))
		return pr_perror("pipe");
	for (i = 0; i < NR_CHILDREN; i++) {
		kids[i] = spawn(i + 1);
		if (kids[i] < 0)
			return pr_perror("fork");
	}
	bad = proc_run(); /* returns after SIGTERM */
	for (i = 0; i < NR_CHILDREN; i++)
		kill(kids[i], SIGTERM);
	for (i = 0; i < NR_CHILDREN; i++)
		bad |= cet_wait_child(kids[i], "child");
	return cet_pass(bad, "%d processes (depths %d..%d) resumed with their shadow stacks and unwound\n",
			NR_PROCS, depth_of(0), depth_of(NR_PROCS - 1));
}

CET_TEST_MAIN(run)
