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
#include "compel/ptrace.h"
#include "parasite.h"

#include "cet-abi.h"
#include "cet-host.h"

#undef LOG_PREFIX
#define LOG_PREFIX "cet: "

/* Shadow-stack mappings that may be the one the kernel owns for a thread */
#define CET_OWN_CANDIDATES	ARRAY_SIZE(((struct parasite_dump_thread *)0)->cet_own_cand)

struct cet_thread_state {
	pid_t tid;
	CetCoreEntry entry;
	u64 own_base, own_size;			/* the owned stack, from NT_X86_SHSTK_STATUS */
	u32 nr_cand;				/* the parasite was asked about these */
	bool probe_skipped;			/* it would have been, but an earlier probe failed */
	u64 cand[CET_OWN_CANDIDATES][2];
};

/* What was read for the task being dumped now (CRIU dumps one at a time). */
static struct {
	int nr_threads;
	struct cet_thread_state *threads;
	struct vm_area_list *vmas;
	bool switching;		/* some shadow stack holds no thread's SSP, or several */
	bool probe_broken;	/* a probe hung or could not run: do not try again */
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

/* The SSP of a thread whose shadow stack is on */
static int read_ssp(pid_t tid, CetCoreEntry *e)
{
	unsigned long ssp = 0;
	struct iovec iov = { &ssp, sizeof(ssp) };

	if (ptrace(PTRACE_GETREGSET, tid, NT_X86_SHSTK, &iov)) {
		pr_perror("%d: cannot read SSP", tid);
		return -1;
	}
	e->has_ssp = true;
	e->ssp = ssp;
	return 0;
}

/*
 * With criu-cet's kernel series: features, the whole lock mask and the
 * stack the kernel owns in one call, the SSP from NT_X86_SHSTK.
 */
static int read_thread_regset(pid_t tid, struct cet_thread_state *st)
{
	CetCoreEntry *e = &st->entry;
	struct cet_shstk_status status;
	struct iovec iov = { &status, sizeof(status) };

	if (ptrace(PTRACE_GETREGSET, tid, NT_X86_SHSTK_STATUS, &iov)) {
		pr_perror("%d: NT_X86_SHSTK_STATUS", tid);
		return -1;
	}
	/* any lock bit is fine (glibc locks all 64): restore locks the same mask */
	if (status.features & ~CET_KNOWN_FEATURES) {
		pr_err("%d: unknown CET features %#" PRIx64 ": refusing to dump what we cannot restore\n", tid,
		       status.features);
		return -1;
	}
	e->features = status.features;
	e->locked = status.locked;
	if (e->features & ARCH_SHSTK_SHSTK) {
		if (read_ssp(tid, e))
			return -1;
		st->own_base = status.shstk_base;
		st->own_size = status.shstk_size;
	}
	pr_info("%d: features %#" PRIx64 " locked %#" PRIx64 " ssp %#" PRIx64 " owned %#" PRIx64 "+%#" PRIx64
		" (NT_X86_SHSTK_STATUS)\n", tid, e->features, e->locked, e->ssp, st->own_base, st->own_size);
	return 0;
}

static int read_thread(pid_t pid, pid_t tid, struct cet_thread_state *st)
{
	unsigned long features = 0;
	CetCoreEntry *e = &st->entry;

	cet_core_entry__init(e);
	e->version = CET_IMAGE_VERSION;
	if (cet_kernel_has_regset(tid))
		return read_thread_regset(tid, st);
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
	if ((features & ARCH_SHSTK_SHSTK) && read_ssp(tid, e))
		return -1;
	pr_info("%d: features %#lx locked %#" PRIx64 " ssp %#" PRIx64 "\n", tid, features, e->locked, e->ssp);
	return 0;
}

static bool ssp_on(const CetCoreEntry *e, u64 start, u64 end)
{
	return e->has_ssp && cet_ssp_in_stack(e->ssp, start, end);
}

static bool ssp_on_stack(const CetCoreEntry *e, const struct vma_area *vma)
{
	return vma_area_is(vma, VMA_AREA_SHSTK) && ssp_on(e, vma->e->start, vma->e->end);
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
			if (ssp_on_stack(e, vma))
				found = true;
		if (!found || e->ssp % 8) {
			pr_err("%d: SSP %#" PRIx64 " is in no shadow-stack mapping\n", cur.threads[i].tid, e->ssp);
			return -1;
		}
	}
	return 0;
}

