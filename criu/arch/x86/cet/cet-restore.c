// SPDX-License-Identifier: GPL-2.0
/*
 * criu-cet, restore side in criu: check the CET entries of a task's core
 * images and hand them to the restorer blob (cet-rst.h), which rebuilds
 * the shadow stacks inside the task (criu/pie/cet-restorer.c).
 *
 * Anything wrong with an image is refused here, before the restorer runs,
 * with a message that says what: a restore that fails leaves no task.
 */
#include <string.h>

#include "common/list.h"
#include "common/page.h"
#include "kerndat.h"
#include "log.h"
#include "pstree.h"
#include "restorer.h"
#include "rst-malloc.h"
#include "rst_info.h"
#include "vma.h"
#include "cet.h"
#include "images/core.pb-c.h"

#include "cet-abi.h"
#include "cet-host.h"
#include "cet-rst.h"

#undef LOG_PREFIX
#define LOG_PREFIX "cet: "

/* Where cet_restore_prepare() put this task's data in restorer memory. */
static bool have_rst_data;
static unsigned long rst_data_pos;

static int check_thread(pid_t tid, const CetCoreEntry *e)
{
	if (e->version != CET_IMAGE_VERSION) {
		pr_err("%d: CET image version %u, this criu-cet reads %u\n", tid, e->version, CET_IMAGE_VERSION);
		return -1;
	}
	if ((e->features | e->locked) & ~CET_KNOWN_FEATURES) {
		pr_err("%d: unknown CET features %#" PRIx64 "/%#" PRIx64 " in the image\n", tid, e->features,
		       e->locked);
		return -1;
	}
	if ((e->features & ARCH_SHSTK_WRSS) && !(e->features & ARCH_SHSTK_SHSTK)) {
		pr_err("%d: WRSS without a shadow stack in the image\n", tid);
		return -1;
	}
	if ((e->features & ARCH_SHSTK_SHSTK) && (!e->has_ssp || e->ssp % 8 || e->ssp < 16)) {
		pr_err("%d: bad or missing SSP in the image\n", tid);
		return -1;
	}
	return 0;
}

static bool vma_is_shstk_at(struct vm_area_list *vmas, u64 start, u64 end)
{
	struct vma_area *vma;

	list_for_each_entry(vma, &vmas->h, list)
		if (vma->e->start == start && vma->e->end == end)
			return vma_area_is(vma, VMA_AREA_SHSTK) && !vma_area_is(vma, VMA_AREA_REGULAR);
	return false;
}

static int check_stacks(const CetCoreEntry *e, struct vm_area_list *vmas, unsigned long *data_len)
{
	struct vma_area *vma;
	size_t i, nr_vmas = 0;

	*data_len = 0;
	if (e->n_stacks > CET_MAX_STACKS) {
		pr_err("%zu shadow stacks in the image, at most %d\n", e->n_stacks, CET_MAX_STACKS);
		return -1;
	}
	for (i = 0; i < e->n_stacks; i++) {
		const CetShstkEntry *s = e->stacks[i];

		if (s->start % PAGE_SIZE || s->end % PAGE_SIZE || s->data_start % PAGE_SIZE ||
		    s->start >= s->end || s->end > kdat.task_size || s->end - s->start > CET_MAX_STACK_SIZE ||
		    s->data_start < s->start || s->data_start > s->end || s->data.len != s->end - s->data_start ||
		    (i && s->start < e->stacks[i - 1]->end)) {
			pr_err("shadow stack %zu (%#" PRIx64 "-%#" PRIx64 ") is malformed in the image\n", i, s->start,
			       s->end);
			return -1;
		}
		if (!vma_is_shstk_at(vmas, s->start, s->end)) {
			pr_err("shadow stack %#" PRIx64 "-%#" PRIx64 " has no matching mapping in mm.img\n", s->start,
			       s->end);
			return -1;
		}
		*data_len += s->data.len;
	}
	list_for_each_entry(vma, &vmas->h, list)
		nr_vmas += vma_area_is(vma, VMA_AREA_SHSTK);
	if (nr_vmas != e->n_stacks) {
		pr_err("mm.img lists %zu shadow-stack mappings, the CET entry %zu\n", nr_vmas, e->n_stacks);
		return -1;
	}
	return 0;
}

