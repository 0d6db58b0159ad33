// SPDX-License-Identifier: GPL-2.0
/*
 * A shadow-stack task whose seccomp filter forbids every call criu-cet's
 * restore makes in the task (arch_prctl but ARCH_SHSTK_STATUS,
 * map_shadow_stack, mremap, prlimit64): its shadow stacks come back all the
 * same, because they come back before the filter does, and the filter is
 * back afterwards.
 */
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "cetlib.h"

const char *test_doc = "Shadow stacks under a seccomp filter that forbids the restore's calls";
const char *test_author = "criu-cet";

#define SECCOMP_DENY(nr) \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM)

static int install_filter(void)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		SECCOMP_DENY(__NR_map_shadow_stack),
		SECCOMP_DENY(__NR_mremap),
		SECCOMP_DENY(__NR_prlimit64),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_arch_prctl, 0, 4),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH_SHSTK_STATUS, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(code) / sizeof(code[0]), .filter = code };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog)) {
		pr_perror("seccomp");
		return -1;
	}
	return 0;
}

/* The filter holds: what it forbids fails with EPERM, the rest works. */
static int filter_holds(struct cet_ckpt *c, int restored, const char *when)
{
	int bad = 0;

	if (cet_map_shadow_stack(0, 1 << 16, SHADOW_STACK_SET_TOKEN) != MAP_FAILED || errno != EPERM)
		bad |= fail("%s: map_shadow_stack was not refused", when);
	if (cet_arch_prctl(ARCH_SHSTK_DISABLE, ARCH_SHSTK_SHSTK) != -EPERM)
		bad |= fail("%s: ARCH_SHSTK_DISABLE was not refused", when);
	return bad;
}

static struct cet_ckpt ckpt = { .who = "main", .check = filter_holds };

static CET_NOINLINE int run(void)
{
	if (cet_map_shadow_stack(0, 1 << 16, SHADOW_STACK_SET_TOKEN) == MAP_FAILED)
		return fail("map_shadow_stack");
	if (install_filter())
		return 1;
	return cet_pass(cet_recurse(1000, cet_rec_checkpoint, &ckpt, "recursion"),
			"restored under the filter: ssp %#lx depth %lu, %d ss mappings; the filter still refuses\n",
			ckpt.after.st.ssp, ckpt.after.st.depth, ckpt.after.maps.nr);
}

CET_TEST_MAIN(run)
