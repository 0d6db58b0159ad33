/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What criu hands to the restorer blob about shadow stacks: built by
 * cet-restore-args.c from the images, consumed by criu/pie/cet-restorer.c in
 * the restored task.  Pointers point into restorer memory (rst_mem).
 */
#ifndef __CR_CET_RESTORE_ARGS_H__
#define __CR_CET_RESTORE_ARGS_H__

#include "int.h"
#include "common/lock.h"
#include "cet-abi.h"

/* Addresses [start, end): a gap the restorer fills while the kernel places a stack */
struct cet_range {
	u64	start;
	u64	end;
};

/*
 * A shadow-stack mapping of the process.  CRIU's restore puts its pages at
 * [start, end) as ordinary memory; the restorer moves them aside, makes a
 * shadow stack there and copies them in.
 */
struct cet_rst_stack {
	u64		start;
	u64		end;
	u64		aside;		/* where the pages wait, once moved aside */
	s32		owner;		/* index of the thread owning it, -1 if none */
	u32		held;		/* a mapping of ours keeps the range until it is made */
	u32		filled;		/* shadow stack made and its pages copied */
};

/* One per process, shared by its threads in the restorer. */
struct cet_rst_proc {
	mutex_t			lock;		/* placement and the shared tables */
	futex_t			threads_left;	/* threads (not the leader) still at their CET step */
	u32			any_shstk;	/* some thread has a shadow stack (and so WRSS) */
	u32			moved_aside;
	u32			unplaced;	/* stacks the kernel has still to place */
	u32			fillers_up;	/* the gaps are filled (one pass for all threads) */
	u64			task_size;
	u32			nr_stacks;
	struct cet_rst_stack	*stacks;
	u64			aside_base;	/* one reservation holding every stack's pages */
	u64			aside_len;
	s32			mem_fd;		/* /proc/self/mem, when no thread has WRSS */
	u32			nr_fillers;
	u32			max_fillers;	/* enough for every gap of the address space */
	struct cet_range	*fillers;
};

/*
 * Per thread.  A thread that had its shadow stack on gets it back at the
 * same address (kernel-owned, so the kernel frees it when the thread
 * exits), with the same contents, SSP, WRSS and locks.
 */
struct cet_rst_thread {
	struct cet_rst_proc	*proc;		/* NULL: nothing to do (no CET in the image) */
	u64			features;
	u64			locked;		/* the whole mask, as dumped */
	u64			ssp;
	s32			own;		/* stack the kernel allocates for the thread */
	s32			cur;		/* stack the SSP is in (own, or a fiber's) */
	s32			proc_fd;
	u32			leader;		/* waits for the other threads' steps */
	u32			wrss_on;	/* WRSS lent to the restorer for the copy */
};

#endif /* __CR_CET_RESTORE_ARGS_H__ */
