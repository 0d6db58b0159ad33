// SPDX-License-Identifier: GPL-2.0
/*
 * shstk_ssp: print the shadow-stack pointer of sleeping threads, for the
 * shadow-stack check CRIU's zdtm.py makes before a dump and after the
 * restore (test/zdtm/upstream/shstk_state.py).
 *
 * usage: shstk_ssp TID...
 *   one line a thread: "TID 0x<ssp>", "TID off" (no shadow stack) or
 *   "TID n/a <why>" (already traced, gone, not stopped in time).
 *
 * Only a thread stopped by ptrace has an SSP to read (NT_X86_SHSTK).  The
 * thread is seized, interrupted, read and let go: PTRACE_SEIZE sends no
 * signal and PTRACE_INTERRUPT stops it without one, so the test sees only
 * its sleeping system call restarted, which the kernel does transparently.
 * A thread that is not sleeping in a system call has no stable SSP and the
 * caller does not ask for it.
 */
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "cet-abi.h"

static void report(pid_t tid)
{
	unsigned long ssp = 0;
	struct iovec iov = { .iov_base = &ssp, .iov_len = sizeof(ssp) };
	int status;

	if (ptrace(PTRACE_SEIZE, tid, 0, 0)) {
		printf("%d n/a seize: %s\n", tid, strerror(errno));
		return;
	}
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) || waitpid(tid, &status, __WALL) != tid) {
		printf("%d n/a interrupt: %s\n", tid, strerror(errno));
		ptrace(PTRACE_DETACH, tid, 0, 0);
		return;
	}
	/* ENODEV: the thread has no shadow stack enabled */
	if (!ptrace(PTRACE_GETREGSET, tid, (void *)NT_X86_SHSTK, &iov))
		printf("%d %#lx\n", tid, ssp);
	else if (errno == ENODEV)
		printf("%d off\n", tid);
	else
		printf("%d n/a getregset: %s\n", tid, strerror(errno));
	ptrace(PTRACE_DETACH, tid, 0, 0);
}

int main(int argc, char **argv)
{
	int i;

	if (argc < 2) {
		fprintf(stderr, "usage: shstk_ssp TID...\n");
		return 2;
	}
	for (i = 1; i < argc; i++)
		report(atoi(argv[i]));
	return 0;
}
