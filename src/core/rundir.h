/*
 * Run directories: runs/<op>_<YYYYmmdd-HHMMSS>/, claimed with a bare
 * mkdir so that two runs starting in the same second (or two concurrent
 * zlb processes) never share one: the loser takes -2, -3, ...
 */
#ifndef ZLB_RUNDIR_H
#define ZLB_RUNDIR_H

#include <time.h>

/*
 * Create runs_dir if needed and claim a fresh directory for op (which must
 * satisfy name_is_safe()). *out gets its absolute path. Returns 0 or error().
 */
int rundir_claim(const char *runs_dir, const char *op, time_t when, char **out);

#endif
