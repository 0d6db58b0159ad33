// SPDX-License-Identifier: GPL-2.0
/*
 * Helper for running the kernel's own test_shadow_stack in the lab guest.
 *
 *   uffd-helper probe        register userfaultfd on a shadow stack and
 *                            print what the kernel answered
 *   uffd-helper block CMD..  run CMD with userfaultfd(2) answering ENOSYS
 *                            (a seccomp filter), so that test_shadow_stack
 *                            reports its userfaultfd part as SKIP and goes
 *                            on to the parts after it
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/userfaultfd.h>

#ifndef __NR_map_shadow_stack
#define __NR_map_shadow_stack 453
#endif

static int probe(void)
{
	struct uffdio_register reg = { 0 };
	struct uffdio_api api = { .api = UFFD_API };
	long ss;
	int uffd;

	ss = syscall(__NR_map_shadow_stack, 0UL, 0x10000UL, 1L);
	if (ss == -1) {
		printf("map_shadow_stack: %s\n", strerror(errno));
		return 2;
	}
	uffd = syscall(__NR_userfaultfd, (long)(O_CLOEXEC | O_NONBLOCK));
	if (uffd < 0) {
		printf("userfaultfd: %s\n", strerror(errno));
		return 2;
	}
	if (ioctl(uffd, UFFDIO_API, &api)) {
		printf("UFFDIO_API: %s\n", strerror(errno));
		return 2;
	}
	reg.range.start = ss;
	reg.range.len = 4096;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg)) {
		printf("UFFDIO_REGISTER on a shadow stack: %s\n",
		       errno == EINVAL ? "EINVAL" : strerror(errno));
		return 1;
	}
	printf("UFFDIO_REGISTER on a shadow stack: ok\n");
	return 0;
}

static int block(char **argv)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_userfaultfd, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		perror("seccomp");
		return 2;
	}
	execvp(argv[0], argv);
	perror(argv[0]);
	return 127;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "probe"))
		return probe();
	if (argc > 2 && !strcmp(argv[1], "block"))
		return block(argv + 2);
	fprintf(stderr, "usage: %s probe | block CMD [ARG...]\n", argv[0]);
	return 2;
}
