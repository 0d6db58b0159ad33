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
#include <sys/socket.h>
#include <sys/wait.h>

#define CET_CLONE_FILTER
#define CET_FIBERS
#include "cetlib.h"

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
	int sk, listener;

	/* fork before the filter: afterwards every clone parks */
	if (start_supervisor(&sk))
		return 1;
	listener = cet_filter_clone(SECCOMP_RET_USER_NOTIF,
				    SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_TSYNC_ESRCH);
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
