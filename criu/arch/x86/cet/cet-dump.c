// SPDX-License-Identifier: GPL-2.0
/*
 * criu-cet, dump side: read every thread's CET state before the parasite
 * touches the task, complete it with what the parasite learned in the
 * thread, and put it into the threads' core images (cet_core_entry,
 * images/cet.proto).
 *
 * Everything here only reads: a dump that fails here leaves the task as it
 * was.  Shadow-stack pages are dumped by CRIU's memory dump like any
 * private memory (only pages the task really has, streamed to the page
 * images), so a task cannot make criu-cet hold its stacks in memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

#include "common/list.h"
#include "cr_options.h"
#include "log.h"
#include "pstree.h"
#include "util.h"
#include "vma.h"
#include "xmalloc.h"
#include "cet.h"
#include "images/core.pb-c.h"
#include "types.h"
#include "parasite.h"

#include "cet-abi.h"
#include "cet-host.h"

#undef LOG_PREFIX
#define LOG_PREFIX "cet: "

#ifndef PTRACE_ARCH_PRCTL
#define PTRACE_ARCH_PRCTL 30
#endif

struct cet_thread_state {
	pid_t tid;
	CetCoreEntry entry;
};

/* What was read for the task being dumped now (CRIU dumps one at a time). */
static struct {
	int nr_threads;
	struct cet_thread_state *threads;
} cur;

static void forget_task(void)
{
	xfree(cur.threads);
	memset(&cur, 0, sizeof(cur));
}

/* "x86_Thread_features_locked: shstk wrss" -> ARCH_SHSTK_* bits */
static int parse_feature_names(const char *s, u64 *bits)
{
	char name[32];
	int n;

	*bits = 0;
	while (sscanf(s, " %31s%n", name, &n) == 1) {
		if (!strcmp(name, "shstk"))
			*bits |= ARCH_SHSTK_SHSTK;
		else if (!strcmp(name, "wrss"))
			*bits |= ARCH_SHSTK_WRSS;
		else {
			pr_err("unknown CET feature '%s': refusing to dump what we cannot restore\n", name);
			return -1;
		}
		s += n;
	}
	return 0;
}

static int read_locked(pid_t pid, pid_t tid, u64 *locked)
{
	const char *field = "x86_Thread_features_locked:";
	char line[256];
	int ret = 0;
	FILE *f;

	*locked = 0;
	f = fopen_proc(pid, "task/%d/status", tid);
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, field, strlen(field))) {
			ret = parse_feature_names(line + strlen(field), locked);
			break;
		}
	}
	fclose(f);
	return ret;
}

/* With criu-cet's kernel patches: features, SSP and locks in one call. */
static int read_thread_regset(pid_t tid, CetCoreEntry *e)
{
	struct cet_user_regs regs;
	struct iovec iov = { &regs, sizeof(regs) };

	if (ptrace(PTRACE_GETREGSET, tid, NT_X86_CET_USER, &iov)) {
		pr_perror("%d: NT_X86_CET_USER", tid);
		return -1;
	}
	/* any lock bit is fine (glibc locks all 64): restore locks the same mask */
	if (regs.cet & ~(USER_CET_SHSTK_EN | USER_CET_WRSS_EN)) {
		pr_err("%d: unknown CET state %#" PRIx64 ": refusing to dump what we cannot restore\n", tid,
		       regs.cet);
		return -1;
	}
	e->features = (regs.cet & USER_CET_SHSTK_EN ? ARCH_SHSTK_SHSTK : 0) |
		      (regs.cet & USER_CET_WRSS_EN ? ARCH_SHSTK_WRSS : 0);
	e->locked = regs.locked;
	if (e->features & ARCH_SHSTK_SHSTK) {
		e->has_ssp = true;
		e->ssp = regs.ssp;
	}
	pr_info("%d: features %#" PRIx64 " locked %#" PRIx64 " ssp %#" PRIx64 " (NT_X86_CET_USER)\n", tid,
		e->features, e->locked, regs.ssp);
	return 0;
}

