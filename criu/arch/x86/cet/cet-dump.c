// SPDX-License-Identifier: GPL-2.0
/*
 * criu-cet, dump side: read every thread's CET state and every shadow-stack
 * mapping with its contents, before the parasite touches the task, and put
 * them into the threads' core images (cet_core_entry, images/cet.proto).
 *
 * Everything here only reads: a dump that fails here leaves the task as it
 * was.  Shadow-stack mappings are taken out of CRIU's ordinary memory
 * handling (no pages image, no premap on restore); this entry restores them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

#include "common/list.h"
#include "common/page.h"
#include "cr_options.h"
#include "log.h"
#include "pstree.h"
#include "util.h"
#include "vma.h"
#include "xmalloc.h"
#include "cet.h"
#include "images/core.pb-c.h"

#include "cet-abi.h"
#include "cet-host.h"

#undef LOG_PREFIX
#define LOG_PREFIX "cet: "

#ifndef PTRACE_ARCH_PRCTL
#define PTRACE_ARCH_PRCTL 30
#endif

#define PME_PRESENT	(1ULL << 63)
#define PME_SWAP	(1ULL << 62)

struct cet_thread_state {
	pid_t tid;
	CetCoreEntry entry;
};

/* What was read for the task being dumped now (CRIU dumps one at a time). */
static struct {
	pid_t leader;
	int nr_threads;
	struct cet_thread_state *threads;
	size_t nr_stacks;
	CetShstkEntry **stacks;
} cur;

static void forget_task(void)
{
	size_t i;

	for (i = 0; i < cur.nr_stacks; i++) {
		xfree(cur.stacks[i]->data.data);
		xfree(cur.stacks[i]);
	}
	xfree(cur.stacks);
	xfree(cur.threads);
	memset(&cur, 0, sizeof(cur));
}

