/*
 * What the files of the batch scheduler share (batch.c: the loop over lanes
 * and attempts; batch_state.c: batch.json, ops_status.csv and the lock;
 * batch_attempt.c: one attempt's command line, start and result). Private
 * to src/batch/.
 */
#ifndef ZLB_BATCH_INT_H
#define ZLB_BATCH_INT_H

#include <jansson.h>

#include "batch/batch.h"
#include "batch/batch_policy.h"
#include "batch/batch_progress.h"
#include "batch/batch_status.h"
#include "batch/batch_workers.h"
#include "executors/executor.h"
#include "lib/strbuf.h"

struct op_state {
	const struct op_spec *spec;
	struct op_row row;
	struct op_progress prog;
	struct attempt_result last;
	int lane;
	int done;                 /* final (this session or reused) */
	struct exec_job job;
	struct strvec argv;
	char *run_abs, *run_rel, *console;
	const char *worker;       /* the worker's socket for this attempt, or NULL */
	int worker_job;           /* which job of that worker it is (1: the first) */
	int fresh_reruns;         /* attempts rerun in a fresh worker beyond the policy's */
	int moved_fresh;          /* retries after other jobs, moved to a fresh worker */
	int ran_fresh;            /* an attempt of it ran as a worker's first job */
};

/* A device slot; with --pin it has its own queue, else all share the batch's. */
struct lane {
	int device;
	size_t *queue, nq, next;
	struct op_state *current;
};

struct batch {
	const struct batch_plan *p;
	struct op_state *ops;
	struct lane *lanes;
	struct lane shared;       /* the one queue, without --pin */
	struct worker_pool workers;
	int use_workers;
	struct executor ex;
	struct progress prog;
	json_t *json;
	char *status_path, *json_path;
	int lock_fd;
	int io_failed;
	int env_code;             /* the environment failed: the batch's exit code; else 0 */
	char env_why[512];        /* and what said so */
	char child_grace[24];
};

/*
 * A failure no operator can escape (batch/batch_policy.h): stop at once,
 * the running operators stopped as by an interrupt, and every operator not
 * finished left PENDING for a --resume once it is fixed. The first call wins.
 */
void batch_stop(struct batch *b, int code, const char *fmt, ...) ZLB_PRINTF(3, 4);

/* The directory of the state files: the plan's state_dir, else the batch's. */
const char *batch_state_dir(const struct batch_plan *p);

/*
 * The shared setup of a batch and of a cluster driver: the directory made
 * or checked (--resume), the lock, the log folders, every operator's state,
 * and with --resume the operators whose .complete is valid taken as done
 * (their count in *reused). Returns 0, or the exit code to stop with
 * (error() said why). batch_release undoes it (also after a failure).
 */
int batch_setup(struct batch *b, const struct batch_plan *p, size_t *reused);
void batch_release(struct batch *b);

/* The final status of the batch: 0 every operator PASS or SKIP, else 1. */
int batch_exit_status(const struct batch *b);
/* "zlb batch: 3 PASS, ... in 1m02s; DIR/ops_status.csv", once at the end. */
void batch_say_totals(const struct batch *b, int interrupted, double seconds);

/* A cluster executor's batch: submitted as arrays and followed (batch_cluster.c). */
int batch_cluster_execute(struct batch *b, size_t reused);

/* The state files; a failure to write stops the batch (exit 7). */
int batch_save_status(struct batch *b);
int batch_save_json(struct batch *b);
/*
 * flock the directory's .lock (lib/lockfile.h), or say which batch holds
 * it. Returns 0, ZLB_EXIT_USAGE when another batch holds it, ZLB_EXIT_IO
 * when it cannot be opened (a link, not a file); error() says which.
 */
int batch_take_lock(struct batch *b);
/* A fresh plan in batch.json, keeping the sessions (and first start) of an earlier one. */
int batch_open_json(struct batch *b);
void batch_close_json(struct batch *b, const char *status, int code);

/*
 * The next attempt of o: earlier leftovers moved aside, its argv, the
 * executor's start. Returns 0, or (error() said why) the exit code the
 * batch stops with: no operator can start where this one could not
 * (ZLB_EXIT_IO: its files could not be moved; ZLB_EXIT_PREFLIGHT: no
 * worker, or the executor refused or could not start the job).
 */
int batch_start_attempt(struct batch *b, struct op_state *o);
/* What o's ended attempt left: exit, console texts, the run's tally. */
void batch_read_result(struct op_state *o);
/*
 * What the run at run_abs recorded of itself, into row: the timer it ended
 * with (caliber.timer) and the GPU it ran on (provenance gpu_name,
 * gpu_uuid); each NULL where it recorded none (no identity: all NULL).
 */
void batch_row_run_facts(struct op_row *row, const char *run_abs);

#endif
