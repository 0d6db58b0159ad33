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
#include <stddef.h>
#include <sys/prctl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/syscall.h>

#ifndef __NR_clone3
#define __NR_clone3		435
#endif

#include "zdtmtst.h"

const char *test_doc = "fiber_thread when the owned shadow stacks cannot be learned (clone refused)";
const char *test_author = "criu-cet";

#define NEW_SS			2	/* a new kernel-owned stack for main and the thread */

static int before_checkpoint(void)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(code) / sizeof(code[0]), .filter = code };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return pr_perror("PR_SET_NO_NEW_PRIVS");
	if (syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog))
		return pr_perror("seccomp");
	return 0;
}

#include "fiber_thread.c"
