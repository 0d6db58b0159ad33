// SPDX-License-Identifier: GPL-2.0
/*
 * criu-cet, restore side in criu: check the CET entries of a task's core
 * images and hand them to the restorer blob (cet-restore-args.h), which rebuilds
 * the shadow stacks inside the task (criu/pie/cet-restorer.c).
 *
 * Anything wrong with an image is refused here, before the restorer runs,
 * with a message that says what: a restore that fails leaves no task.
 * The shadow stacks' pages come from CRIU's page images like any private
 * memory: here they are only listed, never held.
 */
#include <errno.h>
#include <string.h>
#include <sys/resource.h>

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
#include "cet-restore-args.h"
#include "cet-upstream-images.h"

#undef LOG_PREFIX
#define LOG_PREFIX "cet: "

/* Where cet_restore_prepare() put this task's data in restorer memory. */
static bool have_rst_data;
static unsigned long rst_data_pos;

static int check_thread(pid_t tid, const CetCoreEntry *e)
{
	if (e->version != CET_IMAGE_VERSION) {
		pr_err("%d: CET image version %u, this criu-cet reads %u%s\n", tid, e->version, CET_IMAGE_VERSION,
		       e->version == 1 ? " (dumped by an older criu-cet)" : "");
		return -1;
	}
	/* any lock bit is fine: the restore locks the same mask */
	if (e->features & ~CET_KNOWN_FEATURES) {
		pr_err("%d: unknown CET features %#" PRIx64 " in the image\n", tid, e->features);
		return -1;
	}
	if ((e->features & ARCH_SHSTK_WRSS) && !(e->features & ARCH_SHSTK_SHSTK)) {
		pr_err("%d: WRSS without a shadow stack in the image\n", tid);
		return -1;
	}
	if ((e->features & ARCH_SHSTK_SHSTK) && (!e->has_ssp || e->ssp % 8 || e->ssp < CET_SWITCH_TOKENS_SIZE)) {
		pr_err("%d: bad or missing SSP in the image\n", tid);
		return -1;
	}
	if ((e->has_own_start || e->has_own_end || e->has_own_unknown) && !(e->features & ARCH_SHSTK_SHSTK)) {
		pr_err("%d: an owned shadow stack in the image, but no shadow stack\n", tid);
		return -1;
	}
	if (e->has_own_start != e->has_own_end || (e->has_own_start && e->own_unknown)) {
		pr_err("%d: the owned shadow stack is half described in the image\n", tid);
		return -1;
	}
	return 0;
}

/* Whole pages, not empty (the vsyscall page lies above task_size) */
static bool vma_whole_pages(const VmaEntry *e)
{
	return !(e->start % PAGE_SIZE) && !(e->end % PAGE_SIZE) && e->start < e->end;
}

/*
 * Every mapping of mm.img, as CRIU core reads it (hook in prepare_mm_pid):
 * CRIU's page restore walks a mapping page by page and never ends on one
 * whose end is not a page boundary; a damaged image must be refused, not
 * leave a restore looping.
 */
int cet_check_image_vma(const VmaEntry *e)
{
	if (vma_whole_pages(e))
		return 0;
	pr_err("mapping %#" PRIx64 "-%#" PRIx64 " is malformed in mm.img (not whole pages)\n", e->start, e->end);
	return -1;
}

/*
 * A shadow-stack mapping of mm.img: private anonymous memory whose pages
 * CRIU restores (premapped) and whose place the restorer then turns into
 * a shadow stack.  Anything else marked so is a damaged image.
 */
static int check_stack_vma(const VmaEntry *e)
{
	if (!vma_entry_is(e, VMA_AREA_REGULAR) || !vma_entry_is(e, VMA_ANON_PRIVATE) ||
	    !vma_entry_is(e, VMA_PREMMAPED) || !vma_whole_pages(e) || e->start < PAGE_SIZE ||
	    e->end > kdat.task_size) {
		pr_err("shadow-stack mapping %#" PRIx64 "-%#" PRIx64 " is malformed in mm.img\n", e->start, e->end);
		return -1;
	}
	return 0;
}

