// SPDX-License-Identifier: GPL-2.0
/*
 * counter: a tiny long-running service for checkpoint/restore checks.
 *
 * usage: counter FILE [shstk]
 *
 * Every 20 ms it walks a 32-frame recursion, bumps a counter and rewrites
 * FILE with "count ssp status".  With "shstk" it runs on a shadow stack,
 * turned on in main(), which therefore never returns.  A restore that loses
 * the shadow stack makes the next return fault; a restore that keeps it makes
 * the count go on.
 */
#include "cet-abi.h"
#include "service.h"

static void publish(int fd, unsigned long count)
{
	char line[128];
	int n = snprintf(line, sizeof(line), "%lu %#lx %#lx\n", count, cet_rdssp(), cet_status());

	if (ftruncate(fd, 0) || pwrite(fd, line, n, 0) != n)
		exit(2);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 1;
	if (argc > 2 && !strcmp(argv[2], "shstk") && cet_enable_shstk())
		exit(3);
	serve(argv[1], publish);
}