static int read_thread(pid_t pid, pid_t tid, CetCoreEntry *e)
{
	unsigned long features = 0, ssp = 0;
	struct iovec iov = { &ssp, sizeof(ssp) };

	cet_core_entry__init(e);
	e->version = CET_IMAGE_VERSION;
	if (cet_kernel_has_regset(tid))
		return read_thread_regset(tid, e);
	if (ptrace(PTRACE_ARCH_PRCTL, tid, &features, ARCH_SHSTK_STATUS)) {
		if (errno != EINVAL) {
			pr_perror("%d: ARCH_SHSTK_STATUS", tid);
			return -1;
		}
		features = 0;	/* a kernel without shadow-stack support */
	}
	if (features & ~CET_KNOWN_FEATURES) {
		pr_err("%d: unknown CET features %#lx\n", tid, features);
		return -1;
	}
	e->features = features;
	if (read_locked(pid, tid, &e->locked))
		return -1;
	if (features & ARCH_SHSTK_SHSTK) {
		if (ptrace(PTRACE_GETREGSET, tid, NT_X86_SHSTK, &iov)) {
			pr_perror("%d: cannot read SSP", tid);
			return -1;
		}
		e->has_ssp = true;
		e->ssp = ssp;
	}
	pr_info("%d: features %#lx locked %#" PRIx64 " ssp %#lx\n", tid, features, e->locked, ssp);
	return 0;
}

/* Each thread's SSP must be in a shadow-stack mapping, or we could not put it back. */
static int check_ssp_in_stacks(struct vm_area_list *vmas)
{
	struct vma_area *vma;
	int i;

	for (i = 0; i < cur.nr_threads; i++) {
		CetCoreEntry *e = &cur.threads[i].entry;
		bool found = false;

		if (!e->has_ssp)
			continue;
		list_for_each_entry(vma, &vmas->h, list)
			if (vma_area_is(vma, VMA_AREA_SHSTK) && e->ssp > vma->e->start && e->ssp <= vma->e->end)
				found = true;
		if (!found || e->ssp % 8) {
			pr_err("%d: SSP %#" PRIx64 " is in no shadow-stack mapping\n", cur.threads[i].tid, e->ssp);
			return -1;
		}
	}
	return 0;
}

int cet_dump_task(struct pstree_item *item, struct vm_area_list *vmas)
{
	pid_t pid = item->pid->real;
	int i;

	forget_task();
	cur.threads = xzalloc(item->nr_threads * sizeof(*cur.threads));
	if (!cur.threads)
		return -1;
	cur.nr_threads = item->nr_threads;
	for (i = 0; i < item->nr_threads; i++) {
		cur.threads[i].tid = item->threads[i].real;
		if (read_thread(pid, cur.threads[i].tid, &cur.threads[i].entry))
			goto err;
	}
	if (check_ssp_in_stacks(vmas))
		goto err;
	return 0;
err:
	pr_err("%d: cannot dump the CET state; the task is left as it was\n", pid);
	forget_task();
	return -1;
}

/*
 * On a stock kernel /proc names only the SHSTK and WRSS lock bits; the
 * parasite asked the thread about the others (cet-parasite.h).  With
 * NT_X86_CET_USER the mask was read whole.
 */
static int add_probed_locks(pid_t tid, CetCoreEntry *e, const struct parasite_dump_thread *ti)
{
	if (cet_kernel_has_regset(tid))
		return 0;
	if (ti->cet_probe) {
		pr_err("%d: the kernel has a shadow-stack feature at bit %d that criu-cet does not know\n", tid,
		       ti->cet_unknown_bit);
		return -1;
	}
	e->locked |= ti->cet_locked & ~CET_KNOWN_FEATURES;
	if (e->locked)
		pr_info("%d: locked %#" PRIx64 "\n", tid, e->locked);
	return 0;
}

int cet_dump_thread_core(pid_t tid, CoreEntry *core, const struct parasite_dump_thread *ti)
{
	int i;

	for (i = 0; i < cur.nr_threads; i++) {
		if (cur.threads[i].tid != tid)
			continue;
		if (add_probed_locks(tid, &cur.threads[i].entry, ti))
			return -1;
		core->cet = &cur.threads[i].entry;
		return 0;
	}
	pr_err("%d: thread unknown to the CET dump\n", tid);
	return -1;
}
