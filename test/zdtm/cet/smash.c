// SPDX-License-Identifier: GPL-2.0
/*
 * Scenario 9: protection after restore.  In the restored task, at the bottom
 * of the recursion it was checkpointed in, a function overwrites its own
 * return address and returns: that must raise SIGSEGV with si_code
 * SEGV_CPERR.  The handler resumes at a stub that drops the smashed entry
 * (incsspq) and goes back to the real caller, so the test then unwinds and
 * checks every frame as usual.
 */
#include <signal.h>
#include <ucontext.h>

#include "cetlib.h"

const char *test_doc = "A smashed return address after restore is caught";
const char *test_author = "criu-cet";

unsigned long smash_orig;
void smash_and_return(void);
void smash_not_caught(void);
extern char smash_ret[], smash_recover[];

asm(".text\n"
    ".globl smash_and_return, smash_ret, smash_recover\n"
    ".type smash_and_return, @function\n"
    "smash_and_return:\n"
    "	movq (%rsp), %rax\n"
    "	movq %rax, smash_orig(%rip)\n"
    "	leaq smash_landing(%rip), %rax\n"
    "	movq %rax, (%rsp)\n"
    "smash_ret:\n"
    "	ret\n"
    "smash_landing:\n" /* only reached without protection */
    "	andq $-16, %rsp\n"
    "	call smash_not_caught\n"
    "	ud2\n"
    "smash_recover:\n" /* the handler resumes here: rsp still at the smashed slot */
    "	addq $8, %rsp\n"
    "	movl $1, %eax\n"
    "	incsspq %rax\n"
    "	jmp *smash_orig(%rip)\n"
    ".size smash_and_return, .-smash_and_return\n");

static volatile int segv_code = -1, smashes;

void smash_not_caught(void)
{
	fail("a smashed return address was followed: no shadow-stack protection (status %#lx)", cet_status());
	exit(1);
}

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	segv_code = si->si_code;
	if (si->si_code != SEGV_CPERR || uc->uc_mcontext.gregs[REG_RIP] != (greg_t)smash_ret) {
		fail("SIGSEGV si_code %d at %#llx (addr %p), expected SEGV_CPERR at the smashed ret", si->si_code,
		     (unsigned long long)uc->uc_mcontext.gregs[REG_RIP], si->si_addr);
		exit(1);
	}
	smashes++;
	uc->uc_mcontext.gregs[REG_RIP] = (greg_t)smash_recover;
}

static int smash(const char *when)
{
	unsigned long ssp0, ssp1;
	int n = smashes;

	ssp0 = cet_rdssp();
	smash_and_return();
	ssp1 = cet_rdssp();
	if (smashes != n + 1)
		return fail("%s: the smash was not caught", when);
	if (ssp0 != ssp1)
		return fail("%s: SSP %#lx after recovering, %#lx before", when, ssp1, ssp0);
	return 0;
}

static int check(struct cet_ckpt *c, int restored, const char *when)
{
	int bad = 0;

	if (!restored)
		bad |= cet_expect_shstk(&c->before.st, when);
	return bad | smash(when);
}

static struct cet_ckpt ckpt = { .who = "main", .check = check };

static CET_NOINLINE int run(void)
{
	struct sigaction sa = { .sa_sigaction = on_segv, .sa_flags = SA_SIGINFO };

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, NULL))
		return pr_perror("sigaction");
	return cet_pass(cet_recurse(1000, cet_rec_checkpoint, &ckpt, "recursion"),
			"smashed return after restore: SIGSEGV si_code %d (SEGV_CPERR), recovered and unwound\n",
			segv_code);
}

CET_TEST_MAIN(run)
