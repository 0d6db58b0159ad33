// SPDX-License-Identifier: GPL-2.0
/*
 * Scenario 4: fibers.  Four extra shadow stacks made with map_shadow_stack
 * (with a restore token), switched with rstorssp/saveprevssp.  Each fiber
 * recurses to its own depth and, at the bottom, switches to the next one; the
 * last one waits to be checkpointed while the other three and main() are
 * parked, each behind a restore token on its shadow stack.  After restore the
 * running fiber checks its state, then every parked fiber is resumed in turn
 * (its token checked first), unwinds its recursion and hands over to the
 * next; finally main() is resumed.
 */
#include <sys/mman.h>

#include "cetlib.h"

const char *test_doc = "Fibers on map_shadow_stack shadow stacks";
const char *test_author = "criu-cet";

#define NR_FIBERS  4
#define SHSTK_SIZE (64UL << 10)
#define STACK_SIZE (256UL << 10)

struct fiber {
	unsigned long rsp;	/* 0: saved stack pointer */
	unsigned long token;	/* 8: address of its restore token */
	unsigned long entry;	/* 16: first entry point, 0 once started */
	unsigned long arg;	/* 24: argument of the first entry */
	/* C only */
	unsigned long ss_base, ss_top;
	struct cet_rec rec;
	struct cet_thread_state before, after;
	int bad;
};

void fiber_switch(struct fiber *from, struct fiber *to);

/*
 * Save the callee-saved registers and the stack pointer of @from, leave a
 * restore token on the current shadow stack (rstorssp onto @to's token, then
 * saveprevssp), and continue @to: pop its registers and return, or, on its
 * first entry, jump (its new shadow stack holds nothing to return to).
 */
asm(".text\n"
    ".globl fiber_switch\n"
    ".type fiber_switch, @function\n"
    "fiber_switch:\n"
    "	pushq %rbp\n"
    "	pushq %rbx\n"
    "	pushq %r12\n"
    "	pushq %r13\n"
    "	pushq %r14\n"
    "	pushq %r15\n"
    "	movq %rsp, 0(%rdi)\n"
    "	xorl %eax, %eax\n"
    "	rdsspq %rax\n"
    "	subq $8, %rax\n"
    "	movq %rax, 8(%rdi)\n"
    "	movq 8(%rsi), %rax\n"
    "	rstorssp (%rax)\n"
    "	saveprevssp\n"
    "	movq 0(%rsi), %rsp\n"
    "	movq 16(%rsi), %rax\n"
    "	testq %rax, %rax\n"
    "	jnz 1f\n"
    "	popq %r15\n"
    "	popq %r14\n"
    "	popq %r13\n"
    "	popq %r12\n"
    "	popq %rbx\n"
    "	popq %rbp\n"
    "	ret\n"
    "1:	movq $0, 16(%rsi)\n"
    "	movq 24(%rsi), %rdi\n"
    "	jmp *%rax\n"
    ".size fiber_switch, .-fiber_switch\n");

static struct fiber main_fiber, fibers[NR_FIBERS];
static struct cet_ss_maps maps_before, maps_after;
static int bad;

static int depth_of(int i)
{
	return 400 + 250 * i;
}

static int check_token(struct fiber *f, const char *who)
{
	unsigned long val = *(volatile unsigned long *)f->token;

	if (val != cet_token_at(f->token))
		return fail("%s: restore token at %#lx holds %#lx, expected %#lx", who, f->token, val,
			    cet_token_at(f->token));
	return 0;
}

static int fiber_bottom(struct cet_rec *r)
{
	struct fiber *f = r->arg;
	int i = f - fibers, b = 0;
	char who[16];

	snprintf(who, sizeof(who), "fiber %d", i);
	if (cet_thread_state(&f->before))
		return 1;
	if (f->before.ssp < f->ss_base || f->before.ssp >= f->ss_top)
		b |= fail("%s: SSP %#lx is not on its shadow stack %lx-%lx", who, f->before.ssp, f->ss_base,
			  f->ss_top);

	if (i < NR_FIBERS - 1) {
		fiber_switch(f, &fibers[i + 1]); /* park here */
	} else {
		int j;

		if (cet_ss_maps(&maps_before))
			return 1;
		test_daemon();
		test_waitsig();
		if (cet_ss_maps(&maps_after))
			return 1;
		bad |= cet_ss_maps_cmp(&maps_before, &maps_after, "process");
		bad |= check_token(&main_fiber, "main");
		for (j = 0; j < NR_FIBERS - 1; j++) {
			char w[16];

			snprintf(w, sizeof(w), "fiber %d", j);
			bad |= check_token(&fibers[j], w);
		}
		fiber_switch(f, &fibers[0]); /* resume the parked ones */
	}

	if (cet_thread_state(&f->after))
		return 1;
	b |= cet_thread_state_cmp(&f->before, &f->after, who);
	return b;
}

/* A fiber's first frame: it never returns, it hands over to the next one */
static void fiber_main(unsigned long arg)
{
	struct fiber *f = &fibers[arg];
	char who[16];

	snprintf(who, sizeof(who), "fiber %lu", arg);
	f->bad = cet_rec_run(&f->rec, who);
	if (arg < NR_FIBERS - 1)
		fiber_switch(f, &fibers[arg + 1]);
	else
		fiber_switch(f, &main_fiber);
	fail("%s resumed after it finished", who);
	exit(1);
}

static CET_NOINLINE int run(void)
{
	struct cet_thread_state mbefore, mafter;
	int i;

	for (i = 0; i < NR_FIBERS; i++) {
		struct fiber *f = &fibers[i];
		unsigned long *ss;
		char *stack;

		ss = cet_map_shadow_stack(SHSTK_SIZE, SHADOW_STACK_SET_TOKEN);
		if (ss == MAP_FAILED)
			return pr_perror("map_shadow_stack");
		stack = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (stack == MAP_FAILED)
			return pr_perror("mmap");
		f->ss_base = (unsigned long)ss;
		f->ss_top = f->ss_base + SHSTK_SIZE;
		f->token = f->ss_top - 8;
		if (check_token(f, "new shadow stack"))
			return 1;
		/* as if called: the entry sees rsp + 8 16-byte aligned */
		f->rsp = (((unsigned long)stack + STACK_SIZE) & ~15UL) - 8;
		f->entry = (unsigned long)fiber_main;
		f->arg = i;
		if (cet_rec_init(&f->rec, depth_of(i), fiber_bottom, f))
			return 1;
	}

	if (cet_thread_state(&mbefore))
		return 1;
	fiber_switch(&main_fiber, &fibers[0]);
	if (cet_thread_state(&mafter))
		return 1;
	bad |= cet_thread_state_cmp(&mbefore, &mafter, "main");
	bad |= cet_thread_state_expect(&mafter, ARCH_SHSTK_SHSTK, "shstk", "", "main");
	if (maps_before.nr != NR_FIBERS + 1)
		bad |= fail("%d shadow-stack mappings before the dump, want %d", maps_before.nr, NR_FIBERS + 1);
	for (i = 0; i < NR_FIBERS; i++)
		bad |= fibers[i].bad;
	if (bad)
		return 1;
	test_msg("%d fibers (1 running, 3 parked + main) resumed and unwound; %d ss mappings kept\n", NR_FIBERS,
		 maps_after.nr);
	pass();
	return 0;
}

CET_TEST_MAIN(run)
