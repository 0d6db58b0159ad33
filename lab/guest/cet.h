/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shadow-stack helpers for the lab's guest programs and the CET tests.
 *
 * Debian 12's glibc (2.36) and kernel headers predate the Linux 6.6
 * shadow-stack ABI, so the constants are spelled out here.  Everything is
 * inline: enabling a shadow stack must happen in a frame that never returns
 * (the frames below it have no shadow-stack entries), so the enable itself
 * cannot be an ordinary function call.
 */
#ifndef LAB_CET_H
#define LAB_CET_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#ifndef ARCH_SHSTK_ENABLE
#define ARCH_SHSTK_ENABLE	0x5001
#define ARCH_SHSTK_DISABLE	0x5002
#define ARCH_SHSTK_LOCK		0x5003
#define ARCH_SHSTK_UNLOCK	0x5004
#define ARCH_SHSTK_STATUS	0x5005
#define ARCH_SHSTK_SHSTK	(1ULL << 0)
#define ARCH_SHSTK_WRSS		(1ULL << 1)
#endif
#ifndef __NR_map_shadow_stack
#define __NR_map_shadow_stack	453
#endif
#ifndef SHADOW_STACK_SET_TOKEN
#define SHADOW_STACK_SET_TOKEN	(1ULL << 0)
#endif
#ifndef SEGV_CPERR
#define SEGV_CPERR		10
#endif
#ifndef NT_X86_SHSTK
#define NT_X86_SHSTK		0x204
#endif

/* arch_prctl without glibc: the raw syscall, returning -errno on failure. */
static inline __attribute__((always_inline)) long cet_arch_prctl(unsigned long op, unsigned long arg)
{
	long ret;

	asm volatile("syscall"
		     : "=a"(ret)
		     : "a"(SYS_arch_prctl), "D"(op), "S"(arg)
		     : "rcx", "r11", "memory");
	return ret;
}

/*
 * Turn the shadow stack on for the calling thread.  Must be expanded in a
 * frame that never returns (main() that ends in exit(), a thread function that
 * ends in a loop): glibc's syscall() wrapper would itself return on the new,
 * empty shadow stack and fault.
 */
#define CET_ENABLE_SHSTK()	cet_arch_prctl(ARCH_SHSTK_ENABLE, ARCH_SHSTK_SHSTK)

static inline unsigned long cet_status(void)
{
	unsigned long features = 0;

	if (cet_arch_prctl(ARCH_SHSTK_STATUS, (unsigned long)&features))
		return ~0UL;
	return features;
}

/* The shadow-stack pointer, or 0 when shadow stacks are off (rdssp is a nop then). */
static inline __attribute__((always_inline)) unsigned long cet_rdssp(void)
{
	unsigned long ssp = 0;

	asm volatile("rdsspq %0" : "+r"(ssp));
	return ssp;
}

/* Write one shadow-stack word; needs WRSS enabled, SIGILL otherwise. */
static inline void cet_wrss(unsigned long *addr, unsigned long val)
{
	asm volatile("wrssq %1, (%0)" : : "r"(addr), "r"(val) : "memory");
}

static inline void *cet_map_shadow_stack(unsigned long addr, unsigned long size, unsigned int flags)
{
	return (void *)syscall(__NR_map_shadow_stack, addr, size, flags);
}

/*
 * The value of a restore token for a shadow stack whose top (first unused
 * byte above the token) is @top: the address above the token, bit 0 set for
 * a 64-bit token.
 */
static inline unsigned long cet_token_for(unsigned long top)
{
	return top | 1UL;
}

/* A field of /proc/<self>/status such as "x86_Thread_features" into buf. */
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

#endif /* LAB_CET_H */
