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
#include "cetlib.h"

const char *test_doc = "vfork + exec of a shadow-stack child";
const char *test_author = "criu-cet";

#define CHILD_ARG "--cet-exec-child"

static int ready_fd = -1;
static volatile sig_atomic_t child_term;
static pid_t child;
static char child_features[2][64];

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
	return cet_child_checkpoint(ready_fd, SIGTERM, &child_term, "exec'd child");
}

static CET_NOINLINE int child_run(void)
{
	struct sigaction sa = { .sa_handler = child_on_term };

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTERM, &sa, NULL))
		return pr_perror("sigaction");
	return cet_recurse(1300, child_bottom, NULL, "exec'd child");
}

/* ---- the test process ---- */

/* the parent checks the child's features through /proc around its checkpoint */
static int check(struct cet_ckpt *c, int restored, const char *when)
{
	int bad = 0;

	if (cet_pid_status_field(child, "x86_Thread_features", child_features[restored],
				 sizeof(child_features[restored])))
		return restored ? 1 : -1;
	if (!restored) {
		bad |= cet_expect_shstk(&c->before.st, "parent");
		if (strcmp(child_features[0], "shstk"))
			bad |= fail("child %d features '%s' before the dump", child, child_features[0]);
	} else if (strcmp(child_features[0], child_features[1])) {
		bad |= fail("child %d features '%s' became '%s'", child, child_features[0], child_features[1]);
	}
	return bad;
}

static struct cet_ckpt ckpt = { .who = "parent", .maps_who = "parent", .check = check };

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
	return bad | cet_checkpoint(&ckpt);
}

static CET_NOINLINE int run(void)
{
	int bad;

	bad = cet_recurse(700, at_bottom, NULL, "parent");
	if (child > 0) {
		kill(child, SIGTERM);
		bad |= cet_wait_child(child, "the exec'd child");
	}
	return cet_pass(bad, "parent and exec'd child %d resumed with their shadow stacks ('%s') and unwound\n",
			child, child_features[1]);
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

	CET_TEST_INIT(argc, argv);
	exit(run());
}
