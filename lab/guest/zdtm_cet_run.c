// SPDX-License-Identifier: GPL-2.0
/*
 * zdtm_cet_run: drive our ZDTM CET tests (test/zdtm/cet) inside the lab
 * guest where CRIU's zdtm.py cannot: a plain C/R and zdtm.py's flows of
 * them are zdtm.py's (suites zdtm-upstream-*); this runner keeps what it
 * has no flow for: criu dying at chosen points of a dump, dumps that leave
 * the task running or fail half-way (its CET state checked after), RPC
 * through `criu service`, restores under a user namespace's limits, the
 * two halves of a C/R in two boots, several cycles with SIGUSR2 between,
 * and the side-by-side runs of make compare.  One lab line per test:
 *   @@LAB PASS|FAIL|SKIP zdtm.cet.<test>.<flavour> <detail>
 *
 *   zdtm_cet_run --flavour NAME (--criu PATH | --nocr) [--dir DIR]
 *                [--list FILE] [--work DIR] [--only TEST,...]
 *                [--rpc swrk|service] [--mode ...]
 *
 * For each test of the list (lines "NAME [cycles=N] [usr2] [plain]"):
 *  - start it as zdtm.py's Makefile rule does (NAME --pidfile=NAME.pid
 *    --outfile=NAME.out in a work directory, as ZDTM's non-root uid), and
 *    wait for the launcher: the test daemonised and wrote its pidfile;
 *  - unless --nocr, N times (cycles=N, default 1): record the tree's CET
 *    state as /proc shows it (x86_Thread_features and _locked of every
 *    thread, the ss mappings of every process), criu dump, reap the dumped
 *    tree, criu restore --restore-detached, check the task is alive and
 *    that the recorded state is back exactly; with usr2, SIGUSR2 after each
 *    restore (the test re-verifies itself);
 *  - SIGTERM, wait for the test to exit, and take its verdict from the last
 *    line of NAME.out (PASS there, as zdtm.py checks).
 * FAIL details are the first error: a CRIU log's first Error line, how the
 * task died (with the kernel's report), the first state difference, or the
 * test's first FAIL/ERR line.  The runner is a child subreaper, so the
 * daemonised and restored tests are its children and are always reaped.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/klog.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/mount.h>
#include <sys/wait.h>

/* details are cut to one console line on purpose; paths are short */
#pragma GCC diagnostic ignored "-Wformat-truncation"

#define DETAIL_MAX 300
#define MAX_PIDS   64
#define STATE_MAX  (256 << 10)	/* many_threads: 1001 threads */
#define MAX_TIDS   1100

static const char *current_test;
static const char *flavour, *criu, *testdir = "/lab/zdtm/cet", *list, *workroot = "/tmp/zdtm-cet", *only;
static int nocr, have_shstk;

/*
 * What a cycle does.  cr: dump, restore.  leave-running: dump with
 * --leave-running, no restore.  dump-fail: a dump that fails half-way (the
 * image directory is a tmpfs too small for the pages), no restore.  The
 * last two check that the task runs on with its CET state as before.
 * criu-death: criu dies during the dump (--death fault=N: CRIU's own fault
 * injection, CRIU_FAULT=N; --death kill-at=TEXT: SIGKILL as soon as its
 * log says TEXT), no restore; the task must run on with its state.  The
 * dump runs with --leave-running, so that criu itself never kills the task
 * at its end and every point of the dump is a fair one to die at.
 * dump-only / restore-only: the two halves of a cycle in two boots (another
 * boot, another kernel): dump-only leaves the work directory (images, the
 * test's files, the state it recorded in state.before) for the host to carry
 * over; restore-only restores it there, checks the state and the verdict.
 */
enum { MODE_CR, MODE_LEAVE_RUNNING, MODE_DUMP_FAIL, MODE_CRIU_DEATH, MODE_DUMP_ONLY, MODE_RESTORE_ONLY } mode = MODE_CR;
static const char *death;

/*
 * criu restore as it runs in a user namespace: without CAP_SYS_RESOURCE
 * (dropped from the bounding set, so root's exec of criu does not get it)
 * and, with --restore-stack-hard, under a hard RLIMIT_STACK it may not
 * raise.  --expect-restore-error TEXT: the restore must be refused with
 * TEXT in criu's log and leave no task.
 */
static int restore_nocap;
static long restore_stack_hard_kb;
static const char *expect_restore_error;
#define CAP_SYS_RESOURCE_NR	24

struct test {
	char name[64];
	int cycles, usr2, plain;
	int new_ss;	/* newss=N: restore may add N shadow-stack mappings (kernel-made, by design) */
};

/* ---- small helpers ---- */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void msleep(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), n, off = 0;

	if (fd < 0)
		return -1;
	while (off < (int)len - 1 && (n = read(fd, buf + off, len - 1 - off)) > 0)
		off += n;
	close(fd);
	buf[off] = '\0';
	return off;
}

/* one line for the console: no control characters, bounded */
static void clean(char *s, size_t max)
{
	char *p;

	for (p = s; *p; p++)
		if ((unsigned char)*p < ' ')
			*p = ' ';
	if (strlen(s) > max)
		strcpy(s + max - 3, "...");
}

static void vreport(const char *status, const struct test *t, const char *fields, const char *fmt, va_list ap)
{
	char detail[1024];

	vsnprintf(detail, sizeof(detail), fmt, ap);
	/* the fields whole at the end: the prose gives way when the line is long */
	clean(detail, fields ? DETAIL_MAX - strlen(fields) - 1 : DETAIL_MAX);
	printf("@@LAB %s zdtm.cet.%s.%s %s%s%s\n", status, t->name, flavour, detail, fields ? " " : "",
	       fields ? fields : "");
	fflush(stdout);
}

static void report(const char *status, const struct test *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(status, t, NULL, fmt, ap);
	va_end(ap);
}

/*
 * A PASS whose detail ends with key=value fields, which the tests read
 * (protocol.detail_fields): outcome= always (kept, ran-on, refused,
 * exported, nocr), then what the run says of itself.
 */