void cet_dump_claim_vmas(struct vm_area_list *vmas)
{
	struct vma_area *vma;

	/*
	 * Not REGULAR: no pages dumped, nothing premapped or mapped by CRIU's
	 * restore.  The entry stays in mm.img (with VMA_AREA_SHSTK) so that
	 * the restorer's own mappings are placed around it.
	 */
	list_for_each_entry(vma, &vmas->h, list)
		if (vma_area_is(vma, VMA_AREA_SHSTK))
			vma->e->status &= ~VMA_AREA_REGULAR;
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
	if ((regs.cet & ~(USER_CET_SHSTK_EN | USER_CET_WRSS_EN)) || (regs.locked & ~CET_KNOWN_FEATURES)) {
		pr_err("%d: unknown CET state %#" PRIx64 "/%#" PRIx64 "\n", tid, regs.cet, regs.locked);
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

/* The lowest page of [start, end) that was ever touched: below it, nothing to save. */
static int lowest_used_page(int pagemap, u64 start, u64 end, u64 *first)
{
	u64 nr = (end - start) / PAGE_SIZE, i;
	size_t len = nr * sizeof(u64);
	u64 *pme = xmalloc(len);

	if (!pme)
		return -1;
	/* one read for the whole mapping: 16 KiB of pagemap for an 8 MiB stack */
	if (pread(pagemap, pme, len, start / PAGE_SIZE * sizeof(u64)) != (ssize_t)len) {
		pr_perror("pagemap");
		xfree(pme);
		return -1;
	}
	for (i = 0; i < nr; i++)
		if (pme[i] & (PME_PRESENT | PME_SWAP))
			break;
	xfree(pme);
	*first = start + i * PAGE_SIZE;
	return 0;
}

static CetShstkEntry *read_stack(pid_t pid, int pagemap, int mem, struct vma_area *vma)
{
	CetShstkEntry *s = xzalloc(sizeof(*s));
	size_t len;

	if (!s)
		return NULL;
	cet_shstk_entry__init(s);
	s->start = vma->e->start;
	s->end = vma->e->end;
	if (s->end - s->start > CET_MAX_STACK_SIZE) {
		pr_err("shadow stack %#" PRIx64 "-%#" PRIx64 " is too large\n", s->start, s->end);
		goto err;
	}
	if (lowest_used_page(pagemap, s->start, s->end, &s->data_start))
		goto err;
	len = s->end - s->data_start;
	s->data.len = len;
	s->data.data = len ? xmalloc(len) : NULL;
	if (len && !s->data.data)
		goto err;
	if (len && pread(mem, s->data.data, len, s->data_start) != (ssize_t)len) {
		pr_perror("%d: cannot read shadow stack %#" PRIx64 "-%#" PRIx64, pid, s->start, s->end);
		goto err;
	}
	pr_info("shadow stack %#" PRIx64 "-%#" PRIx64 ": %zu bytes used\n", s->start, s->end, len);
	return s;
err:
	xfree(s->data.data);
	xfree(s);
	return NULL;
}

static int read_stacks(pid_t pid, struct vm_area_list *vmas)
{
	struct vma_area *vma;
	int pagemap = -1, mem = -1, ret = -1;

	list_for_each_entry(vma, &vmas->h, list) {
		CetShstkEntry **more, *s;

		if (!vma_area_is(vma, VMA_AREA_SHSTK))
			continue;
		if (pagemap < 0) {
			pagemap = open_proc(pid, "pagemap");
			mem = open_proc(pid, "mem");
			if (pagemap < 0 || mem < 0)
				goto out;
		}
		if (cur.nr_stacks >= CET_MAX_STACKS) {
			pr_err("%d: more than %d shadow stacks\n", pid, CET_MAX_STACKS);
			goto out;
		}
		s = read_stack(pid, pagemap, mem, vma);
		if (!s)
			goto out;
		more = xrealloc(cur.stacks, (cur.nr_stacks + 1) * sizeof(*more));
		if (!more) {
			xfree(s->data.data);
			xfree(s);
			goto out;
		}
		cur.stacks = more;
		cur.stacks[cur.nr_stacks++] = s;
	}
	ret = 0;
out:
	close_safe(&pagemap);
	close_safe(&mem);
	return ret;
}

/* Each thread's SSP must be in one of the stacks, or we could not put it back. */
static int check_ssp_in_stacks(void)
{
	int i;

	for (i = 0; i < cur.nr_threads; i++) {
		CetCoreEntry *e = &cur.threads[i].entry;
		size_t j;

		if (!e->has_ssp)
			continue;
		for (j = 0; j < cur.nr_stacks; j++)
			if (e->ssp > cur.stacks[j]->start && e->ssp <= cur.stacks[j]->end)
				break;
		if (j == cur.nr_stacks || e->ssp % 8) {
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
	cur.leader = pid;
	cur.threads = xzalloc(item->nr_threads * sizeof(*cur.threads));
	if (!cur.threads)
		return -1;
	cur.nr_threads = item->nr_threads;
	for (i = 0; i < item->nr_threads; i++) {
		cur.threads[i].tid = item->threads[i].real;
		if (read_thread(pid, cur.threads[i].tid, &cur.threads[i].entry))
			goto err;
	}
	if (read_stacks(pid, vmas) || check_ssp_in_stacks())
		goto err;
	return 0;
err:
	pr_err("%d: cannot dump the CET state; the task is left as it was\n", pid);
	forget_task();
	return -1;
}

int cet_dump_thread_core(pid_t tid, CoreEntry *core)
{
	int i;

	for (i = 0; i < cur.nr_threads; i++) {
		if (cur.threads[i].tid != tid)
			continue;
		core->cet = &cur.threads[i].entry;
		if (tid == cur.leader) {
			core->cet->n_stacks = cur.nr_stacks;
			core->cet->stacks = cur.stacks;
		}
		return 0;
	}
	pr_err("%d: thread unknown to the CET dump\n", tid);
	return -1;
}