/*
 * The kernel keeps the page below a shadow stack free and will not place
 * one without it.  Count that page as taken, so that criu does not put
 * the restorer's bootstrap there (the restorer gets its own copy of the
 * VMA list earlier, with the exact ranges).
 */
static void keep_guard_pages_free(struct vm_area_list *vmas)
{
	struct vma_area *vma;

	list_for_each_entry(vma, &vmas->h, list)
		if (vma_area_is(vma, VMA_AREA_SHSTK) && vma->e->start >= PAGE_SIZE)
			vma->e->start -= PAGE_SIZE;
}

/* The stack holding ssp: the thread runs on it, the kernel is to own it. */
static int stack_of(const CetCoreEntry *leader, u64 ssp)
{
	size_t i;

	for (i = 0; i < leader->n_stacks; i++)
		if (ssp > leader->stacks[i]->start && ssp <= leader->stacks[i]->end)
			return i;
	return -1;
}

/* Images made by a CRIU without criu-cet keep only upstream's SSP. */
static bool legacy_shstk(CoreEntry *core)
{
	UserX86FpregsEntry *fp = core->thread_info ? core->thread_info->fpregs : NULL;

	return !core->cet && fp && fp->xsave && fp->xsave->cet && (fp->xsave->cet->cet & ARCH_SHSTK_SHSTK);
}

static int fill_threads(struct pstree_item *item, const CetCoreEntry *leader, struct cet_rst_stack *stacks,
			struct thread_restore_args *targs)
{
	bool any_shstk = false;
	int i;

	for (i = 0; i < item->nr_threads; i++) {
		const CetCoreEntry *e = item->core[i]->cet;
		struct cet_rst_thread *t = &targs[i].shstk;

		memset(t, 0, sizeof(*t));
		t->own = t->cur = -1;
		if (!e)
			continue;
		t->features = e->features;
		t->locked = e->locked;
		if (!(e->features & ARCH_SHSTK_SHSTK))
			continue;
		any_shstk = true;
		t->ssp = e->ssp;
		t->own = t->cur = stack_of(leader, e->ssp);
		if (t->own < 0 || stacks[t->own].owner >= 0 || e->ssp - 16 < leader->stacks[t->own]->start ||
		    e->ssp < leader->stacks[t->own]->data_start) {
			pr_err("%d: SSP %#" PRIx64 " is not on a shadow stack of its own in the image\n",
			       item->threads[i].ns[0].virt, e->ssp);
			return -1;
		}
		stacks[t->own].owner = i;
	}
	if (leader->n_stacks && !any_shstk) {
		pr_err("shadow-stack mappings but no thread with a shadow stack: nothing can write them\n");
		return -1;
	}
	if (any_shstk && !cet_host_has_shstk()) {
		pr_err("the image has shadow stacks but this host has no user shadow stacks (no user_shstk)\n");
		return -1;
	}
	return 0;
}

/*
 * Lay out, in one restorer-memory block: the process part, the stack
 * table, the contents.  Pointers inside are offsets from the block until
 * cet_restore_fixup() knows where the block lands in the restorer.
 */
static struct cet_rst_proc *alloc_rst_data(const CetCoreEntry *leader, unsigned long data_len)
{
	unsigned long size = sizeof(struct cet_rst_proc) + leader->n_stacks * sizeof(struct cet_rst_stack);
	unsigned long off;
	struct cet_rst_proc *p;
	size_t i;

