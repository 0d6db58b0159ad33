// SPDX-License-Identifier: GPL-2.0
/*
 * fiber_thread.c when the dump cannot learn which shadow stack the kernel
 * owns for each thread: a seccomp filter (all threads) refuses clone, so
 * the parasite's fork probe cannot start its helper.  The safe outcome:
 * each restored thread gets a new shadow stack from the kernel (two new
 * mappings), the dumped stacks are ordinary shadow-stack mappings, and the
 * memory the thread maps where the fiber's stack was survives its exit.
 * The thread's dumped own stack is not freed at its exit (a leak, never a
 * foreign unmap): main's new one, main's and the thread's dumped ones stay.
 * Without C/R nothing is added and the test passes as fiber_thread does.
 */
#define CET_CLONE_FILTER
#define CET_FIBERS
#include "cetlib.h"

const char *test_doc = "fiber_thread when the owned shadow stacks cannot be learned (clone refused)";
const char *test_author = "criu-cet";

#define NEW_SS			2	/* a new kernel-owned stack for main and the thread */

static int before_checkpoint(void)
{
	if (cet_filter_clone(SECCOMP_RET_ERRNO | EPERM, 0))
		return pr_perror("seccomp");
	return 0;
}

#include "fiber_thread.c"
