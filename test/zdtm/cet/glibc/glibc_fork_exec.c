// SPDX-License-Identifier: GPL-2.0
/*
 * fork and exec with glibc's shadow stack, before the dump and after
 * restore.  A forked child inherits the shadow stack (a copy at the same
 * address), on and locked, and recurses on it.  An exec'd program starts
 * without one and glibc's loader turns it on and locks it again, as the
 * tunable in the (restored) environment says: the test execs itself with
 * CET_EXEC_PROBE set, and that image prints its status and lock mask.
 * After restore both must behave exactly as before the dump.
 */
#include "cetlib.h"

const char *test_doc = "fork and exec on glibc's shadow stack after restore";
const char *test_author = "criu-cet";

/* A forked child: the inherited shadow stack on, locked, and usable */
static int child_runs(const char *when)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return pr_perror("fork");
	if (!pid)
		_exit(cet_glibc_expect_shstk("forked child") | cet_recurse(300, cet_rec_turn, NULL, "forked child"));
	if (waitpid(pid, &status, 0) != pid)
		return pr_perror("waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return fail("%s: the forked child ended with status %#x", when, status);
	return 0;
}

/* What an exec'd image says of its shadow stack: "status mask" in @out */
static int exec_probe(const char *when, char *out, size_t len)
{
	int fds[2], status;
	ssize_t n;
	pid_t pid;

	if (pipe(fds))
		return pr_perror("pipe");
	pid = fork();
	if (pid < 0)
		return pr_perror("fork");
	if (!pid) {
		dup2(fds[1], STDOUT_FILENO);
		setenv("CET_EXEC_PROBE", "1", 1);
		execl("/proc/self/exe", "glibc_fork_exec", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	n = read(fds[0], out, len - 1);
	close(fds[0]);
	out[n > 0 ? n : 0] = 0;
	if (waitpid(pid, &status, 0) != pid)
		return pr_perror("waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return fail("%s: the exec'd image ended with status %#x (%s)", when, status, out);
	if (strcmp(out, "0x1 0xffffffffffffffff\n"))
		return fail("%s: the exec'd image has status and lock mask %s, want shstk, all locked", when, out);
	return 0;
}

static char probe_before[64];

static int check(struct cet_ckpt *c, int restored, const char *when)
{
	char probe[64];
	int bad = cet_glibc_check(c, restored, when);
	bad |= child_runs(when);
	bad |= exec_probe(when, restored ? probe : probe_before, sizeof(probe));
	if (restored && strcmp(probe, probe_before))
		bad |= fail("the exec'd image said '%s' before the dump, '%s' after", probe_before, probe);
	return bad;
}

static struct cet_ckpt ckpt = { .who = "main", .check = check };

static int run(void)
{
	return cet_pass(cet_recurse(400, cet_rec_checkpoint, &ckpt, "main"),
			"a forked child ran on its inherited shadow stack and an exec'd image got glibc's "
			"(status and lock mask %s) before the dump and after restore\n", strtok(probe_before, "\n"));
}

int main(int argc, char **argv)
{
	if (getenv("CET_EXEC_PROBE")) {
		printf("%#lx %#lx\n", cet_status(), cet_lock_mask());
		return 0;
	}
	test_init(argc, argv);
	if (cet_glibc_expect_shstk("main"))
		return 1;
	return run();
}
