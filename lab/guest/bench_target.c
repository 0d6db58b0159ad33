// SPDX-License-Identifier: GPL-2.0
/*
 * bench_target: the process `make bench` dumps and restores.
 *
 * usage: bench_target DIR [-s] [-d FRAMES] [-t THREADS] [-m HEAP_KB]
 *
 *   -s          run on a shadow stack (turned on in main(), which never returns)
 *   -d FRAMES   sit FRAMES call frames deep while ticking (8 bytes of shadow
 *               stack and 8 bytes of stack a frame)
 *   -f          flat frames: each leaves its return address on the shadow
 *               stack only (8 bytes a frame, the stack does not grow), so
 *               that FRAMES measure shadow-stack memory alone
 *   -t THREADS  start THREADS threads first; each waits 32 frames deep on a
 *               condition variable (a thread inherits its creator's shadow
 *               stack setting and gets its own shadow stack from the kernel)
 *   -m HEAP_KB  dirty HEAP_KB of heap, so that the image holds some memory
 *
 * Once set up it "ticks" every TICK_US: a 32-frame call/return walk, then
 * the CLOCK_MONOTONIC time in nanoseconds written to DIR/hb.  The benchmark
 * reads DIR/hb to see when a restored task runs again.
 *
 * SIGUSR1 asks for a check: the main thread returns through every one of its
 * FRAMES frames (each return is checked against the shadow stack), the
 * threads wake up and return through theirs, and DIR/result gets one line
 *   ok frames=N threads=T status=S ss_vmas=V ss_kb=K ss_own_kb=O
 * before the process exits (V shadow-stack mappings, K KiB in all, O KiB
 * the main thread's).  DIR/setup has the same ss_* figures from before the
 * dump.  A restore that got a shadow stack wrong kills the task on the way
 * (control-protection fault): no result line then.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <time.h>

#include "cet-abi.h"

#define TICK_US		1000
#define THREAD_FRAMES	32
#define MAX_THREADS	1024

static int hb_fd = -1;
static const char *dir;
static volatile sig_atomic_t check_req;
static unsigned long ticks;
static unsigned long ssp_top, ssp_bottom;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int nr_threads, nr_waiting, nr_done, nr_bad, wake;

/*
 * bench_deep(frames, fn): descend @frames call frames, then call fn() with
 * an ABI-aligned stack, and return fn()'s value through all of them.  In
 * assembly so that a frame costs exactly one return address on the stack
 * and one entry on the shadow stack, whatever the compiler does.
 */
long bench_deep(unsigned long frames, long (*fn)(void));
asm(".text\n"
    ".globl bench_deep\n"
    ".type bench_deep, @function\n"
    "bench_deep:\n"
    "	push %rbx\n"
    "	call 1f\n"
    "	pop %rbx\n"
    "	ret\n"
    "1:	test %rdi, %rdi\n"
    "	jz 2f\n"
    "	dec %rdi\n"
    "	call 1b\n"
    "	ret\n"
    "2:	mov %rsp, %rbx\n"
    "	and $-16, %rsp\n"
    "	call *%rsi\n"
    "	mov %rbx, %rsp\n"
    "	ret\n"
    ".size bench_deep, .-bench_deep\n");

/*
 * bench_flat(frames, fn): the same on the shadow stack, but each frame drops
 * its return address from the stack as soon as it is called.  All of them
 * return to the same place (C), so on the way back each "ret" is preceded by
 * pushing C again: the shadow stack's copy is what is checked.
 */
long bench_flat(unsigned long frames, long (*fn)(void));
asm(".text\n"
    ".globl bench_flat\n"
    ".type bench_flat, @function\n"
    "bench_flat:\n"
    "	push %rbx\n"
    "	push %r12\n"
    "	push %r13\n"
    "	mov %rdi, %r12\n"		/* frames left to return through */
    "	mov %rdi, %r13\n"		/* frames left to descend */
    "	call 1f\n"
    "	pop %r13\n"
    "	pop %r12\n"
    "	pop %rbx\n"
    "	ret\n"
    "1:	test %r13, %r13\n"
    "	jz 2f\n"
    "	dec %r13\n"
    "	call 6f\n"
    "5:	dec %r12\n"			/* C: one flat frame returned */
    "	jz 9f\n"
    "	lea 5b(%rip), %rcx\n"	/* not %rax: it holds fn()'s value */
    "	push %rcx\n"
    "	ret\n"
    "9:	ret\n"
    "6:	add $8, %rsp\n"
    "	jmp 1b\n"
    "2:	mov %rsp, %rbx\n"
    "	and $-16, %rsp\n"
    "	call *%rsi\n"
    "	mov %rbx, %rsp\n"
    "	test %r12, %r12\n"
    "	jz 9b\n"
    "	lea 5b(%rip), %rcx\n"
    "	push %rcx\n"
    "	ret\n"
    ".size bench_flat, .-bench_flat\n");

static __attribute__((noinline)) unsigned long walk(int depth, unsigned long acc)
{
	if (depth)
		acc = walk(depth - 1, acc * 31 + depth);
	asm volatile("" : "+r"(acc));
	return acc;
}

