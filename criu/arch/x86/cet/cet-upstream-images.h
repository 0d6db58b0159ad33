/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __CR_CET_UPSTREAM_IMAGES_H__
#define __CR_CET_UPSTREAM_IMAGES_H__

#include <stdbool.h>

struct pstree_item;
struct vm_area_list;
typedef struct CoreEntry CoreEntry;

/* Does this thread's image, by a CRIU without criu-cet, say it had a shadow stack? */
bool cet_upstream_shstk(const CoreEntry *core);
/* Give each such thread of @item an entry of ours (cet-upstream-images.c says how) */
int cet_adopt_upstream_images(struct pstree_item *item, struct vm_area_list *vmas);

#endif /* __CR_CET_UPSTREAM_IMAGES_H__ */