static int count_stacks(struct vm_area_list *vmas, u32 *nr)
{
	struct vma_area *vma;

	*nr = 0;
	list_for_each_entry(vma, &vmas->h, list) {
		if (!vma_area_is(vma, VMA_AREA_SHSTK))
			continue;
		if (check_stack_vma(vma->e))
			return -1;
		(*nr)++;
	}
	return 0;
}

/*
 * The kernel keeps the page below a shadow stack free and will not place
 * one without it.  Count that page as taken, so that criu does not put
 * the restorer's bootstrap there (the restorer gets its own copy of the
 * VMA list earlier, with the exact ranges, and the pages are premapped).
 */
static void keep_guard_pages_free(struct vm_area_list *vmas)
{
	struct vma_area *vma;

	list_for_each_entry(vma, &vmas->h, list)
		if (vma_area_is(vma, VMA_AREA_SHSTK) && vma->e->start >= PAGE_SIZE)
			vma->e->start -= PAGE_SIZE;
}

/* The stack holding ssp: the thread runs on it. */
static int stack_of(const struct cet_rst_proc *p, const struct cet_rst_stack *stacks, u64 ssp)
{
	u32 i;

	for (i = 0; i < p->nr_stacks; i++)
		if (cet_ssp_in_stack(ssp, stacks[i].start, stacks[i].end))
			return i;
	return -1;
}

static int stack_at(const struct cet_rst_proc *p, const struct cet_rst_stack *stacks, u64 start, u64 end)
{
	u32 i;

	for (i = 0; i < p->nr_stacks; i++)
		if (stacks[i].start == start && stacks[i].end == end)
			return i;
	return -1;
}

/*
 * The stack the kernel is to own for the thread: the one it runs on,
 * unless the image names another (it ran on a fiber's), or none when the
 * dump could not tell (the kernel then makes the thread a new one).
 */
static int owned_stack(const struct cet_rst_proc *p, const struct cet_rst_stack *stacks, const CetCoreEntry *e,
		       int on)
{
	if (e->has_own_unknown && e->own_unknown)
		return -1;
	if (e->has_own_start)
		return stack_at(p, stacks, e->own_start, e->own_end);
	return on;
}

/* A stack the kernel may own for a thread: no other thread's, at most 4 GiB. */
static bool can_be_owned(const struct cet_rst_stack *stacks, int s)
{
	return s >= 0 && stacks[s].owner < 0 && stacks[s].end - stacks[s].start <= CET_MAX_OWN_STACK_SIZE;
}

/*
 * A thread may run on a stack no thread owns (a fiber's) but not on
 * another thread's own: that one is only made when its owner gets to it.
 */
static int check_stacks_run_on(struct pstree_item *item, const struct cet_rst_stack *stacks,
			       struct thread_restore_args *targs)
{
	int i;

	for (i = 0; i < item->nr_threads; i++) {
		const struct cet_rst_thread *t = &targs[i].shstk;

		if (t->cur >= 0 && stacks[t->cur].owner >= 0 && stacks[t->cur].owner != i) {
			pr_err("%d: runs on the shadow stack another thread owns in the image\n",
			       item->threads[i].ns[0].virt);
			return -1;
		}
	}
	return 0;
}

static int fill_threads(struct pstree_item *item, struct cet_rst_proc *p, struct cet_rst_stack *stacks,
			struct thread_restore_args *targs)
{
	int i;

