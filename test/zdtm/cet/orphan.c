// SPDX-License-Identifier: GPL-2.0
/*
 * A process that holds a shadow-stack mapping but never turned its own
 * shadow stack on (a library that prepared a context it has not switched
 * to yet): no thread has WRSS, yet the mapping must come back at its
 * address with its token, and the thread without a shadow stack.
 */
#include <sys/mman.h>

#include "cetlib.h"

const char *test_doc = "A shadow-stack mapping in a process without a shadow stack";
const char *test_author = "criu-cet";

#define ORPHAN_SIZE	(64UL << 10)

static struct cet_thread_state before, after;
static struct cet_ss_maps maps_before, maps_after;

int main(int argc, char **argv)
{
	unsigned long *ss, top;
	int bad = 0;

	test_init(argc, argv);
	ss = cet_map_shadow_stack(0, ORPHAN_SIZE, SHADOW_STACK_SET_TOKEN);
	if (ss == MAP_FAILED) {
		pr_perror("map_shadow_stack");
		exit(1);
	}
	top = (unsigned long)ss + ORPHAN_SIZE - 8;
	if (cet_thread_state(&before) || cet_ss_maps(&maps_before))
		exit(1);
	if (before.status != 0 || maps_before.nr != 1)
		bad |= fail("before the dump: status %#lx, %d ss mappings", before.status, maps_before.nr);

	test_daemon();
	test_waitsig();

	if (cet_thread_state(&after) || cet_ss_maps(&maps_after))
		exit(1);
	bad |= cet_thread_state_cmp(&before, &after, "main");
	bad |= cet_ss_maps_cmp(&maps_before, &maps_after, "process");
	if (*(unsigned long *)top != cet_token_at(top))
		bad |= fail("top word %#lx, not the token %#lx", *(unsigned long *)top, cet_token_at(top));
	if (!bad) {
		test_msg("ss mapping %lx-%lx back with its token, no shadow stack in the thread\n",
			 maps_after.start[0], maps_after.end[0]);
		pass();
	}
	exit(bad);
}
