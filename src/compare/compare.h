/*
 * zlb compare: is build B faster or slower than build A, row by row, and
 * can the two be compared at all?
 *
 * Sides and rounds. Each side is one or more run directories. A run is a
 * round: one process that measured its rows once. A directory that is not
 * itself a run (no run_identity.json, no results.jsonl) stands for the runs
 * one or two levels below it, in name order: a directory of rounds, a batch
 * of operators, or both. For a row, every run of the side that measured it
 * successfully contributes one round; so rounds of one operator, batches of
 * many operators, and any mixture pair up the same way.
 *
 * Order of work (each step can stop the next):
 *   1. compare_load_identities: every run's run_identity.json, before any
 *      latency is read;
 *   2. compare_check_caliber: every caliber field (identity.h's list plus
 *      any extra key) must have one value across all runs of both sides.
 *      autotune_mode is the exception: record and replay mix by design (one
 *      run records, the others replay its configs); a compare
 *      in which no run replays is refused by name as record-vs-record
 *      (each run tuned itself, so a difference may be the autotuner's
 *      choice, not the compiler's).
 *      A run without an identity is a caliber problem. A side that records
 *      on a shared tuner cache gets a warning (its "tuning" may be an
 *      earlier run's cache, possibly of the other build), and so do runs
 *      whose configs come from more than one recording (see
 *      check_autotune_sources in compare.c);
 *   3. compare_load_results: results.jsonl rows, keyed by (op, op_name,
 *      dtype, shape_detail): op_name is part of the key because one test
 *      function can measure several operators over the same shapes. A key
 *      repeated within one run keeps its first row (the repeats are
 *      counted). Only SUCCESS rows give rounds;
 *   4. compare_analyse: rows with at least one SUCCESS round on each side
 *      are paired; the others are listed (only in A, only in B, or not
 *      successful on a side). For each paired row the gems latency (the
 *      Triton kernel under test) and, as a control, the torch latency (the
 *      same on both builds unless the machine changed) are compared by
 *      stats_compare (see stats_compare.h for the method), with a seed
 *      derived from --seed and the row's key, so a row's numbers do not
 *      depend on the other rows. Benjamini-Hochberg runs over the gems
 *      rows and, separately, over the torch rows (a control must not move
 *      the gems thresholds); each row gets its verdict.
 *
 * Rows whose measurement carries BENCHMARK_DIRECT_NO_CUDAGRAPH or
 * GRAPH_MEMCPY_NODES on either side (in any round), or an autotune replay
 * fallback (AUTOTUNE_REPLAY_FALLBACK: in the measurement's own
 * replay_fallbacks, else an event of the row's test node outside its
 * measurements, else an event of no test, for every row), are flagged:
 * their timing is another caliber than a clean graph replay, or a side did
 * not run the recorded configs (the reason and kernel are the row's). A row with GRAPH_NO_KERNELS on either side (in
 * any round: a measured graph without a kernel node, such as a view's) is
 * flagged and excluded: it measured nothing, so it gets no verdict, does
 * not count as SAME/FASTER/SLOWER and stays out of the FDR family.
 */
#ifndef ZLB_COMPARE_H
#define ZLB_COMPARE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "compare/stats_compare.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"

#define COMPARE_SCHEMA_VERSION 1
#define COMPARE_CSV "compare.csv"
#define COMPARE_JSON "compare.json"

struct compare_opts {
	double threshold;	/* verdict band, fraction (0.01 = 1%) */
	double fdr;		/* Benjamini-Hochberg level */
	double drift_floor;	/* assumed process drift beyond placement, fraction */
	unsigned nboot;		/* bootstrap replicates */
	uint64_t seed;
	double confidence;	/* 0.95 */
};

#define COMPARE_OPTS_INIT { 0.01, 0.05, 0.001, 2000, 1, 0.95 }

struct compare_run {
	char *dir;		/* absolute */
	json_t *identity;	/* NULL when absent or unreadable */
	int identity_state;	/* 0 read, 1 absent, -1 unreadable */
	char *identity_error;
	int has_results;
	size_t rows, skipped_lines, duplicates;
	size_t replay_fallbacks;	/* AUTOTUNE_REPLAY_FALLBACK events */
	int group;		/* its operator's index among both sides' (caliber check) */
};

struct compare_side {
	const char *name;	/* "A", "B" */
	struct compare_run *runs;
	size_t nr, alloc;
};

/* One measurement kind of a paired row. */
enum compare_kind { COMPARE_GEMS, COMPARE_TORCH, COMPARE_KINDS };

struct compare_rounds {
	struct stats_sample_set *set;	/* one per round; x owned */
	size_t nr, alloc;
};

