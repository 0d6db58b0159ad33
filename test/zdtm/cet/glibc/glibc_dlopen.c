// SPDX-License-Identifier: GPL-2.0
/*
 * dlopen across checkpoint/restore with glibc's shadow stack on and
 * locked: glibc checks each object it loads for the SHSTK marking and
 * refuses an unmarked one ("rebuild shared object with SHSTK support
 * enabled") rather than run it on a shadow stack.  Before the dump the
 * unmarked library is refused; after restore a marked library loads and
 * its code runs 500 frames deep (its returns checked by the CPU), and the
 * unmarked one is refused exactly as before, the shadow stack still on.
 * Both libraries sit next to the test (libcet_marked.so,
 * libcet_unmarked.so, from cet_dl_lib.c).
 */
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>

#include "cetlib.h"

const char *test_doc = "dlopen of a marked library after restore works, of an unmarked one is refused";
const char *test_author = "criu-cet";

#define LIB_DEPTH	500

static char marked[PATH_MAX], unmarked[PATH_MAX], refusal_before[512];

static int lib_paths(void)
{
	char exe[PATH_MAX], *dir;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n < 0)
		return pr_perror("readlink /proc/self/exe");
	exe[n] = 0;
	dir = dirname(exe);
	snprintf(marked, sizeof(marked), "%s/libcet_marked.so", dir);
	snprintf(unmarked, sizeof(unmarked), "%s/libcet_unmarked.so", dir);
	return 0;
}

/* The unmarked library is refused with glibc's SHSTK reason; that reason in @why */
static int refused(const char *when, char *why, size_t len)
{
	void *h = dlopen(unmarked, RTLD_NOW);
	const char *err;

	if (h) {
		dlclose(h);
		return fail("%s: the unmarked %s was loaded on a locked shadow stack", when, unmarked);
	}
	err = dlerror();
	snprintf(why, len, "%s", err ? err : "");
	if (!strstr(why, "SHSTK"))
		return fail("%s: the unmarked library refused for another reason: %s", when, why);
	return cet_glibc_expect_shstk(when);
}

static int load_marked(void)
{
	unsigned long (*recurse)(int), got, want = (unsigned long)LIB_DEPTH * (LIB_DEPTH + 1) / 2;
	void *h = dlopen(marked, RTLD_NOW);

	if (!h)
		return fail("dlopen of the marked %s after restore: %s", marked, dlerror());
	recurse = (unsigned long (*)(int))dlsym(h, "cet_dl_recurse");
	if (!recurse)
		return fail("dlsym cet_dl_recurse: %s", dlerror());
	got = recurse(LIB_DEPTH);
	dlclose(h);
	if (got != want)
		return fail("the marked library's recursion returned %lu, expected %lu", got, want);
	return 0;
}

static struct cet_ckpt ckpt = { .who = "main", .check = cet_glibc_check };

static int run(void)
{
	char refusal_after[512];
	int bad;

	if (lib_paths())
		return 1;
	if (refused("before the dump", refusal_before, sizeof(refusal_before)))
		return 1;
	bad = cet_recurse(300, cet_rec_checkpoint, &ckpt, "main");
	bad |= load_marked();
	bad |= refused("after restore", refusal_after, sizeof(refusal_after));
	if (strcmp(refusal_before, refusal_after))
		bad |= fail("refused before the dump with '%s', after restore with '%s'", refusal_before,
			    refusal_after);
	return cet_pass(bad, "marked library loaded and run %d frames deep after restore; unmarked refused "
			"before and after: %s\n", LIB_DEPTH, refusal_after);
}

CET_GLIBC_TEST_MAIN(run)
