// SPDX-License-Identifier: GPL-2.0
/*
 * ptrace_sigreturn: proves the lab's Bochs carries our XRSTORS fix.
 *
 * A shadow-stack child returns from a SIGUSR1 handler while its tracer holds
 * it at the entry of rt_sigreturn (PTRACE_SYSCALL).  The ptrace stop makes the
 * kernel reload the CET user state with an XRSTORS of that component alone;
 * an emulator that lays out the compacted save area by RFBM instead of
 * XCOMP_BV loads a garbage SSP, the kernel says "bad frame in rt_sigreturn"
 * and kills the child.  This is exactly what CRIU's parasite exit does.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>

#include "cet-abi.h"

static volatile sig_atomic_t handled;

static void on_usr1(int sig)
{
	handled = 1;
}

static void child(void)
{
	if (cet_enable_shstk())
		_exit(2);
	signal(SIGUSR1, on_usr1);
	ptrace(PTRACE_TRACEME, 0, NULL, NULL);
	raise(SIGSTOP);
	raise(SIGUSR1);
	_exit(handled && cet_status() == ARCH_SHSTK_SHSTK ? 0 : 3);
}

int main(void)
{
	struct timespec pause = { 0, 100 * 1000 * 1000 };
	int status, sigreturns = 0, sig = 0;
	pid_t pid = fork();

	if (pid == 0)
		child();
	for (;;) {
		struct user_regs_struct regs;

		if (waitpid(pid, &status, 0) < 0 || !WIFSTOPPED(status))
			break;
		sig = WSTOPSIG(status);
		if (sig == SIGTRAP || sig == SIGSTOP)
			sig = 0;	/* syscall stop or our own SIGSTOP: not to deliver */
		if (ptrace(PTRACE_GETREGS, pid, NULL, &regs) == 0 && regs.orig_rax == SYS_rt_sigreturn &&
		    (long)regs.rax == -ENOSYS) {
			sigreturns++;	/* entry of rt_sigreturn: hold the task a moment */
			nanosleep(&pause, NULL);
		}
		ptrace(PTRACE_SYSCALL, pid, NULL, (void *)(long)sig);
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && sigreturns > 0)
		printf("@@LAB PASS lab.ptrace-sigreturn child returned from its handler under ptrace "
		       "and exited: sigreturns=%d exit=0\n", sigreturns);
	else if (WIFSIGNALED(status))
		printf("@@LAB FAIL lab.ptrace-sigreturn child killed by signal %d after %d rt_sigreturn "
		       "stops (Bochs XRSTORS bug?)\n", WTERMSIG(status), sigreturns);
	else
		printf("@@LAB FAIL lab.ptrace-sigreturn child exit %d, %d rt_sigreturn stops\n",
		       WEXITSTATUS(status), sigreturns);
	return 0;
}
