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

static unsigned long top;

static int check(struct cet_ckpt *c, int restored, const char *when)
{
	const struct cet_snap *b = &c->before;

	if (!restored) {
		if (b->st.status != 0 || b->maps.nr != 1)
			return fail("before the dump: status %#lx, %d ss mappings", b->st.status, b->maps.nr);
		return 0;
	}
	return cet_check_token(top, "the top word");
}

static struct cet_ckpt ckpt = { .who = "main", .check = check };

/* no shadow stack of its own: ZDTM's set-up only */
int main(int argc, char **argv)
{
	unsigned long *ss;

	test_init(argc, argv);
	ss = cet_map_shadow_stack(0, ORPHAN_SIZE, SHADOW_STACK_SET_TOKEN);
	if (ss == MAP_FAILED) {
		pr_perror("map_shadow_stack");
		exit(1);
	}
	top = (unsigned long)ss + ORPHAN_SIZE - 8;
	exit(cet_pass(cet_checkpoint(&ckpt), "ss mapping %lx-%lx back with its token, no shadow stack in the thread\n",
		      ckpt.after.maps.start[0], ckpt.after.maps.end[0]));
}
