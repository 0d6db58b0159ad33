/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the ZDTM CET (x86 user shadow stack) tests.
 *
 * Header-only on purpose: the directory is meant to be dropped into CRIU's
 * test/zdtm/ and built by its Makefile.inc with no change to lib/.
 *
 * Rules every test follows (glibc 2.36 has no shadow-stack support):
 *  - the shadow stack is enabled with an inline syscall (cet_enable_shstk(),
 *    CET_TEST_INIT()) from main() after test_init(), and main() never
 *    returns (it ends in exit()): the frames below the enabling one have no
 *    shadow-stack entries;
 *  - state is recorded at a point before the checkpoint and read again at the
 *    same point (same frame) after restore, so SSPs must be equal.
 *
 * The ABI itself (constants, arch_prctl, rdssp, wrss, tokens, the /proc
 * status parser) is criu-cet's criu/arch/x86/cet/cet-abi.h; what is here is
 * the tests' own scaffolding: recording and comparing a thread's state
 * around the checkpoint (cet_snap, cet_checkpoint()), the recursion with
 * SSP checks (cet_rec, cet_recurse()), parked worker threads (cet_worker),
 * fibers and a clone filter for the tests that ask for them.
 */
#ifndef ZDTM_CET_LIB_H
#define ZDTM_CET_LIB_H

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "zdtmtst.h"
/* the ABI and its inline helpers, shared with criu-cet (CET_ABI_DIR) */
#include "cet-abi.h"

#define CET_NOINLINE __attribute__((noinline))

/*
 * ZDTM's set-up and the shadow stack on, expanded in main() of a
 * shadow-stack test, which never returns (it ends in exit()): no frame
 * older than the shadow stack is ever returned to.
 */
#define CET_TEST_INIT(argc, argv)					\
	do {								\
		long __ret;						\
									\
		test_init(argc, argv);					\
		__ret = cet_enable_shstk();				\
		if (__ret) {						\
			pr_err("ARCH_SHSTK_ENABLE: %ld\n", __ret);	\
			exit(1);					\
		}							\
	} while (0)

/* main() of a shadow-stack test: CET_TEST_INIT(), run(), exit */
#define CET_TEST_MAIN(run)						\
	int main(int argc, char **argv)					\
	{								\
		CET_TEST_INIT(argc, argv);				\
		exit(run());						\
	}

/*
 * The end of a test: 1 if @bad, else the summary (test_msg() format and
 * arguments) and PASS, and 0.
 */
