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
 */
#ifndef __CR_PIE_CET_PARASITE_H__
#define __CR_PIE_CET_PARASITE_H__

#include "common/compiler.h"

#define CET_PROBE_UNKNOWN_FEATURE	(-1000)

#ifdef CONFIG_X86_64
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
#else
static inline int cet_probe_locked(uint64_t *locked, int *unknown_bit)
{
	*locked = 0;
	return 0;
}
#endif

#endif /* __CR_PIE_CET_PARASITE_H__ */
