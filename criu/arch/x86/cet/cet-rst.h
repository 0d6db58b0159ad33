/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What criu hands to the restorer blob about shadow stacks: built by
 * cet-restore.c from the images, consumed by criu/pie/cet-restorer.c in
 * the restored task.  Pointers point into restorer memory (rst_mem).
 */
#ifndef __CR_CET_RST_H__
#define __CR_CET_RST_H__

#include "int.h"
#include "common/lock.h"
#include "cet-abi.h"

#define CET_MAX_FILLERS		256

struct cet_rst_stack {
	u64		start;
	u64		end;
	u64		data_start;	/* contents for [data_start, end) */
	u64		*data;
	s32		owner;		/* index of the thread owning it, -1 if none */
	u32		created;	/* mapped and filled (non-owned stacks) */
};

/* One per process, shared by its threads in the restorer. */
struct cet_rst_proc {
	mutex_t			lock;		/* RLIMIT_STACK and fillers are process-wide */
	u32			nr_stacks;
	struct cet_rst_stack	*stacks;
	u64			task_size;
	u64			rlim_stack_cur;	/* what the task's RLIMIT_STACK is after restore */
	u64			rlim_stack_max;
	u32			nr_fillers;
	u64			fillers[CET_MAX_FILLERS][2];
};

/*
 * Per thread.  A thread that had its shadow stack on gets it back at the
 * same address (kernel-owned, so the kernel frees it when the thread
 * exits), with the same contents, SSP, WRSS and locks.
 */
struct cet_rst_thread {
	struct cet_rst_proc	*proc;		/* NULL: nothing to do (no CET in the image) */
	u64			features;
	u64			locked;
	u64			ssp;
	s32			own;		/* stack the kernel allocates for the thread */
	s32			cur;		/* stack the SSP is in (own, or a fiber's) */
	s32			proc_fd;
};

#endif /* __CR_CET_RST_H__ */
