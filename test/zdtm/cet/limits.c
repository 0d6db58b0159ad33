// SPDX-License-Identifier: GPL-2.0
/*
 * Limits a restored task may have that the placement of its shadow stacks
 * must not depend on: a hard RLIMIT_STACK below the size of every shadow
 * stack (raising it back needs CAP_SYS_RESOURCE, which the test, running as
 * ZDTM's unprivileged uid, does not have) and an RLIMIT_AS with just a
 * little room above what the task maps.  Both are back after restore, and
 * the threads (threads.c) are too.
 */
#include <sys/resource.h>

const char *test_doc = "Shadow-stack threads under a low hard RLIMIT_STACK and a tight RLIMIT_AS";
const char *test_author = "criu-cet";

#define NR_THREADS		4
#define THREAD_DEPTH(i)		(200 * ((i) + 1))
#define THREAD_STACK_SIZE	(512 << 10)

static int before_checkpoint(void);
static int after_restore(void);

#include "threads.c"

static struct rlimit stack_before, as_before;

static unsigned long vm_size(void)
{
	char buf[64] = "";

	cet_proc_status_field("/proc/self/status", "VmSize", buf, sizeof(buf));
	return strtoul(buf, NULL, 10) << 10;
}

static int before_checkpoint(void)
{
	struct rlimit stack = { 64 << 10, 64 << 10 }, as;

	as.rlim_cur = as.rlim_max = vm_size() + (16 << 20);
	if (setrlimit(RLIMIT_STACK, &stack) || setrlimit(RLIMIT_AS, &as)) {
		pr_perror("setrlimit");
		return 1;
	}
	getrlimit(RLIMIT_STACK, &stack_before);
	getrlimit(RLIMIT_AS, &as_before);
	return 0;
}

static int after_restore(void)
{
	struct rlimit stack, as;

	getrlimit(RLIMIT_STACK, &stack);
	getrlimit(RLIMIT_AS, &as);
	if (stack.rlim_cur != stack_before.rlim_cur || stack.rlim_max != stack_before.rlim_max ||
	    as.rlim_cur != as_before.rlim_cur || as.rlim_max != as_before.rlim_max)
		return fail("limits changed: stack %lu/%lu -> %lu/%lu, as %lu/%lu -> %lu/%lu", stack_before.rlim_cur,
			    stack_before.rlim_max, stack.rlim_cur, stack.rlim_max, as_before.rlim_cur,
			    as_before.rlim_max, as.rlim_cur, as.rlim_max);
	return 0;
}
