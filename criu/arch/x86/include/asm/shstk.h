/* SPDX-License-Identifier: GPL-2.0 */
/*
 * criu-cet: CRIU 4.1.1's shadow-stack hooks (arch_shstk_*), served by our
 * CET subsystem in criu/arch/x86/cet/ and criu/pie/cet-restorer.*.
 * Upstream's own shadow-stack code (shstk.c) is not built.
 */
#ifndef __CR_ASM_SHSTK_H__
#define __CR_ASM_SHSTK_H__

#include "../../cet/cet-rst.h"

#define ARCH_HAS_SHSTK
#define rst_shstk_info cet_rst_thread

struct task_restore_args;
struct pstree_item;

int cet_restore_prepare(struct pstree_item *item, CoreEntry *core, struct task_restore_args *ta);
#define arch_shstk_prepare cet_restore_prepare

/*
 * Our restore enables shadow stacks inside the task; the tracer's unlock
 * is only for a criu that runs on a shadow stack itself (cet-self.c).
 */
int cet_restore_unlock(struct pstree_item *item, CoreEntry *core, pid_t pid);
#define arch_shstk_unlock cet_restore_unlock

int cet_restore_trampoline(struct pstree_item *item, CoreEntry *core, int (*func)(void *arg), void *arg);
#define arch_shstk_trampoline cet_restore_trampoline

#ifdef CR_NOGLIBC
#include "../../../../pie/cet-restorer.h"

/* The restorer runs with shadow stacks off until cet_restore_thread(). */
static inline int cet_restore_nothing_early(struct cet_rst_thread *t)
{
	return 0;
}
#define arch_shstk_switch_to_restorer cet_restore_nothing_early
#define arch_shstk_restore cet_restore_thread
#endif /* CR_NOGLIBC */

#endif /* __CR_ASM_SHSTK_H__ */
