/*
 * zlb summary: one table of every measurement of a batch.
 *
 * A batch directory (written by zlb batch) holds ops_status.csv (one line
 * per operator: repo, op, status, remarks, run_dir, ...) and, per operator,
 * <batch>/<repo>/<op>/, a normal run directory. summary_load() reads it:
 *
 *   1. the operators: every line of ops_status.csv, and every run directory
 *      found at <batch>/<repo>/<op>/ (names starting with '.' are skipped,
 *      so .attempts/ is never read). An older batch without ops_status.csv
 *      is summarised from the directories alone: those operators have no
 *      status, and are listed as found by walking. One that is on disk but
 *      not in ops_status.csv gets the remark not_in_ops_status;
 *   2. per operator, events.jsonl (AUTOTUNE_REPLAY_FALLBACK events, each
 *      flagging the rows of its test node) and results.jsonl (every row,
 *      without its raw samples), each file parsed once;
 *   3. per operator, where it ran: backend (caliber.backend) and device (the
 *      GPU's name, provenance.gpu_name, else the caliber's device model)
 *      and uuid from its run_identity.json (rundir/run_device.h); an
 *      operator whose run recorded none takes ops_status.csv's backend, gpu
 *      and gpu_uuid columns (version 3);
 *   4. per operator, its remarks: no_cudagraph_rows=N (rows with a side
 *      not graph-timed), replay_fallback=N (events), bad_lines=N (lines
 *      skipped), no_run_dir, not_in_ops_status, then the remarks of
 *      ops_status.csv (dtype_fallback, ...); counts of 0 are left out, so
 *      an empty remark means a clean operator.
 *
 * The worst and best speedups leave out rows that are no speedup of a
 * kernel: GRAPH_NO_KERNELS on a side (its graph held no kernel node: it
 * measured nothing) and GRAPH_MEMCPY_NODES / GRAPH_MEMSET_NODES (they time
 * the copy engine, another caliber); the report and summary.json say how
 * many rows were left out, and why.
 *
 * Operators are ordered by repo then op (byte order), rows as their run
 * wrote them; an operator without rows (FAIL, TIMEOUT, SKIP, a run that
 * died early) still gets one line in the table, with its status, so the
 * table accounts for every operator.
 */
#ifndef ZLB_SUMMARY_H
#define ZLB_SUMMARY_H

#include <jansson.h>
#include <stddef.h>

#include "lib/strbuf.h"
#include "lib/strvec.h"

/* 2: backend and device columns, device facts in summary.json */
#define SUMMARY_SCHEMA_VERSION 2
#define SUMMARY_CSV "summary.csv"
#define SUMMARY_JSON "summary.json"
#define OPS_STATUS_CSV "ops_status.csv"

/* One measurement row (a line of results.jsonl). */
struct summary_row {
	char *op_name, *dtype, *shape;
	char *status;		/* the row's: SUCCESS, FAILED; "" when absent */
	double torch_ms, gems_ms, speedup;	/* NAN when absent */
	char *timer;		/* "graph", "direct", "graph+direct", "" when unmeasured */
	char *markers;		/* ';'-separated, in order of appearance */
	int not_graph;		/* a side was not graph-timed */
	int unranked;		/* SUMMARY_NO_KERNELS, SUMMARY_COPY_ENGINE, SUMMARY_MIXED_TIMERS or 0 */
};

/* Why a row is left out of the worst and best speedups. */
enum { SUMMARY_NO_KERNELS = 1, SUMMARY_COPY_ENGINE, SUMMARY_MIXED_TIMERS };

struct summary_op {
	char *repo, *op;
	char *status;		/* from ops_status.csv; "" when unknown */
	char *status_remarks;	/* ops_status.csv's remarks column */
	char *run_dir;		/* absolute; NULL when none was found */
	char *backend;		/* "cuda", ...; "" when unknown */
	char *device;		/* the GPU's name; "" when unknown */
	char *device_uuid;	/* its uuid; "" when unknown */
	int listed;		/* a line of ops_status.csv */
	int walked;		/* found as <batch>/<repo>/<op>/ */
	int has_results;	/* results.jsonl exists */
	size_t first_row, nr_rows;	/* into summary.rows */
	size_t no_cudagraph_rows, replay_fallbacks, bad_lines;
	char *remarks;		/* the op_remarks column */
};