#define cet_pass(bad, fmt, ...)						\
	({								\
		int __bad = (bad);					\
									\
		if (!__bad) {						\
			test_msg(fmt, ##__VA_ARGS__);			\
			pass();						\
		}							\
		__bad ? 1 : 0;						\
	})

#ifdef CET_FIBERS
/*
 * A fiber as glibc's swapcontext keeps one: the asm below uses the first
 * four fields at these offsets.
 */
struct cet_fiber {
	unsigned long rsp;	/* 0: saved stack pointer */
	unsigned long token;	/* 8: address of its restore token */
	unsigned long entry;	/* 16: first entry point, 0 once started */
	unsigned long arg;	/* 24: argument of the first entry */
};

void cet_fiber_switch(struct cet_fiber *from, struct cet_fiber *to);

/*
 * Save the callee-saved registers and the stack pointer of @from, leave a
 * restore token on the current shadow stack (rstorssp onto @to's token, then
 * saveprevssp), and continue @to: pop its registers and return, or, on its
 * first entry, jump (its new shadow stack holds nothing to return to).
 */
asm(".text\n"
    ".globl cet_fiber_switch\n"
    ".type cet_fiber_switch, @function\n"
    "cet_fiber_switch:\n"
    "	pushq %rbp\n"
    "	pushq %rbx\n"
    "	pushq %r12\n"
    "	pushq %r13\n"
    "	pushq %r14\n"
    "	pushq %r15\n"
    "	movq %rsp, 0(%rdi)\n"
    "	xorl %eax, %eax\n"
    "	rdsspq %rax\n"
    "	subq $8, %rax\n"
    "	movq %rax, 8(%rdi)\n"
    "	movq 8(%rsi), %rax\n"
    "	rstorssp (%rax)\n"
    "	saveprevssp\n"
    "	movq 0(%rsi), %rsp\n"
    "	movq 16(%rsi), %rax\n"
    "	testq %rax, %rax\n"
    "	jnz 1f\n"
    "	popq %r15\n"
    "	popq %r14\n"
    "	popq %r13\n"
    "	popq %r12\n"
    "	popq %rbx\n"
    "	popq %rbp\n"
    "	ret\n"
    "1:	movq $0, 16(%rsi)\n"
    "	movq 24(%rsi), %rdi\n"
    "	jmp *%rax\n"
    ".size cet_fiber_switch, .-cet_fiber_switch\n");

/*
 * A new fiber: its shadow stack from map_shadow_stack with a restore token
 * at the top, an ordinary stack, and @entry(@arg) as its first frame (the
 * entry must never return).  0, or -1 with errno.
 */
static inline int cet_fiber_init(struct cet_fiber *f, unsigned long ss_size, unsigned long stack_size,
				 void (*entry)(unsigned long), unsigned long arg, unsigned long *ss_base)
{
	unsigned long *ss = cet_map_shadow_stack(0, ss_size, SHADOW_STACK_SET_TOKEN);
	char *stack;

	if (ss == MAP_FAILED)
		return -1;
	stack = mmap(NULL, stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (stack == MAP_FAILED)
		return -1;
	*ss_base = (unsigned long)ss;
	f->token = *ss_base + ss_size - 8;
	/* as if called: the entry sees rsp + 8 16-byte aligned */
	f->rsp = (((unsigned long)stack + stack_size) & ~15UL) - 8;
	f->entry = (unsigned long)entry;
	f->arg = arg;
	return 0;
}
#endif /* CET_FIBERS */

#ifdef CET_CLONE_FILTER
#include <stddef.h>
#include <sys/prctl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#ifndef __NR_clone3
#define __NR_clone3 435
#endif
#ifndef SECCOMP_FILTER_FLAG_TSYNC_ESRCH
#define SECCOMP_FILTER_FLAG_TSYNC_ESRCH (1UL << 4)
#endif

/*
 * A seccomp filter for every thread of the process: clone gets
 * @clone_action, clone3 ENOSYS (so that libc falls back to clone), the rest
 * is allowed.  @flags are added to SECCOMP_FILTER_FLAG_TSYNC.  What
 * seccomp() answers (a listener fd with SECCOMP_FILTER_FLAG_NEW_LISTENER),
 * or -1 with errno.
 */
static inline int cet_filter_clone(unsigned int clone_action, unsigned long flags)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, clone_action),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(code) / sizeof(code[0]), .filter = code };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC | flags, &prog);
}
#endif /* CET_CLONE_FILTER */

/*
 * The calling thread's whole lock mask.  /proc names the SHSTK and WRSS
 * bits; for the others the kernel answers ARCH_SHSTK_ENABLE of a single
 * bit with -EPERM when it is locked and -EINVAL otherwise, changing
 * nothing.  ~0UL when a bit answers anything else.
 */
static inline unsigned long cet_lock_mask(void)
{
	unsigned long mask = 0;
	char named[64] = "";
	int bit;

	cet_proc_status_field("/proc/thread-self/status", "x86_Thread_features_locked", named, sizeof(named));
	if (strstr(named, "shstk"))
		mask |= ARCH_SHSTK_SHSTK;
	if (strstr(named, "wrss"))
		mask |= ARCH_SHSTK_WRSS;
	for (bit = CET_FIRST_PROBED_BIT; bit < 64; bit++) {
		long ret = cet_arch_prctl(ARCH_SHSTK_ENABLE, 1UL << bit);

		if (ret == -EPERM)
			mask |= 1UL << bit;
		else if (ret != -EINVAL)
			return ~0UL;
	}
	return mask;
}

/* A field of /proc/@pid/status, as cet_proc_status_field() */
static inline int cet_pid_status_field(pid_t pid, const char *field, char *buf, size_t len)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	return cet_proc_status_field(path, field, buf, len);
}

