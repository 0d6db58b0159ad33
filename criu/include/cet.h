/* SPDX-License-Identifier: GPL-2.0 */
/*
 * criu-cet: where CRIU core calls the CET subsystem (criu/arch/x86/cet/).
 * Each call site is one line of a hook patch in patches/criu/.
 */
#ifndef __CR_CET_H__
#define __CR_CET_H__

#include <sys/types.h>

struct vm_area_list;
struct pstree_item;
typedef struct VmaEntry VmaEntry;
struct parasite_dump_thread;
struct task_restore_args;
struct thread_restore_args;
typedef struct CoreEntry CoreEntry;

#ifdef CONFIG_X86_64
/* dump: cet-dump.c */
int cet_dump_task(struct pstree_item *item, struct vm_area_list *vmas);
void cet_dump_thread_args(pid_t tid, struct parasite_dump_thread *args);
int cet_dump_thread_core(pid_t tid, CoreEntry *core, const struct parasite_dump_thread *ti);
/* restore: cet-restore-args.c, cet-restore-precheck.c */
int cet_restore_fixup(struct task_restore_args *ta, struct thread_restore_args *threads, int nr_threads);
int cet_check_image_vma(const VmaEntry *e);
int cet_check_images_before_fork(void);
/* criu check, criu --version: cet-check.c */
int cet_check_feature(void);
const char *cet_version_name(void);
void cet_print_version(void);
#else
static inline int cet_dump_task(struct pstree_item *item, struct vm_area_list *vmas)
{
	return 0;
}
static inline void cet_dump_thread_args(pid_t tid, struct parasite_dump_thread *args)
{
}
static inline int cet_dump_thread_core(pid_t tid, CoreEntry *core, const struct parasite_dump_thread *ti)
{
	return 0;
}
static inline int cet_restore_fixup(struct task_restore_args *ta, struct thread_restore_args *threads,
				    int nr_threads)
{
	return 0;
}
static inline int cet_check_image_vma(const VmaEntry *e)
{
	return 0;
}
static inline int cet_check_images_before_fork(void)
{
	return 0;
}
static inline int cet_check_feature(void)
{
	return -1;	/* no x86 shadow stacks on this architecture */
}
static inline const char *cet_version_name(void)
{
	return "criu-cet";
}
static inline void cet_print_version(void)
{
}
#endif

#endif /* __CR_CET_H__ */
