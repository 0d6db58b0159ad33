/* SPDX-License-Identifier: GPL-2.0 */
/*
 * criu-cet, parasite side: which shadow-stack feature bits has this thread
 * locked?
 *
 * glibc locks with ARCH_SHSTK_LOCK(-1): every bit of the mask is set, and a
 * restore must lock exactly that again.  A stock kernel shows only the named
 * features in /proc/PID/status (bits 0 and 1); for the others it answers
 * the thread itself: ARCH_SHSTK_ENABLE of one bit returns -EPERM when that
 * bit is locked (the kernel checks the locks first) and -EINVAL when it is
 * not and no feature has that bit, changing nothing.  Only the thread can
 * ask (the kernel refuses the call through ptrace), so the parasite does.
 *
 * Bits 0 and 1 are real features that ENABLE would turn on: criu reads
 * those from /proc.  Should a future kernel accept ENABLE of another bit,
 * the feature is turned off again at once and the dump refused: criu-cet
 * cannot restore a feature it does not know.
 *
 * Which shadow stack does the kernel own for this thread (the one it frees
 * when the thread exits)?  A stock kernel does not say, and a thread may run
 * on another stack (a fiber's) when it is dumped.  When criu cannot tell
 * from the mappings, it lists candidates and the parasite asks the kernel
 * by an experiment no one sees: it forks (the child's thread state is a
 * copy of this thread's, the owned stack included, in its own copy of the
 * address space); in the child a helper thread waits for the child's main
 * thread to exit, which unmaps the owned stack (deactivate_mm ->
 * shstk_free), notes which candidate vanished and ends the child.
 */
#ifndef __CR_PIE_CET_PARASITE_H__
#define __CR_PIE_CET_PARASITE_H__

#include "common/compiler.h"
#include "common/err.h"

#define CET_PROBE_UNKNOWN_FEATURE	(-1000)

#ifdef CONFIG_X86_64
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <sys/wait.h>
#include "common/lock.h"
#include "common/page.h"
#include "../arch/x86/cet/cet-abi.h"

static inline int cet_probe_locked(uint64_t *locked, int *unknown_bit)
{
	int bit;

	*locked = 0;
	for (bit = CET_FIRST_PROBED_BIT; bit < 64; bit++) {
		long ret = sys_arch_prctl(ARCH_SHSTK_ENABLE, 1UL << bit);

		if (ret == -EPERM) {
			*locked |= 1ULL << bit;
		} else if (ret == 0) {
			sys_arch_prctl(ARCH_SHSTK_DISABLE, 1UL << bit);
			*unknown_bit = bit;
			return CET_PROBE_UNKNOWN_FEATURE;
		}
	}
	return 0;
}

/*
 * In the probe child, on a stack of its own: wait for the child's main
 * thread to be gone (its tid word cleared after its exit unmapped the owned
 * stack), then find the candidate that is no longer mapped.  The answer
 * goes into the args, which are shared with the parent and criu.
 */
static void __used cet_own_watch(struct parasite_dump_thread *ti)
{
	volatile uint32_t *word = &ti->cet_own_word;
	uint32_t i, v;

	while ((v = *word) != 0)
		sys_futex((uint32_t *)word, FUTEX_WAIT, v, NULL, NULL, 0);
	ti->cet_own_found = CET_OWN_NONE;
	for (i = 0; i < ti->cet_own_nr && i < ARRAY_SIZE(ti->cet_own_cand); i++) {
		if (sys_mincore((void *)(unsigned long)ti->cet_own_cand[i], PAGE_SIZE, &ti->cet_own_vec) == -ENOMEM) {
			ti->cet_own_found = i;
			break;
		}
	}
	sys_exit_group(0);
}

#define CET_PROBE_THREAD_FLAGS	(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM)
#define CET_PROBE_STACK		(64 << 10)
/* how long the probe child may take, and how often its end is looked for */
#define CET_PROBE_TIMEOUT_MS	3000
#define CET_PROBE_POLL_MS	10

/*
 * Fork without an exit signal (the task must see no SIGCHLD).  The child
 * touches no stack memory until its helper thread runs on a stack mapped in
 * the child alone: the parasite's stack is shared with the parent.  Only
 * registers and syscalls, hence asm; the parent comes out with the pid.
 */
