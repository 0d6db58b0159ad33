/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Linux shadow-stack ABI (6.6+) and the layout of shadow-stack words:
 * the one header for everything in criu-cet that speaks it.  It is
 * included by criu itself, by the parasite and restorer blob (criu/pie,
 * CR_NOGLIBC: no libc, no calls out), by the lab's guest programs
 * (lab/guest, static) and by the ZDTM CET tests (test/zdtm/cet/cetlib.h).
 * Debian 12's glibc (2.36) and kernel headers predate the ABI, so the
 * constants are spelled out here, each the way the kernel spells it.
 *
 * The helpers that read or change SSP or the shadow-stack features
 * (cet_arch_prctl(), cet_enable_shstk(), cet_rdssp(), cet_wrss()) are
 * always inline: enabling a shadow stack must happen in a frame that never
 * returns (the frames below it have no shadow-stack entries), so the
 * enable cannot be an ordinary function call, and neither can a call into
 * libc (glibc's syscall() wrapper would return on the new, empty shadow
 * stack and fault).  The rest are ordinary static inlines; what needs libc
 * (map_shadow_stack through syscall(), the /proc status parser) is left
 * out of the blob.
 */
#ifndef __CR_CET_ABI_H__
#define __CR_CET_ABI_H__

#ifndef CR_NOGLIBC
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#endif

/* arch/x86/include/uapi/asm/prctl.h */
#ifndef ARCH_SHSTK_ENABLE
#define ARCH_SHSTK_ENABLE	0x5001
#define ARCH_SHSTK_DISABLE	0x5002
#define ARCH_SHSTK_LOCK		0x5003
#define ARCH_SHSTK_UNLOCK	0x5004
#define ARCH_SHSTK_STATUS	0x5005
#endif
#ifndef ARCH_SHSTK_SHSTK
#define ARCH_SHSTK_SHSTK	(1ULL << 0)
#define ARCH_SHSTK_WRSS		(1ULL << 1)
#endif
/* the features criu-cet restores; also the lock bits /proc/PID/status names */
#define CET_KNOWN_FEATURES	(ARCH_SHSTK_SHSTK | ARCH_SHSTK_WRSS)
/* lock bits above the named ones: the parasite asks the kernel (cet-parasite.h) */
#define CET_FIRST_PROBED_BIT	2

/* arch/x86/entry/syscalls/syscall_64.tbl, arch/x86/include/uapi/asm/mman.h */
#ifndef __NR_arch_prctl
#define __NR_arch_prctl		158
#endif
#ifndef __NR_map_shadow_stack
#define __NR_map_shadow_stack	453
#endif
#ifndef __NR_prlimit64
#define __NR_prlimit64		302
#endif
#ifndef SHADOW_STACK_SET_TOKEN
#define SHADOW_STACK_SET_TOKEN	0x1
#endif

/*
 * What the parasite's ownership probe (cet-parasite.h) answers in
 * cet_own_found besides the index of the candidate the kernel owns.
 */
#define CET_OWN_NONE		(-1)	/* none vanished: the kernel owns no stack listed */
#define CET_OWN_NOT_DONE	(-2)	/* the probe child ended before it could look */
#define CET_OWN_NO_FORK		(-3)	/* the fork was refused (pids limit, memory) */
#define CET_OWN_TIMEOUT		(-4)	/* the probe child hung and was killed */
#define CET_OWN_SKIPPED		(-5)	/* not asked: an earlier probe of the task failed */

/* include/uapi/linux/elf.h */
#ifndef NT_X86_SHSTK
#define NT_X86_SHSTK		0x204
#endif

/*
 * A 64-bit restore token (what rstorssp consumes) holds the address just
 * above itself with bit 0 set; the word the kernel's rt_sigreturn pops holds
 * the SSP to return to with bit 63 set (arch/x86/kernel/shstk.c).
 */
#define CET_TOKEN_MODE64	(1UL << 0)
#define CET_SIGFRAME_DATA	(1UL << 63)

/*
 * criu-cet's kernel series (kernel/patches/, v3): a thread's shadow-stack
 * status, read-only; the SSP stays in NT_X86_SHSTK.  Stock kernels answer
 * EINVAL for the note.  Later kernels may append fields: the length the
 * kernel fills in says how many.  v2 of the series had a 64-byte struct of
 * another layout at this number; a kernel with it is used as a stock one.
 */
#ifndef NT_X86_SHSTK_STATUS
#define NT_X86_SHSTK_STATUS	0x206
#endif
#define CET_SERIES_V2_SIZE	64

#ifndef CR_NOGLIBC
struct cet_shstk_status {
	uint64_t features;	/* ARCH_SHSTK_* enabled, as ARCH_SHSTK_STATUS says */
	uint64_t locked;	/* the lock mask as locked: every bit, glibc sets all 64 */
	uint64_t shstk_base;	/* the shadow stack the kernel frees at the thread's exit */
	uint64_t shstk_size;	/* (0/0: the kernel owns none for the thread) */
};
#endif

