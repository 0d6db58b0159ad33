// SPDX-License-Identifier: GPL-2.0
/*
 * criu-cet, restore side in criu: images dumped by a CRIU without criu-cet
 * (4.1.1, 4.2.1).  They keep each thread's shadow-stack features and SSP in
 * xsave's cet entry, the shadow-stack mappings in mm.img and their pages in
 * the page images; no lock mask and no word on which stack the kernel owns.
 *
 * Each such thread gets a cet_core_entry of ours, with what the image says
 * as it says it, and what it does not say made up on the safe side:
 *  - the lock mask: every bit, as a CET glibc locks (ARCH_SHSTK_LOCK(-1)).
 *    A smaller mask than the task had would leave it weaker than dumped;
 *  - the stack the kernel owns: the one SSP is on when every shadow stack
 *    of the process holds exactly one thread's SSP (the rule the dump uses),
 *    else none (a new one from the kernel for each thread), so the kernel
 *    never frees, at a thread's exit, a stack the thread did not own.
 * The log says both, once per process.
 */
#include <inttypes.h>

#include "common/list.h"
#include "log.h"
#include "pstree.h"
#include "vma.h"
#include "xmalloc.h"
#include "images/core.pb-c.h"

#include "cet-abi.h"
#include "cet-upstream-images.h"

#undef LOG_PREFIX
#define LOG_PREFIX "cet: "

/* xsave's cet entry of a thread, when the image has one */
static UserX86CetEntry *xsave_cet(const CoreEntry *core)
{
	UserX86FpregsEntry *fp = core->thread_info ? core->thread_info->fpregs : NULL;

	return fp && fp->xsave ? fp->xsave->cet : NULL;
}

bool cet_upstream_shstk(const CoreEntry *core)
{
	UserX86CetEntry *c = xsave_cet(core);

	return !core->cet && c && (c->cet & ARCH_SHSTK_SHSTK);
}

/* The number of threads whose SSP lies in [start, end) (SSP is one past the top entry) */
static int ssps_in(const struct pstree_item *item, u64 start, u64 end)
{
	int i, n = 0;

	for (i = 0; i < item->nr_threads; i++) {
		UserX86CetEntry *c = xsave_cet(item->core[i]);

		if (cet_upstream_shstk(item->core[i]) && cet_ssp_in_stack(c->ssp, start, end))
			n++;
	}
	return n;
}

static bool one_ssp_per_stack(const struct pstree_item *item, struct vm_area_list *vmas)
{
	struct vma_area *vma;

	list_for_each_entry(vma, &vmas->h, list)
		if (vma_area_is(vma, VMA_AREA_SHSTK) && ssps_in(item, vma->e->start, vma->e->end) != 1)
			return false;
	return true;
}

static CetCoreEntry *entry_from_xsave(const UserX86CetEntry *c, bool own_unknown)
{
	CetCoreEntry *e = xmalloc(sizeof(*e));

	if (!e)
		return NULL;
	cet_core_entry__init(e);
	e->version = CET_IMAGE_VERSION;
	e->features = c->cet;
	e->locked = ~0ULL;
	e->has_ssp = true;
	e->ssp = c->ssp;
	if (own_unknown) {
		e->has_own_unknown = true;
		e->own_unknown = true;
	}
	return e;
}

int cet_adopt_upstream_images(struct pstree_item *item, struct vm_area_list *vmas)
{
	bool own_unknown = !one_ssp_per_stack(item, vmas);
	int i, n = 0;

	for (i = 0; i < item->nr_threads; i++) {
		CoreEntry *core = item->core[i];

		if (!cet_upstream_shstk(core))
			continue;
		core->cet = entry_from_xsave(xsave_cet(core), own_unknown);
		if (!core->cet)
			return -1;
		n++;
	}
	if (n)
		pr_warn("%d: %d thread(s) on shadow stacks dumped by a CRIU without criu-cet: features and SSP as "
			"dumped; the image has no lock mask, all bits are locked (as a CET glibc does)%s\n",
			vpid(item), n,
			own_unknown ? "; it does not say which stacks the kernel owns, each thread gets a new one" :
				      "");
	return 0;
}
