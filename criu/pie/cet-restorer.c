// SPDX-License-Identifier: GPL-2.0
/*
 * criu-cet, restorer side: the out-of-line steps of cet_restore_thread()
 * (see cet-restorer.h for the order and why parts of it must be inline).
 */
#include <linux/types.h>
#include <sys/mman.h>

#include "common/compiler.h"
#include "common/err.h"
#include "common/lock.h"
#include "common/page.h"
#include <compel/plugins/std/syscall.h>

#undef LOG_PREFIX
#define LOG_PREFIX "cet: "
#include "log.h"
#include "cet-restorer.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE	0x100000
#endif
#ifndef MAP_ABOVE4G
#define MAP_ABOVE4G		0x80
#endif
#ifndef MREMAP_MAYMOVE
#define MREMAP_MAYMOVE		1
#define MREMAP_FIXED		2
#endif
#define CET_RLIMIT_STACK	3
#define CET_PME_PRESENT		(1ULL << 63)
#define CET_PME_SWAP		(1ULL << 62)
#define CET_PAGEMAP_BATCH	64
#define CET_PLACE_TRIES		8
/* where the walk over self/maps starts filling: vm.mmap_min_addr's usual value */
#define CET_LOWEST_MAP_ADDR	0x10000UL

struct cet_rlimit64 {
	u64 cur;
	u64 max;
};

static long cet_prlimit_stack(const struct cet_rlimit64 *new, struct cet_rlimit64 *old)
{
	register long r10 asm("r10") = (long)old;
	long ret;

	asm volatile("syscall"
		     : "=a"(ret)
		     : "a"(__NR_prlimit64), "D"(0), "S"(CET_RLIMIT_STACK), "d"(new), "r"(r10)
		     : "rcx", "r11", "memory");
	return ret;
}

static struct cet_rst_stack *own_stack(struct cet_rst_thread *t)
{
	return &t->proc->stacks[t->own];
}

static int set_features(struct cet_rst_thread *t)
{
	long ret = 0;

	if (t->wrss_on && !(t->features & ARCH_SHSTK_WRSS))
		ret = sys_arch_prctl(ARCH_SHSTK_DISABLE, ARCH_SHSTK_WRSS);
	if (ret) {
		pr_err("%ld: cannot turn WRSS back off: %ld\n", sys_gettid(), ret);
		return -1;
	}
	/* the whole mask as dumped: glibc's ARCH_SHSTK_LOCK(-1) comes back as -1 */
	if (t->locked)
		ret = sys_arch_prctl(ARCH_SHSTK_LOCK, t->locked);
	if (ret) {
		pr_err("%ld: cannot lock features %llx: %ld\n", sys_gettid(),
		       (unsigned long long)t->locked, ret);
		return -1;
	}
	return 0;
}

