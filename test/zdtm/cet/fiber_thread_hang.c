// SPDX-License-Identifier: GPL-2.0
/*
 * fiber_thread.c under a seccomp filter (all threads) that sends clone to
 * a user-space supervisor which never answers: as a container runtime
 * does, the task hands the listener to a process outside its tree (here a
 * double-forked one, which criu does not dump) and keeps no copy.  The
 * parasite's ownership probe forks a child that inherits the filter and
 * parks in its clone; criu must kill it after its timeout, not wait, probe
 * no other thread of the task, and leave the task as it was.  Without C/R
 * it is fiber_thread.
 */
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/syscall.h>

#include "zdtmtst.h"

#ifndef __NR_clone3
#define __NR_clone3		435
#endif
#ifndef SECCOMP_FILTER_FLAG_TSYNC_ESRCH
#define SECCOMP_FILTER_FLAG_TSYNC_ESRCH	(1UL << 4)
#endif

const char *test_doc = "fiber_thread with a seccomp supervisor that never answers clone";
const char *test_author = "criu-cet";

#define NEW_SS			2

static pid_t supervisor = -1;	/* holds the listener, never reads it */

/* The supervisor: outside the task's tree, it takes the listener and sleeps. */
static void supervise(int sk)
{
	char c, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &c, 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };

	recvmsg(sk, &mh, 0);
	for (;;)
		pause();
}

static int start_supervisor(int *sk)
{
	int sv[2], status;
	pid_t child;

	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv))
		return pr_perror("socketpair");
	child = fork();
	if (child < 0)
		return pr_perror("fork");
	if (!child) {
		pid_t g = fork();

		if (!g)
			supervise(sv[1]);
		write(sv[1], &g, sizeof(g));
		_exit(0);
	}
	waitpid(child, &status, 0);
	if (read(sv[0], &supervisor, sizeof(supervisor)) != sizeof(supervisor) || supervisor <= 0)
		return pr_perror("no supervisor");
	close(sv[1]);
	*sk = sv[0];
	return 0;
}

static int send_fd(int sk, int fd)
{
	char c = 0, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &c, 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *ch = CMSG_FIRSTHDR(&mh);

	ch->cmsg_level = SOL_SOCKET;
	ch->cmsg_type = SCM_RIGHTS;
	ch->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(ch), &fd, sizeof(int));
	if (sendmsg(sk, &mh, 0) != 1)
		return pr_perror("sendmsg of the listener");
	return 0;
}

static int before_checkpoint(void)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(code) / sizeof(code[0]), .filter = code };
	int sk, listener;

	/* fork before the filter: afterwards every clone parks */
	if (start_supervisor(&sk))
		return 1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return pr_perror("PR_SET_NO_NEW_PRIVS");
	listener = syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER,
			   SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_TSYNC |
			   SECCOMP_FILTER_FLAG_TSYNC_ESRCH, &prog);
	if (listener < 0)
		return pr_perror("seccomp with a listener");
	if (send_fd(sk, listener))
		return 1;
	close(listener);
	close(sk);
	return 0;
}

/* The supervisor is not the test's child any more: end it with the test */
static void after_test(void)
{
	if (supervisor > 0)
		kill(supervisor, SIGKILL);
}
#define AFTER_TEST() after_test()

#include "fiber_thread.c"