/* Shadow-stack mappings of the process: VMAs whose smaps VmFlags have "ss" */
#define CET_MAX_SS 1100	/* many_threads: 1000 threads and main */
struct cet_ss_maps {
	int nr;
	unsigned long start[CET_MAX_SS], end[CET_MAX_SS];
};

static inline int cet_ss_maps(struct cet_ss_maps *m)
{
	char line[512], perms[8];
	unsigned long start = 0, end = 0, s, e;
	FILE *f = fopen("/proc/self/smaps", "r");

	m->nr = 0;
	if (!f) {
		pr_perror("open /proc/self/smaps");
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		/* a VMA header; "FilePmdMapped:" would half-match: assign only on a full match */
		if (sscanf(line, "%lx-%lx %7s", &s, &e, perms) == 3) {
			start = s;
			end = e;
			continue;
		}
		if (strncmp(line, "VmFlags:", 8) || !strstr(line, " ss"))
			continue;
		if (m->nr == CET_MAX_SS)
			break;
		m->start[m->nr] = start;
		m->end[m->nr] = end;
		m->nr++;
	}
	fclose(f);
	return 0;
}

/* The ss mapping that holds @addr: its index in @m, -1 if none */
static inline int cet_ss_find(const struct cet_ss_maps *m, unsigned long addr)
{
	int i;

	for (i = 0; i < m->nr; i++)
		if (addr >= m->start[i] && addr < m->end[i])
			return i;
	return -1;
}

static inline int cet_ss_maps_cmp(const struct cet_ss_maps *a, const struct cet_ss_maps *b, const char *who)
{
	int i;

	if (a->nr != b->nr) {
		fail("%s: %d shadow-stack mappings before the dump, %d after", who, a->nr, b->nr);
		return 1;
	}
	for (i = 0; i < a->nr; i++) {
		if (a->start[i] != b->start[i] || a->end[i] != b->end[i]) {
			fail("%s: ss mapping %lx-%lx became %lx-%lx", who, a->start[i], a->end[i], b->start[i],
			     b->end[i]);
			return 1;
		}
	}
	return 0;
}

/*
 * What one thread can see of its own CET state.  cet_thread_state() must be
 * called from the same frame before and after the checkpoint: it records the
 * SSP of its own frame, one entry below the caller's.
 */
struct cet_thread_state {
	unsigned long status;	/* ARCH_SHSTK_STATUS */
	char features[64];	/* x86_Thread_features */
	char locked[64];	/* x86_Thread_features_locked */
	unsigned long ssp;
	unsigned long ss_start, ss_end; /* the ss mapping holding ssp */
	unsigned long depth;		/* used entries above ssp: (ss_end - ssp) / 8 */
};

/*
 * The state without the smaps walk (ss_start, ss_end and depth stay 0):
 * inline, the SSP is the caller's.
 */
static CET_INLINE void cet_thread_state_own(struct cet_thread_state *s)
{
	memset(s, 0, sizeof(*s));
	s->ssp = cet_rdssp();
	s->status = cet_status();
	/* a kernel without user shadow stacks has neither field: they stay "" */
	cet_proc_status_field("/proc/thread-self/status", "x86_Thread_features", s->features, sizeof(s->features));
	cet_proc_status_field("/proc/thread-self/status", "x86_Thread_features_locked", s->locked,
			      sizeof(s->locked));
}

static CET_NOINLINE __attribute__((unused)) int cet_thread_state(struct cet_thread_state *s)
{
	struct cet_ss_maps m;
	int i;

	cet_thread_state_own(s);
	if (cet_ss_maps(&m))
		return -1;
	i = cet_ss_find(&m, s->ssp);
	if (i >= 0) {
		s->ss_start = m.start[i];
		s->ss_end = m.end[i];
		s->depth = (s->ss_end - s->ssp) / 8;
	}
	return 0;
}