static void die(const char *what)
{
	fprintf(stderr, "bench_target: %s: %m\n", what);
	exit(2);
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void publish(void)
{
	char line[32];
	int n = snprintf(line, sizeof(line), "%020llu\n", now_ns());

	if (pwrite(hb_fd, line, n, 0) != n)
		die("heartbeat");
}

/*
 * The shadow-stack mappings ("ss" in VmFlags): how many, their total size,
 * and the size of the one that holds @addr, in KiB.
 */
struct ss_maps {
	unsigned long nr, total_kb, own_kb;
};

static void ss_maps(unsigned long addr, struct ss_maps *m)
{
	unsigned long start = 0, end = 0, s, e;
	char line[512];
	FILE *f;

	memset(m, 0, sizeof(*m));
	f = fopen("/proc/self/smaps", "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &s, &e) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			start = s;
			end = e;
		} else if (!strncmp(line, "VmFlags:", 8) && strstr(line, " ss")) {
			m->nr++;
			m->total_kb += (end - start) >> 10;
			if (start <= addr && addr < end)
				m->own_kb = (end - start) >> 10;
		}
	}
	fclose(f);
}

static void on_usr1(int sig)
{
	check_req = 1;
}

/* The bottom of a thread: wait for the check, then return through every frame. */
static __attribute__((noinline)) void thread_wait(int depth)
{
	if (depth) {
		thread_wait(depth - 1);
		asm volatile("" ::: "memory");	/* keep the frame: no tail call */
		return;
	}
	pthread_mutex_lock(&lock);
	nr_waiting++;
	pthread_cond_broadcast(&cond);
	while (!wake)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
}

static void *thread_fn(void *arg)
{
	unsigned long ssp = cet_rdssp(), status = cet_status();

	thread_wait(THREAD_FRAMES);
	pthread_mutex_lock(&lock);
	if (cet_rdssp() != ssp || cet_status() != status)
		nr_bad++;
	nr_done++;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	for (;;)
		pause();	/* no pthread_exit: the process exits as a whole */
	return NULL;
}

/* The main thread's bottom: tick until a check is asked for. */
static long tick_loop(void)
{
	struct timespec tick = { 0, TICK_US * 1000L };

	ssp_bottom = cet_rdssp();
	while (!check_req) {
		if (walk(32, ticks) == 42)
			ticks++;	/* keeps walk() from being optimised away */
		ticks++;
		publish();
		nanosleep(&tick, NULL);
	}
	return 0x600d;
}

static void write_result(const char *fmt, ...)
{
	char path[4096], buf[512];
	va_list ap;
	int fd, n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	snprintf(path, sizeof(path), "%s/result", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, buf, n) != n)
		die("result");
	close(fd);
}

int main(int argc, char **argv)
{
	unsigned long frames = 0, heap_kb = 0, status, i;
	struct ss_maps maps;
	FILE *setup;
	struct sigaction sa = { .sa_handler = on_usr1 };
	pthread_t tid;
	char path[4096];
	int shstk = 0, flat = 0, opt;
	long ret;
	char *heap;

	while ((opt = getopt(argc, argv, "sfd:t:m:")) != -1) {
		switch (opt) {
		case 's':
			shstk = 1;
			break;
		case 'f':
			flat = 1;
			break;
		case 'd':
			frames = strtoul(optarg, NULL, 0);
			break;
		case 't':
			nr_threads = atoi(optarg);
			break;
		case 'm':
			heap_kb = strtoul(optarg, NULL, 0);
			break;
		default:
			return 1;
		}
	}
	if (optind != argc - 1 || nr_threads < 0 || nr_threads > MAX_THREADS)
		return 1;
	dir = argv[optind];

	/* From here on main() never returns: it ends in exit(). */
	if (shstk && cet_enable_shstk())
		exit(3);

	if (heap_kb) {
		heap = malloc(heap_kb << 10);
		if (!heap)
			die("malloc");
		for (i = 0; i < heap_kb << 10; i += 4096)
			memset(heap + i, (int)(i >> 12) | 1, 4096);
	}
	if (sigaction(SIGUSR1, &sa, NULL))
		die("sigaction");

	for (i = 0; i < (unsigned long)nr_threads; i++)
		if (pthread_create(&tid, NULL, thread_fn, NULL))
			die("pthread_create");
	pthread_mutex_lock(&lock);
	while (nr_waiting < nr_threads)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);

	snprintf(path, sizeof(path), "%s/hb", dir);
	hb_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (hb_fd < 0)
		die("open heartbeat");

	ssp_top = cet_rdssp();
	ss_maps(ssp_top - 8, &maps);
	snprintf(path, sizeof(path), "%s/setup", dir);
	setup = fopen(path, "w");
	if (!setup)
		die("setup");
	fprintf(setup, "ss_vmas=%lu ss_kb=%lu ss_own_kb=%lu\n", maps.nr, maps.total_kb, maps.own_kb);
	fclose(setup);

	/* ticks, FRAMES deep, until SIGUSR1 */
	ret = flat ? bench_flat(frames, tick_loop) : bench_deep(frames, tick_loop);

	/* Back at the top: every one of the frames returned fine. */
	if (ret != 0x600d || cet_rdssp() != ssp_top) {
		write_result("bad unwind ret=%#lx ssp=%#lx top=%#lx\n", ret, cet_rdssp(), ssp_top);
		exit(4);
	}
	pthread_mutex_lock(&lock);
	wake = 1;
	pthread_cond_broadcast(&cond);
	while (nr_done < nr_threads)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	status = cet_status();
	ss_maps(ssp_top - 8, &maps);
	if (nr_bad) {
		write_result("bad threads=%d of %d lost their ssp/status\n", nr_bad, nr_threads);
		exit(5);
	}
	/* frames the main thread stood in while it ticked, minus its own few */
	write_result("ok frames=%lu threads=%d status=%#lx ss_vmas=%lu ss_kb=%lu ss_own_kb=%lu\n",
		     shstk ? (ssp_top - ssp_bottom) / 8 - 3 : frames, nr_threads, status,
		     maps.nr, maps.total_kb, maps.own_kb);
	exit(0);
}
