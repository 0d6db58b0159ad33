// SPDX-License-Identifier: GPL-2.0
/*
 * Large, sparse shadow stacks the thread does not own: three 160 MiB
 * map_shadow_stack mappings of which the task has only the top page (the
 * kernel's restore token) and a read of the lowest page (the zero page:
 * about nothing in memory).  A dump must cost what the task really has, not
 * 480 MiB (the lab guest has 512 MiB), and the restore puts back every
 * mapping at its address with its token and its zero-filled rest.  The
 * thread itself runs on its own shadow stack, in a recursion.
 */
#include <sys/mman.h>

#include "cetlib.h"

const char *test_doc = "Three sparse 160 MiB shadow stacks cost what they hold";
const char *test_author = "criu-cet";

#define NR_SPARSE	3
#define SPARSE_SIZE	(160UL << 20)

static unsigned long *sparse[NR_SPARSE];

static int check_sparse(struct cet_ckpt *c, int restored, const char *when)
{
	int i, bad = 0;

	for (i = 0; i < NR_SPARSE; i++) {
		unsigned long base = (unsigned long)sparse[i], top = base + SPARSE_SIZE - 8;
		volatile unsigned long *lowest = sparse[i];
		char who[48];

		snprintf(who, sizeof(who), "%s: stack %d top word", when, i);
		bad |= cet_check_token(top, who);
		if (*lowest || lowest[SPARSE_SIZE / 16])
			bad |= fail("%s: stack %d has data where it never had any", when, i);
	}
	return bad;
}

static struct cet_ckpt ckpt = { .who = "main", .check = check_sparse };

static CET_NOINLINE int run(void)
{
	int i;

	for (i = 0; i < NR_SPARSE; i++) {
		sparse[i] = cet_map_shadow_stack(0, SPARSE_SIZE, SHADOW_STACK_SET_TOKEN);
		if (sparse[i] == MAP_FAILED)
			return fail("map_shadow_stack of %lu MiB", SPARSE_SIZE >> 20);
	}
	return cet_pass(cet_recurse(500, cet_rec_checkpoint, &ckpt, "recursion"),
			"%d sparse %lu MiB shadow stacks back with their tokens; %d ss mappings\n", NR_SPARSE,
			SPARSE_SIZE >> 20, ckpt.after.maps.nr);
}

CET_TEST_MAIN(run)
