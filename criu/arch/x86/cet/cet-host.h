/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __CR_CET_HOST_H__
#define __CR_CET_HOST_H__

#include <stdbool.h>
#include <sys/types.h>

/* Does this host run user shadow stacks (CPU and kernel)?  cet-check.c */
bool cet_host_has_shstk(void);
/*
 * Does the kernel have criu-cet's NT_X86_SHSTK_STATUS regset?  Asked once, of
 * a task criu has seized and stopped.
 */
bool cet_kernel_has_regset(pid_t stopped);
/* Is criu itself running on a shadow stack? */
bool cet_self_has_shstk(void);

#endif /* __CR_CET_HOST_H__ */
