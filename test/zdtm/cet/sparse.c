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
static struct cet_thread_state before, after;
static struct cet_ss_maps maps_before, maps_after;

static int check_sparse(const char *when)
{
	int i, bad = 0;

	for (i = 0; i < NR_SPARSE; i++) {
		unsigned long base = (unsigned long)sparse[i], top = base + SPARSE_SIZE - 8;
		volatile unsigned long *lowest = sparse[i];

		if (*(unsigned long *)top != cet_token_at(top))
			bad |= fail("%s: stack %d top word %#lx, not its token %#lx", when, i, *(unsigned long *)top,
				    cet_token_at(top));
		if (*lowest || lowest[SPARSE_SIZE / 16])
			bad |= fail("%s: stack %d has data where it never had any", when, i);
	}
	return bad;
}

static int at_bottom(struct cet_rec *r)
{
	int bad = 0;

	if (cet_thread_state(&before) || cet_ss_maps(&maps_before))
		return 1;
	bad |= check_sparse("before the dump");

	test_daemon();
	test_waitsig();

	if (cet_thread_state(&after) || cet_ss_maps(&maps_after))
		return 1;
	bad |= cet_thread_state_cmp(&before, &after, "main");
	bad |= cet_ss_maps_cmp(&maps_before, &maps_after, "process");
	bad |= check_sparse("after restore");
	return bad;
}

static CET_NOINLINE int run(void)
{
	struct cet_rec r;
	int i;

	for (i = 0; i < NR_SPARSE; i++) {
		sparse[i] = cet_map_shadow_stack(0, SPARSE_SIZE, SHADOW_STACK_SET_TOKEN);
		if (sparse[i] == MAP_FAILED)
			return fail("map_shadow_stack of %lu MiB", SPARSE_SIZE >> 20);
	}
	if (cet_rec_init(&r, 500, at_bottom, NULL))
		return 1;
	if (cet_rec_run(&r, "recursion"))
		return 1;
	test_msg("%d sparse %lu MiB shadow stacks back with their tokens; %d ss mappings\n", NR_SPARSE,
		 SPARSE_SIZE >> 20, maps_after.nr);
	pass();
	return 0;
}

CET_TEST_MAIN(run)