/* Fill [start, end) for the moment; -1 only when the table is full. */
static int add_filler(struct cet_rst_proc *p, unsigned long start, unsigned long end)
{
	void *addr;

	if (start >= end)
		return 0;
	if (p->nr_fillers >= p->max_fillers) {
		pr_err("more than %u gaps to fill\n", p->max_fillers);
		return -1;
	}
	addr = (void *)sys_mmap((void *)start, end - start, PROT_NONE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
	if ((unsigned long)addr != start) {
		/* A gap we could not fill is caught by the placement check. */
		if (!IS_ERR_VALUE((unsigned long)addr))
			sys_munmap(addr, end - start);
		return 0;
	}
	p->fillers[p->nr_fillers].start = start;
	p->fillers[p->nr_fillers].end = end;
	p->nr_fillers++;
	return 0;
}

static void drop_fillers(struct cet_rst_proc *p)
{
	struct cet_range *f;

	while (p->nr_fillers) {
		f = &p->fillers[--p->nr_fillers];
		sys_munmap((void *)f->start, f->end - f->start);
	}
	p->fillers_up = 0;
}

/*
 * A stack's range while it waits to be made, held by a mapping of our own
 * so that nothing else lands there: for a stack the kernel is to place,
 * with the page below it, which the kernel wants free (the shadow stack's
 * guard gap).
 */
static unsigned long hold_start(const struct cet_rst_stack *s)
{
	return s->owner >= 0 ? s->start - PAGE_SIZE : s->start;
}

static int hold_stack(struct cet_rst_stack *s)
{
	unsigned long lo = hold_start(s);
	long ret = sys_mmap((void *)lo, s->end - lo, PROT_NONE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);

	if (ret != (long)lo) {
		pr_err("shadow stack range %llx-%llx%s is not free: %ld\n", (unsigned long long)s->start,
		       (unsigned long long)s->end, s->owner >= 0 ? " (and the page below)" : "", ret);
		if (!IS_ERR_VALUE(ret))
			sys_munmap((void *)ret, s->end - lo);
		return -1;
	}
	s->held = 1;
	return 0;
}

static void release_stack(struct cet_rst_stack *s)
{
	if (!s->held)
		return;
	sys_munmap((void *)hold_start(s), s->end - hold_start(s));
	s->held = 0;
}

struct maps_walk {
	struct cet_rst_proc *p;
	unsigned long prev_end;
	int full;		/* the filler table ran out */
};

static void walk_vma(struct maps_walk *w, unsigned long start, unsigned long end)
{
	if (start > w->p->task_size)
		start = w->p->task_size;
	if (start > w->prev_end)
		w->full |= add_filler(w->p, w->prev_end, start);
	if (end > w->prev_end)
		w->prev_end = end;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/*
 * Fill every gap of the address space, once for the process: with the
 * stacks' ranges held, a stack's range released is then the only free
 * place above 4 GiB, which is where the kernel looks for a new shadow
 * stack (steer_to_range() says why and catches what this pass misses).
 * One pass over self/maps serves every thread.
 */
static int fill_gaps(struct cet_rst_thread *t)
{
	struct maps_walk w = { .p = t->proc, .prev_end = CET_LOWEST_MAP_ADDR };
	unsigned long field[2] = { 0, 0 };
	int fd, nf = 0, skip = 0;
	char buf[512];
	long n, i;

	fd = sys_openat(t->proc_fd, "self/maps", O_RDONLY, 0);
	if (fd < 0) {
		pr_err("cannot open self/maps: %d\n", fd);
		return -1;
	}
	while ((n = sys_read(fd, buf, sizeof(buf))) > 0) {
		for (i = 0; i < n; i++) {
			char c = buf[i];

			if (c == '\n') {
				walk_vma(&w, field[0], field[1]);
				field[0] = field[1] = 0;
				nf = skip = 0;
			} else if (skip) {
				continue;
			} else if (c == '-' && nf == 0) {
				nf = 1;
			} else if (hexval(c) >= 0) {
				field[nf] = field[nf] * 16 + hexval(c);
			} else {
				skip = 1;
			}
		}
	}
	sys_close(fd);
	if (n < 0) {
		pr_err("cannot read self/maps: %ld\n", n);
		return -1;
	}
	walk_vma(&w, w.p->task_size, w.p->task_size);
	w.p->fillers_up = 1;
	return w.full ? -1 : 0;
}

/*
 * Where ARCH_SHSTK_ENABLE would put a new stack of @len bytes now, asked of
 * the kernel: map_shadow_stack() with no address and no token goes through
 * the same alloc_shstk() as shstk_setup() (arch/x86/kernel/shstk.c), a
 * do_mmap() of the same length with MAP_ABOVE4G and VM_SHADOW_STACK, so it
 * takes the same search and gets the same answer from the same mappings.
 * A filter of criu's own may refuse the call (seccomp's EPERM or ENOSYS):
 * then an ordinary mapping of the length above 4 GiB stands in, which the
 * search treats alike but for the guard page; in the only gap we leave it
 * lands where the shadow stack would, or one page lower where the kernel
 * would go bottom-up, which is all steer_to_range() needs.  An ordinary
 * mapping without MAP_ABOVE4G is no stand-in: top-down it may take a gap
 * below 4 GiB (one under CET_LOWEST_MAP_ADDR is never filled), and
 * told so, we would let ARCH_SHSTK_ENABLE fall back bottom-up onto the
 * guard page.
 */
static long probe_place(unsigned long len)
{
	long at = sys_map_shadow_stack(0, len, 0);

	if (at == -EPERM || at == -ENOSYS)
		at = sys_mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_ABOVE4G, -1, 0);
	if (IS_ERR_VALUE(at))
		return at;
	sys_munmap((void *)at, len);
	return at;
}

/*
 * Make the range of @s, released with its guard page below, the one place
 * where ARCH_SHSTK_ENABLE puts the thread's stack.  The kernel's rule
 * (mm/mmap.c, arch/x86/kernel/sys_x86_64.c): top-down first, in
 * [4 GiB, mmap_base) (criu's mmap_base, not the dumped task's), below the
 * start gap of the mapping above (vm_start_gap(): a shadow stack's page, a
 * VM_GROWSDOWN stack's stack_guard_gap) and with the guard page below the
 * stack free (stack_guard_placement()), at the top of the highest gap that
 * fits; failing that, arch_get_unmapped_area_topdown() falls back
 * bottom-up from mmap_legacy_base, with no vm_flags and so no guard page,
 * at the bottom of the lowest gap that fits.  Top-down, our range (exactly
 * the stack and its guard page) fits only when neither mmap_base nor the
 * start gap of the mapping above cuts into it: the stack lands on its
 * start.  Otherwise it lands bottom-up on the guard page, which we then
 * fill so that the lowest fitting address is the start.  Any other answer
 * is a gap we did not fill (the fill failed, or a mapping went away
 * since): we fill the part of it the stack would take and ask again.
 * Nothing else maps in the process meanwhile: we hold its lock, and the
 * search depends only on the mappings and the mm's bases, so
 * ARCH_SHSTK_ENABLE right after the last answer gets it too.
 */
static int steer_to_range(struct cet_rst_proc *p, struct cet_rst_stack *s)
{
	unsigned long len = s->end - s->start, lo = hold_start(s), from, to;
	long at = 0;
	int i;

	for (i = 0; i < CET_PLACE_TRIES; i++) {
		at = probe_place(len);
		if (at == (long)s->start)
			return 0;
		if (IS_ERR_VALUE(at))
			break;
		if ((unsigned long)at + len <= lo || (unsigned long)at >= s->end) {
			from = at;		/* a gap elsewhere */
			to = at + len;
		} else if ((unsigned long)at < lo) {
			from = at;		/* the gap goes on below our range */
			to = lo;
		} else if ((unsigned long)at + len > s->end) {
			from = s->end;		/* ... or above it */
			to = at + len;
		} else {
			from = lo;		/* bottom-up: the guard page */
			to = s->start;
		}
		pr_info("a shadow stack of %lx bytes would go to %lx, not %llx: filling %lx-%lx\n", len, at,
			(unsigned long long)s->start, from, to);
		if (add_filler(p, from, to))
			return -1;
	}
	pr_err("%ld: cannot steer the shadow stack onto %llx-%llx: the kernel would put it at %lx\n",
	       sys_gettid(), (unsigned long long)s->start, (unsigned long long)s->end, at);
	return -1;
}

/*
 * RLIMIT_STACK as it was while a thread's stack is placed: saved by
 * cet_rst_place_begin(), put back by place_done().  One for the process,
 * used only by the thread holding proc->lock.
 */
static struct cet_rlimit64 saved_rlim_stack;

/*
 * The placement of a thread's stack is over (@placed: where the dump had
 * it, or a fresh stack made): the one place the fillers go.  They serve
 * every stack the kernel has still to place, so they stay until the last
 * one is placed; a placement that failed ends the whole process, so they
 * go then too.  RLIMIT_STACK goes back and proc->lock is released.
 */
static int place_done(struct cet_rst_thread *t, bool placed)
{
	struct cet_rst_proc *p = t->proc;
	int ret = 0;

	if (placed && t->own >= 0 && p->unplaced)
		p->unplaced--;
	if (!placed || !p->unplaced)
		drop_fillers(p);
	if (cet_prlimit_stack(&saved_rlim_stack, NULL)) {
		pr_err("cannot put RLIMIT_STACK back\n");
		ret = -1;
	}
	mutex_unlock(&p->lock);
	return ret;
}

/*
 * Called with shadow stacks still off: anything goes, no return is special.
 * A thread whose owned stack the dump could not tell gets a new one,
 * wherever the kernel likes but on the held ranges: the gaps are opened.
 * On success it returns with proc->lock held and RLIMIT_STACK raised to
 * the stack's size, so that nothing maps and the kernel sizes the stack
 * as dumped until ARCH_SHSTK_ENABLE (in cet_restore_thread()) has run;
 * cet_rst_place_end() hands both back through place_done().  On failure
 * it gives both back itself, through place_done() too.
 */
int cet_rst_place_begin(struct cet_rst_thread *t)
{
	struct cet_rst_stack *s = t->own >= 0 ? own_stack(t) : NULL;
	struct cet_rlimit64 want;
	long ret;

	mutex_lock(&t->proc->lock);
	ret = cet_prlimit_stack(NULL, &saved_rlim_stack);
	if (ret) {
		/* nothing changed yet; the failure ends the process, fillers and all */
		pr_err("cannot read RLIMIT_STACK: %ld\n", ret);
		mutex_unlock(&t->proc->lock);
		return -1;
	}
	/* a fresh stack goes wherever the kernel likes: open the gaps first */
	if (!s)
		drop_fillers(t->proc);
	else if (!t->proc->fillers_up && fill_gaps(t))
		goto fail;
	/* ARCH_SHSTK_ENABLE sizes the new stack from RLIMIT_STACK */
	want.cur = s ? s->end - s->start : CET_FRESH_STACK_SIZE;
	want.max = saved_rlim_stack.max;
	if (want.max != ~0ULL && want.max < want.cur)
		want.max = want.cur;
	ret = cet_prlimit_stack(&want, NULL);
	if (ret) {
		pr_err("cannot raise RLIMIT_STACK to %llx: %ld\n", (unsigned long long)want.cur, ret);
		goto fail;
	}
	if (!s)
		return 0;
	release_stack(s);
	if (steer_to_range(t->proc, s))
		goto fail;
	return 0;
fail:
	place_done(t, false);
	return -1;
}

int cet_rst_place_end(struct cet_rst_thread *t, long enable_ret, unsigned long ssp)
{
	struct cet_rst_stack *s = t->own >= 0 ? own_stack(t) : NULL;
	bool placed = !enable_ret && (!s || ssp == s->end);
	u32 i;

	if (enable_ret)
		pr_err("%ld: ARCH_SHSTK_ENABLE failed: %ld\n", sys_gettid(), enable_ret);
	if (!placed && !enable_ret) {
		/* the reason first: log readers show the first error lines */
		pr_err("%ld: the kernel put the shadow stack at top %lx, not %llx; the gaps were filled so:\n",
		       sys_gettid(), ssp, (unsigned long long)s->end);
		for (i = 0; i < t->proc->nr_fillers; i++)
			pr_info("filler %llx-%llx\n", (unsigned long long)t->proc->fillers[i].start,
				(unsigned long long)t->proc->fillers[i].end);
	}
	if (place_done(t, placed) || !placed)
		return -1;
	if (s)
		pr_info("%ld: shadow stack %llx-%llx is back, kernel-owned\n", sys_gettid(),
			(unsigned long long)s->start, (unsigned long long)s->end);
	else
		pr_info("%ld: a new kernel-owned shadow stack below %lx; the dumped ones are not the kernel's\n",
			sys_gettid(), ssp);
	return 0;
}

static int hold_stacks(struct cet_rst_proc *p)
{
	u32 i;

	for (i = 0; i < p->nr_stacks; i++) {
		if (hold_stack(&p->stacks[i]))
			return -1;
		if (p->stacks[i].owner >= 0)
			p->unplaced++;
	}
	return 0;
}

/*
 * Move every shadow stack's pages out of the way, into one reservation
 * taken while all their ranges are still occupied (so it overlaps none of
 * them): their ranges must be free for the shadow stacks to be made there.
 * Then hold the ranges until each stack is made.  The first thread to get
 * here does it for the process.
 */
int cet_rst_set_aside(struct cet_rst_thread *t)
{
	struct cet_rst_proc *p = t->proc;
	unsigned long len = 0, off = 0;
	long ret = 0;
	u32 i;

	mutex_lock(&p->lock);
	if (p->moved_aside || !p->nr_stacks)
		goto out;
	for (i = 0; i < p->nr_stacks; i++)
		len += p->stacks[i].end - p->stacks[i].start;
	ret = sys_mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (IS_ERR_VALUE(ret)) {
		pr_err("cannot reserve %lx bytes for the shadow stacks' pages: %ld\n", len, ret);
		goto out;
	}
	p->aside_base = ret;
	p->aside_len = len;
	for (i = 0; i < p->nr_stacks; i++) {
		struct cet_rst_stack *s = &p->stacks[i];
		unsigned long size = s->end - s->start;

		s->aside = p->aside_base + off;
		ret = sys_mremap(s->start, size, size, MREMAP_MAYMOVE | MREMAP_FIXED, s->aside);
		if (ret != (long)s->aside) {
			pr_err("cannot move the pages of %llx-%llx aside: %ld\n", (unsigned long long)s->start,
			       (unsigned long long)s->end, ret);
			ret = -1;
			goto out;
		}
		off += size;
	}
	ret = hold_stacks(p);
out:
	p->moved_aside = 1;
	mutex_unlock(&p->lock);
	return ret ? -1 : 0;
}

/* cet_wrss() with a displacement: no address computed per word */
#define WRSS_AT(a, off, v) asm volatile("wrssq %1, " #off "(%0)" : : "r"(a), "r"(v) : "memory")

/*
 * WRSS stores one word per instruction; eight to a loop turn keep the loop's
 * own instructions from costing more than the stores.  @from is 8-aligned
 * (an SSP or a page), @to a page boundary.
 */
static void write_words(unsigned long from, unsigned long to, const u64 *src)
{
	unsigned long a = from;

	for (; a < to && (a & 63); a += 8, src++)
		WRSS_AT(a, 0, *src);
	for (; a + 64 <= to; a += 64, src += 8) {
		WRSS_AT(a, 0, src[0]);
		WRSS_AT(a, 8, src[1]);
		WRSS_AT(a, 16, src[2]);
		WRSS_AT(a, 24, src[3]);
		WRSS_AT(a, 32, src[4]);
		WRSS_AT(a, 40, src[5]);
		WRSS_AT(a, 48, src[6]);
		WRSS_AT(a, 56, src[7]);
	}
	for (; a < to; a += 8, src++)
		WRSS_AT(a, 0, *src);
}

/*
 * A process where no thread has a shadow stack has no WRSS: its stacks
 * are written through /proc/self/mem, whose writes may store to
 * shadow-stack memory (as ptrace's do).  Callers hold the process lock.
 */
static int write_through_mem(struct cet_rst_thread *t, unsigned long to, const void *src, unsigned long len)
{
	struct cet_rst_proc *p = t->proc;
	long ret;

	if (p->mem_fd < 0) {
		p->mem_fd = sys_openat(t->proc_fd, "self/mem", O_RDWR, 0);
		if (p->mem_fd < 0) {
			pr_err("cannot open self/mem: %d\n", p->mem_fd);
			return -1;
		}
	}
	ret = sys_lseek(p->mem_fd, to, SEEK_SET);
	if (ret != (long)to) {
		pr_err("cannot seek self/mem to %lx: %ld\n", to, ret);
		return -1;
	}
	ret = sys_write(p->mem_fd, src, len);
	if (ret != (long)len) {
		pr_err("cannot write %lx bytes of shadow stack at %lx through self/mem: %ld\n", len, to, ret);
		return -1;
	}
	return 0;
}

/* [from, to) of the shadow stack s, from the pages set aside */
static int copy_range(struct cet_rst_thread *t, struct cet_rst_stack *s, unsigned long from, unsigned long to)
{
	const void *src = (const void *)(s->aside + (from - s->start));

	if (t->wrss_on) {
		write_words(from, to, src);
		return 0;
	}
	return write_through_mem(t, from, src, to - from);
}

/*
 * Copy the pages the task really had (present or swapped out in the
 * pages set aside: CRIU restored only those) at and above @from, in
 * batches of pagemap entries: a sparse 4 GiB stack costs its used pages.
 */
static int copy_pages(struct cet_rst_thread *t, struct cet_rst_stack *s, unsigned long from)
{
	unsigned long pages = (s->end - s->start) / PAGE_SIZE, first = (from - s->start) / PAGE_SIZE, i, j;
	u64 pme[CET_PAGEMAP_BATCH];
	int fd, ret = 0;

	fd = sys_openat(t->proc_fd, "self/pagemap", O_RDONLY, 0);
	if (fd < 0) {
		pr_err("cannot open self/pagemap: %d\n", fd);
		return -1;
	}
	for (i = first; i < pages && !ret; i += CET_PAGEMAP_BATCH) {
		unsigned long n = pages - i < CET_PAGEMAP_BATCH ? pages - i : CET_PAGEMAP_BATCH;
		long r = sys_pread(fd, (char *)pme, n * sizeof(u64), (s->aside / PAGE_SIZE + i) * sizeof(u64));

		if (r != (long)(n * sizeof(u64))) {
			pr_err("cannot read self/pagemap: %ld\n", r);
			ret = -1;
			break;
		}
		for (j = 0; j < n && !ret; j++) {
			unsigned long page = s->start + (i + j) * PAGE_SIZE;

			if (!(pme[j] & (CET_PME_PRESENT | CET_PME_SWAP)))
				continue;
			ret = copy_range(t, s, page > from ? page : from, page + PAGE_SIZE);
		}
	}
	sys_close(fd);
	return ret;
}

/*
 * The stack is made and full.  Its pages set aside stay mapped until the
 * leader drops the whole reservation: unmapped now, they would leave a gap
 * of exactly a stack's size where the kernel could put the stack another
 * thread is placing at this moment.
 */
static void stack_filled(struct cet_rst_stack *s)
{
	s->filled = 1;
}

static int make_unowned_stack(struct cet_rst_thread *t, struct cet_rst_stack *s)
{
	long ret;

	release_stack(s);
	ret = sys_map_shadow_stack(s->start, s->end - s->start, 0);
	if (ret != (long)s->start) {
		pr_err("cannot map shadow stack at %llx: %ld\n", (unsigned long long)s->start, ret);
		if (ret > 0)
			sys_munmap((void *)ret, s->end - s->start);
		return -1;
	}
	if (copy_pages(t, s, s->start))
		return -1;
	stack_filled(s);
	return 0;
}

/*
 * WRSS on for a thread with a shadow stack (we need it to write
 * contents), then make and fill the stacks no thread owns:
 * map_shadow_stack ones, such as fibers'.  The first thread with WRSS
 * does it for the process; where no thread has a shadow stack, the
 * leader does, through /proc/self/mem.
 */
int cet_rst_other_stacks(struct cet_rst_thread *t)
{
	struct cet_rst_proc *p = t->proc;
	int ret = 0;
	u32 i;

	if (t->features & ARCH_SHSTK_SHSTK) {
		long r = sys_arch_prctl(ARCH_SHSTK_ENABLE, ARCH_SHSTK_WRSS);

		if (r) {
			pr_err("%ld: cannot enable WRSS: %ld\n", sys_gettid(), r);
			return -1;
		}
		t->wrss_on = 1;
	} else if (p->any_shstk || !t->leader) {
		return 0;
	}
	mutex_lock(&p->lock);
	for (i = 0; i < p->nr_stacks && !ret; i++)
		if (p->stacks[i].owner < 0 && !p->stacks[i].filled)
			ret = make_unowned_stack(t, &p->stacks[i]);
	mutex_unlock(&p->lock);
	return ret;
}

/*
 * The thread's own stack: everything at and above the dumped SSP when it
 * is the current one (the two words below hold our tokens and the frames
 * of this very code), all of it when the thread was on another stack.
 */
int cet_rst_own_contents(struct cet_rst_thread *t)
{
	struct cet_rst_stack *s;

	if (t->own < 0)
		return 0;	/* its stacks were all made by cet_rst_other_stacks() */
	s = own_stack(t);

	if (copy_pages(t, s, t->own == t->cur ? t->ssp : s->start))
		return -1;
	stack_filled(s);
	return 0;
}

/*
 * The leader goes on only when every thread has its shadow stack back (a
 * thread that fails ends the whole process with exit_group), then drops
 * what is left of the reservation.  The fillers are gone by then: the
 * last placement took them (place_done()).
 */
static void thread_done(struct cet_rst_thread *t)
{
	struct cet_rst_proc *p = t->proc;

	if (!t->leader) {
		futex_dec_and_wake(&p->threads_left);
		return;
	}
	futex_wait_until(&p->threads_left, 0);
	if (p->aside_len)
		sys_munmap((void *)p->aside_base, p->aside_len);
	if (p->mem_fd >= 0)
		sys_close(p->mem_fd);
}

int cet_rst_finish(struct cet_rst_thread *t)
{
	if (set_features(t))
		return -1;
	thread_done(t);
	pr_info("%ld: back on ssp %llx, features %llx locked %llx\n", sys_gettid(),
		(unsigned long long)t->ssp, (unsigned long long)t->features, (unsigned long long)t->locked);
	return 0;
}

void cet_rst_fail(struct cet_rst_thread *t)
{
	pr_err("%ld: shadow stack restore failed\n", sys_gettid());
}
