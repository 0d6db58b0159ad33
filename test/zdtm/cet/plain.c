// SPDX-License-Identifier: GPL-2.0
/*
 * Scenario 10: a process without shadow stacks, restored the way stock CRIU
 * restores it: no shadow stack appears (STATUS 0, SSP 0, no ss mapping, no
 * feature or lock), and the recursion it was in unwinds intact.
 */
#include "cetlib.h"

const char *test_doc = "A process without shadow stacks gains none";
const char *test_author = "criu-cet";

static struct cet_thread_state before, after;
static struct cet_ss_maps maps_before, maps_after;

static int at_bottom(struct cet_rec *r)
{
	int bad = 0;

	if (cet_thread_state(&before) || cet_ss_maps(&maps_before))
		return 1;
	/* ~0UL: a kernel without shadow-stack support answers ARCH_SHSTK_STATUS with EINVAL */
	bad |= cet_thread_state_expect(&before, before.status == ~0UL ? ~0UL : 0, "", "", "before the dump");
	if (maps_before.nr)
		bad |= fail("%d shadow-stack mappings before the dump", maps_before.nr);

	test_daemon();
	test_waitsig();

	if (cet_thread_state(&after) || cet_ss_maps(&maps_after))
		return 1;
	bad |= cet_thread_state_cmp(&before, &after, "main");
	bad |= cet_ss_maps_cmp(&maps_before, &maps_after, "process");
	return bad;
}

static CET_NOINLINE int run(void)
{
	struct cet_rec r;

	if (cet_rec_init(&r, 2000, at_bottom, NULL))
		return 1;
	if (cet_rec_run(&r, "plain"))
		return 1;
	test_msg("no shadow stack before or after: status %#lx ssp %#lx, %d ss mappings; 2000 frames unwound\n",
		 after.status, after.ssp, maps_after.nr);
	pass();
	return 0;
}

int main(int argc, char **argv)
{
	test_init(argc, argv);
	exit(run());
}
