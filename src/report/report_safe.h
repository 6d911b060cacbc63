/*
 * What a report may read and link to. A report reads directories someone
 * else wrote (a batch copied from a cluster, an A/B from a colleague), and
 * turns paths into links a reader will click: so nothing is read or
 * linked through a symbolic link that leads out of the directory being
 * reported, and no path taken from a file (ops_status.csv's run_dir) is
 * used before it is shown to stay inside.
 */
#ifndef ZLB_REPORT_SAFE_H
#define ZLB_REPORT_SAFE_H

/*
 * Is path (which must exist) root itself or below it once both are
 * resolved (symbolic links, "..")? root_real is already resolved
 * (realpath). Returns 1 inside, 0 outside or unresolvable.
 */
int report_path_inside(const char *root_real, const char *path);

/*
 * Walk root down to depth levels of directories (without following
 * links, and without entering IR trees: ttgir/, ir/, autotune_records/,
 * nor names starting with '.') and refuse any symbolic link that resolves
 * outside root. A dangling link is harmless (nothing can be read through
 * it) and is let be. Returns 0, or -1 with error() naming the link, where
 * it leads and what to do.
 */
int report_check_tree(const char *root, int depth);

/*
 * The path of target relative to the directory base (both absolute and
 * resolved): "../runs/x/ttgir/a.ttgir". Fresh allocation.
 */
char *report_relative_path(const char *base, const char *target);

#endif