static inline long cet_own_fork(struct parasite_dump_thread *ti)
{
	register long r12 asm("r12") = (long)ti;
	register long r13 asm("r13") = (long)cet_own_watch;
	register long r14 asm("r14") = (long)&ti->cet_own_word;
	long ret;

	asm volatile("xor %%edi, %%edi\n\t"
		     "xor %%esi, %%esi\n\t"
		     "xor %%edx, %%edx\n\t"
		     "xor %%r10d, %%r10d\n\t"
		     "xor %%r8d, %%r8d\n\t"
		     "mov %[nr_clone], %%eax\n\t"	/* clone(0): a fork, no exit signal */
		     "syscall\n\t"
		     "test %%rax, %%rax\n\t"
		     "jnz 9f\n\t"
		     "movl $1, (%%r14)\n\t"		/* child: its exit will clear the word */
		     "mov %%r14, %%rdi\n\t"
		     "mov %[nr_set_tid_address], %%eax\n\t"
		     "syscall\n\t"
		     "xor %%edi, %%edi\n\t"
		     "mov %[stk], %%esi\n\t"
		     "mov %[prot], %%edx\n\t"
		     "mov %[mapflags], %%r10d\n\t"
		     "mov $-1, %%r8\n\t"
		     "xor %%r9d, %%r9d\n\t"
		     "mov %[nr_mmap], %%eax\n\t"	/* the helper's stack */
		     "syscall\n\t"
		     "cmp %[max_errno], %%rax\n\t"	/* IS_ERR_VALUE */
		     "jae 8f\n\t"
		     "lea (%%rax, %%rsi), %%rsi\n\t"
		     "mov %[flags], %%edi\n\t"
		     "xor %%edx, %%edx\n\t"
		     "xor %%r10d, %%r10d\n\t"
		     "xor %%r8d, %%r8d\n\t"
		     "mov %[nr_clone], %%eax\n\t"	/* the helper thread */
		     "syscall\n\t"
		     "test %%rax, %%rax\n\t"
		     "jnz 8f\n\t"
		     "mov %%r12, %%rdi\n\t"		/* helper: cet_own_watch(ti), no return */
		     "call *%%r13\n\t"
		     "8:\n\t"
		     "xor %%edi, %%edi\n\t"
		     "mov %[nr_exit], %%eax\n\t"	/* the child's main thread exits */
		     "syscall\n\t"
		     "9:\n\t"
		     : "=a"(ret)
		     : "r"(r12), "r"(r13), "r"(r14), [stk] "i"(CET_PROBE_STACK), [flags] "i"(CET_PROBE_THREAD_FLAGS),
		       [nr_clone] "i"(__NR_clone), [nr_set_tid_address] "i"(__NR_set_tid_address),
		       [nr_mmap] "i"(__NR_mmap), [nr_exit] "i"(__NR_exit), [prot] "i"(PROT_READ | PROT_WRITE),
		       [mapflags] "i"(MAP_PRIVATE | MAP_ANONYMOUS), [max_errno] "i"(-MAX_ERRNO)
		     : "rdi", "rsi", "rdx", "r8", "r9", "r10", "rcx", "r11", "memory");
	return ret;
}

/* The child ends in a moment; one that does not (a seccomp user
 * notification nobody answers) is killed: criu must not wait forever. */
static inline int cet_own_reap(long pid)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = CET_PROBE_POLL_MS * 1000 * 1000 };
	int i, status;

	for (i = 0; i < CET_PROBE_TIMEOUT_MS / CET_PROBE_POLL_MS; i++) {
		if (sys_wait4(pid, &status, __WALL | WNOHANG, NULL) == pid)
			return 0;
		sys_nanosleep(&ts, NULL);
	}
	sys_kill(pid, SIGKILL);
	sys_wait4(pid, &status, __WALL, NULL);
	return -1;
}

static inline void cet_probe_own(struct parasite_dump_thread *ti)
{
	long pid;

	if (!ti->cet_own_nr)
		return;
	ti->cet_own_found = CET_OWN_NOT_DONE;
	pid = cet_own_fork(ti);
	if (pid < 0) {
		ti->cet_own_found = CET_OWN_NO_FORK;
		return;
	}
	if (cet_own_reap(pid))
		ti->cet_own_found = CET_OWN_TIMEOUT;
}
#else
static inline int cet_probe_locked(uint64_t *locked, int *unknown_bit)
{
	*locked = 0;
	return 0;
}

static inline void cet_probe_own(struct parasite_dump_thread *ti)
{
}
#endif

#endif /* __CR_PIE_CET_PARASITE_H__ */
