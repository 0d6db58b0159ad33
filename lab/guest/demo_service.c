// SPDX-License-Identifier: GPL-2.0
/*
 * demo_service: the CET-protected service of `make demo`.
 *
 * usage: demo_service STATUS_FILE
 *
 * It turns its shadow stack on, locks it the way glibc does, descends
 * DEPTH frames and serves from there: every 50 ms it bumps a counter and
 * rewrites STATUS_FILE with "count ssp depth features locked".  SIGUSR2
 * asks it to overwrite one of its return addresses, the attack shadow
 * stacks exist to stop: it then reports how it was stopped.  SIGUSR1 asks
 * it to return through every frame and exit 0, saying "unwound": after a
 * restore, that the shadow stack came back with its contents (a return
 * address missing or wrong there stops it with SEGV_CPERR instead).
 */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>

#include "cet-abi.h"

#define DEPTH 512

static const char *status_path;
static volatile sig_atomic_t smash_requested, unwind_requested;
static unsigned long count;

/*
 * A new file renamed over the old: the suite reads the status while the
 * service rewrites it every tick, and a truncated file read between
 * O_TRUNC and write() made a check see empty fields.
 */
static void write_status(const char *text)
{
	char tmp[PATH_MAX];
	int fd;

	snprintf(tmp, sizeof(tmp), "%s.tmp", status_path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, text, strlen(text)) < 0)
		exit(2);
	close(fd);
	if (rename(tmp, status_path))
		exit(2);
}

/* how deep the shadow stack is: its top, from smaps, minus SSP */
static unsigned long shadow_depth(unsigned long ssp)
{
	char line[256];
	unsigned long start, end, depth = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &start, &end) == 2 && ssp > start && ssp <= end)
			depth = (end - ssp) / 8;
	if (f)
		fclose(f);
	return depth;
}

static void on_cp_fault(int sig, siginfo_t *si, void *uc)
{
	char text[128];

	snprintf(text, sizeof(text), "stopped SIGSEGV si_code=%d%s\n", si->si_code,
		 si->si_code == SEGV_CPERR ? " (SEGV_CPERR: control protection)" : "");
	write_status(text);
	_exit(si->si_code == SEGV_CPERR ? 42 : 1);
}

static void on_usr2(int sig)
{
	smash_requested = 1;
}

static void on_usr1(int sig)
{
	unwind_requested = 1;
}

/* the attack: replace our return address, then return through it */
asm(".text\n"
    ".type attack_return_address, @function\n"
    "attack_return_address:\n"
    "	leaq attacker_code(%rip), %rax\n"
    "	movq %rax, (%rsp)\n"
    "	ret\n"
    "attacker_code:\n"
    "	andq $-16, %rsp\n"
    "	call attack_succeeded\n"
    "	ud2\n");
void attack_return_address(void);

void attack_succeeded(void)
{
	write_status("attack succeeded: the return address was followed\n");
	_exit(1);
}

static void serve(void)
{
	struct timespec tick = { 0, 50 * 1000 * 1000 };
	char text[256], feat[64] = "", locked[64] = "";
	unsigned long ssp = cet_rdssp(), depth = shadow_depth(ssp);

	while (!unwind_requested) {
		if (smash_requested)
			attack_return_address();
		cet_proc_status_field("/proc/self/status", "x86_Thread_features", feat, sizeof(feat));
		cet_proc_status_field("/proc/self/status", "x86_Thread_features_locked", locked, sizeof(locked));
		snprintf(text, sizeof(text), "count=%lu ssp=%#lx depth=%lu features='%s' locked='%s'\n", ++count,
			 cet_rdssp(), depth, feat, locked);
		write_status(text);
		nanosleep(&tick, NULL);
	}
}

static __attribute__((noinline)) void descend(int n)
{
	if (!n)
		serve();
	else
		descend(n - 1);
	asm volatile("" ::: "memory");	/* a real frame each level: no tail call */
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_sigaction = on_cp_fault, .sa_flags = SA_SIGINFO };

	if (argc < 2)
		return 1;
	status_path = argv[1];
	if (cet_enable_shstk())
		exit(3);
	/* what glibc does once it has enabled shadow stacks */
	cet_arch_prctl(ARCH_SHSTK_LOCK, -1UL);	/* as glibc does */
	sigaction(SIGSEGV, &sa, NULL);
	signal(SIGUSR2, on_usr2);
	signal(SIGUSR1, on_usr1);
	descend(DEPTH);
	write_status("unwound: returned through every frame\n");
	exit(0);
}