/*
 * Version of the cet_core_entry written by this criu-cet.  2: shadow-stack
 * contents live in CRIU's page images, not in the entry.
 */
#define CET_IMAGE_VERSION	2

/*
 * The restore moves SSP with two words written under the dumped SSP: the
 * sigframe token rt_sigreturn pops and a restore token for rstorssp
 * (criu/pie/cet-restorer.h), so a dumped SSP needs that much of its stack.
 */
#define CET_SWITCH_TOKENS_SIZE	(2 * sizeof(unsigned long))

/* A thread's own shadow stack is at most this big (the kernel's limit). */
#define CET_MAX_OWN_STACK_SIZE	(4UL << 30)

/*
 * The new shadow stack a restored thread gets when the dump could not tell
 * which one the kernel owned: only the restorer's few frames go on it
 * before the thread moves to its dumped SSP.
 */
#define CET_FRESH_STACK_SIZE	(64UL << 10)

/* A helper expanded in its caller's frame, never called (see above). */
#define CET_INLINE		inline __attribute__((__always_inline__))

/* arch_prctl as a raw syscall instruction: returns -errno, calls nothing */
static CET_INLINE long cet_arch_prctl(unsigned long op, unsigned long arg)
{
	long ret;

	asm volatile("syscall"
		     : "=a"(ret)
		     : "a"(__NR_arch_prctl), "D"(op), "S"(arg)
		     : "rcx", "r11", "memory");
	return ret;
}

/*
 * Turn the shadow stack on for the calling thread.  Expand it only in a
 * frame that never returns (main() that ends in exit(), a thread function
 * that ends in a loop, the restorer's top-level function).
 */
static CET_INLINE long cet_enable_shstk(void)
{
	return cet_arch_prctl(ARCH_SHSTK_ENABLE, ARCH_SHSTK_SHSTK);
}

/* ARCH_SHSTK_STATUS of the calling thread, ~0UL if the call fails */
static inline unsigned long cet_status(void)
{
	unsigned long features = 0;

	if (cet_arch_prctl(ARCH_SHSTK_STATUS, (unsigned long)&features))
		return ~0UL;
	return features;
}

/* The shadow-stack pointer, 0 when shadow stacks are off (rdssp is a nop) */
static CET_INLINE unsigned long cet_rdssp(void)
{
	unsigned long ssp = 0;

	asm volatile("rdsspq %0" : "+r"(ssp) : : "memory");
	return ssp;
}

/* One shadow-stack word written with WRSS (SIGILL when WRSS is off) */
static CET_INLINE void cet_wrss(unsigned long *addr, unsigned long val)
{
	asm volatile("wrssq %1, (%0)" : : "r"(addr), "r"(val) : "memory");
}

/*
 * The value of a 64-bit restore token for a shadow stack whose top (the
 * first byte above the token) is @top, and of one that lives at @addr.
 */
static inline unsigned long cet_token_for(unsigned long top)
{
	return top | CET_TOKEN_MODE64;
}

static inline unsigned long cet_token_at(unsigned long addr)
{
	return cet_token_for(addr + 8);
}

/*
 * SSP points at the last entry pushed and a shadow stack grows down, so a
 * stack [start, end) holds SSPs from just above start (full) up to end
 * (empty): a thread runs on the stack for which this is true.
 */
static inline bool cet_ssp_in_stack(unsigned long ssp, unsigned long start, unsigned long end)
{
	return ssp > start && ssp <= end;
}

#ifndef CR_NOGLIBC
/* include/uapi/asm-generic/siginfo.h: a control-protection fault */
#ifndef SEGV_CPERR
#define SEGV_CPERR		10
#endif

/* map_shadow_stack(2): the new shadow stack, or MAP_FAILED with errno */
static inline void *cet_map_shadow_stack(unsigned long addr, unsigned long size, unsigned int flags)
{
	return (void *)syscall(__NR_map_shadow_stack, addr, size, flags);
}

/*
 * A field of a /proc status file such as "x86_Thread_features" into @buf,
 * without the trailing blanks the kernel leaves.  0, or -1 if the file or
 * the field is missing (a kernel without user shadow stacks has neither
 * x86_Thread_features field).
 */
static inline int cet_proc_status_field(const char *path, const char *field, char *buf, size_t len)
{
	char line[256];
	size_t flen = strlen(field);
	FILE *f = fopen(path, "r");
	int ret = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, field, flen) && line[flen] == ':') {
			char *v = line + flen + 1;

			while (*v == ' ' || *v == '\t')
				v++;
			flen = strcspn(v, "\n");
			while (flen && v[flen - 1] == ' ')	/* the kernel ends lists with a space */
				flen--;
			if (flen >= len)
				flen = len - 1;
			memcpy(buf, v, flen);
			buf[flen] = '\0';
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}
#endif /* CR_NOGLIBC */

#endif /* __CR_CET_ABI_H__ */