struct compare_row {
	char *op, *op_name, *dtype, *shape;
	char *key;
	struct {
		size_t present;		/* runs that have the row */
		size_t success;		/* of them SUCCESS */
		struct strvec statuses;	/* distinct statuses seen */
		struct strvec markers;	/* distinct markers, all rounds, both kinds */
		struct strvec timers;	/* distinct timers ("graph", "direct") */
		struct strvec ks;	/* distinct "<kind>=<calls per replay>" of graph rows */
		/*
		 * The autotune replay points that fell back on this row, all
		 * rounds: "<reason>:<kernel>" and, at the same index, where it
		 * was found: "gems" or "torch" (that measurement's
		 * replay_fallbacks), "test" (an event of the row's test node
		 * outside any of its measurements), "run" (an event of no
		 * test: every row of the run). Each pair once.
		 */
		struct strvec fallbacks, fallback_from;
		size_t last_run;	/* 1 + index of the run that last added (duplicates) */
		size_t op_runs;		/* the rounds it could have (compare_analyse) */
		struct compare_rounds r[COMPARE_KINDS];
		/*
		 * NVML clocks event reasons (backends/nvml.h) its rounds' kept
		 * samples ran under, by kind, OR-ed: what held a clock down.
		 */
		unsigned long long clock_reasons[COMPARE_KINDS];
		/*
		 * The duty its rounds' kept samples ran at, by kind: the lowest
		 * below 1 (a power-capped measurement sampled again with the GPU
		 * idle in between, --power-duty), else 1.
		 */
		double duty[COMPARE_KINDS];
	} side[2];
	int paired;
	const char *unpaired_reason;	/* "only in A", "only in B", "not SUCCESS in A", ... */
	int fallback;			/* a flagged marker on either side */
	int excluded;			/* an excluding marker on either side: no verdict */
	int has[COMPARE_KINDS];		/* compared */
	struct stats_cmp res[COMPARE_KINDS];
	double q[COMPARE_KINDS];
	enum stats_verdict verdict[COMPARE_KINDS];
};

struct compare_counts {
	size_t n[4];		/* by enum stats_verdict */
	size_t compared;
};

struct compare {
	struct compare_opts opts;
	struct compare_side side[2];
	/* caliber check */
	struct strvec caliber_problems;	/* one line each, without "!!! [caliber] " */
	json_t *caliber_fields;		/* [{field, a: [...], b: [...]}] of differing fields */
	struct strvec warnings;
	size_t warnings_early;		/* those known after the caliber check */
	struct strvec notes;
	/* rows, in first-seen order (A's runs first) */
	struct compare_row *rows;
	size_t nr_rows, alloc_rows;
	size_t *map;			/* open-addressing index into rows */
	size_t map_cap;
	/* after analyse */
	size_t paired, only_a, only_b, not_success, fallback_rows;
	size_t excluded_rows;		/* paired rows without a verdict (of fallback_rows) */
	struct compare_counts counts[COMPARE_KINDS];
	int single_round_rows;		/* rows where a side had one round */
	int by_operator;		/* the sides hold several operators (two batches) */
	int regression;			/* a gems row SLOWER */
	/* the runs whose s the rounds took (compare_take_elasticity), or NULL */
	char *elasticity_from;
};

void compare_init(struct compare *c, const struct compare_opts *o);
void compare_release(struct compare *c);

/*
 * Add the runs that path stands for to side s (0 = A, 1 = B). Returns the
 * number added, 0 when path holds no run, -1 when it is not a directory.
 */
int compare_add_path(struct compare *c, int s, const char *path);

/* A run given twice (within or across sides): its directory, else NULL. */
const char *compare_duplicate_run(const struct compare *c);

/* Step 1. Never fails: absent or unreadable identities are recorded. */
void compare_load_identities(struct compare *c);

/* Step 2. Returns the number of caliber problems (0: comparable). */
size_t compare_check_caliber(struct compare *c);

/* Step 3. Returns -1 (error()) when a results.jsonl cannot be read. */
int compare_load_results(struct compare *c);

/*
 * After step 3: give every round of c's rows that read no clock
 * elasticity (stats_sample_set.elasticity_n 0) the s that the runs under
 * dir read for the same row and kind (zlb run --clock-elasticity): their
 * median, its standard error the larger of theirs and their sd. s is a
 * kernel's on one GPU: runs on another device than c's are refused, and
 * so is a dir with no run or (unless optional: a note, and 0) no s at
 * all. On an H100 the engine read s
 * near what four matrices of processes showed, but its burn put the rows
 * after it under the power cap: read once in a run of its own, s costs
 * the compared runs nothing (bench/README, "the clock elasticity, read in
 * the process"). B's kernel may follow its clock otherwise than the
 * calibration's; the slack (STATS_ELASTICITY_SLACK) is what covers it.
 * via names the source in the note and the refusals ("--elasticity-from",
 * "zlb ab --calibrate"); c->elasticity_from keeps dir once s was taken
 * from it. Returns the rows given an s (a note says so), or -1 (error()).
 */
int compare_take_elasticity(struct compare *c, const char *dir, const char *via, int optional);

/*
 * Step 4. Also sets each row's op_runs: the rounds it could have on a side,
 * the side's runs, or with several operators (two batches) the side's runs
 * of the row's operator.
 */
void compare_analyse(struct compare *c);

/* The flagged markers (NULL-terminated). */
extern const char *const compare_flagged_markers[];

/* Of those, the ones that exclude a row from verdicts (NULL-terminated). */
extern const char *const compare_excluding_markers[];

#endif