struct summary {
	char *batch;		/* absolute */
	int has_ops_status;	/* ops_status.csv was read */
	struct summary_op *ops;
	size_t nr_ops, alloc_ops;
	struct summary_row *rows;
	size_t nr_rows, alloc_rows;
	/* totals */
	size_t rows_success, rows_not_graph, replay_fallbacks, bad_lines;
	size_t rows_ranked;	/* SUCCESS with a positive speedup, not unranked */
	/* would be ranked, but unranked */
	size_t left_out_no_kernels, left_out_copy_engine, left_out_mixed_timers;
	size_t ops_walked_only;	/* on disk, not in ops_status.csv (all, without it) */
	size_t ops_without_rows;
};

void summary_init(struct summary *s);
void summary_release(struct summary *s);

/*
 * Read the batch at dir. Returns 0; 1 when there is nothing to summarise
 * (no ops_status.csv line and no run directory); -1 (error()) when dir is
 * not a directory, or ops_status.csv exists but cannot be read or lacks
 * the op/status columns. A run file that cannot be read is reported with
 * error() and its operator gets the remark unreadable_files; corrupt lines
 * of a run's files are skipped with a warning naming file:line.
 */
int summary_load(struct summary *s, const char *dir);

/* The CSV's columns, in order (NULL-terminated). */
extern const char *const summary_csv_columns[];

/* Append summary.csv's text (header line, then one line per row). */
void summary_csv(const struct summary *s, struct strbuf *out);

/*
 * summary.json: schema_version, the CSV's name, version and columns, the
 * batch, counts per status, rows, the operators with remarks, the
 * operators found by walking, the worst and best speedups.
 */
json_t *summary_to_json(const struct summary *s, const char *csv_path);

/*
 * Write the CSV to csv_path and the JSON to json_path, each atomically
 * (the CSV first: the JSON describes it). Returns 0 or error().
 */
int summary_write(const struct summary *s, const char *csv_path, const char *json_path);

/* The operator that row i (an index into s->rows) belongs to. */
const struct summary_op *summary_op_of_row(const struct summary *s, size_t i);

/*
 * Indices into s->rows of the SUCCESS rows with a positive speedup that are
 * not unranked: the lowest (worst) or highest (best) k, in order, ties by
 * position. Returns
 * how many were found (at most k).
 */
size_t summary_extremes(const struct summary *s, int best, size_t *idx, size_t k);

/*
 * How many worst and best rows the report and summary.json show: up to
 * SUMMARY_EXTREMES each, never the same row in both lists.
 */
#define SUMMARY_EXTREMES 5
void summary_extreme_counts(const struct summary *s, size_t *worst, size_t *best);

/*
 * The devices the operators ran on, in order of first appearance:
 * [{"backend", "device", "device_uuid", "ops": n}], "" for unknown; one
 * entry per distinct triple (two cards of one model: two entries).
 */
json_t *summary_devices(const struct summary *s);

/* The counts per operator status: {"PASS": n, ...}, "(none)" for unknown. */
json_t *summary_status_counts(const struct summary *s);

/*
 * The terminal report: operators per status, rows, operators with rows not
 * graph-timed, replay fallbacks, worst and best speedups, where the table
 * went. Coloured when color is true.
 */
void summary_render(const struct summary *s, const char *csv_path, int color,
		    struct strbuf *out);

/*
 * The same for a pull request (GitHub-flavoured Markdown): the counts per
 * status, rows not graph-timed and replay fallbacks, the worst and best
 * speedups, and the operators to read first (not PASS/SKIP, or with
 * remarks), as tables; names from the data as code spans.
 */
void summary_markdown(const struct summary *s, struct strbuf *out);

#endif