static void report_pass(const struct test *t, const char *fields, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("PASS", t, fields, fmt, ap);
	va_end(ap);
}

static const char *sig_name(int sig)
{
	static char buf[16];

	switch (sig) {
	case SIGSEGV: return "SIGSEGV";
	case SIGILL: return "SIGILL";
	case SIGBUS: return "SIGBUS";
	case SIGABRT: return "SIGABRT";
	case SIGKILL: return "SIGKILL";
	case SIGTERM: return "SIGTERM";
	case SIGTRAP: return "SIGTRAP";
	}
	snprintf(buf, sizeof(buf), "signal %d", sig);
	return buf;
}

static void describe_status(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exited %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by %s", sig_name(WTERMSIG(status)));
	else
		snprintf(buf, len, "status %#x", status);
}

/* The kernel's last report (control protection, segfault) about one of @pids */
static void kernel_report(const int *pids, int nr, char *out, size_t len)
{
	static char log[1 << 17];
	char needle[32], *line, *best = NULL, *save;
	int n, i;

	out[0] = '\0';
	n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, log, sizeof(log) - 1);
	if (n <= 0)
		return;
	log[n] = '\0';
	for (line = strtok_r(log, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strstr(line, "control protection") && !strstr(line, "segfault") && !strstr(line, "traps:") &&
		    !strstr(line, "general protection"))
			continue;
		for (i = 0; i < nr; i++) {
			snprintf(needle, sizeof(needle), "[%d]", pids[i]);
			if (strstr(line, needle))
				best = line;
		}
	}
	if (best) {
		char *p = strstr(best, "] ");

		snprintf(out, len, "%s", p ? p + 2 : best);
		p = strstr(out, " likely on CPU");
		if (p)
			*p = '\0';
	}
}

/* "control protection ... error:1(near ret) ..." -> a few words for a detail */
static void kernel_summary(const char *kern, char *out, size_t len)
{
	const char *p;

	out[0] = '\0';
	if (!kern[0])
		return;
	if (strstr(kern, "control protection")) {
		p = strstr(kern, "error:");
		/* "error:1(near ret)" */
		snprintf(out, len, "control protection fault %.*s", p ? (int)strcspn(p + 6, ")") + 1 : 0,
			 p ? p + 6 : "");
	} else if ((p = strstr(kern, "segfault at "))) {
		snprintf(out, len, "segfault at %.*s", (int)strcspn(p + 12, " "), p + 12);
	} else {
		snprintf(out, len, "%.60s", kern);
	}
}

/* A message of the test's output without its "HH:MM:SS.mmm:   PID: " prefix */
static char *strip_msg(char *line)
{
	char *p = line;
	int colons = 0;

	if (strlen(line) > 14 && line[2] == ':' && line[5] == ':' && line[8] == '.') {
		while (*p && colons < 4)
			if (*p++ == ':')
				colons++;
		while (*p == ' ')
			p++;
	}
	if ((line = strstr(p, " (errno = ")))
		*line = '\0';
	return p;
}

/*
 * The test's output: the verdict (last line has PASS), its first FAIL/ERR
 * line, a SKIP line and the last informative line.
 */
struct verdict {
	int found, pass, skip, nr_err;
	char first_err[512], skip_why[512], info[512];
};

static void read_verdict(const char *work, const char *name, struct verdict *v)
{
	static char buf[64 << 10];
	char path[512], *line, *save, *last = NULL;

	memset(v, 0, sizeof(*v));
	snprintf(path, sizeof(path), "%s/%s.out", work, name);
	if (read_file(path, buf, sizeof(buf)) < 0) {
		snprintf(path, sizeof(path), "%s/%s.out.inprogress", work, name);
		if (read_file(path, buf, sizeof(buf)) < 0)
			return;
	}
	v->found = 1;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *m = strip_msg(line);

		last = m;
		if (!strncmp(m, "FAIL:", 5) || !strncmp(m, "ERR:", 4)) {
			/* "FAIL: cetlib.h:246: main: ..." -> "main: ..." (the serial log has it all) */
			char *msg = strchr(m, ':') + 1, *q;

			while (*msg == ' ')
				msg++;
			q = strchr(msg, ' ');
			if (q && q > msg && q[-1] == ':' && strchr(msg, ':') < q - 1)
				msg = q + 1;
			if (!v->nr_err++)
				snprintf(v->first_err, sizeof(v->first_err), "%s%s", m[0] == 'E' ? "error: " : "", msg);
		}
		else if (!v->skip_why[0] && !strncmp(m, "SKIP:", 5))
			snprintf(v->skip_why, sizeof(v->skip_why), "%s", m);
		else if (strcmp(m, "PASS") && strncmp(m, "check ", 6))
			snprintf(v->info, sizeof(v->info), "%s", m);
	}
	/* zdtm.py: 'PASS' is a word of the last line */
	if (last) {
		char *w, *s2, copy[512];

		snprintf(copy, sizeof(copy), "%s", last);
		for (w = strtok_r(copy, " \t", &s2); w; w = strtok_r(NULL, " \t", &s2))
			if (!strcmp(w, "PASS"))
				v->pass = 1;
	}
	v->skip = !v->pass && v->skip_why[0];
}

/* The test's output on the console (the serial log keeps it for later) */
static void show_output(const char *work, const char *name)
{
	char path[512], line[512];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "%s/%s.out", work, name);
	f = fopen(path, "re");
	if (!f) {
		snprintf(path, sizeof(path), "%s/%s.out.inprogress", work, name);
		f = fopen(path, "re");
	}
	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && n++ < 40) {
		line[strcspn(line, "\n")] = '\0';
		printf("zdtm_cet_run: %s.%s: %s\n", name, flavour, line);
	}
	fclose(f);
}

/* The first line of @log holding @needle, into @out; 0 when there is none */
static int log_has(const char *log, const char *needle, char *out, size_t len)
{
	char line[512];
	FILE *f = fopen(log, "re");
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		if (!strstr(line, needle))
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(out, len, "%s", line[0] == '(' && strchr(line, ')') ? strchr(line, ')') + 2 : line);
		found = 1;
	}
	fclose(f);
	return found;
}

