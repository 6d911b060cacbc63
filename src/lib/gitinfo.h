/*
 * The commit a source checkout is at, read from its .git without running
 * git (which the GPU node may not have): HEAD, loose refs, packed-refs and
 * worktree/submodule "gitdir:" files. An exported tree may instead carry a
 * COMMIT file at its root, which is used when there is no .git.
 */
#ifndef ZLB_GITINFO_H
#define ZLB_GITINFO_H

/* Fresh 40-hex commit id, or NULL when it cannot be determined. */
char *git_head_commit(const char *checkout);

#endif