static int nr_ssp_in(u64 start, u64 end)
{
	int i, n = 0;

	for (i = 0; i < cur.nr_threads; i++)
		if (ssp_on(&cur.threads[i].entry, start, end))
			n++;
	return n;
}

/*
 * The kernel owns one shadow stack per thread (it frees it when the thread
 * exits).  When every shadow-stack mapping holds exactly one thread's SSP,
 * each thread runs on its own.  Otherwise a thread may be on another stack
 * (a fiber's) and the parasite is asked (cet-parasite.h).
 */
static bool stacks_switched(struct vm_area_list *vmas)
{
	struct vma_area *vma;

	list_for_each_entry(vma, &vmas->h, list)
		if (vma_area_is(vma, VMA_AREA_SHSTK) && nr_ssp_in(vma->e->start, vma->e->end) != 1)
			return true;
	return false;
}

/*
 * The owned stack NT_X86_SHSTK_STATUS named: recorded when it is not the one
 * SSP is on.  It must be one whole shadow-stack mapping; when it is not
 * (the thread unmapped part of it, or it merged with a neighbour) the
 * restore cannot give the kernel exactly that, and owns none.
 */
static void add_regset_owned_stack(struct cet_thread_state *st, struct vm_area_list *vmas)
{
	CetCoreEntry *e = &st->entry;
	u64 end = st->own_base + st->own_size;
	struct vma_area *vma;

	if (!st->own_size)
		return;		/* not told: the parasite is asked if need be */
	list_for_each_entry(vma, &vmas->h, list) {
		if (!vma_area_is(vma, VMA_AREA_SHSTK) || vma->e->start != st->own_base || vma->e->end != end)
			continue;
		if (ssp_on(e, st->own_base, end))
			return;	/* the one SSP is on: the image's default */
		pr_info("%d: the kernel owns the shadow stack %#" PRIx64 "-%#" PRIx64
			", the thread runs on another one (told by NT_X86_SHSTK_STATUS)\n", st->tid, st->own_base, end);
		e->has_own_start = e->has_own_end = true;
		e->own_start = st->own_base;
		e->own_end = end;
		return;
	}
	pr_warn("%d: the shadow stack the kernel owns, %#" PRIx64 "-%#" PRIx64 ", is not one whole mapping: "
		"the restored thread gets a new one\n", st->tid, st->own_base, end);
	e->has_own_unknown = true;
	e->own_unknown = true;
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
		if (read_thread(pid, cur.threads[i].tid, &cur.threads[i]))
			goto err;
	}
	if (check_ssp_in_stacks(vmas))
		goto err;
	cur.vmas = vmas;
	cur.switching = stacks_switched(vmas);
	for (i = 0; i < item->nr_threads; i++)
		add_regset_owned_stack(&cur.threads[i], vmas);
	return 0;
err:
	pr_err("%d: cannot dump the CET state; the task is left as it was\n", pid);
	forget_task();
	return -1;
}

static struct cet_thread_state *thread_state(pid_t tid)
{
	int i;

	for (i = 0; i < cur.nr_threads; i++)
		if (cur.threads[i].tid == tid)
			return &cur.threads[i];
	return NULL;
}

static void add_candidate(struct cet_thread_state *st, const VmaEntry *e)
{
	if (st->nr_cand >= CET_OWN_CANDIDATES)
		return;
	st->cand[st->nr_cand][0] = e->start;
	st->cand[st->nr_cand][1] = e->end;
	st->nr_cand++;
}

