// SPDX-License-Identifier: GPL-2.0
/*
 * ctr_worker: the CET workload of the runc suite, a container's init.
 *
 * usage: ctr_worker FILE [shstk [wrss [lock]]]
 *
 * With "shstk" it turns its shadow stack on in main() (which never returns),
 * "wrss" adds WRSS, "lock" locks both features as glibc does.  Then every
 * 20 ms it walks a 32-frame recursion, asks map_shadow_stack(2) for a page
 * (and unmaps it: the answer says whether the container's seccomp profile
 * allows the call) and rewrites FILE with one line of what it sees from
 * inside its container:
 *
 *   count=N pid=P ssp=0x... status=0x... features=shstk,wrss locked=shstk,wrss mss=ok|EPERM|ENOSYS
 *
 * pid is its own getpid() (its pid namespace's number, not the host's),
 * features and locked come from its own /proc/self/status.  SIGUSR1: the
 * next tick smashes a return address (see smash()).  A restore that
 * loses the shadow stack makes the next return fault and the count stop.
 */
#include <errno.h>
#include <signal.h>
#include <sys/mman.h>

#include "cet-abi.h"
#include "service.h"

/*
 * SIGUSR1 asks for a smashed return address at the next tick: a task whose
 * shadow stack is on dies of a control-protection fault (the suite looks for
 * the kernel's report); one without writes "smash=followed" and exits.
 */
static volatile sig_atomic_t smash_asked;

static void ask_smash(int sig)
{
	smash_asked = 1;
}

static void smash_followed(void)
{
	static const char line[] = "smash=followed\n";

	if (write(2, line, sizeof(line) - 1) < 0)
		_exit(1);
	_exit(1);
}

static __attribute__((noinline)) void smash(void)
{
	/* frame pointers are on: the return address is just above the frame */
	void *volatile *ret = (void *volatile *)__builtin_frame_address(0) + 1;

	*ret = (void *)smash_followed;
}

static const char *mss_probe(void)
{
	void *p = cet_map_shadow_stack(0, 4096, 0);

	if (p != MAP_FAILED) {
		munmap(p, 4096);
		return "ok";
	}
	return errno == EPERM ? "EPERM" : errno == ENOSYS ? "ENOSYS" : "other";
}

/* a /proc/self/status list with commas for blanks, "-" when empty */
static void status_list(const char *field, char *buf, size_t len)
{
	char *c;

	if (cet_proc_status_field("/proc/self/status", field, buf, len))
		snprintf(buf, len, "?");
	for (c = buf; *c; c++)
		if (*c == ' ')
			*c = ',';
	if (!*buf)
		snprintf(buf, len, "-");
}

static void publish(int fd, unsigned long count)
{
	char line[256], feat[64], locked[64];
	const char *mss = mss_probe();
	int n;

	if (smash_asked)
		smash();

	status_list("x86_Thread_features", feat, sizeof(feat));
	status_list("x86_Thread_features_locked", locked, sizeof(locked));
	n = snprintf(line, sizeof(line), "count=%lu pid=%d ssp=%#lx status=%#lx features=%s locked=%s mss=%s\n",
		     count, (int)getpid(), cet_rdssp(), cet_status(), feat, locked, mss);
	if (ftruncate(fd, 0) || pwrite(fd, line, n, 0) != n)
		exit(2);
}

int main(int argc, char **argv)
{
	int i;

	if (argc < 2)
		return 1;
	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "shstk") && cet_enable_shstk())
			exit(3);
		if (!strcmp(argv[i], "wrss") && cet_arch_prctl(ARCH_SHSTK_ENABLE, ARCH_SHSTK_WRSS))
			exit(3);
		if (!strcmp(argv[i], "lock") && cet_arch_prctl(ARCH_SHSTK_LOCK, ARCH_SHSTK_SHSTK | ARCH_SHSTK_WRSS))
			exit(3);
	}
	signal(SIGUSR1, ask_smash);
	serve(argv[1], publish);
}
