/* SPDX-License-Identifier: GPL-2.0 */
/*
 * criu-cet, restorer side: give a thread its shadow stack back.
 *
 * The restored task runs the restorer with shadow stacks off.  CRIU's
 * memory restore has put each shadow stack's pages at their address as
 * ordinary memory.  Each thread's CET step runs before the restore stage
 * ends (threads first, the leader after it cloned them and before it
 * restores rlimits, seccomp and credentials), in this order:
 *
 *   1. the first thread moves every shadow stack's pages aside and holds
 *      their ranges with mappings of its own;
 *   2. ARCH_SHSTK_ENABLE, steered onto the thread's own range: every gap
 *      of the address space is filled (one pass over self/maps for the
 *      process, kept until the last stack is placed), only the thread's
 *      range is released, and the kernel is asked where it would put the
 *      stack (map_shadow_stack(), the same search) until the answer is
 *      that range, so the kernel can put the stack nowhere else; it owns
 *      it and frees it when the thread exits;
 *   3. WRSS on, the stacks no thread owns made with map_shadow_stack and
 *      their pages copied in (with WRSS, or through /proc/self/mem in a
 *      process where no thread has a shadow stack);
 *   4. SSP moved onto a sigframe token under the dumped SSP, so that the
 *      restorer's final rt_sigreturn lands the thread on its dumped SSP;
 *   5. the own stack's pages copied in, at and above the dumped SSP;
 *   6. WRSS and the lock mask exactly as dumped; the leader waits for
 *      every thread's step, then drops the pages set aside (not before:
 *      a hole left while another thread places its stack could take it).
 *
 * Everything that changes SSP under our feet (2 and 4) is expanded inline
 * in the restorer's top-level function, which never returns: a return
 * through a frame older than the shadow stack would fault.  Calls made
 * afterwards push and pop their own entries and are fine.  The inline
 * helpers for it (cet_enable_shstk(), cet_rdssp(), cet_wrss()) are the
 * ones of cet-abi.h.
 */
#ifndef __CR_PIE_CET_RESTORER_H__
#define __CR_PIE_CET_RESTORER_H__

#include "../arch/x86/cet/cet-restore-args.h"

int cet_rst_set_aside(struct cet_rst_thread *t);
int cet_rst_place_begin(struct cet_rst_thread *t);
int cet_rst_place_end(struct cet_rst_thread *t, long enable_ret, unsigned long ssp);
int cet_rst_other_stacks(struct cet_rst_thread *t);
int cet_rst_own_contents(struct cet_rst_thread *t);
int cet_rst_finish(struct cet_rst_thread *t);
void cet_rst_fail(struct cet_rst_thread *t);

/*
 * Put two words under the dumped SSP: the sigframe token rt_sigreturn will
 * pop (dumped SSP | bit 63) and, below it, a restore token; rstorssp onto
 * the restore token and one incssp leave SSP on the sigframe token.
 */
static always_inline void cet_rst_switch(unsigned long ssp)
{
	cet_wrss((unsigned long *)(ssp - 8), ssp | CET_SIGFRAME_DATA);
	cet_wrss((unsigned long *)(ssp - CET_SWITCH_TOKENS_SIZE), cet_token_for(ssp - 8));
	asm volatile("rstorssp (%0)\n\t"
		     "incsspq %1\n\t"
		     :
		     : "r"(ssp - CET_SWITCH_TOKENS_SIZE), "r"(1UL)
		     : "memory");
}

static always_inline int cet_restore_thread(struct cet_rst_thread *t)
{
	unsigned long ssp;
	long ret;

	if (!t->proc)
		return 0;
	if (cet_rst_set_aside(t))
		goto fail;
	if (!(t->features & ARCH_SHSTK_SHSTK)) {
		if (cet_rst_other_stacks(t))
			goto fail;
		return cet_rst_finish(t);	/* no stack of its own: locks only */
	}

	if (cet_rst_place_begin(t))
		goto fail;
	ret = cet_enable_shstk();
	ssp = cet_rdssp();
	if (cet_rst_place_end(t, ret, ssp))
		goto fail;
	if (cet_rst_other_stacks(t))
		goto fail;
	cet_rst_switch(t->ssp);
	/* From here this frame's SSP is the sigframe token. */
	if (cet_rst_own_contents(t))
		goto fail;
	return cet_rst_finish(t);
fail:
	cet_rst_fail(t);
	return -1;
}

#endif /* __CR_PIE_CET_RESTORER_H__ */
