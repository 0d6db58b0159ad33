/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the ZDTM CET (x86 user shadow stack) tests.
 *
 * Header-only on purpose: the directory is meant to be dropped into CRIU's
 * test/zdtm/ and built by its Makefile.inc with no change to lib/.
 *
 * Rules every test follows (glibc 2.36 has no shadow-stack support):
 *  - the shadow stack is enabled with an inline syscall (cet_enable_shstk(),
 *    from criu-cet's cet-abi.h) from main() after test_init(), and main()
 *    never returns (it ends in exit()):
 *    the frames below the enabling one have no shadow-stack entries;
 *  - state is recorded at a point before the checkpoint and read again at the
 *    same point (same frame) after restore, so SSPs must be equal.
 */
#ifndef ZDTM_CET_LIB_H
#define ZDTM_CET_LIB_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "zdtmtst.h"
/* the ABI and its inline helpers, shared with criu-cet (CET_ABI_DIR) */
#include "cet-abi.h"

#define CET_NOINLINE __attribute__((noinline))

/*
 * main() of a shadow-stack test: ZDTM's set-up, the shadow stack on, run(),
 * exit.  The shadow stack is turned on in main's own frame, which never
 * returns: no frame older than the shadow stack is ever returned to.
 */
#define CET_TEST_MAIN(run)						\
	int main(int argc, char **argv)					\
	{								\
		long ret;						\
									\
		test_init(argc, argv);					\
		ret = cet_enable_shstk();					\
		if (ret) {						\
			pr_err("ARCH_SHSTK_ENABLE: %ld\n", ret);	\
			exit(1);					\
		}							\
		exit(run());						\
	}

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

static CET_NOINLINE __attribute__((unused)) int cet_thread_state(struct cet_thread_state *s)
{
	struct cet_ss_maps m;
	int i;

	memset(s, 0, sizeof(*s));
	s->ssp = cet_rdssp();
	s->status = cet_status();
	/* a kernel without user shadow stacks has neither field: they stay "" */
	cet_proc_status_field("/proc/thread-self/status", "x86_Thread_features", s->features, sizeof(s->features));
	cet_proc_status_field("/proc/thread-self/status", "x86_Thread_features_locked", s->locked, sizeof(s->locked));
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

#endif /* ZDTM_CET_LIB_H */
