// SPDX-License-Identifier: GPL-2.0
/*
 * vfork + exec of a CET child.  The test process (shadow stack on) vforks in
 * a way that keeps the shared shadow stack intact (the child only issues
 * syscalls until execve: glibc 2.36's vfork() would return in the child and
 * let it clobber the parent's entries) and execs itself as a child that
 * starts without a shadow stack, enables its own and recurses.  Both are
 * checkpointed; after restore each checks its own state and unwinds, and the
 * parent checks the child's features through /proc and its exit status.
 */
#include <signal.h>
#include <sys/wait.h>

#include "cetlib.h"

const char *test_doc = "vfork + exec of a shadow-stack child";
const char *test_author = "criu-cet";

#define CHILD_ARG "--cet-exec-child"

static int ready_fd = -1;
static volatile sig_atomic_t child_term;
static pid_t child;
static char child_features[2][64];
static struct cet_thread_state before, after;
static struct cet_ss_maps maps_before, maps_after;

/* vfork, then execve in the child without touching memory or the shadow stack */
static CET_NOINLINE long vfork_exec(const char *path, char *const argv[], char *const envp[])
{
	long ret;

	asm volatile("movl $58, %%eax\n\t" /* vfork */
		     "syscall\n\t"
		     "testq %%rax, %%rax\n\t"
		     "jnz 1f\n\t"
		     "movl $59, %%eax\n\t" /* execve(path, argv, envp) */
		     "syscall\n\t"
		     "movl $60, %%eax\n\t" /* exit(127) */
		     "movl $127, %%edi\n\t"
		     "syscall\n"
		     "1:"
		     : "=&a"(ret)
		     : "D"(path), "S"(argv), "d"(envp)
		     : "rcx", "r11", "memory");
	return ret;
}

/* ---- the exec'd child ---- */

static void child_on_term(int sig)
{
	child_term = 1;
}

static int child_bottom(struct cet_rec *r)
{
	struct cet_thread_state b, a;
	sigset_t block, wait;
	int bad = 0;

	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &wait);
	sigdelset(&wait, SIGTERM);

	if (cet_thread_state(&b))
		return 1;
	bad |= cet_thread_state_expect(&b, ARCH_SHSTK_SHSTK, "shstk", "", "exec'd child");
	if (write(ready_fd, "r", 1) != 1)
		return pr_perror("ready pipe");
	close(ready_fd);
	while (!child_term)
		sigsuspend(&wait);
	if (cet_thread_state(&a))
		return 1;
	bad |= cet_thread_state_cmp(&b, &a, "exec'd child");
	return bad;
}

static CET_NOINLINE int child_run(void)
{
	struct sigaction sa = { .sa_handler = child_on_term };
	struct cet_rec r;

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTERM, &sa, NULL))
		return pr_perror("sigaction");
	if (cet_rec_init(&r, 1300, child_bottom, NULL))
		return 1;
	return cet_rec_run(&r, "exec'd child");
}

/* ---- the test process ---- */

static int child_proc_features(char *buf, size_t len)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/status", child);
	return cet_proc_status_field(path, "x86_Thread_features", buf, len);
}

static int at_bottom(struct cet_rec *r)
{
	char *envp[] = { NULL };
	char fdarg[16], *argv[] = { "vfork_exec", CHILD_ARG, fdarg, NULL };
	unsigned long ssp0, ssp1;
	int p[2], bad = 0;
	char c;

	if (pipe(p))
		return pr_perror("pipe");
	snprintf(fdarg, sizeof(fdarg), "%d", p[1]);
	ssp0 = cet_rdssp();
	child = vfork_exec("/proc/self/exe", argv, envp);
	ssp1 = cet_rdssp();
	if (child < 0) {
		errno = -child;
		return pr_perror("vfork");
	}
	close(p[1]);
	if (ssp0 != ssp1)
		bad |= fail("SSP %#lx after vfork, %#lx before", ssp1, ssp0);
	if (read(p[0], &c, 1) != 1) {
		fail("the exec'd child did not get ready");
		return 1;
	}
	close(p[0]);

	if (cet_thread_state(&before) || cet_ss_maps(&maps_before) ||
	    child_proc_features(child_features[0], sizeof(child_features[0])))
		return 1;
	bad |= cet_thread_state_expect(&before, ARCH_SHSTK_SHSTK, "shstk", "", "parent");
	if (strcmp(child_features[0], "shstk"))
		bad |= fail("child %d features '%s' before the dump", child, child_features[0]);

	test_daemon();
	test_waitsig();

	if (cet_thread_state(&after) || cet_ss_maps(&maps_after) ||
	    child_proc_features(child_features[1], sizeof(child_features[1])))
		return 1;
	bad |= cet_thread_state_cmp(&before, &after, "parent");
	bad |= cet_ss_maps_cmp(&maps_before, &maps_after, "parent");
	if (strcmp(child_features[0], child_features[1]))
		bad |= fail("child %d features '%s' became '%s'", child, child_features[0], child_features[1]);
	return bad;
}

static CET_NOINLINE int run(void)
{
	struct cet_rec r;
	int status, bad;

	if (cet_rec_init(&r, 700, at_bottom, NULL))
		return 1;
	bad = cet_rec_run(&r, "parent");
	if (child > 0) {
		kill(child, SIGTERM);
		if (waitpid(child, &status, 0) != child)
			return pr_perror("waitpid");
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			bad |= fail("the exec'd child ended with status %#x", status);
	}
	if (bad)
		return 1;
	test_msg("parent and exec'd child %d resumed with their shadow stacks ('%s') and unwound\n", child,
		 child_features[1]);
	pass();
	return 0;
}

int main(int argc, char **argv)
{
	long ret;

	if (argc == 3 && !strcmp(argv[1], CHILD_ARG)) {
		/* exec gives a fresh process: no shadow stack until we ask */
		ready_fd = atoi(argv[2]);
		if (cet_status() != 0) {
			fail("the exec'd child starts with status %#lx", cet_status());
			exit(2);
		}
		ret = cet_enable_shstk();
		if (ret) {
			fail("child ARCH_SHSTK_ENABLE: %ld", ret);
			exit(2);
		}
		exit(child_run());
	}

	test_init(argc, argv);
	ret = cet_enable_shstk();
	if (ret) {
		pr_err("ARCH_SHSTK_ENABLE: %ld\n", ret);
		exit(1);
	}
	exit(run());
}