static inline int cet_thread_state_cmp(const struct cet_thread_state *a, const struct cet_thread_state *b,
				       const char *who)
{
	int bad = 0;

	if (a->status != b->status)
		bad |= fail("%s: ARCH_SHSTK_STATUS %#lx before the dump, %#lx after", who, a->status, b->status);
	if (strcmp(a->features, b->features))
		bad |= fail("%s: x86_Thread_features '%s' became '%s'", who, a->features, b->features);
	if (strcmp(a->locked, b->locked))
		bad |= fail("%s: x86_Thread_features_locked '%s' became '%s'", who, a->locked, b->locked);
	if (a->ssp != b->ssp)
		bad |= fail("%s: SSP %#lx before the dump, %#lx after", who, a->ssp, b->ssp);
	if (a->ss_start != b->ss_start || a->ss_end != b->ss_end)
		bad |= fail("%s: the shadow stack %lx-%lx became %lx-%lx", who, a->ss_start, a->ss_end, b->ss_start,
			    b->ss_end);
	if (a->depth != b->depth)
		bad |= fail("%s: shadow-stack depth %lu became %lu", who, a->depth, b->depth);
	return bad;
}

/* Expect a given state; @want_features is the x86_Thread_features text */
static inline int cet_thread_state_expect(const struct cet_thread_state *s, unsigned long want_status,
					  const char *want_features, const char *want_locked, const char *who)
{
	int bad = 0;

	if (s->status != want_status)
		bad |= fail("%s: ARCH_SHSTK_STATUS %#lx, expected %#lx", who, s->status, want_status);
	if (strcmp(s->features, want_features))
		bad |= fail("%s: x86_Thread_features '%s', expected '%s'", who, s->features, want_features);
	if (strcmp(s->locked, want_locked))
		bad |= fail("%s: x86_Thread_features_locked '%s', expected '%s'", who, s->locked, want_locked);
	if (want_status != ~0UL && (want_status & ARCH_SHSTK_SHSTK)) {
		if (!s->ssp || !s->ss_end)
			bad |= fail("%s: SSP %#lx is not in a shadow-stack mapping", who, s->ssp);
	} else if (s->ssp) {
		bad |= fail("%s: SSP %#lx with the shadow stack off", who, s->ssp);
	}
	return bad;
}

/* The usual expectation: the shadow stack on, WRSS off, nothing locked */
static inline int cet_expect_shstk(const struct cet_thread_state *s, const char *who)
{
	return cet_thread_state_expect(s, ARCH_SHSTK_SHSTK, "shstk", "", who);
}

/* A thread's CET state and the process's ss mappings, recorded together */
struct cet_snap {
	struct cet_thread_state st;
	struct cet_ss_maps maps;
};

/* Like cet_thread_state(), from the same frame before and after: -1 on error */
static CET_NOINLINE __attribute__((unused)) int cet_snap(struct cet_snap *s)
{
	if (cet_thread_state(&s->st) || cet_ss_maps(&s->maps))
		return -1;
	return 0;
}

/* @who names the thread, @maps_who the process in failure messages */
static inline int cet_snap_cmp(const struct cet_snap *a, const struct cet_snap *b, const char *who,
			       const char *maps_who)
{
	int bad = 0;

	bad |= cet_thread_state_cmp(&a->st, &b->st, who);
	bad |= cet_ss_maps_cmp(&a->maps, &b->maps, maps_who);
	return bad;
}

/*
 * The checkpoint as the thread that waits for it sees it (cet_checkpoint()):
 * its state and the ss mappings recorded in @before, check(restored = 0,
 * "before the dump"), test_daemon() and test_waitsig(), the state recorded
 * again in @after from the same frame and compared, then check(restored =
 * 1, "after restore").  check() (may be NULL) returns the bad bits of what
 * it checked, or -1 before the dump to give up before test_daemon().
 */
struct cet_ckpt {
	const char *who;	/* the thread in failure messages ("main") */
	const char *maps_who;	/* its process ("process" if NULL) */
	int (*check)(struct cet_ckpt *c, int restored, const char *when);
	struct cet_snap before, after;
};

static CET_NOINLINE __attribute__((unused)) int cet_checkpoint(struct cet_ckpt *c)
{
	int bad = 0, ret;

	if (cet_snap(&c->before))
		return 1;
	if (c->check) {
		ret = c->check(c, 0, "before the dump");
		if (ret < 0)
			return 1;
		bad |= ret;
	}

	test_daemon();
	test_waitsig();

	if (cet_snap(&c->after))
		return 1;
	bad |= cet_snap_cmp(&c->before, &c->after, c->who, c->maps_who ? c->maps_who : "process");
	if (c->check)
		bad |= c->check(c, 1, "after restore");
	return bad;
}

