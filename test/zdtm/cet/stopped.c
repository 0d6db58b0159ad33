// SPDX-License-Identifier: GPL-2.0
/*
 * A shadow-stack task that is stopped (SIGSTOP) when it is dumped: a forked
 * child, mid-recursion, stopped by the test process.  After restore it is
 * still stopped with the same CET features (read through /proc); once
 * continued it checks its SSP and state itself, unwinds and exits 0.
 */
#include "cetlib.h"

const char *test_doc = "A stopped shadow-stack task";
const char *test_author = "criu-cet";

static int ready_pipe[2];
static volatile sig_atomic_t go;
static struct cet_thread_state before, after;

static void on_usr1(int sig)
{
	go = 1;
}

static int child_bottom(struct cet_rec *r)
{
	return cet_child_checkpoint(ready_pipe[1], SIGUSR1, &go, "stopped child");
}

static CET_NOINLINE pid_t spawn(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	pid_t pid;

	pid = test_fork();
	if (pid)
		return pid;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL))
		_exit(pr_perror("sigaction"));
	_exit(cet_recurse(900, child_bottom, NULL, "stopped child"));
}

static int proc_state(pid_t pid, char *state, char *features, size_t len)
{
	char st[32];

	if (cet_pid_status_field(pid, "State", st, sizeof(st)) ||
	    cet_pid_status_field(pid, "x86_Thread_features", features, len))
		return pr_perror("read /proc/%d/status", pid);
	*state = st[0];
	return 0;
}

static CET_NOINLINE int run(void)
{
	char feat_before[64], feat_after[64], st_before, st_after;
	siginfo_t info;
	int bad = 0;
	pid_t pid;
	char c;

	if (pipe(ready_pipe))
		return pr_perror("pipe");
	pid = spawn();
	if (pid < 0)
		return pr_perror("fork");
	if (read(ready_pipe[0], &c, 1) != 1)
		return fail("the child did not get ready");
	kill(pid, SIGSTOP);
	if (waitid(P_PID, pid, &info, WSTOPPED | WNOWAIT) < 0)
		return pr_perror("waitid");
	if (proc_state(pid, &st_before, feat_before, sizeof(feat_before)) || cet_thread_state(&before))
		return 1;
	if (st_before != 'T')
		bad |= fail("child state %c before the dump, not stopped", st_before);
	if (strcmp(feat_before, "shstk"))
		bad |= fail("child features '%s' before the dump", feat_before);
	bad |= cet_expect_shstk(&before, "parent");

	test_daemon();
	test_waitsig();

	if (proc_state(pid, &st_after, feat_after, sizeof(feat_after)) || cet_thread_state(&after))
		return 1;
	bad |= cet_thread_state_cmp(&before, &after, "parent");
	if (st_after != 'T')
		bad |= fail("child state %c after restore, not stopped", st_after);
	if (strcmp(feat_before, feat_after))
		bad |= fail("child features '%s' became '%s'", feat_before, feat_after);

	kill(pid, SIGCONT);
	kill(pid, SIGUSR1);
	bad |= cet_wait_child(pid, "the child");
	return cet_pass(bad, "child %d stayed stopped (%c, '%s'), then continued, checked its state and unwound\n",
			pid, st_after, feat_after);
}

CET_TEST_MAIN(run)
