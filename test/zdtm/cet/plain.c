// SPDX-License-Identifier: GPL-2.0
/*
 * Scenario 10: a process without shadow stacks, restored the way stock CRIU
 * restores it: no shadow stack appears (STATUS 0, SSP 0, no ss mapping, no
 * feature or lock), and the recursion it was in unwinds intact.
 */
#include "cetlib.h"

const char *test_doc = "A process without shadow stacks gains none";
const char *test_author = "criu-cet";

static int check(struct cet_ckpt *c, int restored, const char *when)
{
	const struct cet_snap *b = &c->before;
	int bad = 0;

	if (restored)
		return 0;
	/* ~0UL: a kernel without shadow-stack support answers ARCH_SHSTK_STATUS with EINVAL */
	bad |= cet_thread_state_expect(&b->st, b->st.status == ~0UL ? ~0UL : 0, "", "", when);
	if (b->maps.nr)
		bad |= fail("%d shadow-stack mappings before the dump", b->maps.nr);
	return bad;
}

static struct cet_ckpt ckpt = { .who = "main", .check = check };

static CET_NOINLINE int run(void)
{
	return cet_pass(cet_recurse(2000, cet_rec_checkpoint, &ckpt, "plain"),
			"no shadow stack before or after: status %#lx ssp %#lx, %d ss mappings; 2000 frames unwound\n",
			ckpt.after.st.status, ckpt.after.st.ssp, ckpt.after.maps.nr);
}

/* no shadow stack here: ZDTM's set-up only */
int main(int argc, char **argv)
{
	test_init(argc, argv);
	exit(run());
}
