// SPDX-License-Identifier: GPL-2.0
/*
 * cet_basics: does the (emulated) CPU and the kernel give us working shadow
 * stacks?  Each check runs in a forked child that turns its shadow stack on
 * first, and prints one lab protocol line:  @@LAB PASS|FAIL cet.<name> <detail>
 *
 * usage: cet_basics [check...]     (no argument: all checks)
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "cet-abi.h"
#include "smash.h"

static int report_fd = -1;

/* Child side: the detail text of the current check goes to the parent. */
static void report(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0 && write(report_fd, buf, n > (int)sizeof(buf) ? (int)sizeof(buf) : n) < 0)
		_exit(3);
}

static void on_signal(int sig, void (*fn)(int, siginfo_t *, void *))
{
	struct sigaction sa = { .sa_sigaction = fn, .sa_flags = SA_SIGINFO };

	sigaction(sig, &sa, NULL);
}

/* ---- enable: the thread really runs on a shadow stack ---- */
static int check_enable(void)
{
	unsigned long status = cet_status(), ssp = cet_rdssp();
	char feat[128] = "?";

	cet_proc_status_field("/proc/self/status", "x86_Thread_features", feat, sizeof(feat));
	report("status=%#lx ssp=%#lx features='%s'", status, ssp, feat);
	return status == ARCH_SHSTK_SHSTK && ssp && !strcmp(feat, "shstk") ? 0 : 1;
}

/* ---- ssp-depth: every call pushes exactly one 8-byte entry ---- */
static unsigned long ssp_at[64];

static __attribute__((noinline)) int descend(int depth)
{
	int below = 0;

	ssp_at[depth] = cet_rdssp();
	if (depth < 63)
		below = descend(depth + 1);
	asm volatile("" : "+r"(below));	/* no tail call: keep the frame */
	return below + 1;
}

static int check_ssp_depth(void)
{
	int d;

	if (descend(0) != 64)
		return report("recursion broken"), 1;
	for (d = 1; d < 64; d++) {
		if (ssp_at[d] != ssp_at[0] - 8UL * d) {
			report("depth %d: ssp %#lx, expected %#lx", d, ssp_at[d], ssp_at[0] - 8UL * d);
			return 1;
		}
	}
	report("ssp %#lx at depth 0 -> %#lx at depth 63 (8 bytes a frame)", ssp_at[0], ssp_at[63]);
	return 0;
}

/* ---- smash: overwriting a return address is caught (SEGV_CPERR) ---- */
void smash_followed(void)
{
	report("smashed return address was followed: no protection");
	_exit(1);
}


static void cp_fault(int sig, siginfo_t *si, void *uc)
{
	report("SIGSEGV si_code=%d (%s)", si->si_code,
	       si->si_code == SEGV_CPERR ? "SEGV_CPERR" : "unexpected");
	_exit(si->si_code == SEGV_CPERR ? 0 : 1);
}

static int check_smash(void)
{
	on_signal(SIGSEGV, cp_fault);
	smash_and_return();
	report("returned normally");
	return 1;
}

/* ---- map-token: map_shadow_stack puts a restore token at the top ---- */
static int vma_has_ss(unsigned long addr)
{
	char line[512], perms[8];
	unsigned long start, end;
	int in = 0, ss = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %7s", &start, &end, perms) == 3)
			in = addr >= start && addr < end;
		else if (in && !strncmp(line, "VmFlags:", 8))
			ss = strstr(line, " ss") != NULL;
	}
	fclose(f);
	return ss;
}

#define MAP_SIZE (4 * 4096UL)

static int check_map_token(void)
{
	unsigned long *base = cet_map_shadow_stack(0, MAP_SIZE, SHADOW_STACK_SET_TOKEN);
	unsigned long top, token, i;

	if (base == MAP_FAILED)
		return report("map_shadow_stack: %s", strerror(errno)), 1;
	top = (unsigned long)base + MAP_SIZE;
	token = base[MAP_SIZE / 8 - 1];
	for (i = 0; i < MAP_SIZE / 8 - 1; i++)
		if (base[i])
			return report("word %lu not zero", i), 1;
	report("map %p+%#lx token %#lx (want %#lx) ss=%d", base, MAP_SIZE, token,
	       cet_token_for(top), vma_has_ss((unsigned long)base));
	return token == cet_token_for(top) && vma_has_ss((unsigned long)base) == 1 ? 0 : 1;
}

/* ---- plain-store: ordinary stores to shadow-stack memory fault ---- */
static unsigned long *store_target;

static void store_fault(int sig, siginfo_t *si, void *uc)
{
	int ok = si->si_addr == (void *)store_target;

	report("SIGSEGV at %p (target %p) si_code=%d", si->si_addr, store_target, si->si_code);
	_exit(ok ? 0 : 1);
}