/*
 * Before the parasite dumps a thread: the stacks that may be its own, the
 * one its SSP is on first, then those no thread's SSP is on.  (More than
 * the parasite takes: the owned one may be missed, and is then unknown.)
 */
void cet_dump_thread_args(pid_t tid, struct parasite_dump_thread *args)
{
	struct cet_thread_state *st = thread_state(tid);
	struct vma_area *vma;
	u32 i;

	args->cet_own_nr = 0;
	if (!st || !st->entry.has_ssp || st->own_size || !cur.switching)
		return;	/* no doubt, or NT_X86_SHSTK_STATUS said */
	st->nr_cand = 0;
	/*
	 * A task whose probe hung once (a seccomp filter that parks the child)
	 * would cost the timeout for each of its threads: one is enough.
	 */
	st->probe_skipped = cur.probe_broken;
	if (st->probe_skipped)
		return;
	list_for_each_entry(vma, &cur.vmas->h, list)
		if (ssp_on_stack(&st->entry, vma))
			add_candidate(st, vma->e);
	list_for_each_entry(vma, &cur.vmas->h, list)
		if (vma_area_is(vma, VMA_AREA_SHSTK) && !nr_ssp_in(vma->e->start, vma->e->end))
			add_candidate(st, vma->e);
	for (i = 0; i < st->nr_cand; i++)
		args->cet_own_cand[i] = st->cand[i][0];
	args->cet_own_nr = st->nr_cand;
}

static const char *own_probe_failure(int found)
{
	switch (found) {
	case CET_OWN_NONE:
		return "none of the stacks looked at";
	case CET_OWN_NO_FORK:
		return "the probe could not fork";
	case CET_OWN_TIMEOUT:
		return "the probe hung";
	case CET_OWN_SKIPPED:
		return "an earlier probe in this task failed";
	default:
		return "the probe failed";
	}
}

/*
 * What the parasite found: the owned stack is recorded when it is not the
 * one SSP is on.  When it could not be found the restore owns none of the
 * dumped stacks (the thread gets a new one): a leak at worst, where a wrong
 * guess would let the kernel unmap, at the thread's exit, memory the
 * thread does not own.
 */
static void add_owned_stack(struct cet_thread_state *st, const struct parasite_dump_thread *ti)
{
	CetCoreEntry *e = &st->entry;
	int found = ti->cet_own_found;

	if (st->probe_skipped) {
		found = CET_OWN_SKIPPED;
	} else if (!st->nr_cand) {
		return;
	} else if (found == CET_OWN_NOT_DONE || found == CET_OWN_NO_FORK || found == CET_OWN_TIMEOUT) {
		cur.probe_broken = true;
	}
	if (found < 0 || found >= (int)st->nr_cand) {
		pr_warn("%d: cannot tell which shadow stack the kernel owns (%s): the restored thread gets a new one\n",
			st->tid, own_probe_failure(found));
		e->has_own_unknown = true;
		e->own_unknown = true;
		return;
	}
	pr_info("%d: the kernel owns the shadow stack %#" PRIx64 "-%#" PRIx64 "%s (told by the parasite's fork probe)\n",
		st->tid, st->cand[found][0], st->cand[found][1], found ? ", the thread runs on another one" : "");
	if (!found)
		return;		/* the one SSP is on: the image's default */
	e->has_own_start = e->has_own_end = true;
	e->own_start = st->cand[found][0];
	e->own_end = st->cand[found][1];
}

/*
 * On a stock kernel /proc names only the SHSTK and WRSS lock bits; the
 * parasite asked the thread about the others (cet-parasite.h).  With
 * NT_X86_SHSTK_STATUS the mask was read whole.
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
	struct cet_thread_state *st = thread_state(tid);

	if (!st) {
		pr_err("%d: thread unknown to the CET dump\n", tid);
		return -1;
	}
	if (add_probed_locks(tid, &st->entry, ti))
		return -1;
	add_owned_stack(st, ti);
	core->cet = &st->entry;
	return 0;
}