/*
 * WRSS on, and an extra shadow stack of @size (no token) whose words WRSS
 * writes with @pattern(i): NULL, the failure reported, if a step fails
 */
static inline unsigned long *cet_wrss_stack(unsigned long size, unsigned long (*pattern)(unsigned long i))
{
	long ret = cet_arch_prctl(ARCH_SHSTK_ENABLE, ARCH_SHSTK_WRSS);
	unsigned long *ss, i;

	if (ret) {
		fail("ARCH_SHSTK_ENABLE WRSS: %ld", ret);
		return NULL;
	}
	ss = cet_map_shadow_stack(0, size, 0);
	if (ss == MAP_FAILED) {
		pr_perror("map_shadow_stack");
		return NULL;
	}
	for (i = 0; i < size / 8; i++)
		cet_wrss(&ss[i], pattern(i));
	return ss;
}

/*
 * A child's checkpoint when the test process is the one ZDTM talks to: @sig
 * blocked but in sigsuspend(), the state recorded and the shadow stack
 * expected on, a byte to the test on @ready_fd (closed then), a wait until
 * @sig's handler sets *@go, the state recorded again and compared.
 */
static CET_NOINLINE __attribute__((unused)) int cet_child_checkpoint(int ready_fd, int sig, volatile sig_atomic_t *go,
								     const char *who)
{
	struct cet_thread_state b, a;
	sigset_t block, wait;
	int bad = 0;

	sigemptyset(&block);
	sigaddset(&block, sig);
	sigprocmask(SIG_BLOCK, &block, &wait);
	sigdelset(&wait, sig);

	if (cet_thread_state(&b))
		return 1;
	bad |= cet_expect_shstk(&b, who);
	if (write(ready_fd, "r", 1) != 1)
		return pr_perror("ready pipe");
	close(ready_fd);
	while (!*go)
		sigsuspend(&wait);
	if (cet_thread_state(&a))
		return 1;
	bad |= cet_thread_state_cmp(&b, &a, who);
	return bad;
}

/* The restore token of a shadow stack, at @addr, is intact */
static inline int cet_check_token(unsigned long addr, const char *who)
{
	unsigned long val = *(volatile unsigned long *)addr;

	if (val != cet_token_at(addr))
		return fail("%s: restore token at %#lx holds %#lx, expected %#lx", who, addr, val, cet_token_at(addr));
	return 0;
}

/* Wait for a child of the test; 0 if it exited with 0 */
static inline int cet_wait_child(pid_t pid, const char *what)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return pr_perror("waitpid %s %d", what, pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fail("%s %d ended with status %#x%s", what, pid, status,
		     WIFSIGNALED(status) ? " (killed by a signal)" : "");
		return 1;
	}
	return 0;
}

/*
 * A recursion that leaves one shadow-stack entry per frame and checks every
 * frame on the way back: its SSP (recorded on the way down) and a value it
 * keeps in its regular-stack frame.  bottom() runs at the deepest frame; that
 * is where the tests wait to be checkpointed.
 */
struct cet_rec {
	int max;			/* frames below the first call */
	unsigned long *ssp_at;		/* SSP of each frame, recorded on the way down */
	int (*bottom)(struct cet_rec *r);
	void *arg;
	int bad_frames;			/* frames whose SSP or local changed */
	int first_bad;
	unsigned long first_bad_ssp;
};

static inline unsigned long cet_rec_mix(unsigned long depth)
{
	return depth * 0x9e3779b97f4a7c15UL ^ (depth << 7);
}

static CET_NOINLINE __attribute__((unused)) unsigned long cet_rec_frame(struct cet_rec *r, int depth)
{
	volatile unsigned long mine = cet_rec_mix(depth);
	unsigned long below, ssp;

	r->ssp_at[depth] = cet_rdssp();
	if (depth == r->max)
		below = r->bottom(r) ? 1 : 0;
	else
		below = cet_rec_frame(r, depth + 1);
	ssp = cet_rdssp();
	if (ssp != r->ssp_at[depth] || mine != cet_rec_mix(depth)) {
		if (!r->bad_frames++) {
			r->first_bad = depth;
			r->first_bad_ssp = ssp;
		}
	}
	asm volatile("" : "+r"(below)); /* keep the frame: no tail call, no loop */
	return below * 31 + mine;
}