static int check_plain_store(void)
{
	unsigned long *base = cet_map_shadow_stack(0, MAP_SIZE, 0);

	if (base == MAP_FAILED)
		return report("map_shadow_stack: %s", strerror(errno)), 1;
	store_target = base + 8;
	on_signal(SIGSEGV, store_fault);
	*(volatile unsigned long *)store_target = 0x1234;
	report("plain store to shadow stack %p succeeded", store_target);
	return 1;
}

/* ---- wrss: with WRSS on, wrssq writes shadow-stack memory ---- */
static int check_wrss(void)
{
	unsigned long *base = cet_map_shadow_stack(0, MAP_SIZE, 0);
	unsigned long status;
	long ret;

	if (base == MAP_FAILED)
		return report("map_shadow_stack: %s", strerror(errno)), 1;
	ret = cet_arch_prctl(ARCH_SHSTK_ENABLE, ARCH_SHSTK_WRSS);
	status = cet_status();
	if (ret || status != (ARCH_SHSTK_SHSTK | ARCH_SHSTK_WRSS))
		return report("enable WRSS: ret %ld status %#lx", ret, status), 1;
	cet_wrss(base + 3, 0xfeedface);
	report("status=%#lx wrssq wrote %#lx", status, base[3]);
	return base[3] == 0xfeedface ? 0 : 1;
}

/* ---- wrss-off: without WRSS, wrssq is an illegal instruction ---- */
static void sigill(int sig, siginfo_t *si, void *uc)
{
	report("SIGILL with WRSS off (status %#lx)", cet_status());
	_exit(0);
}

static int check_wrss_off(void)
{
	unsigned long *base = cet_map_shadow_stack(0, MAP_SIZE, 0);

	if (base == MAP_FAILED)
		return report("map_shadow_stack: %s", strerror(errno)), 1;
	on_signal(SIGILL, sigill);
	cet_wrss(base + 3, 1);
	report("wrssq worked with WRSS off");
	return 1;
}

/* ---- lock: a locked feature cannot be turned off ---- */
static int check_lock(void)
{
	char locked[128] = "?";
	long lock, disable;

	lock = cet_arch_prctl(ARCH_SHSTK_LOCK, ARCH_SHSTK_SHSTK);
	disable = cet_arch_prctl(ARCH_SHSTK_DISABLE, ARCH_SHSTK_SHSTK);
	cet_proc_status_field("/proc/self/status", "x86_Thread_features_locked", locked, sizeof(locked));
	report("lock=%ld disable-after-lock=%ld (%s) locked='%s' status=%#lx", lock, disable,
	       disable == -EPERM ? "EPERM" : "?", locked, cet_status());
	return !lock && disable == -EPERM && !strcmp(locked, "shstk") &&
	       cet_status() == ARCH_SHSTK_SHSTK ? 0 : 1;
}

static const struct check {
	const char *name;
	int (*fn)(void);
} checks[] = {
	{ "enable", check_enable },
	{ "ssp-depth", check_ssp_depth },
	{ "smash", check_smash },
	{ "map-token", check_map_token },
	{ "plain-store", check_plain_store },
	{ "wrss", check_wrss },
	{ "wrss-off", check_wrss_off },
	{ "lock", check_lock },
};

/*
 * Run one check in a child.  The child enables its shadow stack here and
 * leaves with _exit(): this frame never returns on the shadow stack.
 */
static int run_check(const struct check *c)
{
	char detail[512] = "";
	int fds[2], status, n;
	pid_t pid;

	if (pipe(fds))
		return 1;
	pid = fork();
	if (pid == 0) {
		long ret;

		close(fds[0]);
		report_fd = fds[1];
		ret = cet_enable_shstk();
		if (ret) {
			report("ARCH_SHSTK_ENABLE: %ld", ret);
			_exit(2);
		}
		_exit(c->fn());
	}
	close(fds[1]);
	n = read(fds[0], detail, sizeof(detail) - 1);
	detail[n > 0 ? n : 0] = '\0';
	close(fds[0]);
	waitpid(pid, &status, 0);
	if (WIFSIGNALED(status))
		snprintf(detail + strlen(detail), sizeof(detail) - strlen(detail),
			 " [killed by signal %d]", WTERMSIG(status));
	n = WIFEXITED(status) && WEXITSTATUS(status) == 0;
	printf("@@LAB %s cet.%s %s\n", n ? "PASS" : "FAIL", c->name, detail);
	fflush(stdout);
	return !n;
}

int main(int argc, char **argv)
{
	unsigned int i;
	int j, failed = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
		int wanted = argc < 2;

		for (j = 1; j < argc; j++)
			wanted |= !strcmp(argv[j], checks[i].name);
		if (wanted)
			failed |= run_check(&checks[i]);
	}
	return failed;
}
