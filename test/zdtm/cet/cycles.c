// SPDX-License-Identifier: GPL-2.0
/*
 * Scenario 11: repeated dump/restore cycles of one process (zdtm.py --iters
 * N; the lab runner does five).  The process carries everything at once:
 * shadow stack and WRSS on, both locked (glibc style, the enabled set), an
 * extra map_shadow_stack mapping whose words it wrote with WRSS, and a
 * recursion it is in the middle of.  It re-verifies all of it on every
 * SIGUSR2 (the lab runner sends one after each restore) and on SIGTERM:
 * features, locks (disable still EPERM), SSP, depth, the ss mappings, the
 * extra stack's contents, and that wrssq still writes.
 */
#include <signal.h>
#include <sys/mman.h>

#include "cetlib.h"

const char *test_doc = "The same CET state across repeated dump/restore cycles";
const char *test_author = "criu-cet";

#define EXTRA_SIZE  (2 * 4096UL)
#define EXTRA_WORDS (EXTRA_SIZE / 8)

static inline unsigned long pattern(unsigned long i)
{
	return 0xc0de000000000000UL | (i * 0x1003UL);
}

static unsigned long *extra;
static struct cet_snap ref;
static volatile sig_atomic_t usr2;
static int checks, have_ref;

static void on_usr2(int sig)
{
	usr2 = 1;
}

/* called from the same frame every time: the SSP inside must not move */
static CET_NOINLINE int verify(const char *when)
{
	static struct cet_snap now;
	unsigned long i, *slot = extra + 3;
	long dis;
	int bad = 0;

	if (cet_snap(&now))
		return 1;
	if (!have_ref) { /* the first call, before the dump, is the reference */
		ref = now;
		have_ref = 1;
		bad |= cet_thread_state_expect(&ref.st, ARCH_SHSTK_SHSTK | ARCH_SHSTK_WRSS, "shstk wrss",
					       "shstk wrss", when);
	}
	bad |= cet_snap_cmp(&ref, &now, when, when);
	for (i = 0; i < EXTRA_WORDS; i++) {
		if (extra[i] != pattern(i)) {
			bad |= fail("%s: extra shadow stack word %lu is %#lx, expected %#lx", when, i, extra[i],
				    pattern(i));
			break;
		}
	}
	dis = cet_arch_prctl(ARCH_SHSTK_DISABLE, ARCH_SHSTK_SHSTK);
	if (dis != -EPERM)
		bad |= fail("%s: disabling the locked shadow stack returned %ld", when, dis);
	if (cet_status() == (ARCH_SHSTK_SHSTK | ARCH_SHSTK_WRSS)) {
		cet_wrss(slot, ~pattern(3));
		if (*slot != ~pattern(3))
			bad |= fail("%s: wrssq did not write", when);
		cet_wrss(slot, pattern(3));
	}
	return bad;
}

static int at_bottom(struct cet_rec *r)
{
	sigset_t block, wait;
	int bad = 0;

	bad |= verify("before the dump");

	sigemptyset(&block);
	sigaddset(&block, SIGUSR2);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &wait);
	sigdelset(&wait, SIGUSR2);
	sigdelset(&wait, SIGTERM);

	test_daemon();
	while (test_go()) {
		sigsuspend(&wait);
		if (usr2) {
			char when[32];
			int b;

			usr2 = 0;
			checks++;
			snprintf(when, sizeof(when), "check %d", checks);
			b = verify(when);
			test_msg("%s after a restore: %s\n", when, b ? "FAILED" : "state unchanged");
			bad |= b;
		}
	}
	bad |= verify("at SIGTERM");
	return bad;
}

static CET_NOINLINE int run(void)
{
	struct sigaction sa = { .sa_handler = on_usr2 };
	long ret;

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR2, &sa, NULL))
		return pr_perror("sigaction");
	extra = cet_wrss_stack(EXTRA_SIZE, pattern);
	if (!extra)
		return 1;
	ret = cet_arch_prctl(ARCH_SHSTK_LOCK, -1UL);	/* as glibc does */
	if (ret)
		return fail("ARCH_SHSTK_LOCK: %ld", ret);

	return cet_pass(cet_recurse(3000, at_bottom, NULL, "recursion"),
			"state verified after %d SIGUSR2 checks and at SIGTERM: ssp %#lx depth %lu, %d ss mappings\n",
			checks, ref.st.ssp, ref.st.depth, ref.maps.nr);
}

CET_TEST_MAIN(run)
