/*
 * What zlb batch does after each attempt of an operator: the status it
 * ends with, or the next attempt. Pure logic (no I/O), so every rule is
 * tested on its own (tests/unit/test_batch_policy.c).
 *
 * Rules (the seed's run_batch.py semantics):
 *  - a timeout is TIMEOUT at once, never retried;
 *  - zlb run exit 0 is PASS, or SKIP when nothing passed and something was
 *    skipped (a runtime skipif, an upstream xfail);
 *  - with --dtypes in force, FlagGems' "can't be supported by this op"
 *    reruns without the restriction (remark dtype_fallback);
 *  - pytest rc 1 (zlb exit 1) or a death by signal (128+N) is retried up to
 *    max_retries times, stopping early when an attempt ends with the same
 *    code as the one before (a deterministic failure);
 *  - a batch shape file that zlb run's preflight refuses for the operator
 *    (check shape_file) reruns without it on upstream's shapes (remark
 *    shapes_default): the seed's "no shape entry: upstream defaults";
 *  - any other final failure with --dtypes in force and no SUCCESS row gets
 *    one last try without the restriction (remark dtype_rescue);
 *  - everything else is FAIL. Preflight (exit 3), usage (2) and I/O (7)
 *    failures are environment problems: never retried.
 */
#ifndef ZLB_CORE_BATCH_POLICY_H
#define ZLB_CORE_BATCH_POLICY_H

#include "lib/strbuf.h"

/*
 * OP_CANCELLED: someone cancelled the cluster task that held the operator
 * (a user's scancel); final, and not rerun by --resume unless asked.
 */
enum op_status { OP_PENDING, OP_RUNNING, OP_PASS, OP_FAIL, OP_SKIP, OP_TIMEOUT, OP_CANCELLED,
		 OP_STATUSES };

/* "PENDING", "RUNNING", "PASS", "FAIL", "SKIP", "TIMEOUT", "CANCELLED". */
const char *op_status_name(enum op_status s);
/* Inverse of op_status_name; -1 for anything else. */
int op_status_parse(const char *name);

/* What one attempt (one `zlb run` child) left behind. */
struct attempt_result {
	int exit_code;          /* zlb run's exit status (128+N: a signal) */
	int timed_out;          /* the batch stopped it at --op-timeout */
	int cant_support;       /* "can't be supported by this op" in its output */
	char preflight[48];     /* PREFLIGHT_FAILED check=<this>, or "" */
	long rows, rows_ok;     /* results.jsonl rows, of them SUCCESS */
	long rows_direct;       /* rows timed without a CUDA graph */
	long replay_fallbacks;  /* AUTOTUNE_REPLAY_FALLBACK markers */
	long passed, failed, skipped, xfailed;
};

/* The running state of one operator across its attempts. */
struct op_progress {
	int max_retries;
	int dtypes_active;      /* --dtypes still passed to the child */
	int shapes_active;      /* --shape-file still passed to the child */
	int attempts;           /* attempts made so far */
	int retries;            /* plain retries made (POLICY_RETRY) */
	int retries_left;       /* for the current configuration */
	int prev_exit;          /* exit of the previous attempt in this configuration, -1 */
	unsigned dtype_fallback : 1, dtype_rescue : 1, shapes_default : 1;
};

enum policy_action {
	POLICY_DONE,            /* final: see *status */
	POLICY_RETRY,           /* same configuration again */
	POLICY_DROP_DTYPES,     /* again, without --dtypes (fallback or rescue) */
	POLICY_DROP_SHAPES,     /* again, without the batch shape file */
};

void op_progress_init(struct op_progress *p, int max_retries, int dtypes, int shapes);

/*
 * Account for one attempt's result r and say what comes next. On
 * POLICY_DONE *status is PASS, SKIP, FAIL or TIMEOUT.
 */
enum policy_action policy_next(struct op_progress *p, const struct attempt_result *r,
			       enum op_status *status);

/*
 * The remarks of a finished operator, `;`-separated `key` or `key=value`:
 * dtype_fallback, dtype_rescue, shapes_default, retries=N (plain retries;
 * the attempts column counts every attempt), signal=N,
 * preflight=<check>, no_tests, xfail=N, skipped=N, no_cudagraph_rows=N,
 * replay_fallback=N, timeout. r is the final attempt.
 */
void policy_remarks(const struct op_progress *p, const struct attempt_result *r,
		    enum op_status status, struct strbuf *out);

/*
 * Did this attempt fail because of the environment, which no operator can
 * escape (and which would fail every one after it)? Returns the batch's
 * exit code for it, or 0 when the failure, if any, is the operator's:
 *  - ZLB_EXIT_PREFLIGHT for a preflight check that does not depend on the
 *    operator: backend, timer, python, flaggems_dir, device, runs_dir
 *    (benchmark_file, shape_file and replay_dir are the operator's own);
 *  - ZLB_EXIT_IO when zlb run could not write its own files (a full disk,
 *    a read-only file system).
 * A timed-out attempt is never the environment's.
 */
int policy_environment_failure(const struct attempt_result *r);

/*
 * Is this failed attempt's next step a change of configuration that any
 * process would call for alike: --dtypes refused by the operator ("can't be
 * supported", while the dtypes are still passed) or the batch shape file
 * refused by preflight? A warm worker's state cannot have caused those, so
 * a worker batch takes the next configuration in the same worker instead of
 * first rerunning the refused one in a fresh worker (on the H200 that rerun
 * cost a worker start, ~20 s, per operator that does not take float16).
 */
int policy_configuration_refused(const struct op_progress *p, const struct attempt_result *r);

#endif