/* What cet_rec_run() returns when every frame is intact and bottom() passed */
static inline unsigned long cet_rec_expect(int max)
{
	unsigned long v = 0;
	int d;

	for (d = max; d >= 0; d--)
		v = v * 31 + cet_rec_mix(d);
	return v;
}

static inline int cet_rec_init(struct cet_rec *r, int max, int (*bottom)(struct cet_rec *), void *arg)
{
	memset(r, 0, sizeof(*r));
	r->max = max;
	r->bottom = bottom;
	r->arg = arg;
	r->ssp_at = calloc(max + 1, sizeof(unsigned long));
	if (!r->ssp_at) {
		pr_perror("calloc");
		return -1;
	}
	return 0;
}

/* Run the recursion; 0 when it unwound intact with the expected result */
static CET_NOINLINE __attribute__((unused)) int cet_rec_run(struct cet_rec *r, const char *who)
{
	unsigned long got = cet_rec_frame(r, 0);

	if (r->bad_frames) {
		fail("%s: %d of %d frames came back changed, first at depth %d (ssp %#lx, was %#lx)", who,
		     r->bad_frames, r->max + 1, r->first_bad, r->first_bad_ssp, r->ssp_at[r->first_bad]);
		return 1;
	}
	if (got != cet_rec_expect(r->max)) {
		fail("%s: recursion result %#lx, expected %#lx (bottom check failed?)", who, got,
		     cet_rec_expect(r->max));
		return 1;
	}
	if (r->max > 0 && r->ssp_at[0] && r->ssp_at[r->max] != r->ssp_at[0] - 8UL * r->max) {
		fail("%s: %d frames took %lu shadow-stack bytes", who, r->max, r->ssp_at[0] - r->ssp_at[r->max]);
		return 1;
	}
	return 0;
}

/*
 * The recursion of @max frames below the first, bottom(r) at the deepest
 * (r->arg is @arg), unwound and checked (cet_rec_run()); 0 when intact
 */
static CET_NOINLINE __attribute__((unused)) int cet_recurse(int max, int (*bottom)(struct cet_rec *), void *arg,
							    const char *who)
{
	struct cet_rec r;

	if (cet_rec_init(&r, max, bottom, arg))
		return 1;
	return cet_rec_run(&r, who);
}

/* A cet_rec bottom that waits there for the checkpoint: r->arg is a cet_ckpt */
static __attribute__((unused)) int cet_rec_checkpoint(struct cet_rec *r)
{
	return cet_checkpoint(r->arg);
}

/* A cet_rec bottom that only turns back: the recursion checks its own frames */
static __attribute__((unused)) int cet_rec_turn(struct cet_rec *r)
{
	return 0;
}

/* pthread_create() with SIGTERM blocked: only the main thread takes it */
static inline int cet_thread_start(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	sigset_t set, old;
	int ret;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	ret = pthread_create(th, attr, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		errno = ret;
		return pr_perror("pthread_create");
	}
	return 0;
}

/* Threads parked until the main thread is done with the checkpoint */
struct cet_park {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int ready, go;
};
#define CET_PARK_INIT { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0 }

/* A thread: count itself in and wait to be released */
static inline void cet_park(struct cet_park *p)
{
	pthread_mutex_lock(&p->lock);
	p->ready++;
	pthread_cond_broadcast(&p->cond);
	while (!p->go)
		pthread_cond_wait(&p->cond, &p->lock);
	pthread_mutex_unlock(&p->lock);
}

/* The main thread: wait until @n threads are parked */
static inline void cet_park_wait(struct cet_park *p, int n)
{
	pthread_mutex_lock(&p->lock);
	while (p->ready < n)
		pthread_cond_wait(&p->cond, &p->lock);
	pthread_mutex_unlock(&p->lock);
}

