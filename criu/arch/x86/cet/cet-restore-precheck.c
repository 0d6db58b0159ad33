// SPDX-License-Identifier: GPL-2.0
/*
 * criu-cet, restore side in criu: images refused right after the pstree is
 * read, before any task is forked, because a restore of them could only
 * fail later, inside a task, or bring back a shadow stack that is not the
 * one dumped:
 *
 *  - images of tasks on shadow stacks, on a host without user shadow
 *    stacks (the restore failed late, often first on something unrelated
 *    such as a pid in use);
 *  - with --lazy-pages, shadow-stack pages that a dump --lazy-pages left
 *    out of the image: CRIU 4.2.1 and older mark them lazy, but
 *    UFFDIO_REGISTER refuses shadow-stack VMAs (since Linux commit
 *    3c58f641e813), so those pages would never arrive and the task would
 *    return through zeroes.  The lazy ones the image holds (any other
 *    dump of theirs) are read by the restore itself.  criu-cet never
 *    dumps them lazy (vma_entry_can_be_lazy()).
 *
 * Images that cannot be read are left to CRIU core, which reports them
 * later in its own words.
 */
#include "cr_options.h"
#include "image.h"
#include "log.h"
#include "pagemap.h"
#include "protobuf.h"
#include "pstree.h"
#include "vma.h"
#include "cet.h"
#include "images/core.pb-c.h"
#include "images/mm.pb-c.h"

#include "cet-abi.h"
#include "cet-host.h"
#include "cet-upstream-images.h"

#undef LOG_PREFIX
#define LOG_PREFIX "cet: "

/* Does thread @tid's core image say it runs on a shadow stack?  -1: unreadable */
static int core_image_has_shstk(pid_t tid)
{
	struct cr_img *img = open_image(CR_FD_CORE, O_RSTR, tid);
	CoreEntry *core;
	int ret;

	if (!img)
		return -1;
	ret = pb_read_one(img, &core, PB_CORE);
	close_image(img);
	if (ret <= 0)
		return -1;
	ret = (core->cet && (core->cet->features & ARCH_SHSTK_SHSTK)) || cet_upstream_shstk(core);
	core_entry__free_unpacked(core, NULL);
	return ret;
}

/* Process @pid's mm image, NULL when it cannot be read */
static MmEntry *read_mm_image(pid_t pid)
{
	struct cr_img *img = open_image(CR_FD_MM, O_RSTR, pid);
	MmEntry *mm = NULL;

	if (!img)
		return NULL;
	if (pb_read_one(img, &mm, PB_MM) <= 0)
		mm = NULL;
	close_image(img);
	return mm;
}

/* The first shadow-stack mapping of @mm overlapping [start, end), or NULL */
static const VmaEntry *shstk_overlapping(const MmEntry *mm, u64 start, u64 end)
{
	size_t i;

	for (i = 0; i < mm->n_vmas; i++) {
		const VmaEntry *v = mm->vmas[i];

		if (vma_entry_is(v, VMA_AREA_SHSTK) && v->start < end && start < v->end)
			return v;
	}
	return NULL;
}

static int refuse_without_host(struct pstree_item *item, const MmEntry *mm)
{
	int i;

	for (i = 0; i < item->nr_threads; i++)
		if (core_image_has_shstk(item->threads[i].ns[0].virt) > 0)
			goto refuse;
	if (mm && shstk_overlapping(mm, 0, ~0ULL))
		goto refuse;
	return 0;
refuse:
	pr_err("%d: the image has shadow stacks but this host has no user shadow stacks (no user_shstk; "
	       "criu check --feature shadow_stack says why)\n", vpid(item));
	return -1;
}

/*
 * Lazy pagemap entries in a shadow stack whose pages the image does not
 * hold (a dump --lazy-pages by a CRIU without criu-cet): only uffd could
 * bring them, and it cannot fill a shadow stack.  Those the image holds
 * are read by the restore itself (mem.c, patches/criu/0004).
 */
static int refuse_lazy_shstk_pages(struct pstree_item *item, const MmEntry *mm)
{
	struct page_read pr;
	const VmaEntry *v = NULL;
	u64 start = 0;
	int ret;

	if (!shstk_overlapping(mm, 0, ~0ULL))
		return 0;
	ret = open_page_read(vpid(item), &pr, PR_TASK);
	if (ret <= 0)
		return 0;
	while (!v && pr.advance(&pr) > 0) {
		start = pr.pe->vaddr;
		if (pagemap_lazy(pr.pe) && !pagemap_present(pr.pe))
			v = shstk_overlapping(mm, start, start + pagemap_len(pr.pe));
	}
	pr.close(&pr);
	if (!v)
		return 0;
	pr_err("%d: shadow-stack pages dumped lazy are not in the image (at %#" PRIx64 ", stack %#" PRIx64
	       "-%#" PRIx64 "; PE_LAZY without PE_PRESENT: a dump --lazy-pages by a CRIU without criu-cet), and "
	       "userfaultfd cannot fill a shadow stack: dump again without --lazy-pages, or with criu-cet\n",
	       vpid(item), start, v->start, v->end);
	return -1;
}

int cet_check_images_before_fork(void)
{
	bool host_shstk = cet_host_has_shstk();
	struct pstree_item *item;
	MmEntry *mm;
	int ret = 0;

	if (host_shstk && !opts.lazy_pages)
		return 0;
	for_each_pstree_item(item) {
		if (!task_alive(item))
			continue;
		mm = read_mm_image(vpid(item));
		if (!host_shstk)
			ret = refuse_without_host(item, mm);
		if (!ret && mm && opts.lazy_pages)
			ret = refuse_lazy_shstk_pages(item, mm);
		if (mm)
			mm_entry__free_unpacked(mm, NULL);
		if (ret)
			return -1;
	}
	return 0;
}