/* First line of a CRIU log that says Error (zdtm.py greps for it too) */
static void criu_error(const char *log, char *out, size_t len)
{
	char line[512];
	FILE *f = fopen(log, "re");

	snprintf(out, len, "no Error line in %s", log);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "Error") || strstr(line, "error")) {
			char *p = strstr(line, "Error ("), *q, *file;

			line[strcspn(line, "\n")] = '\0';
			/* "(00.01) pie: 7: Error (criu/pie/x.c:12): msg" -> "x.c:12: msg" */
			if (p && (q = strstr(p, "): "))) {
				*q = '\0';
				file = strrchr(p + 7, '/');
				snprintf(out, len, "%s: %s", file ? file + 1 : p + 7, q + 3);
			} else {
				p = line[0] == '(' ? strchr(line, ')') : NULL;
				snprintf(out, len, "%s", p ? p + 2 : line);
			}
			break;
		}
	}
	fclose(f);
}

/* A CRIU log's Error/Warn lines on the console (the serial log keeps them) */
static void show_log_errors(const char *log, const char *action)
{
	char line[512];
	FILE *f = fopen(log, "re");
	int n = 0;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && n < 12) {
		if (!strstr(line, "Error") && !strstr(line, "Warn"))
			continue;
		line[strcspn(line, "\n")] = '\0';
		printf("zdtm_cet_run: %s.%s: criu %s: %s\n", current_test, flavour, action, line);
		n++;
	}
	fclose(f);
}

/* ---- processes ---- */

/* In the child that is to exec criu restore: the limits of a user namespace. */
static void restore_limits(void)
{
	struct rlimit r;

	if (restore_nocap && prctl(PR_CAPBSET_DROP, CAP_SYS_RESOURCE_NR, 0, 0, 0))
		_exit(125);
	if (restore_stack_hard_kb && !getrlimit(RLIMIT_STACK, &r)) {
		r.rlim_max = restore_stack_hard_kb * 1024;
		if (r.rlim_cur > r.rlim_max)
			r.rlim_cur = r.rlim_max;
		if (setrlimit(RLIMIT_STACK, &r))
			_exit(125);
	}
}

