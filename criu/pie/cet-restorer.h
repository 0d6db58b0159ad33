/* SPDX-License-Identifier: GPL-2.0 */
/*
 * criu-cet, restorer side: give a thread its shadow stack back.
 *
 * The restored task runs the whole restorer with shadow stacks off.  At
 * the very end of each thread's restore, cet_restore_thread() turns the
 * shadow stack on with ARCH_SHSTK_ENABLE, steering the kernel's allocation
 * onto the thread's original stack address (so the kernel owns it and
 * frees it when the thread exits, as before the dump), writes the dumped
 * contents with WRSS, and leaves SSP on a sigframe token so that the
 * restorer's final rt_sigreturn lands the thread on its dumped SSP.  Then
 * WRSS and the locks are put back as they were.
 *
 * Everything that changes SSP under our feet (the enable, the switch) is
 * expanded inline in the restorer's top-level function, which never
 * returns: a return through a frame older than the shadow stack would
 * fault.  Calls made afterwards push and pop their own entries and are fine.
 */
#ifndef __CR_PIE_CET_RESTORER_H__
#define __CR_PIE_CET_RESTORER_H__

#include "../arch/x86/cet/cet-rst.h"

int cet_rst_place_begin(struct cet_rst_thread *t);
int cet_rst_place_end(struct cet_rst_thread *t, long enable_ret, unsigned long ssp);
int cet_rst_other_stacks(struct cet_rst_thread *t);
int cet_rst_own_contents(struct cet_rst_thread *t);
int cet_rst_finish(struct cet_rst_thread *t);
void cet_rst_fail(struct cet_rst_thread *t);

static always_inline long cet_rst_enable_shstk(void)
{
	long ret;

	asm volatile("syscall"
		     : "=a"(ret)
		     : "a"(158 /* __NR_arch_prctl */), "D"(ARCH_SHSTK_ENABLE), "S"(ARCH_SHSTK_SHSTK)
		     : "rcx", "r11", "memory");
	return ret;
}

static always_inline unsigned long cet_rst_rdssp(void)
{
	unsigned long ssp = 0;

	asm volatile("rdsspq %0" : "+r"(ssp));
	return ssp;
}

static always_inline void cet_rst_wrss_inline(unsigned long addr, unsigned long val)
{
	asm volatile("wrssq %1, (%0)" : : "r"(addr), "r"(val) : "memory");
}

/*
 * Put two words under the dumped SSP: the sigframe token rt_sigreturn will
 * pop (dumped SSP | bit 63) and, below it, a restore token; rstorssp onto
 * the restore token and one incssp leave SSP on the sigframe token.
 */
static always_inline void cet_rst_switch(unsigned long ssp)
{
	cet_rst_wrss_inline(ssp - 8, ssp | CET_SIGFRAME_DATA);
	cet_rst_wrss_inline(ssp - 16, (ssp - 8) | CET_TOKEN_MODE64);
	asm volatile("rstorssp (%0)\n\t"
		     "incsspq %1\n\t"
		     :
		     : "r"(ssp - 16), "r"(1UL)
		     : "memory");
}

static always_inline int cet_restore_thread(struct cet_rst_thread *t)
{
	unsigned long ssp;
	long ret;

	if (!t->proc)
		return 0;
	if (!(t->features & ARCH_SHSTK_SHSTK))
		return cet_rst_finish(t);	/* no stack: locks only */

	if (cet_rst_place_begin(t))
		return -1;
	ret = cet_rst_enable_shstk();
	ssp = cet_rst_rdssp();
	if (cet_rst_place_end(t, ret, ssp))
		return -1;
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
