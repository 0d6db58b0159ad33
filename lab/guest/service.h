/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The loop of the lab's long-running services (counter, ctr_worker): every
 * 20 ms a 32-frame recursion, then the service's publish() rewrites FILE.
 * A restore that loses the shadow stack makes the next return fault and the
 * count stop.  serve() never returns: callers that turned their shadow stack
 * on in main() call it last.
 */
#ifndef LAB_GUEST_SERVICE_H
#define LAB_GUEST_SERVICE_H

#include <fcntl.h>
#include <stdlib.h>
#include <time.h>

static __attribute__((noinline)) unsigned long walk(int depth, unsigned long acc)
{
	if (depth)
		acc = walk(depth - 1, acc * 31 + depth);
	asm volatile("" : "+r"(acc));
	return acc;
}

static __attribute__((noreturn)) void serve(const char *file, void (*publish)(int fd, unsigned long count))
{
	struct timespec tick = { 0, 20 * 1000 * 1000 };
	unsigned long count = 0;
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		exit(4);
	for (;;) {
		if (walk(32, count) == 42)
			count++;	/* keeps walk() from being optimised away */
		publish(fd, ++count);
		nanosleep(&tick, NULL);
	}
}

#endif
