// SPDX-License-Identifier: GPL-2.0
/*
 * Scenario 7: features locked the way glibc locks them once it has set up
 * the shadow stack (sysdeps/unix/sysv/linux/x86_64/dl-cet.h):
 * ARCH_SHSTK_LOCK(-1), every bit of the mask, freezing the enabled set
 * (shadow stack on, WRSS off).  After restore the same mask holds, all 64
 * bits (the kernel answers for each), disabling the shadow stack and
 * enabling WRSS both fail with EPERM, as before the dump, and neither
 * attempt changes the features.
 */
#include "cetlib.h"

const char *test_doc = "glibc's ARCH_SHSTK_LOCK(-1): the whole lock mask stays locked";
const char *test_author = "criu-cet";

static unsigned long mask_before, mask_after;

static int try_unlocking(const char *when)
{
	long dis, wrss;
	int bad = 0;

	dis = cet_arch_prctl(ARCH_SHSTK_DISABLE, ARCH_SHSTK_SHSTK);
	wrss = cet_arch_prctl(ARCH_SHSTK_ENABLE, ARCH_SHSTK_WRSS);
	if (dis != -EPERM)
		bad |= fail("%s: disabling the locked shadow stack returned %ld, not -EPERM", when, dis);
	if (wrss != -EPERM)
		bad |= fail("%s: enabling the locked-off WRSS returned %ld, not -EPERM", when, wrss);
	if (cet_status() != ARCH_SHSTK_SHSTK)
		bad |= fail("%s: status %#lx after the attempts", when, cet_status());
	return bad;
}

static int check(struct cet_ckpt *c, int restored, const char *when)
{
	int bad = 0;

	if (!restored) {
		bad |= cet_thread_state_expect(&c->before.st, ARCH_SHSTK_SHSTK, "shstk", "shstk wrss", when);
		mask_before = cet_lock_mask();
		if (mask_before != ~0UL)
			bad |= fail("lock mask %#lx after ARCH_SHSTK_LOCK(-1), not all ones", mask_before);
	} else {
		mask_after = cet_lock_mask();
		if (mask_after != mask_before)
			bad |= fail("lock mask %#lx before the dump, %#lx after", mask_before, mask_after);
	}
	return bad | try_unlocking(when);
}

static struct cet_ckpt ckpt = { .who = "main", .check = check };

static CET_NOINLINE int run(void)
{
	long ret;

	ret = cet_arch_prctl(ARCH_SHSTK_LOCK, -1UL);	/* as glibc does */
	if (ret)
		return fail("ARCH_SHSTK_LOCK: %ld", ret);
	return cet_pass(cet_recurse(1200, cet_rec_checkpoint, &ckpt, "recursion"),
			"features '%s' lock mask %#lx after restore; disable and WRSS enable still EPERM\n",
			ckpt.after.st.features, mask_after);
}

CET_TEST_MAIN(run)