	for (i = 0; i < item->nr_threads; i++) {
		const CetCoreEntry *e = item->core[i]->cet;
		struct cet_rst_thread *t = &targs[i].shstk;
		int s;

		memset(t, 0, sizeof(*t));
		t->own = t->cur = -1;
		if (!e)
			continue;
		t->features = e->features;
		t->locked = e->locked;
		if (!(e->features & ARCH_SHSTK_SHSTK))
			continue;
		p->any_shstk = 1;
		t->ssp = e->ssp;
		s = stack_of(p, stacks, e->ssp);
		if (s < 0 || e->ssp - CET_SWITCH_TOKENS_SIZE < stacks[s].start) {
			pr_err("%d: SSP %#" PRIx64 " is not on a shadow stack in the image\n",
			       item->threads[i].ns[0].virt, e->ssp);
			return -1;
		}
		t->cur = s;
		t->own = owned_stack(p, stacks, e, s);
		if (e->has_own_start && !can_be_owned(stacks, t->own)) {
			pr_err("%d: its own shadow stack %#" PRIx64 "-%#" PRIx64 " is not a shadow stack of its own in the image\n",
			       item->threads[i].ns[0].virt, e->own_start, e->own_end);
			return -1;
		}
		if (t->own == s && !can_be_owned(stacks, s)) {
			pr_err("%d: SSP %#" PRIx64 " is not on a shadow stack of its own in the image\n",
			       item->threads[i].ns[0].virt, e->ssp);
			return -1;
		}
		if (t->own >= 0)
			stacks[t->own].owner = i;
	}
	if (check_stacks_run_on(item, stacks, targs))
		return -1;
	if ((p->any_shstk || p->nr_stacks) && !cet_host_has_shstk()) {
		pr_err("the image has shadow stacks but this host has no user shadow stacks (no user_shstk)\n");
		return -1;
	}
	return 0;
}

/*
 * Every gap of the address space gets a filler while stacks are placed:
 * gaps between the task's mappings, the restorer's few, the pages set
 * aside and the held stack ranges; and a guard page for each stack placed
 * bottom-up.
 */
#define CET_SPARE_FILLERS	64	/* the restorer's own mappings, and room to spare */

static u32 max_fillers(struct vm_area_list *vmas, u32 nr_stacks)
{
	return vmas->nr + 2 * nr_stacks + CET_SPARE_FILLERS;
}

/*
 * Lay out, in one restorer-memory block: the process part, the stack
 * table, the filler table.  Pointers inside are offsets from the block
 * until cet_restore_fixup() knows where the block lands in the restorer.
 */
static struct cet_rst_proc *alloc_rst_data(struct pstree_item *item, struct vm_area_list *vmas, u32 nr_stacks)
{
	u32 nr_fillers = max_fillers(vmas, nr_stacks);
	unsigned long stacks_off = round_up(sizeof(struct cet_rst_proc), 8);
	unsigned long fillers_off = stacks_off + nr_stacks * sizeof(struct cet_rst_stack);
	struct cet_rst_stack *stacks;
	struct cet_rst_proc *p;
	struct vma_area *vma;
	u32 i = 0;

	rst_data_pos = rst_mem_align_cpos(RM_PRIVATE);
	p = rst_mem_alloc(fillers_off + nr_fillers * sizeof(*p->fillers), RM_PRIVATE);
	if (!p)
		return NULL;
	memset(p, 0, fillers_off);
	p->task_size = kdat.task_size;
	p->mem_fd = -1;
	p->nr_stacks = nr_stacks;
	p->stacks = (void *)stacks_off;
	p->max_fillers = nr_fillers;
	p->fillers = (void *)fillers_off;
	futex_set(&p->threads_left, item->nr_threads - 1);
	stacks = (void *)p + stacks_off;
	list_for_each_entry(vma, &vmas->h, list) {
		if (!vma_area_is(vma, VMA_AREA_SHSTK))
			continue;
		stacks[i].start = vma->e->start;
		stacks[i].end = vma->e->end;
		stacks[i].owner = -1;
		i++;
	}
	have_rst_data = true;
	return p;
}

