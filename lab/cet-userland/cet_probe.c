// SPDX-License-Identifier: GPL-2.0
/*
 * cet_probe: what the CET glibc gives an ordinary program.  Built with
 * lab/build/cet-cc (SHSTK-marked, the CET glibc's loader) and no shadow-stack
 * code of its own: whether a shadow stack is on, and locked, is glibc's
 * doing alone (GLIBC_TUNABLES=glibc.cpu.hwcaps=SHSTK).
 *
 *   cet_probe          one line per context: the main thread, a pthread, a
 *                      makecontext context (glibc gives it a shadow stack of
 *                      its own) and the process's shadow-stack mapping count
 *   cet_probe smash    overwrite a return address and return through it:
 *                      a task on a shadow stack dies of SIGSEGV (SEGV_CPERR)
 *
 * Lines: "cet_probe <who> status=<ARCH_SHSTK_STATUS> ssp=<SSP or 0>
 * features=<...> locked=<...>" from /proc/thread-self/status.
 */
#include <pthread.h>
#include <stdlib.h>
#include <ucontext.h>

#include "cet-abi.h"
#include "smash.h"

/* field NAME of /proc/thread-self/status, blanks as commas ("-" if empty) */
static void status_field(const char *name, char *out, size_t len)
{
	char line[256];
	size_t n = strlen(name);
	FILE *f = fopen("/proc/thread-self/status", "r");

	snprintf(out, len, "-");
	while (f && fgets(line, sizeof(line), f)) {
		char *v, *p;

		if (strncmp(line, name, n) || line[n] != ':')
			continue;
		for (v = line + n + 1; *v == ' ' || *v == '\t'; v++)
			;
		v[strcspn(v, "\n")] = '\0';
		for (p = v + strlen(v); p > v && p[-1] == ' '; p--)
			p[-1] = '\0';	/* the kernel ends the list with a blank */
		for (p = v; *p; p++)
			if (*p == ' ')
				*p = ',';
		if (*v)
			snprintf(out, len, "%s", v);
	}
	if (f)
		fclose(f);
}

static void report(const char *who)
{
	char feat[64], locked[64];

	status_field("x86_Thread_features", feat, sizeof(feat));
	status_field("x86_Thread_features_locked", locked, sizeof(locked));
	printf("cet_probe %s status=%#lx ssp=%#lx features=%s locked=%s\n",
	       who, cet_status(), cet_rdssp(), feat, locked);
	fflush(stdout);
}

static void *thread_main(void *arg)
{
	report("thread");
	return NULL;
}

static ucontext_t main_ctx, fiber_ctx;

static void fiber_main(void)
{
	report("context");
	/* uc_link brings us back to main_ctx through glibc's own switch */
}

/* the shadow-stack mappings of this process ("ss" in VmFlags) */
static int ss_mappings(void)
{
	char line[512];
	int n = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmFlags:", 8) && strstr(line, " ss"))
			n++;
	if (f)
		fclose(f);
	return n;
}

void smash_followed(void)
{
	printf("cet_probe smash followed: no protection\n");
	fflush(stdout);
	_exit(3);
}

int main(int argc, char **argv)
{
	static char stack[64 << 10];
	pthread_t t;
	int before;

	if (argc > 1 && !strcmp(argv[1], "smash")) {
		report("smash");
		smash_and_return();
		return 2;
	}
	report("main");
	if (pthread_create(&t, NULL, thread_main, NULL) || pthread_join(t, NULL))
		return 1;
	before = ss_mappings();
	getcontext(&fiber_ctx);
	fiber_ctx.uc_stack.ss_sp = stack;
	fiber_ctx.uc_stack.ss_size = sizeof(stack);
	fiber_ctx.uc_link = &main_ctx;
	makecontext(&fiber_ctx, fiber_main, 0);
	if (swapcontext(&main_ctx, &fiber_ctx))
		return 1;
	printf("cet_probe ss mappings=%d before makecontext=%d\n", ss_mappings(), before);
	report("end");
	return 0;
}
