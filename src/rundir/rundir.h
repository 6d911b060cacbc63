/*
 * Run directories: runs/<op>_<YYYYmmdd-HHMMSS>/, claimed with a bare
 * mkdir so that two runs starting in the same second (or two concurrent
 * zlb processes) never share one: the loser takes -2, -3, ...
 */
#ifndef ZLB_RUNDIR_H
#define ZLB_RUNDIR_H

#include "lib/strvec.h"
#include <time.h>

/*
 * Create runs_dir if needed and claim a fresh directory for op (which must
 * satisfy name_is_safe()). *out gets its absolute path. Returns 0 or error().
 */
int rundir_claim(const char *runs_dir, const char *op, time_t when, char **out);

/*
 * Claim exactly path (zlb run --run-dir): its parent is created; path is
 * created, or taken when it is an empty directory. A non-empty directory or
 * another kind of file is refused, so one run never mixes into another's
 * files. *out gets the absolute path. Returns 0 or error().
 */
int rundir_claim_exact(const char *path, char **out);

/*
 * Room kept for the end of a run. A file system that fills up while pytest
 * runs (its Triton cache, the plugins' files) must still take the run's
 * final identity, or the run reads "running" for ever. The reserve is a
 * file of RUNDIR_RESERVE_BYTES (allocated, not sparse) made as soon as the
 * directory is claimed and removed just before the run's last writes.
 */
#define RUNDIR_RESERVE_FILE ".zlb-reserve"
#define RUNDIR_RESERVE_BYTES (64 * 1024)

/* Make the reserve. 0, or -1 with error() (too little room: the sentence says so). */
int rundir_reserve(const char *run_dir);
/* Remove it (nothing said when it is not there). */
void rundir_release_reserve(const char *run_dir);

/* 1 when path is an empty directory, 0 when it is not (or is no directory). */
int dir_is_empty(const char *path);

/*
 * Is dir a run directory: does it hold run_identity.json (written first,
 * so even a run that crashed at once has it) or results.jsonl (an older
 * or hand-made run)? Readers of runs, single or in batches, ask this.
 */
int rundir_is_run(const char *dir);

/*
 * The runs path names, appended to runs (absolute): path itself when it is
 * a run, else the runs one or two levels below it (rounds, a batch of
 * operators, or both), in name order; a run's own subdirectories are not
 * searched. is_run says what a run is (rundir_is_run, or a reader's
 * wider notion). Returns how many were found, or -1 with error() when
 * path is not a directory. The one walk every reader of runs uses.
 */
int rundir_find(const char *path, int (*is_run)(const char *dir), struct strvec *runs);

#endif
