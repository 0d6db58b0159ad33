// SPDX-License-Identifier: GPL-2.0
/*
 * Scenario 6: WRSS.  With WRSS on at the dump (features "shstk wrss"), it is
 * on and usable after restore: the words it wrote into an extra shadow stack
 * (map_shadow_stack) are there, and wrssq writes again.  Built as wrss_off
 * (CET_WRSS_OFF): WRSS off at the dump stays off, wrssq raises SIGILL after
 * restore.
 */
#include <signal.h>
#include <ucontext.h>
#include <sys/mman.h>

#include "cetlib.h"

#ifdef CET_WRSS_OFF
const char *test_doc = "WRSS off at dump: wrssq faults after restore";
#define WANT_STATUS   ARCH_SHSTK_SHSTK
#define WANT_FEATURES "shstk"
#else
const char *test_doc = "WRSS on at dump: on and usable after restore";
#define WANT_STATUS   (ARCH_SHSTK_SHSTK | ARCH_SHSTK_WRSS)
#define WANT_FEATURES "shstk wrss"
#endif
const char *test_author = "criu-cet";

#define EXTRA_SIZE  (4 * 4096UL)
#define EXTRA_WORDS (EXTRA_SIZE / 8)

static inline unsigned long pattern(unsigned long i)
{
	return 0x5a5a000000000000UL | (i * 0x10001UL);
}

/* wrss_probe(addr, val): one wrssq; the SIGILL handler skips it */
void wrss_probe(unsigned long *addr, unsigned long val);
extern char wrss_probe_insn[], wrss_probe_done[];
asm(".text\n"
    ".globl wrss_probe, wrss_probe_insn, wrss_probe_done\n"
    ".type wrss_probe, @function\n"
    "wrss_probe:\n"
    "wrss_probe_insn:\n"
    "	wrssq %rsi, (%rdi)\n"
    "wrss_probe_done:\n"
    "	ret\n"
    ".size wrss_probe, .-wrss_probe\n");

static volatile int sigills;

static void on_sigill(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	if (uc->uc_mcontext.gregs[REG_RIP] != (greg_t)wrss_probe_insn) {
		fail("SIGILL at %#llx, not at the wrssq probe", (unsigned long long)uc->uc_mcontext.gregs[REG_RIP]);
		exit(1);
	}
	uc->uc_mcontext.gregs[REG_RIP] = (greg_t)wrss_probe_done;
	sigills++;
}

static unsigned long *extra;

/* 0 when wrssq behaves as the WRSS state says it must */
static int probe(const char *when)
{
	unsigned long *slot = extra + 7, old = *slot;
	int ills = sigills;

	wrss_probe(slot, old ^ 0xff);
#ifdef CET_WRSS_OFF
	if (sigills != ills + 1)
		return fail("%s: wrssq with WRSS off did not fault (slot %#lx -> %#lx)", when, old, *slot);
	if (*slot != old)
		return fail("%s: the faulting wrssq changed the slot", when);
#else
	if (sigills != ills)
		return fail("%s: wrssq with WRSS on raised SIGILL", when);
	if (*slot != (old ^ 0xff))
		return fail("%s: wrssq wrote %#lx, slot reads %#lx", when, old ^ 0xff, *slot);
	wrss_probe(slot, old);
#endif
	return 0;
}

static int check(struct cet_ckpt *c, int restored, const char *when)
{
	int bad = 0;
	unsigned long i;

	if (!restored) {
		bad |= cet_thread_state_expect(&c->before.st, WANT_STATUS, WANT_FEATURES, "", when);
		return bad | probe(when);
	}
	for (i = 0; i < EXTRA_WORDS; i++) {
#ifdef CET_WRSS_OFF
		unsigned long want = i == EXTRA_WORDS - 1 ? cet_token_at((unsigned long)&extra[i]) : 0;
#else
		unsigned long want = pattern(i);
#endif
		if (extra[i] != want) {
			bad |= fail("extra shadow stack word %lu is %#lx after restore, expected %#lx", i, extra[i],
				    want);
			break;
		}
	}
	return bad | probe(when);
}

static struct cet_ckpt ckpt = { .who = "main", .check = check };

static CET_NOINLINE int run(void)
{
	struct sigaction sa = { .sa_sigaction = on_sigill, .sa_flags = SA_SIGINFO };

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGILL, &sa, NULL))
		return pr_perror("sigaction");
#ifndef CET_WRSS_OFF
	extra = cet_wrss_stack(EXTRA_SIZE, pattern);
	if (!extra)
		return 1;
#else
	extra = cet_map_shadow_stack(0, EXTRA_SIZE, SHADOW_STACK_SET_TOKEN);
	if (extra == MAP_FAILED)
		return pr_perror("map_shadow_stack");
#endif
	return cet_pass(cet_recurse(800, cet_rec_checkpoint, &ckpt, "recursion"),
			"status %#lx '%s' kept; wrssq %s after restore (%d SIGILL); extra shadow stack intact\n",
			ckpt.after.st.status, ckpt.after.st.features,
#ifdef CET_WRSS_OFF
			"faults",
#else
			"writes",
#endif
			sigills);
}

CET_TEST_MAIN(run)