	size = round_up(size, 8);
	rst_data_pos = rst_mem_align_cpos(RM_PRIVATE);
	p = rst_mem_alloc(size + data_len, RM_PRIVATE);
	if (!p)
		return NULL;
	memset(p, 0, size);
	p->nr_stacks = leader->n_stacks;
	p->task_size = kdat.task_size;
	p->stacks = (void *)sizeof(*p);
	off = size;
	for (i = 0; i < leader->n_stacks; i++) {
		const CetShstkEntry *s = leader->stacks[i];
		struct cet_rst_stack *r = (void *)p + sizeof(*p) + i * sizeof(*r);

		r->start = s->start;
		r->end = s->end;
		r->data_start = s->data_start;
		r->owner = -1;
		r->data = (void *)off;
		memcpy((void *)p + off, s->data.data, s->data.len);
		off += s->data.len;
	}
	have_rst_data = true;
	return p;
}

static bool any_cet_state(struct pstree_item *item, const CetCoreEntry *leader)
{
	int i;

	if (leader->n_stacks)
		return true;
	for (i = 0; i < item->nr_threads; i++) {
		const CetCoreEntry *e = item->core[i]->cet;

		if (e && (e->features || e->locked))
			return true;
	}
	return false;
}

int cet_restore_prepare(struct pstree_item *item, CoreEntry *core, struct task_restore_args *ta)
{
	struct thread_restore_args *targs = (struct thread_restore_args *)(&ta[1]);
	const CetCoreEntry *leader = core->cet;
	struct cet_rst_stack *stacks;
	struct cet_rst_proc *p;
	unsigned long data_len;
	int i, me = -1;

	have_rst_data = false;
	memset(&ta->shstk, 0, sizeof(ta->shstk));
	for (i = 0; i < item->nr_threads; i++) {
		memset(&targs[i].shstk, 0, sizeof(targs[i].shstk));
		if (item->core[i] == core)
			me = i;
		if (legacy_shstk(item->core[i])) {
			pr_err("%d: the image has a shadow stack but no criu-cet entry (dumped by another CRIU?)\n",
			       item->threads[i].ns[0].virt);
			return -1;
		}
		if (item->core[i]->cet && check_thread(item->threads[i].ns[0].virt, item->core[i]->cet))
			return -1;
	}
	if (!leader || me < 0 || !any_cet_state(item, leader))
		return 0;	/* nothing CET about this task: the restorer does nothing */
	if (check_stacks(leader, &rsti(item)->vmas, &data_len))
		return -1;
	keep_guard_pages_free(&rsti(item)->vmas);

	p = alloc_rst_data(leader, data_len);
	if (!p)
		return -1;
	stacks = (void *)p + sizeof(*p);
	if (fill_threads(item, leader, stacks, targs))
		return -1;
	ta->shstk = targs[me].shstk;
	return 0;
}

int cet_restore_trampoline(struct pstree_item *item, CoreEntry *core, int (*func)(void *arg), void *arg)
{
	/*
	 * The restored task is forked from criu and inherits its shadow-stack
	 * state; the restorer expects none.  A criu started on a shadow stack
	 * (a CET-enabled libc) is not supported yet: say so instead of
	 * restoring something we cannot vouch for.
	 */
	if (cet_self_has_shstk()) {
		pr_err("criu-cet itself runs on a shadow stack; restore needs it off\n");
		return -1;
	}
	return func(arg);
}

int cet_restore_fixup(struct task_restore_args *ta, struct thread_restore_args *threads, int nr_threads)
{
	struct cet_rst_proc *p;
	u32 i;
	int t;

	if (!have_rst_data)
		return 0;
	p = rst_mem_remap_ptr(rst_data_pos, RM_PRIVATE);
	p->stacks = (void *)p + (unsigned long)p->stacks;
	for (i = 0; i < p->nr_stacks; i++)
		p->stacks[i].data = (void *)p + (unsigned long)p->stacks[i].data;
	ta->shstk.proc = p;
	ta->shstk.proc_fd = ta->proc_fd;
	for (t = 0; t < nr_threads; t++) {
		threads[t].shstk.proc = p;
		threads[t].shstk.proc_fd = ta->proc_fd;
	}
	return 0;
}
