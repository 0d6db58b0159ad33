// SPDX-License-Identifier: GPL-2.0
/*
 * The legacy address-space layout (setarch -L, vm.legacy_va_layout=1):
 * mmap searches bottom-up, and so does the kernel for every new shadow
 * stack.  The test re-executes itself with ADDR_COMPAT_LAYOUT before it
 * starts; its threads' shadow stacks (threads.c) must come back at their
 * addresses, kernel-owned, in a restored task.
 */
#include <sys/personality.h>

#include "cetlib.h"

const char *test_doc = "Shadow-stack threads in the legacy (bottom-up) layout";
const char *test_author = "criu-cet";

#define NR_THREADS		6
#define THREAD_DEPTH(i)		(150 * ((i) + 1))
#define THREAD_STACK_SIZE	(256 << 10)

static void legacy_layout(char **argv)
{
	int pers = personality(0xffffffff);

	if (pers == -1 || (pers & ADDR_COMPAT_LAYOUT))
		return;
	if (personality(pers | ADDR_COMPAT_LAYOUT) == -1)
		return;
	execv("/proc/self/exe", argv);
}
#define BEFORE_START(argc, argv) legacy_layout(argv)

static int in_legacy_layout(const char *when)
{
	if (!(personality(0xffffffff) & ADDR_COMPAT_LAYOUT))
		return fail("%s: not in the legacy layout (personality %#x)", when, personality(0xffffffff));
	return 0;
}

static int before_checkpoint(void)
{
	return in_legacy_layout("before the dump");
}

/*
 * Not the personality after restore: CRIU 4.1.1 does not bring
 * ADDR_COMPAT_LAYOUT back (stock and criu-cet alike); the restored
 * mappings are where they were either way.
 */
static int after_restore(void)
{
	return 0;
}

#include "threads.c"

