/*
 * What a run's plugins wrote, read back: rows and how they were timed
 * (results.jsonl), test outcomes, markers and the runtime's provenance
 * (events.jsonl). Feeds the run's summary line and its identity.
 */
#ifndef ZLB_RUN_TALLY_H
#define ZLB_RUN_TALLY_H

#include <jansson.h>
#include <stddef.h>

struct run_tally {
	long rows, rows_graph, rows_direct, rows_failed;
	long rows_copy_engine; /* a graph-timed side held memcpy nodes: another caliber */
	long rows_no_kernels;  /* a side's graph held no kernel node: no measurement */
	long passed, failed, skipped;
	long xfailed;          /* of skipped: upstream xfail marks that failed as expected */
	long tuning_fallbacks; /* autotune sweeps timed directly: no row is affected */
	long tune_calls;       /* configs an autotuner timed through the plugin (TUNE_TIMING) */
	double tune_s;         /* the wall seconds those timings took: time that makes no row */
	json_t *markers;       /* event name -> count, for markers that weaken rows */
	json_t *runtime;       /* PROVENANCE fields */
	json_t *skips;         /* skip reasons */
	json_t *fallbacks;     /* "op dtype shape" of rows not graph-timed */
	json_t *copy_rows;     /* "op dtype shape" of rows with copy-engine nodes */
	json_t *no_kernel_rows; /* "op dtype shape" of rows with GRAPH_NO_KERNELS */
	json_t *warnings;      /* WARNING events' messages */
	json_t *autotune;      /* {recorded: {...}, replayed: {...}} from the plugin */
	json_t *inactive;      /* "<plugin>: <why>" of each plugin that stayed inactive */
	size_t bad_lines;      /* lines of either file that did not parse */
};

/* Read <run_dir>/results.jsonl and events.jsonl (absent files are empty). */
int run_tally_read(const char *run_dir, struct run_tally *t);
void run_tally_release(struct run_tally *t);

/* The timer a run actually used: graph, direct, graph+direct, or planned. */
const char *run_tally_timer(const struct run_tally *t, const char *planned);

#endif