/* fork + exec argv in @cwd with stdout/stderr to @out; returns pid */
static pid_t spawn(char *const argv[], const char *cwd, const char *out, int zdtm_env)
{
	int is_restore = argv[1] && !strcmp(argv[1], "restore");
	pid_t pid = fork();

	if (pid == 0) {
		int fd;

		if (is_restore)
			restore_limits();

		if (chdir(cwd))
			_exit(126);
		fd = open(out, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
			close(fd);
		}
		fd = open("/dev/null", O_RDONLY);
		if (fd >= 0 && fd != 0) {
			dup2(fd, 0);
			close(fd);
		}
		if (zdtm_env) {
			/* as zdtm.py runs tests without the 'suid' flag */
			setenv("ZDTM_UID", "18943", 1);
			setenv("ZDTM_GID", "58467", 1);
			setenv("ZDTM_GROUPS", "27495 48244", 1);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

/* wait for @pid up to @timeout s; 0 and *status when it ended, -1 on timeout */
static int wait_timeout(pid_t pid, int *status, double timeout)
{
	double end = now() + timeout;

	while (1) {
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -2;
		if (now() > end)
			return -1;
		msleep(10);
	}
}

static int exists(pid_t pid)
{
	return kill(pid, 0) == 0 || errno != ESRCH;
}

/* reap whatever ended (orphans of the test tree end up with us) */
static void reap_all(void)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

/* wait until none of @pids exists any more (they are reaped as they go) */
static int wait_gone(const int *pids, int nr, double timeout)
{
	double end = now() + timeout;
	int i, left;

	do {
		reap_all();
		for (left = 0, i = 0; i < nr; i++)
			left += exists(pids[i]);
		if (!left)
			return 0;
		msleep(10);
	} while (now() < end);
	return -1;
}

static void kill_tree(const int *pids, int nr)
{
	int i;

	for (i = 0; i < nr; i++)
		if (pids[i] > 1 && exists(pids[i]))
			kill(pids[i], SIGKILL);
	wait_gone(pids, nr, 10);
}

/* ---- the CET state of a process tree, as /proc shows it ---- */

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static int tree_pids(int root, int *pids, int max)
{
	int nr = 0, i;

	pids[nr++] = root;
	for (i = 0; i < nr; i++) {
		char path[64], buf[4096], *tok, *save;
		DIR *d;
		struct dirent *de;

		snprintf(path, sizeof(path), "/proc/%d/task", pids[i]);
		d = opendir(path);
		if (!d)
			continue;
		while ((de = readdir(d))) {
			char cpath[128];

			if (de->d_name[0] == '.')
				continue;
			snprintf(cpath, sizeof(cpath), "/proc/%d/task/%s/children", pids[i], de->d_name);
			if (read_file(cpath, buf, sizeof(buf)) <= 0)
				continue;
			for (tok = strtok_r(buf, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
				if (nr < max)
					pids[nr++] = atoi(tok);
		}
		closedir(d);
	}
	/* restore may re-create children in another order: compare by pid, root first */
	qsort(pids + 1, nr - 1, sizeof(int), cmp_int);
	return nr;
}

static void status_field(const char *path, const char *field, char *out, size_t len)
{
	char buf[4096], *p, key[64];
	size_t n;

	snprintf(out, len, "-");
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return;
	snprintf(key, sizeof(key), "\n%s:", field);
	p = strstr(buf, key);
	if (!p)
		return;
	p += strlen(key);
	while (*p == ' ' || *p == '\t')
		p++;
	n = strcspn(p, "\n");
	while (n && p[n - 1] == ' ')
		n--;
	snprintf(out, len, "'%.*s'", (int)n, p);
}

/*
 * One line per thread ("pid/tid features 'x' locked 'y'") and per shadow-stack
 * mapping ("pid ss start-end").  Returns the number of pids in the tree.
 */
static int tree_state(int root, char *out, size_t len, int *pids)
{
	int nr = tree_pids(root, pids, MAX_PIDS), i;
	size_t off = 0;

	out[0] = '\0';
	for (i = 0; i < nr; i++) {
		char path[128], feat[128], lock[128], line[512], range[64] = "";
		static int tids[MAX_TIDS];
		int nt = 0, j;
		struct dirent *de;
		FILE *f;
		DIR *d;

		snprintf(path, sizeof(path), "/proc/%d/task", pids[i]);
		d = opendir(path);
		if (!d) {
			off += snprintf(out + off, len - off, "%d gone\n", pids[i]);
			if (off >= len)
				off = len - 1;
			continue;
		}
		while ((de = readdir(d)) && nt < MAX_TIDS)
			if (de->d_name[0] != '.')
				tids[nt++] = atoi(de->d_name);
		closedir(d);
		qsort(tids, nt, sizeof(int), cmp_int);
		for (j = 0; j < nt && off < len; j++) {
			snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pids[i], tids[j]);
			status_field(path, "x86_Thread_features", feat, sizeof(feat));
			status_field(path, "x86_Thread_features_locked", lock, sizeof(lock));
			off += snprintf(out + off, len - off, "task %d/%d features: %s\ntask %d/%d locked: %s\n", pids[i],
					tids[j], feat, pids[i], tids[j], lock);
			if (off >= len)
				off = len - 1;
		}
		snprintf(path, sizeof(path), "/proc/%d/smaps", pids[i]);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f) && off < len) {
			char r[64], perms[8];

			if (sscanf(line, "%63s %7s", r, perms) == 2 && strchr(r, '-') && strlen(perms) == 4) {
				snprintf(range, sizeof(range), "%s", r);
				continue;
			}
			if (!strncmp(line, "VmFlags:", 8) && strstr(line, " ss"))
				off += snprintf(out + off, len - off, "pid %d: ss %s\n", pids[i], range);
			if (off >= len)
				off = len - 1;
		}
		fclose(f);
	}
	return nr;
}

/*
 * newss=N: drop from @after the "ss" lines @before does not have (the new
 * stacks a restore makes when the owned ones are unknown); -1 when there
 * are neither none nor N of them (none: the kernel told criu-cet which
 * stacks it owns).
 */
static int drop_new_ss(const char *before, char *after, int n)
{
	char *line = after, *next;
	int dropped = 0;

	for (; *line; line = next) {
		char copy[128];
		size_t l;

		next = strchr(line, '\n');
		next = next ? next + 1 : line + strlen(line);
		l = next - line < (long)sizeof(copy) - 1 ? (size_t)(next - line) : sizeof(copy) - 1;
		memcpy(copy, line, l);
		copy[l] = '\0';
		if (!strstr(copy, ": ss ") || strstr(before, copy))
			continue;
		memmove(line, next, strlen(next) + 1);
		next = line;
		dropped++;
	}
	return dropped == n || dropped == 0 ? 0 : -1;
}

static int count_lines(const char *s, const char *what)
{
	int n = 0;

	for (; (s = strstr(s, what)); s++)
		n++;
	return n;
}

/* the first line that differs between two states, for a one-line detail */
static void state_diff(const char *a, const char *b, char *out, size_t len)
{
	int ssa = count_lines(a, ": ss "), ssb = count_lines(b, ": ss ");
	size_t off = 0;

	if (ssa != ssb)
		off = snprintf(out, len, "%d ss mappings -> %d; ", ssa, ssb);
	while (*a || *b) {
		size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n"), p = 0;

		if (la != lb || strncmp(a, b, la)) {
			/* "task 1/1 locked: 'x'" vs the same field: name it once */
			const char *colon = memchr(a, ':', la);

			if (colon && !strncmp(a, b, colon - a + 1))
				p = colon - a + 2;
			snprintf(out + off, len - off, "%.*s%.*s -> %.*s", (int)p, a, la ? (int)(la - p) : 9,
				 la ? a + p : "(nothing)", lb ? (int)(lb - p) : 9, lb ? b + p : "(nothing)");
			return;
		}
		a += la + (a[la] == '\n');
		b += lb + (b[lb] == '\n');
	}
	snprintf(out, len, "identical");
}

/* ---- one test ---- */

/* --expect-restore-error: refused with that message, and no task left behind */
static void restore_refused(const struct test *t, int r, const char *err, pid_t pid)
{
	char log[600], text[400] = "";
	int alive;

	if (!r) {
		kill(pid, SIGKILL);
		reap_all();
		report("FAIL", t, "restore did not fail (expected: %s)", expect_restore_error);
		return;
	}
	/* criu kills what it had started of the task: give it a moment to go */
	alive = wait_gone(&pid, 1, 10) != 0;
	reap_all();
	snprintf(log, sizeof(log), "%s/%s/%s/img1/restore.log", workroot, flavour, t->name);
	if (!log_has(log, expect_restore_error, text, sizeof(text)))
		report("FAIL", t, "restore failed, but not with '%s': %s", expect_restore_error, err);
	else if (alive)
		report("FAIL", t, "restore refused, but pid %d is alive", pid);
	else
		report_pass(t, "outcome=refused task=none", "restore refused as meant, no task left: %s", text);
}

/* run criu (or rpc_cet) @argv doing @action: 0, or -1 and the first error of its log */
static int run_criu_argv(char *const argv[], const char *work, const char *action, const char *imgdir, char *err,
		       size_t errlen)
{
	char log[600], out[600];
	int status, r;
	pid_t c;

	snprintf(out, sizeof(out), "%s/criu.out", work);
	c = spawn(argv, work, out, 0);
	if (c < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		return -1;
	}
	r = wait_timeout(c, &status, 120);
	if (r) {
		kill(c, SIGKILL);
		waitpid(c, NULL, 0);
		snprintf(err, errlen, "criu %s did not finish in 120 s", action);
		return -1;
	}
	if (status) {
		char why[32];

		snprintf(log, sizeof(log), "%s/%s.log", imgdir, action);
		criu_error(log, err, errlen);
		show_log_errors(log, action);
		describe_status(status, why, sizeof(why));
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 1) {
			size_t l = strlen(err);

			snprintf(err + l, errlen - l, " [criu %s]", why);
		}
		return -1;
	}
	return 0;
}

/*
 * --rpc swrk|service: dump and restore through CRIU's RPC (rpc_cet, with
 * criu-cet's libcriu), the way container runtimes call criu: "swrk" starts
 * `criu swrk` for each request; "service" sends them to one `criu service`
 * the runner starts as its child (so that the trees its workers restore
 * come to the runner, the subreaper, when the workers exit).
 */
static const char *rpc;
static char service_sock[300];
static char *service_opts[] = { "--address", service_sock, NULL };

static int run_rpc(const char *action, const char *work, const char *imgdir, int pid, char *err, size_t errlen)
{
	char tstr[16], rpid[600];
	char *argv[12];
	int n = 0;

	argv[n++] = "/lab/bin/rpc_cet";
	argv[n++] = service_sock[0] ? "--service" : "--criu";
	argv[n++] = service_sock[0] ? service_sock : (char *)criu;
	if (!strcmp(action, "restore")) {
		snprintf(rpid, sizeof(rpid), "%s/restore.pid", work);
		unlink(rpid);
		argv[n++] = "--pidfile";
		argv[n++] = rpid;
		argv[n++] = "restore";
	} else {
		snprintf(tstr, sizeof(tstr), "%d", pid);
		argv[n++] = "dump";
		argv[n++] = tstr;
	}
	argv[n++] = (char *)imgdir;
	if (mode == MODE_LEAVE_RUNNING && strcmp(action, "restore"))
		argv[n++] = "leave-running";
	argv[n] = NULL;
	return run_criu_argv(argv, work, action, imgdir, err, errlen);
}

/*
 * criu @action (dump, pre-dump, restore) on @imgdir, @extra (NULL or a
 * NULL-terminated list) added to its options; 0, or -1 and the first error
 */
static int run_criu(const char *action, const char *work, const char *imgdir, int pid, char *const extra[],
		    char *err, size_t errlen)
{
	char tstr[16], rpid[600], logname[32];
	char *argv[32];
	int n = 0;

	if (rpc)
		return run_rpc(action, work, imgdir, pid, err, errlen);
	snprintf(logname, sizeof(logname), "%s.log", action);
	argv[n++] = (char *)criu;
	argv[n++] = (char *)action;
	argv[n++] = "--no-default-config";
	argv[n++] = "-D";
	argv[n++] = (char *)imgdir;
	argv[n++] = "-o";
	argv[n++] = logname;
	argv[n++] = "-v4";
	if (strcmp(action, "restore")) {
		snprintf(tstr, sizeof(tstr), "%d", pid);
		argv[n++] = "-t";
		argv[n++] = tstr;
		argv[n++] = "--timeout";
		argv[n++] = "10";
		if (mode == MODE_LEAVE_RUNNING)
			argv[n++] = "--leave-running";
	} else {
		snprintf(rpid, sizeof(rpid), "%s/restore.pid", work);
		unlink(rpid);
		argv[n++] = "--restore-detached";
		argv[n++] = "--pidfile";
		argv[n++] = rpid;
	}
	while (extra && *extra && n < 31)
		argv[n++] = *extra++;
	argv[n] = NULL;
	return run_criu_argv(argv, work, action, imgdir, err, errlen);
}

/* ---- criu daemons ---- */

static void kill_daemon(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

/*
 * A criu daemon (criu service) of @imgdir in the foreground, ready
 * when this returns (it says so on --status-fd): its pid, or -1 and @err.
 */
static pid_t start_daemon(const char *what, const char *work, const char *imgdir, char *const extra[], char *err,
			  size_t errlen)
{
	char log[64], fdstr[16], out[600], c;
	char *argv[20] = { (char *)criu, (char *)what, "--no-default-config", "-D", (char *)imgdir, "-o", log,
			   "-v4", "--status-fd", fdstr };
	struct pollfd pfd;
	int n = 10, p[2];
	pid_t pid;

	while (extra && *extra && n < 19)
		argv[n++] = *extra++;
	argv[n] = NULL;
	if (pipe(p)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	snprintf(log, sizeof(log), "%s.log", what);
	snprintf(fdstr, sizeof(fdstr), "%d", p[1]);
	snprintf(out, sizeof(out), "%s/criu.out", work);
	pid = spawn(argv, work, out, 0);
	close(p[1]);
	pfd.fd = p[0];
	pfd.events = POLLIN;
	if (pid < 0 || poll(&pfd, 1, 30000) != 1 || read(p[0], &c, 1) != 1) {
		snprintf(err, errlen, "criu %s did not get ready", what);
		kill_daemon(pid);
		pid = -1;
	}
	close(p[0]);
	return pid;
}

/* Does the file at @path hold @text yet? */
static int file_has(const char *path, const char *text)
{
	static char buf[1 << 20];

	return read_file(path, buf, sizeof(buf)) > 0 && strstr(buf, text);
}

/*
 * criu dump, made to die on the way (see MODE_CRIU_DEATH).  Says in @how
 * how criu ended; -1 when it did not die as meant.
 */
static int run_criu_death(const char *work, const char *imgdir, int pid, char *how, size_t len)
{
	char tstr[16], log[600], out[600], why[64];
	char *argv[] = { (char *)criu, "dump", "--no-default-config", "-D", (char *)imgdir, "-o", "dump.log", "-v4",
			 "-t", tstr, "--timeout", "10", "--leave-running", NULL };
	const char *marker = !strncmp(death, "kill-at=", 8) ? death + 8 : NULL;
	int status, killed = 0;
	double end = now() + 120;
	pid_t c;

	snprintf(tstr, sizeof(tstr), "%d", pid);
	snprintf(log, sizeof(log), "%s/dump.log", imgdir);
	snprintf(out, sizeof(out), "%s/criu.out", work);
	if (!strncmp(death, "fault=", 6))
		setenv("CRIU_FAULT", death + 6, 1);
	c = spawn(argv, work, out, 0);
	unsetenv("CRIU_FAULT");
	while (waitpid(c, &status, WNOHANG) != c) {
		if (now() > end) {
			kill(c, SIGKILL);
			waitpid(c, NULL, 0);
			snprintf(how, len, "criu dump did not end in 120 s");
			return -1;
		}
		if (marker && !killed && file_has(log, marker)) {
			kill(c, SIGKILL);
			killed = 1;
		}
		msleep(marker && !killed ? 1 : 10);
	}
	describe_status(status, why, sizeof(why));
	if (marker && !killed) {
		snprintf(how, len, "criu %s before its log said '%s'", why, marker);
		return -1;
	}
	if (!status) {
		snprintf(how, len, "criu dump succeeded: it was meant to die (%s)", death);
		return -1;
	}
	if (marker)
		snprintf(how, len, "criu SIGKILLed when its log said '%s'", marker);
	else
		snprintf(how, len, "criu with CRIU_FAULT=%s: %s", death + 6, why);
	return 0;
}

/* dump-only: what the other boot needs besides the images */
static int save_dumped(const char *work, const char *state)
{
	char path[300];
	FILE *f;

	snprintf(path, sizeof(path), "%s/state.before", work);
	f = fopen(path, "we");
	if (!f || fputs(state, f) < 0 || fclose(f))
		return -1;
	return 0;
}

/* restore-only: the dumped test's pid and state, from the work directory */
static int load_dumped(const struct test *t, const char *work, pid_t *pid, char *state, size_t len)
{
	char path[300], buf[32];

	snprintf(path, sizeof(path), "%s/%s.pid", work, t->name);
	if (read_file(path, buf, sizeof(buf)) <= 0 || (*pid = atoi(buf)) <= 0) {
		report("FAIL", t, "restore-only: no dumped test in %s", work);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/state.before", work);
	if (read_file(path, state, len) <= 0) {
		report("FAIL", t, "restore-only: no %s", path);
		return -1;
	}
	return 0;
}

/* A test that passed: what it went through, as prose and as fields. */
static void report_outcome(const struct test *t, const char *info, const struct verdict *v, int usr2_sent)
{
	const char *via = !rpc ? "cli" : service_sock[0] ? "service" : "swrk";
	char fields[96];

	if (nocr) {
		report_pass(t, "outcome=nocr", "no C/R%s: %s", usr2_sent ? " (SIGUSR2 checks)" : "", v->info);
	} else if (mode == MODE_LEAVE_RUNNING) {
		snprintf(fields, sizeof(fields), "outcome=ran-on dump=leave-running via=%s", via);
		report_pass(t, fields, "dumped with --leave-running, ran on with its state: %s", v->info);
	} else if (mode == MODE_DUMP_FAIL || mode == MODE_CRIU_DEATH) {
		report_pass(t, mode == MODE_DUMP_FAIL ? "outcome=ran-on dump=failed" : "outcome=ran-on dump=criu-died",
			    "%s, ran on with its state: %s", info, v->info);
	} else if (mode == MODE_RESTORE_ONLY) {
		report_pass(t, "outcome=kept restore=imported", "restored from another boot's images, state kept: %s",
			    v->info);
	} else {
		snprintf(fields, sizeof(fields), "outcome=kept cycles=%d via=%s", t->cycles, via);
		report_pass(t, fields, "C/R, state kept: %s", v->info);
	}
}

static void run_test(const struct test *t)
{
	static char before[STATE_MAX], after[STATE_MAX];
	char work[256], bin[256], pidfile[300], outarg[300], pidarg[300], buf[64], out[300];
	char cmd[600], problem[700] = "", kern[300], ksum[100], diff[600], why[64], info[300] = "";
	int pids[MAX_PIDS], npids = 0, status, cycle = 0, r, usr2_sent = 0;
	struct verdict v;
	struct stat st;
	pid_t launcher, pid;

	current_test = t->name;
	snprintf(bin, sizeof(bin), "%s/%s", testdir, t->name);
	if (stat(bin, &st)) {
		report("FAIL", t, "%s is missing (not built?)", bin);
		return;
	}
	if (!t->plain && !have_shstk) {
		report("SKIP", t, "no user_shstk in /proc/cpuinfo");
		return;
	}
	if (!nocr && access(criu, X_OK)) {
		report("SKIP", t, "no CRIU at %s", criu);
		return;
	}

	snprintf(work, sizeof(work), "%s/%s/%s", workroot, flavour, t->name);
	if (mode == MODE_RESTORE_ONLY) {
		if (load_dumped(t, work, &pid, before, sizeof(before)))
			return;
		goto cycles;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", work);
	if (system(cmd)) {
		report("FAIL", t, "cannot clean %s", work);
		return;
	}
	snprintf(cmd, sizeof(cmd), "mkdir -p %s", work);
	if (system(cmd) || chmod(work, 0777)) {
		report("FAIL", t, "cannot create %s", work);
		return;
	}

	/* start: what "make NAME.pid" does for zdtm.py */
	snprintf(pidarg, sizeof(pidarg), "--pidfile=%s.pid", t->name);
	snprintf(outarg, sizeof(outarg), "--outfile=%s.out", t->name);
	snprintf(out, sizeof(out), "%s/launcher.out", work);
	{
		char *argv[] = { bin, pidarg, outarg, NULL };

		launcher = spawn(argv, work, out, 1);
	}
	r = wait_timeout(launcher, &status, 60);
	if (r || status) {
		if (r)
			kill(launcher, SIGKILL);
		/* a test that started but never said so must not live on into the next one */
		snprintf(pidfile, sizeof(pidfile), "%s/%s.pid", work, t->name);
		if (read_file(pidfile, buf, sizeof(buf)) > 0 && (pid = atoi(buf)) > 1) {
			npids = tree_pids(pid, pids, MAX_PIDS);
			kill_tree(pids, npids);
		}
		reap_all();
		read_verdict(work, t->name, &v);
		if (v.skip)
			report("SKIP", t, "%s", v.skip_why);
		else
			report("FAIL", t, "start: %s", v.first_err[0] ? v.first_err : "the test did not daemonise");
		return;
	}
	snprintf(pidfile, sizeof(pidfile), "%s/%s.pid", work, t->name);
	if (read_file(pidfile, buf, sizeof(buf)) <= 0 || (pid = atoi(buf)) <= 0) {
		report("FAIL", t, "start: no pid in %s", pidfile);
		return;
	}
	npids = tree_state(pid, before, sizeof(before), pids);

	if (nocr) {
		for (cycle = 0; cycle < t->cycles && t->usr2; cycle++) {
			kill(pid, SIGUSR2);
			usr2_sent++;
			msleep(200);
		}
	}
cycles:
	for (cycle = 1; !nocr && cycle <= t->cycles; cycle++) {
		char img[300], err[400], rpidfile[300];
		int rpid;

		snprintf(img, sizeof(img), "%s/img%d", work, cycle);
		if (mode == MODE_RESTORE_ONLY)
			goto restore;	/* dumped in another boot */
		npids = tree_state(pid, before, sizeof(before), pids);
		mkdir(img, 0777);
		if (mode == MODE_DUMP_FAIL) {
			if (mount("tmpfs", img, "tmpfs", 0, "size=16k")) {
				snprintf(problem, sizeof(problem), "cannot mount a small tmpfs: %s", strerror(errno));
				break;
			}
			r = run_criu("dump", work, img, pid, NULL, err, sizeof(err));
			umount2(img, MNT_DETACH);
			if (!r) {
				snprintf(problem, sizeof(problem), "cycle %d: the dump did not fail", cycle);
				break;
			}
			snprintf(info, sizeof(info), "dump failed as meant (%.120s)", err);
		} else if (mode == MODE_CRIU_DEATH) {
			if (run_criu_death(work, img, pid, err, sizeof(err))) {
				snprintf(problem, sizeof(problem), "cycle %d: %s", cycle, err);
				break;
			}
			snprintf(info, sizeof(info), "%.200s", err);
			msleep(200);	/* a parasite left alone leaves on its own */
		} else if (run_criu("dump", work, img, pid, NULL, err, sizeof(err))) {
			snprintf(problem, sizeof(problem), "cycle %d: dump failed: %s", cycle, err);
			break;
		}
		if (mode != MODE_CR && mode != MODE_DUMP_ONLY)
			goto check_alive;
		/* the dumped tree is killed by criu; reap it so its pids are free */
		if (wait_gone(pids, npids, 20)) {
			snprintf(problem, sizeof(problem), "cycle %d: the dumped tree did not go away", cycle);
			break;
		}
		if (mode == MODE_DUMP_ONLY) {
			if (save_dumped(work, before)) {
				report("FAIL", t, "dump-only: cannot save the state in %s", work);
				return;
			}
			snprintf(info, sizeof(info), "outcome=exported processes=%d ss=%d", npids,
				 count_lines(before, ": ss "));
			report_pass(t, info, "dumped for another boot");
			return;
		}
restore:
		r = run_criu("restore", work, img, pid, NULL, err, sizeof(err));
		if (expect_restore_error) {
			restore_refused(t, r, err, pid);
			return;
		}
		if (r) {
			snprintf(problem, sizeof(problem), "cycle %d: restore failed: %s", cycle, err);
			reap_all();
			pid = 0;
			break;
		}
		snprintf(rpidfile, sizeof(rpidfile), "%s/restore.pid", work);
		rpid = read_file(rpidfile, buf, sizeof(buf)) > 0 ? atoi(buf) : 0;
		if (rpid != pid) {
			snprintf(problem, sizeof(problem), "cycle %d: restored pid %d, dumped %d", cycle, rpid, pid);
			break;
		}
check_alive:
		msleep(100);
		if (t->usr2 && waitpid(pid, &status, WNOHANG) == 0) {
			kill(pid, SIGUSR2);
			usr2_sent++;
			msleep(300);
		}
		if (waitpid(pid, &status, WNOHANG) == pid) {
			describe_status(status, why, sizeof(why));
			kernel_report(pids, npids, kern, sizeof(kern));
			printf("zdtm_cet_run: %s.%s: kernel: %s\n", t->name, flavour, kern[0] ? kern : "(no report)");
			kernel_summary(kern, ksum, sizeof(ksum));
			snprintf(problem, sizeof(problem), "cycle %d: died after restore: %s%s%s%s", cycle, why,
				 ksum[0] ? " (" : "", ksum, ksum[0] ? ")" : "");
			pid = 0;
			break;
		}
		npids = tree_state(pid, after, sizeof(after), pids);
		if (t->new_ss && drop_new_ss(before, after, t->new_ss)) {
			snprintf(problem, sizeof(problem), "cycle %d: neither 0 nor %d new shadow-stack mapping(s) after restore",
				 cycle, t->new_ss);
			break;
		}
		if (strcmp(before, after)) {
			state_diff(before, after, diff, sizeof(diff));
			snprintf(problem, sizeof(problem), "cycle %d: %s", cycle, diff);
			break;
		}
	}
	if (cycle > t->cycles)
		cycle = t->cycles;

	/* stop: SIGTERM, wait for the test to exit, read its verdict */
	if (pid > 0) {
		kill(pid, SIGTERM);
		r = wait_timeout(pid, &status, 60);
		if (r) {
			kill_tree(pids, npids);
			if (!problem[0])
				snprintf(problem, sizeof(problem), "the test did not exit within 60 s of SIGTERM");
		} else if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			describe_status(status, why, sizeof(why));
			kernel_report(pids, npids, kern, sizeof(kern));
			if (kern[0])
				printf("zdtm_cet_run: %s.%s: kernel: %s\n", t->name, flavour, kern);
			kernel_summary(kern, ksum, sizeof(ksum));
			snprintf(info, sizeof(info), "then %s%s%s%s", why, ksum[0] ? " (" : "", ksum, ksum[0] ? ")" : "");
		}
	}
	kill_tree(pids, npids);
	read_verdict(work, t->name, &v);

	if (v.nr_err > 1) {
		size_t l = strlen(v.first_err);

		snprintf(v.first_err + l, sizeof(v.first_err) - l, " (+%d more)", v.nr_err - 1);
	}
	if (problem[0] || !v.pass)
		show_output(work, t->name);
	if (problem[0]) {
		/* the runner's finding, then how the test ended and what it said */
		report("FAIL", t, "%s%s%s%s%s", problem, info[0] ? "; " : "", info, v.first_err[0] ? "; test: " : "",
		       v.first_err);
	} else if (!v.found) {
		report("FAIL", t, "no output file; %s", info[0] ? info : "test vanished");
	} else if (v.pass) {
		report_outcome(t, info, &v, usr2_sent);
	} else if (v.skip) {
		report("SKIP", t, "%s", v.skip_why);
	} else {
		report("FAIL", t, "%s%s%s", v.first_err[0] ? v.first_err : "no PASS in the output",
		       info[0] ? "; " : "", info);
	}
}

/* ---- main ---- */

static int parse_list(struct test *tests, int max)
{
	char line[256];
	FILE *f = fopen(list, "re");
	int nr = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f) && nr < max) {
		struct test *t = &tests[nr];
		char *tok, *save;

		line[strcspn(line, "#\n")] = '\0';
		tok = strtok_r(line, " \t", &save);
		if (!tok)
			continue;
		memset(t, 0, sizeof(*t));
		snprintf(t->name, sizeof(t->name), "%s", tok);
		t->cycles = 1;
		while ((tok = strtok_r(NULL, " \t", &save))) {
			if (!strncmp(tok, "cycles=", 7))
				t->cycles = atoi(tok + 7) > 0 ? atoi(tok + 7) : 1;
			else if (!strcmp(tok, "usr2"))
				t->usr2 = 1;
			else if (!strcmp(tok, "plain"))
				t->plain = 1;
			else if (!strncmp(tok, "newss=", 6))
				t->new_ss = atoi(tok + 6);
		}
		if (only) {
			char pat[80];

			snprintf(pat, sizeof(pat), ",%s,", t->name);
			if (!strstr(only, pat))
				continue;
		}
		nr++;
	}
	fclose(f);
	return nr;
}

static void usage(void)
{
	fprintf(stderr, "usage: zdtm_cet_run --flavour NAME (--criu PATH | --nocr) [--dir DIR] [--list FILE]\n"
			"                    [--work DIR] [--only TEST,...] [--mode cr|leave-running|dump-fail|criu-death|\n"
			"                    dump-only|restore-only]\n"
			"                    [--death fault=N|kill-at=LOG-TEXT]\n"
			"                    [--rpc swrk|service]\n"
			"                    [--restore-nocap-sys-resource] [--restore-stack-hard KB]\n"
			"                    [--expect-restore-error TEXT]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static struct test tests[64];
	char cpuinfo[1 << 16], listbuf[300], onlybuf[1024];
	pid_t service = -1;
	int i, nr;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--nocr")) {
			nocr = 1;
			continue;
		}
		if (!strcmp(a, "--restore-nocap-sys-resource")) {
			restore_nocap = 1;
			continue;
		}
		if (!v)
			usage();
		if (!strcmp(a, "--flavour"))
			flavour = v;
		else if (!strcmp(a, "--criu"))
			criu = v;
		else if (!strcmp(a, "--dir"))
			testdir = v;
		else if (!strcmp(a, "--list"))
			list = v;
		else if (!strcmp(a, "--work"))
			workroot = v;
		else if (!strcmp(a, "--rpc")) {
			rpc = v;
			if (strcmp(v, "swrk") && strcmp(v, "service"))
				usage();
		}
		else if (!strcmp(a, "--death"))
			death = v;
		else if (!strcmp(a, "--restore-stack-hard"))
			restore_stack_hard_kb = atol(v);
		else if (!strcmp(a, "--expect-restore-error"))
			expect_restore_error = v;
		else if (!strcmp(a, "--mode")) {
			if (!strcmp(v, "leave-running"))
				mode = MODE_LEAVE_RUNNING;
			else if (!strcmp(v, "dump-fail"))
				mode = MODE_DUMP_FAIL;
			else if (!strcmp(v, "criu-death"))
				mode = MODE_CRIU_DEATH;
			else if (!strcmp(v, "dump-only"))
				mode = MODE_DUMP_ONLY;
			else if (!strcmp(v, "restore-only"))
				mode = MODE_RESTORE_ONLY;
			else if (strcmp(v, "cr"))
				usage();
		}
		else if (!strcmp(a, "--only")) {
			snprintf(onlybuf, sizeof(onlybuf), ",%s,", v);
			only = onlybuf;
		} else
			usage();
		i++;
	}
	if (!flavour || (!criu && !nocr) || (mode == MODE_CRIU_DEATH && !death))
		usage();
	if (!list) {
		snprintf(listbuf, sizeof(listbuf), "%s/lab.list", testdir);
		list = listbuf;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1)) {
		perror("PR_SET_CHILD_SUBREAPER");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	have_shstk = read_file("/proc/cpuinfo", cpuinfo, sizeof(cpuinfo)) > 0 && strstr(cpuinfo, " user_shstk");

	nr = parse_list(tests, 64);
	if (nr <= 0) {
		printf("@@LAB FAIL zdtm.cet.%s no tests in %s\n", flavour, list);
		return 1;
	}
	if (rpc && !strcmp(rpc, "service")) {
		char dir[300], err[400];

		snprintf(dir, sizeof(dir), "%s/%s", workroot, flavour);
		snprintf(service_sock, sizeof(service_sock), "%s/criu-service.sock", dir);
		snprintf(err, sizeof(err), "mkdir -p %s", dir);
		if (system(err) || (service = start_daemon("service", dir, dir, service_opts, err, sizeof(err))) < 0) {
			printf("@@LAB FAIL zdtm.cet.%s %s\n", flavour, err);
			return 1;
		}
	}
	for (i = 0; i < nr; i++)
		run_test(&tests[i]);
	if (service > 0) {
		kill(service, SIGTERM);
		waitpid(service, NULL, 0);
	}
	return 0;
}