/* The largest stack a thread of the task gets from ARCH_SHSTK_ENABLE. */
static u64 largest_stack_made(struct pstree_item *item, const struct thread_restore_args *targs,
			      const struct cet_rst_proc *p, const struct cet_rst_stack *stacks)
{
	u64 max = 0;
	int i;

	for (i = 0; i < item->nr_threads; i++) {
		const struct cet_rst_thread *t = &targs[i].shstk;
		u64 size;

		if (!(t->features & ARCH_SHSTK_SHSTK))
			continue;
		size = t->own >= 0 ? stacks[t->own].end - stacks[t->own].start : CET_FRESH_STACK_SIZE;
		if (size > max)
			max = size;
	}
	return max;
}

/*
 * ARCH_SHSTK_ENABLE sizes a thread's new shadow stack by RLIMIT_STACK, so
 * the restorer sets the soft limit to each stack's size; above the hard
 * limit only a criu with CAP_SYS_RESOURCE (in the initial user namespace)
 * may go.  Raise the hard limit here, in the task-to-be, before anything
 * of it is restored; a criu that may not is told why and what to do.  The
 * task's own limits come back later, after the CET step.
 */
static int allow_stack_size(u64 size)
{
	struct rlimit r;

	if (!size || getrlimit(RLIMIT_STACK, &r) || r.rlim_max == RLIM_INFINITY || r.rlim_max >= size)
		return 0;
	r.rlim_max = size;
	if (!setrlimit(RLIMIT_STACK, &r))
		return 0;
	pr_err("a shadow stack of %" PRIu64 " KiB is to be remade, sized by RLIMIT_STACK, but criu's hard "
	       "RLIMIT_STACK is lower and criu may not raise it (%s: no CAP_SYS_RESOURCE, as in a user "
	       "namespace); run criu with a hard stack limit of at least %" PRIu64 " KiB (ulimit -Hs)\n",
	       size >> 10, strerror(errno), size >> 10);
	return -1;
}

static bool any_cet_state(struct pstree_item *item, u32 nr_stacks)
{
	int i;

	if (nr_stacks)
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
	struct vm_area_list *vmas = &rsti(item)->vmas;
	struct cet_rst_proc *p;
	int i, me = -1;
	u32 nr_stacks;

	have_rst_data = false;
	memset(&ta->shstk, 0, sizeof(ta->shstk));
	if (cet_adopt_upstream_images(item, vmas))
		return -1;
	for (i = 0; i < item->nr_threads; i++) {
		memset(&targs[i].shstk, 0, sizeof(targs[i].shstk));
		if (item->core[i] == core)
			me = i;
		if (item->core[i]->cet && check_thread(item->threads[i].ns[0].virt, item->core[i]->cet))
			return -1;
	}
	if (count_stacks(vmas, &nr_stacks))
		return -1;
	if (me < 0 || !any_cet_state(item, nr_stacks))
		return 0;	/* nothing CET about this task: the restorer does nothing */

	p = alloc_rst_data(item, vmas, nr_stacks);
	if (!p)
		return -1;
	if (fill_threads(item, p, (void *)p + (unsigned long)p->stacks, targs))
		return -1;
	if (allow_stack_size(largest_stack_made(item, targs, p, (void *)p + (unsigned long)p->stacks)))
		return -1;
	keep_guard_pages_free(vmas);
	ta->shstk = targs[me].shstk;
	ta->shstk.leader = 1;
	return 0;
}

int cet_restore_fixup(struct task_restore_args *ta, struct thread_restore_args *threads, int nr_threads)
{
	struct cet_rst_proc *p;
	int t;

	if (!have_rst_data)
		return 0;
	p = rst_mem_remap_ptr(rst_data_pos, RM_PRIVATE);
	p->stacks = (void *)p + (unsigned long)p->stacks;
	p->fillers = (void *)p + (unsigned long)p->fillers;
	ta->shstk.proc = p;
	ta->shstk.proc_fd = ta->proc_fd;
	for (t = 0; t < nr_threads; t++) {
		threads[t].shstk.proc = p;
		threads[t].shstk.proc_fd = ta->proc_fd;
	}
	return 0;
}
