// SPDX-License-Identifier: GPL-2.0
/*
 * criu-cet: what this host can do with shadow stacks.
 *
 * The kernel lists "user_shstk" in /proc/cpuinfo only when both the CPU
 * has shadow stacks and the kernel enabled them for user space
 * (CONFIG_X86_USER_SHADOW_STACK, not disabled on the command line).  A CPU
 * flag alone is not enough: a CET CPU under a kernel without the support
 * would accept nothing we need.
 */
#include <cpuid.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "log.h"
#include "version.h"
#include "cet.h"
#include "cet-abi.h"
#include "cet-host.h"

#undef LOG_PREFIX
#define LOG_PREFIX "cet: "

static int host_shstk = -1;

static bool cpuinfo_has_flag(const char *flag)
{
	char line[4096];
	bool found = false;
	FILE *f = fopen("/proc/cpuinfo", "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *tok, *save;

		if (strncmp(line, "flags", 5))
			continue;
		for (tok = strtok_r(line + 5, " \t:\n", &save); tok; tok = strtok_r(NULL, " \t:\n", &save))
			if (!strcmp(tok, flag))
				found = true;
		break;
	}
	fclose(f);
	return found;
}

bool cet_host_has_shstk(void)
{
	if (host_shstk < 0) {
		host_shstk = cpuinfo_has_flag("user_shstk");
		pr_info("host user shadow stacks: %s\n", host_shstk ? "yes" : "no");
	}
	return host_shstk;
}

bool cet_self_has_shstk(void)
{
	unsigned long features = cet_status();

	return features != ~0UL && (features & ARCH_SHSTK_SHSTK);
}

/* Has this kernel NT_X86_SHSTK_STATUS?  -1 until a 64-bit task could tell. */
static int kernel_regset = -1;

#ifndef NT_PRSTATUS
#define NT_PRSTATUS		1
#endif
/* struct user_regs_struct of a 64-bit task, as NT_PRSTATUS gives it */
#define CET_USER_REGS64_SIZE	(27 * sizeof(unsigned long))

/* A 32-bit tracee's NT_PRSTATUS is shorter: it has the 32-bit regset view. */
static bool is_64bit_task(pid_t stopped)
{
	unsigned long regs[32];
	struct iovec iov = { regs, sizeof(regs) };

	return ptrace(PTRACE_GETREGSET, stopped, NT_PRSTATUS, &iov) == 0 && iov.iov_len == CET_USER_REGS64_SIZE;
}

/*
 * A stock kernel does not know the note (EINVAL), nor does any kernel for
 * a 32-bit tracee (its regset view has no such note): only a 64-bit task's
 * answer says what the kernel has.  ENODEV: no user shadow stacks at all.
 * The buffer is larger than the struct: the length read tells the layout.
 */
bool cet_kernel_has_regset(pid_t stopped)
{
	uint64_t buf[2 * sizeof(struct cet_shstk_status) / sizeof(uint64_t)];
	struct iovec iov = { buf, sizeof(buf) };

	if (kernel_regset >= 0)
		return kernel_regset;
	if (ptrace(PTRACE_GETREGSET, stopped, NT_X86_SHSTK_STATUS, &iov) == 0) {
		kernel_regset = iov.iov_len >= sizeof(struct cet_shstk_status) && iov.iov_len != CET_SERIES_V2_SIZE;
		if (!kernel_regset)
			pr_warn("note %#x holds %zu bytes, not a shadow-stack status (v2 of criu-cet's kernel "
				"series?): the stock interfaces are used\n", NT_X86_SHSTK_STATUS, iov.iov_len);
	} else if (errno == ENODEV) {
		kernel_regset = 0;
	} else if (errno == EINVAL) {
		if (!is_64bit_task(stopped))
			return false;	/* this task cannot tell: ask the next one */
		kernel_regset = 0;
	} else {
		pr_perror("NT_X86_SHSTK_STATUS probe on %d", stopped);
		return false;
	}
	pr_info("kernel NT_X86_SHSTK_STATUS regset: %s\n", kernel_regset ? "yes, used" : "no, stock interfaces");
	return kernel_regset;
}

/* CPUID.(EAX=7,ECX=0):ECX[7] (CET_SS): the CPU has shadow stacks */
static bool cpu_has_shstk(void)
{
	unsigned int a, b, c, d;

	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
		return false;
	return c & (1U << 7);
}

/* A kernel built without user shadow stacks answers ARCH_SHSTK_STATUS with EINVAL. */
static bool kernel_knows_shstk(void)
{
	return cet_status() != ~0UL;
}

/*
 * NT_X86_SHSTK_STATUS is asked of a stopped tracee: a child that stops itself
 * under PTRACE_TRACEME, asked and killed.
 */
static bool probe_regset(void)
{
	bool ret = false;
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return false;
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) == 0)
			raise(SIGSTOP);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) == pid && WIFSTOPPED(status))
		ret = cet_kernel_has_regset(pid);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return ret;
}

/*
 * criu check --feature shadow_stack (and --all): can this host checkpoint
 * and restore shadow-stack tasks?  Each part is said, then the verdict.
 */
int cet_check_feature(void)
{
	bool cpu = cpu_has_shstk(), kernel = kernel_knows_shstk(), user = cet_host_has_shstk();
	bool regset = user && probe_regset();

	pr_msg("shadow_stack: CPU shadow stacks (CPUID CET_SS): %s\n", cpu ? "yes" : "no");
	pr_msg("shadow_stack: kernel user shadow stacks (ARCH_SHSTK_STATUS answers): %s\n",
	       kernel ? "yes" : "no");
	pr_msg("shadow_stack: enabled for user space (user_shstk in /proc/cpuinfo): %s\n", user ? "yes" : "no");
	pr_msg("shadow_stack: NT_X86_SHSTK_STATUS regset (criu-cet's kernel patches): %s\n",
	       regset ? "yes" : "no, the stock interfaces are used");
	if (user)
		return 0;
	pr_warn("shadow_stack: this host cannot checkpoint or restore shadow-stack tasks (%s)\n",
		!cpu ? "the CPU has no CET shadow stacks" :
		!kernel ? "the kernel is built without user shadow stacks" :
			  "the kernel has user shadow stacks turned off");
	return -1;
}

/* criu --version: which CRIU this is, for people and for tools (RPC's name) */
const char *cet_version_name(void)
{
	return "criu-cet";
}

void cet_print_version(void)
{
	pr_msg("Flavour: criu-cet (CRIU %s with x86 shadow-stack support; CET image version %d)\n", CRIU_VERSION,
	       CET_IMAGE_VERSION);
}
