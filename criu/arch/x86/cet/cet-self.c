// SPDX-License-Identifier: GPL-2.0
/*
 * criu-cet: restoring while criu itself runs on a shadow stack (a libc
 * built with CET, glibc 2.39+ --enable-cet with its tunable on).
 *
 * Every restored task starts as a fork of criu and inherits criu's shadow
 * stack, on and locked: glibc locks every feature bit (ARCH_SHSTK_LOCK
 * with -1).  The restorer expects none (cet-restorer.h: it enables the
 * task's own stack itself and unmaps criu's memory), and the lock mask it
 * leaves must be the dumped one, not criu's.  The hardware rule is that
 * a task cannot drop its own locks: the kernel takes ARCH_SHSTK_UNLOCK
 * only through ptrace.  So the task's parent, right after the fork, and
 * the task itself, in the restore trampoline, do this:
 *
 *   parent (criu, after clone)            restored task
 *   seize, interrupt, wait for the stop   waits on rsti(item)->shstk_unlock
 *   ARCH_SHSTK_UNLOCK of every bit
 *   detach, shstk_unlock = UNLOCKED       ARCH_SHSTK_DISABLE: shadow stack
 *                 (or FAILED: the task    and WRSS off, the kernel frees the
 *                  gives up, no restore)  copy of criu's shadow stack
 *
 * Turning the shadow stack off needs no care about returns: with it off,
 * ret checks nothing.  The tasks a restored task forks in turn inherit it
 * off, so only a fork made by criu itself needs the unlock.
 */
#include <errno.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/lock.h"
#include "compel/ptrace.h"
#include "log.h"
#include "pstree.h"
#include "rst_info.h"

#include "cet-abi.h"
#include "cet-host.h"

#undef LOG_PREFIX
#define LOG_PREFIX "cet: "

/* rsti(item)->shstk_unlock, as the parent leaves it */
enum {
	SELF_UNLOCK_WAITING	= 0,
	SELF_UNLOCK_DONE	= 1,
	SELF_UNLOCK_FAILED	= 2,
};

/* Stop the fresh fork under ptrace and drop every lock bit it inherited. */
static int unlock_forked(pid_t pid)
{
	int status, ret = -1;

	if (ptrace(PTRACE_SEIZE, pid, 0, 0)) {
		pr_perror("%d: cannot seize the new task to unlock its shadow stack", pid);
		return -1;
	}
	if (ptrace(PTRACE_INTERRUPT, pid, 0, 0)) {
		pr_perror("%d: cannot interrupt the new task", pid);
		goto detach;
	}
	if (wait4(pid, &status, __WALL, NULL) != pid || !WIFSTOPPED(status)) {
		pr_perror("%d: the new task did not stop", pid);
		goto detach;
	}
	/* ptrace(PTRACE_ARCH_PRCTL, pid, addr = features, data = option) */
	if (ptrace(PTRACE_ARCH_PRCTL, pid, ~0UL, ARCH_SHSTK_UNLOCK)) {
		pr_perror("%d: ARCH_SHSTK_UNLOCK through ptrace failed", pid);
		goto detach;
	}
	ret = 0;
detach:
	if (ptrace(PTRACE_DETACH, pid, 0, 0)) {
		pr_perror("%d: cannot detach from the new task", pid);
		ret = -1;
	}
	return ret;
}

/*
 * The parent's half, called by fork_with_pid() after the clone.  Its
 * return value is not looked at there: the child learns the outcome from
 * the futex and fails the restore itself.
 */
int cet_restore_unlock(struct pstree_item *item, CoreEntry *core, pid_t pid)
{
	/* the child is in a new pid namespace maybe: ptrace wants our view of it */
	pid_t real = item == root_item ? item->pid->real : pid;
	int ret;

	if (!cet_self_has_shstk())
		return 0;
	ret = unlock_forked(real);
	if (!ret)
		pr_info("%d: shadow-stack locks inherited from criu dropped\n", real);
	futex_set_and_wake(&rsti(item)->shstk_unlock, ret ? SELF_UNLOCK_FAILED : SELF_UNLOCK_DONE);
	return ret;
}

/* The restored task's half: wait for the parent, then leave criu's shadow stack. */
static int leave_criu_shstk(struct pstree_item *item)
{
	unsigned long features;
	long ret;

	futex_wait_while(&rsti(item)->shstk_unlock, SELF_UNLOCK_WAITING);
	if (futex_get(&rsti(item)->shstk_unlock) != SELF_UNLOCK_DONE) {
		pr_err("criu runs on a shadow stack and could not unlock this task's (see the parent's error)\n");
		return -1;
	}
	ret = cet_arch_prctl(ARCH_SHSTK_DISABLE, ARCH_SHSTK_SHSTK);
	if (ret) {
		pr_err("cannot turn off the shadow stack inherited from criu: %ld\n", ret);
		return -1;
	}
	features = cet_status();
	if (features & (ARCH_SHSTK_SHSTK | ARCH_SHSTK_WRSS)) {
		pr_err("the shadow stack inherited from criu is still on (%#lx)\n", features);
		return -1;
	}
	return 0;
}

int cet_restore_trampoline(struct pstree_item *item, CoreEntry *core, int (*func)(void *arg), void *arg)
{
	/*
	 * Our own state, inherited from criu, decides: the image's does not
	 * matter here, the restorer gives the task the dumped one later.
	 */
	if (cet_self_has_shstk() && leave_criu_shstk(item))
		return -1;
	return func(arg);
}
