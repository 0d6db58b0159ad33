// SPDX-License-Identifier: GPL-2.0
/*
 * bench_run: time one command in guest time and report its peak RSS.
 *
 * usage: bench_run [-p PID -b HBFILE] -- COMMAND [ARG...]
 *
 * Forks and execs COMMAND, waits for it with wait4() and prints one line
 *   rc=R ns=N rss_kb=K [live_ns=L | live=died | live=timeout]
 * R is the exit status (128+signal when killed), N the CLOCK_MONOTONIC
 * nanoseconds from before the fork until wait4() returned, K the child's
 * ru_maxrss (its own peak; children it never waited for, such as the tasks
 * `criu restore -d` leaves behind, do not count).
 *
 * With -p and -b (a restore), it then waits for task PID to show it runs: a
 * heartbeat in HBFILE (bench_target's CLOCK_MONOTONIC nanoseconds) newer
 * than the start.  live_ns is the time from the start until the command had
 * returned and the task had run, whichever came later; "died" when the task
 * is gone or a zombie first, "timeout" after LIVE_TIMEOUT_S.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>

#define LIVE_TIMEOUT_S	5
#define POLL_NS		100000

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static unsigned long long read_hb(const char *path)
{
	char buf[32];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strtoull(buf, NULL, 10);
}

/* Gone or a zombie (the restored task's parent is init, not us). */
static int task_dead(int pid)
{
	char path[64], buf[512], *p;
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 1;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return !p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X';
}

int main(int argc, char **argv)
{
	const char *hb = NULL;
	unsigned long long t0, t1, beat;
	struct timespec poll = { 0, POLL_NS };
	struct rusage ru;
	int pid = 0, opt, status, rc, child;

	while ((opt = getopt(argc, argv, "+p:b:")) != -1) {
		switch (opt) {
		case 'p':
			pid = atoi(optarg);
			break;
		case 'b':
			hb = optarg;
			break;
		default:
			return 2;
		}
	}
	if (optind >= argc || (!pid != !hb)) {
		fprintf(stderr, "usage: bench_run [-p PID -b HBFILE] -- COMMAND [ARG...]\n");
		return 2;
	}

	t0 = now_ns();
	child = fork();
	if (child < 0) {
		perror("bench_run: fork");
		return 2;
	}
	if (child == 0) {
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "bench_run: exec %s: %s\n", argv[optind], strerror(errno));
		_exit(127);
	}
	while (wait4(child, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			perror("bench_run: wait4");
			return 2;
		}
	}
	t1 = now_ns();
	rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	printf("rc=%d ns=%llu rss_kb=%ld", rc, t1 - t0, ru.ru_maxrss);

	if (pid && rc == 0) {
		for (;;) {
			beat = read_hb(hb);
			if (beat > t0) {
				printf(" live_ns=%llu", (beat > t1 ? beat : t1) - t0);
				break;
			}
			if (task_dead(pid)) {
				printf(" live=died");
				break;
			}
			if (now_ns() - t1 > LIVE_TIMEOUT_S * 1000000000ULL) {
				printf(" live=timeout");
				break;
			}
			nanosleep(&poll, NULL);
		}
	}
	printf("\n");
	return 0;
}