static inline void cet_park_release(struct cet_park *p)
{
	pthread_mutex_lock(&p->lock);
	p->go = 1;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

/*
 * A worker thread checkpointed mid-recursion: at the bottom of its
 * recursion it records its state, expects want_status/want_features (no
 * locks), parks until released, records its state again and compares.
 * cet_worker_fn() is its thread function; w->bad is the result.
 */
struct cet_worker {
	int idx, depth;
	char who[48];
	pthread_t th;
	struct cet_park *park;
	int (*state)(struct cet_thread_state *s);	/* how it records its state */
	unsigned long want_status;
	const char *want_features;
	struct cet_rec rec;
	struct cet_thread_state before, after;
	int bad;
};

static __attribute__((unused)) int cet_worker_bottom(struct cet_rec *r)
{
	struct cet_worker *w = r->arg;
	int bad = 0;

	if (w->state(&w->before))
		return 1;
	bad |= cet_thread_state_expect(&w->before, w->want_status, w->want_features, "", w->who);
	cet_park(w->park);
	if (w->state(&w->after))
		return 1;
	bad |= cet_thread_state_cmp(&w->before, &w->after, w->who);
	return bad;
}

/* "thread @idx", the shadow stack on, cet_thread_state(); -1 on error */
static inline int cet_worker_init(struct cet_worker *w, int idx, int depth, struct cet_park *park)
{
	w->idx = idx;
	w->depth = depth;
	snprintf(w->who, sizeof(w->who), "thread %d", idx);
	w->park = park;
	w->state = cet_thread_state;
	w->want_status = ARCH_SHSTK_SHSTK;
	w->want_features = "shstk";
	return cet_rec_init(&w->rec, depth, cet_worker_bottom, w);
}

static __attribute__((unused)) void *cet_worker_fn(void *arg)
{
	struct cet_worker *w = arg;

	w->bad = cet_rec_run(&w->rec, w->who);
	return NULL;
}

/* Release the parked workers, join them: the bad bits of all of them */
static inline int cet_workers_finish(struct cet_park *park, struct cet_worker *w, int n)
{
	int i, bad = 0;

	cet_park_release(park);
	for (i = 0; i < n; i++) {
		pthread_join(w[i].th, NULL);
		bad |= w[i].bad;
	}
	return bad;
}

/*
 * The tests in glibc/ are linked against a CET-enabled glibc (2.39+, built
 * with --enable-cet) and run with GLIBC_TUNABLES=glibc.cpu.hwcaps=SHSTK:
 * the loader turns the shadow stack on and locks it with
 * ARCH_SHSTK_LOCK(-1) before main() (sysdeps/unix/sysv/linux/x86_64/
 * dl-cet.h).  Their main() only checks that it did, and may return.
 */
static inline int cet_glibc_expect_shstk(const char *who)
{
	unsigned long status = cet_status(), mask = cet_lock_mask();

	if (status == ARCH_SHSTK_SHSTK && mask == ~0UL)
		return 0;
	return fail("%s: glibc left the shadow stack at status %#lx, lock mask %#lx; want shstk, all locked "
		    "(a CET glibc, every object SHSTK-marked, GLIBC_TUNABLES=glibc.cpu.hwcaps=SHSTK?)",
		    who, status, mask);
}

/* A thread's recorded state as glibc leaves it: shadow stack on, all locked */
static inline int cet_expect_glibc_shstk(const struct cet_thread_state *s, const char *who)
{
	return cet_thread_state_expect(s, ARCH_SHSTK_SHSTK, "shstk", "shstk wrss", who);
}

/*
 * A cet_ckpt check for glibc's tests: the recorded state and the whole lock
 * mask are glibc's, before the dump and after restore.
 */
static __attribute__((unused)) int cet_glibc_check(struct cet_ckpt *c, int restored, const char *when)
{
	return cet_expect_glibc_shstk(restored ? &c->after.st : &c->before.st, when) |
	       cet_glibc_expect_shstk(when);
}

#define CET_GLIBC_TEST_MAIN(run)					\
	int main(int argc, char **argv)					\
	{								\
		test_init(argc, argv);					\
		if (cet_glibc_expect_shstk("main"))			\
			return 1;					\
		return run();						\
	}

#endif /* ZDTM_CET_LIB_H */
