/* SPDX-License-Identifier: GPL-2.0 */
/*
 * criu-cet, parasite side: leave through a legitimate rt_sigreturn.
 *
 * The kernel's rt_sigreturn pops a sigframe token from the shadow stack;
 * compel moved SSP one word down before starting us and told us the token.
 * We write it with WRSS, turned on just for this when the task had it off
 * (compel lifted a WRSS lock a moment ago if there was one), then put WRSS
 * and the locks back exactly as the task had them.  On kernels with
 * NT_X86_CET_USER, compel does the WRSS and lock part from outside.
 */
#ifndef __COMPEL_PLUGIN_SHSTK_EXIT_H__
#define __COMPEL_PLUGIN_SHSTK_EXIT_H__

#include "rpc-pie-priv.h"

#ifdef __x86_64__
#define SHSTK_EXIT_ENABLE	0x5001
#define SHSTK_EXIT_DISABLE	0x5002
#define SHSTK_EXIT_LOCK		0x5003
#define SHSTK_EXIT_WRSS		(1ULL << 1)

static inline int parasite_shstk_exit(const struct parasite_shstk_exit *e)
{
	/* with NT_X86_CET_USER the tracer lends WRSS and locks it back */
	bool lend_wrss = !(e->features & SHSTK_EXIT_WRSS) && !e->by_tracer;
	long ret = 0;

	if (!e->token_addr)
		return 0;
	if (lend_wrss) {
		ret = sys_arch_prctl(SHSTK_EXIT_ENABLE, SHSTK_EXIT_WRSS);
		if (ret) {
			pr_err("shstk: cannot enable WRSS: %ld\n", ret);
			return -1;
		}
	}
	asm volatile("wrssq %1, (%0)" : : "r"(e->token_addr), "r"(e->token) : "memory");
	if (lend_wrss) {
		ret = sys_arch_prctl(SHSTK_EXIT_DISABLE, SHSTK_EXIT_WRSS);
		if (ret) {
			pr_err("shstk: cannot turn WRSS back off: %ld\n", ret);
			return -1;
		}
	}
	if (e->locked && !e->by_tracer) {
		ret = sys_arch_prctl(SHSTK_EXIT_LOCK, e->locked);
		if (ret) {
			pr_err("shstk: cannot lock %lx back: %ld\n", (unsigned long)e->locked, ret);
			return -1;
		}
	}
	return 0;
}
#else
static inline int parasite_shstk_exit(const struct parasite_shstk_exit *e)
{
	return 0;
}
#endif

#endif /* __COMPEL_PLUGIN_SHSTK_EXIT_H__ */
