// SPDX-License-Identifier: GPL-2.0
/*
 * rpc_cet: checkpoint and restore through CRIU's RPC, the way container
 * runtimes do it (crun and podman through libcriu, runc through `criu swrk`
 * and the same protocol), with criu-cet's libcriu linked in.
 *
 *   rpc_cet [--criu PATH | --service SOCKET] dump PID DIR [leave-running]
 *   rpc_cet [--criu PATH | --service SOCKET] [--pidfile FILE] restore DIR
 *   rpc_cet --criu PATH refuse DIR
 *
 * --criu: libcriu starts `PATH swrk` for the request (the default binary
 * otherwise); --service: the request goes to a `criu service` listening on
 * SOCKET.  dump prints "dumped PID"; restore prints "restored PID" and
 * writes it to the pidfile if asked (under
 * swrk the restored tree becomes our child, as runc asks: rst_sibling; we
 * leave it to the subreaper when we exit).  refuse sends a restore
 * request itself and prints what the response says: "refused: <cr_errmsg>"
 * when criu said no, so that a test can see the reason travel back through
 * the RPC (libcriu keeps it to itself).  Logs: dump.log, restore.log in DIR.
 * Exit status 0 when the request did what it says.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "criu.h"
#include "rpc.pb-c.h"

static const char *criu_bin, *service, *pidfile;

static int usage(void)
{
	fprintf(stderr, "usage: rpc_cet [--criu PATH | --service SOCKET] dump PID DIR [leave-running]\n"
			"       rpc_cet [--criu PATH | --service SOCKET] [--pidfile FILE] restore DIR\n"
			"       rpc_cet --criu PATH refuse DIR\n");
	return 2;
}

/* libcriu's options for a request on @dir, logging to @log there */
static int setup(const char *dir, const char *log)
{
	int fd = open(dir, O_DIRECTORY | O_RDONLY);

	if (fd < 0 || criu_init_opts()) {
		perror(dir);
		return -1;
	}
	if (service)
		criu_set_service_address(service);
	else if (criu_bin)
		criu_set_service_binary(criu_bin);
	criu_set_images_dir_fd(fd);
	criu_set_log_file(log);
	criu_set_log_level(4);
	return 0;
}

static int do_dump(int pid, const char *dir, int leave_running)
{
	int ret;

	if (setup(dir, "dump.log"))
		return 1;
	criu_set_pid(pid);
	criu_set_leave_running(leave_running);
	ret = criu_dump();
	if (ret < 0) {
		printf("dump failed: %d (%s)\n", ret, strerror(-ret));
		return 1;
	}
	printf("dumped %d\n", pid);
	return 0;
}

static int do_restore(const char *dir)
{
	int pid;

	if (setup(dir, "restore.log"))
		return 1;
	/* a criu service cannot make the tree our child: it is the service's */
	pid = service ? criu_restore() : criu_restore_child();
	if (pid < 0) {
		printf("restore failed: %d (%s)\n", pid, strerror(-pid));
		return 1;
	}
	printf("restored %d\n", pid);
	if (pidfile) {
		FILE *f = fopen(pidfile, "we");

		if (!f || fprintf(f, "%d\n", pid) < 0 || fclose(f)) {
			perror(pidfile);
			return 1;
		}
	}
	return 0;
}

/* `criu swrk` on one end of a socket pair; the other end, or -1 */
static int start_swrk(pid_t *pid)
{
	char fd_arg[16];
	int sk[2];

	if (socketpair(PF_LOCAL, SOCK_SEQPACKET, 0, sk))
		return -1;
	*pid = fork();
	if (*pid == 0) {
		close(sk[0]);
		snprintf(fd_arg, sizeof(fd_arg), "%d", sk[1]);
		execl(criu_bin, criu_bin, "swrk", fd_arg, NULL);
		_exit(127);
	}
	close(sk[1]);
	return *pid < 0 ? -1 : sk[0];
}

/* one restore request by hand, to read cr_errmsg from the response */
static int do_refuse(const char *dir)
{
	CriuOpts opts = CRIU_OPTS__INIT;
	CriuReq req = CRIU_REQ__INIT;
	CriuResp *resp;
	unsigned char buf[64 << 10];
	int sk, dfd, ret = 1, status;
	ssize_t len;
	pid_t pid;

	dfd = open(dir, O_DIRECTORY | O_RDONLY);
	sk = criu_bin ? start_swrk(&pid) : -1;
	if (dfd < 0 || sk < 0) {
		perror("refuse: set-up");
		return 1;
	}
	opts.images_dir_fd = dfd;	/* criu swrk opens it through /proc/<our pid>/fd */
	opts.log_file = "restore.log";
	opts.has_log_level = 1;
	opts.log_level = 4;
	opts.has_rst_sibling = 1;
	opts.rst_sibling = 1;
	req.type = CRIU_REQ_TYPE__RESTORE;
	req.opts = &opts;
	len = criu_req__pack(&req, buf);
	if (send(sk, buf, len, 0) != len) {
		perror("refuse: send");
		goto out;
	}
	len = recv(sk, buf, sizeof(buf), 0);
	resp = len > 0 ? criu_resp__unpack(NULL, len, buf) : NULL;
	if (!resp) {
		printf("no response from criu swrk\n");
	} else if (resp->success) {
		printf("restored %d: the restore was meant to be refused\n", resp->restore ? resp->restore->pid : -1);
	} else {
		printf("refused: %s\n", resp->cr_errmsg ? resp->cr_errmsg : "(no cr_errmsg)");
		ret = 0;
	}
	if (resp)
		criu_resp__free_unpacked(resp, NULL);
out:
	close(sk);
	waitpid(pid, &status, 0);
	return ret;
}

int main(int argc, char **argv)
{
	int i = 1;

	for (; i + 1 < argc && !strncmp(argv[i], "--", 2); i += 2) {
		if (!strcmp(argv[i], "--criu"))
			criu_bin = argv[i + 1];
		else if (!strcmp(argv[i], "--service"))
			service = argv[i + 1];
		else if (!strcmp(argv[i], "--pidfile"))
			pidfile = argv[i + 1];
		else
			return usage();
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (i + 2 < argc && !strcmp(argv[i], "dump"))
		return do_dump(atoi(argv[i + 1]), argv[i + 2], i + 3 < argc && !strcmp(argv[i + 3], "leave-running"));
	if (i + 1 < argc && !strcmp(argv[i], "restore"))
		return do_restore(argv[i + 1]);
	if (i + 1 < argc && !strcmp(argv[i], "refuse") && criu_bin)
		return do_refuse(argv[i + 1]);
	return usage();
}
