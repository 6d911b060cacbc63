/*
 * gitinfo.c: the commit of a checkout read from hand-built .git layouts
 * (no git binary involved), and the COMMIT file of an exported tree.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "lib/gitinfo.h"
#include "lib/paths.h"
#include "lib/strbuf.h"

#define C1 "0123456789abcdef0123456789abcdef01234567"
#define C2 "fedcba9876543210fedcba9876543210fedcba98"
#define C3 "1111111111222222222233333333334444444444"
#define C4 "aaaaaaaaaabbbbbbbbbbccccccccccdddddddddd"

struct fixture {
	char dir[64];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	strcpy(f->dir, "/tmp/zlb-gitinfo-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	int r = remove_tree(f->dir);

	free(f);
	return r ? -1 : 0;
}

static void put(const char *dir, const char *rel, const char *text)
{
	char *path = path_join(dir, rel);
	char *parent = path_dirname(path);

	assert_int_equal(mkdir_p(parent, 0755), 0);
	assert_int_equal(write_file_atomic(path, text, strlen(text)), 0);
	free(parent);
	free(path);
}

static void assert_head(const char *checkout, const char *want)
{
	char *got = git_head_commit(checkout);

	if (!want) {
		if (got)
			fail_msg("expected no commit for %s, got %s", checkout, got);
		return;
	}
	if (!got)
		fail_msg("no commit found for %s, want %s", checkout, want);
	assert_string_equal(got, want);
	free(got);
}

static void detached_head(void **state)
{
	struct fixture *f = *state;

	put(f->dir, ".git/HEAD", C1 "\n");
	assert_head(f->dir, C1);

	/* No trailing newline is fine too. */
	put(f->dir, ".git/HEAD", C2);
	assert_head(f->dir, C2);

	/* Not a commit id: nothing. */
	put(f->dir, ".git/HEAD", "0123456789abcdef\n");
	assert_head(f->dir, NULL);
	put(f->dir, ".git/HEAD", "0123456789abcdef0123456789abcdef0123456z\n");
	assert_head(f->dir, NULL);
}

static void head_to_loose_ref(void **state)
{
	struct fixture *f = *state;

	put(f->dir, ".git/HEAD", "ref: refs/heads/main\n");
	put(f->dir, ".git/refs/heads/main", C1 "\n");
	put(f->dir, ".git/refs/heads/other", C2 "\n");
	assert_head(f->dir, C1);

	/* A branch with a slash in its name. */
	put(f->dir, ".git/HEAD", "ref: refs/heads/feature/x\n");
	put(f->dir, ".git/refs/heads/feature/x", C3 "\n");
	assert_head(f->dir, C3);

	/* A loose ref beats a stale packed one, as in git. */
	put(f->dir, ".git/HEAD", "ref: refs/heads/main\n");
	put(f->dir, ".git/packed-refs", C4 " refs/heads/main\n");
	assert_head(f->dir, C1);
}

static void head_to_packed_ref(void **state)
{
	struct fixture *f = *state;

	put(f->dir, ".git/HEAD", "ref: refs/heads/main\n");
	put(f->dir, ".git/refs/heads/.keep", "");
	put(f->dir, ".git/packed-refs",
	    "# pack-refs with: peeled fully-peeled sorted \n"
	    C2 " refs/heads/main-old\n"
	    C1 " refs/heads/main\n"
	    C3 " refs/tags/v1\n"
	    "^" C4 "\n");
	assert_head(f->dir, C1);

	/* A prefix of a packed name is not that name. */
	put(f->dir, ".git/HEAD", "ref: refs/heads/mai\n");
	assert_head(f->dir, NULL);

	/* A peeled line ("^...") is never taken for a ref. */
	put(f->dir, ".git/HEAD", "ref: refs/tags/v1\n");
	assert_head(f->dir, C3);

	/* An unborn branch: no ref anywhere. */
	put(f->dir, ".git/HEAD", "ref: refs/heads/unborn\n");
	assert_head(f->dir, NULL);
}

