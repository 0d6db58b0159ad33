/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Linux shadow-stack ABI (6.6+) and the layout of shadow-stack words,
 * as criu-cet uses them on both sides: in criu and in the restorer blob.
 */
#ifndef __CR_CET_ABI_H__
#define __CR_CET_ABI_H__

/* arch/x86/include/uapi/asm/prctl.h */
#ifndef ARCH_SHSTK_ENABLE
#define ARCH_SHSTK_ENABLE	0x5001
#define ARCH_SHSTK_DISABLE	0x5002
#define ARCH_SHSTK_LOCK		0x5003
#define ARCH_SHSTK_UNLOCK	0x5004
#define ARCH_SHSTK_STATUS	0x5005
#define ARCH_SHSTK_SHSTK	(1ULL << 0)
#define ARCH_SHSTK_WRSS		(1ULL << 1)
#endif
/* the features criu-cet restores; also the lock bits /proc/PID/status names */
#define CET_KNOWN_FEATURES	(ARCH_SHSTK_SHSTK | ARCH_SHSTK_WRSS)
/* lock bits above the named ones: the parasite asks the kernel (cet-parasite.h) */
#define CET_FIRST_PROBED_BIT	2

/*
 * What the parasite's ownership probe (cet-parasite.h) answers in
 * cet_own_found besides the index of the candidate the kernel owns.
 */
#define CET_OWN_NONE		(-1)	/* none vanished: the kernel owns no stack listed */
#define CET_OWN_NOT_DONE	(-2)	/* the probe child ended before it could look */
#define CET_OWN_NO_FORK		(-3)	/* the fork was refused (pids limit, memory) */
#define CET_OWN_TIMEOUT		(-4)	/* the probe child hung and was killed */
#define CET_OWN_SKIPPED		(-5)	/* not asked: an earlier probe of the task failed */

#ifndef NT_X86_SHSTK
#define NT_X86_SHSTK		0x204
#endif
#ifndef SHADOW_STACK_SET_TOKEN
#define SHADOW_STACK_SET_TOKEN	0x1
#endif

/*
 * A 64-bit restore token (what rstorssp consumes) holds the address just
 * above itself with bit 0 set; the word the kernel's rt_sigreturn pops holds
 * the SSP to return to with bit 63 set (arch/x86/kernel/shstk.c).
 */
#define CET_TOKEN_MODE64	(1UL << 0)
#define CET_SIGFRAME_DATA	(1UL << 63)

/*
 * criu-cet's kernel patches (kernel/patches/): the whole user CET state of
 * a thread as one regset.  Stock kernels answer EINVAL for the note.
 */
#ifndef NT_X86_CET_USER
#define NT_X86_CET_USER		0x206
#endif
#define USER_CET_SHSTK_EN	(1ULL << 0)
#define USER_CET_WRSS_EN	(1ULL << 1)

#ifndef CR_NOGLIBC
#include <stdint.h>
struct cet_user_regs {
	uint64_t cet;		/* IA32_U_CET as the kernel keeps it */
	uint64_t ssp;		/* IA32_PL3_SSP */
	uint64_t locked;	/* the lock mask as locked: every bit, glibc sets all 64 */
	uint64_t shstk_base;	/* the shadow stack the kernel frees at the thread's exit */
	uint64_t shstk_size;	/* (both 0 on the series' v1, which had no such fields) */
	uint64_t reserved[3];
};
#endif

/*
 * Version of the cet_core_entry written by this criu-cet.  2: shadow-stack
 * contents live in CRIU's page images, not in the entry.
 */
#define CET_IMAGE_VERSION	2

/* A thread's own shadow stack is at most this big (the kernel's limit). */
#define CET_MAX_OWN_STACK_SIZE	(4UL << 30)

/*
 * The new shadow stack a restored thread gets when the dump could not tell
 * which one the kernel owned: only the restorer's few frames go on it
 * before the thread moves to its dumped SSP.
 */
#define CET_FRESH_STACK_SIZE	(64UL << 10)

#endif /* __CR_CET_ABI_H__ */