static void worktree_gitdir_file(void **state)
{
	struct fixture *f = *state;
	char *main_repo = path_join(f->dir, "main");
	char *wt = path_join(f->dir, "wt");
	char *line;

	/* The main repository, with its branches. */
	put(main_repo, ".git/HEAD", "ref: refs/heads/main\n");
	put(main_repo, ".git/refs/heads/main", C1 "\n");
	put(main_repo, ".git/packed-refs", C3 " refs/heads/packed-feature\n");
	put(main_repo, ".git/refs/heads/feature", C2 "\n");

	/* A worktree: .git is a file; its gitdir has HEAD and commondir. */
	line = xstrfmt("gitdir: %s/.git/worktrees/wt\n", main_repo);
	put(wt, ".git", line);
	free(line);
	put(main_repo, ".git/worktrees/wt/HEAD", "ref: refs/heads/feature\n");
	put(main_repo, ".git/worktrees/wt/commondir", "../..\n");
	assert_head(wt, C2);
	assert_head(main_repo, C1);

	/* The branch packed in the common directory. */
	put(main_repo, ".git/worktrees/wt/HEAD", "ref: refs/heads/packed-feature\n");
	assert_head(wt, C3);

	/* Detached in the worktree. */
	put(main_repo, ".git/worktrees/wt/HEAD", C4 "\n");
	assert_head(wt, C4);

	/* A relative gitdir is relative to the checkout. */
	put(wt, ".git", "gitdir: ../main/.git/worktrees/wt\n");
	put(main_repo, ".git/worktrees/wt/HEAD", "ref: refs/heads/feature\n");
	assert_head(wt, C2);

	/* A submodule: gitdir without commondir. */
	put(main_repo, "sub/.git", "gitdir: ../.git/modules/sub\n");
	put(main_repo, ".git/modules/sub/HEAD", "ref: refs/heads/master\n");
	put(main_repo, ".git/modules/sub/refs/heads/master", C3 "\n");
	{
		char *sub = path_join(main_repo, "sub");
		assert_head(sub, C3);
		free(sub);
	}

	/* A .git file that is not a gitdir pointer. */
	put(wt, ".git", "nonsense\n");
	assert_head(wt, NULL);

	free(main_repo);
	free(wt);
}

static void commit_file_without_git(void **state)
{
	struct fixture *f = *state;

	put(f->dir, "COMMIT", C4 "\n");
	assert_head(f->dir, C4);

	/* Surrounding blanks are trimmed. */
	put(f->dir, "COMMIT", "  " C2 "  \n");
	assert_head(f->dir, C2);

	put(f->dir, "COMMIT", "v1.2.3\n");
	assert_head(f->dir, NULL);
	put(f->dir, "COMMIT", C4 "0\n");
	assert_head(f->dir, NULL);

	/* A .git directory wins over COMMIT. */
	put(f->dir, "COMMIT", C4 "\n");
	put(f->dir, ".git/HEAD", C1 "\n");
	assert_head(f->dir, C1);
}

static void nothing_there(void **state)
{
	struct fixture *f = *state;
	char *missing = path_join(f->dir, "missing");

	assert_head(f->dir, NULL);
	assert_head(missing, NULL);
	/* A .git directory without HEAD. */
	put(f->dir, ".git/config", "[core]\n");
	assert_head(f->dir, NULL);
	free(missing);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(detached_head, setup, teardown),
		cmocka_unit_test_setup_teardown(head_to_loose_ref, setup, teardown),
		cmocka_unit_test_setup_teardown(head_to_packed_ref, setup, teardown),
		cmocka_unit_test_setup_teardown(worktree_gitdir_file, setup, teardown),
		cmocka_unit_test_setup_teardown(commit_file_without_git, setup, teardown),
		cmocka_unit_test_setup_teardown(nothing_there, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
