/*
 * zlb batch: many operators, one `zlb run` child each (or one warm worker's
 * job each, --isolation worker), serial per device, devices in parallel from
 * one queue (DESIGN §8). The layout of a batch directory:
 *
 *   batch.json           schema_version 2: args, options, devices, the
 *                        operator list with each one's device, the tables'
 *                        versions, status, started/ended (per session)
 *   ops_status.csv       one row per operator (batch/batch_status.h)
 *   <repo>/<key>/        the operator's run directory (a normal zlb run
 *                        directory; key: batch/opspec.h), final attempt only
 *   <repo>/<key>/.complete   PASS/SKIP marker: what --resume reuses
 *   .logs/<repo>/<key>.log   the child's console output (stdout+stderr)
 *   .attempts/<repo>/<key>.<n>/, <key>.<n>.log
 *                        earlier attempts (retries, reruns on resume),
 *                        moved aside whole: evidence kept, nothing doubled
 *   .lock                flock'ed while a batch works on the directory
 *
 * Order of writes for one finished operator: the child exits (its run
 * directory is final), .complete is written (PASS/SKIP), then ops_status.csv
 * is rewritten. A batch killed at any instant therefore leaves every
 * operator either complete (marker present) or not (rerun on --resume,
 * its leftovers moved to .attempts first).
 */
#ifndef ZLB_CORE_BATCH_H
#define ZLB_CORE_BATCH_H

#include <stddef.h>

#include <jansson.h>

#include "lib/reporter.h"
#include "batch/opspec.h"
#include "lib/strvec.h"

/* 3: the cluster section (rounds of submitted arrays); 2 is read too. */
#define BATCH_SCHEMA_VERSION 3

enum batch_progress { BATCH_PROGRESS_PLAIN, BATCH_PROGRESS_LIVE };

struct batch_plan {
	const char *exe;              /* zlb's own binary (absolute) */
	char *const *envp;            /* children's environment (batch keys removed) */
	const char *dir;              /* the batch directory, absolute */
	const struct op_spec *specs;  /* the operators, in list order, no duplicates */
	size_t nr;
	const int *devices;           /* logical device indices (slots, for a remote executor) */
	int ndevices;
	const char *backend;          /* canonical backend name */
	const struct strvec *run_args;/* zlb run options given to every child */
	const struct strvec *dtypes;  /* --dtypes words; empty: the ops' own */
	const char *shape_file;       /* absolute, or NULL */
	const char *replay_root;      /* absolute, or NULL */
	const char *main_dir;         /* --flaggems-dir, or NULL (zlb run discovers) */
	const char *vllm_dir;         /* --vllm-dir, or NULL */
	double op_timeout_s;          /* 0: none */
	double grace_s;
	int max_retries;
	int resume;
	enum batch_progress progress;
	const char *executor;         /* "local", "slurm" (executors/registry.c) */
	const struct strvec *executor_args; /* --slurm-args words, or NULL */
	/*
	 * "process": each operator's pytest in a process of its own; "worker":
	 * in its lane's warm worker (batch/batch_workers.h), python then names
	 * the interpreter and worker_envp the workers' environment.
	 */
	const char *isolation;
	const char *python;
	char *const *worker_envp;
	/*
	 * 1: each operator runs on the device slot its spec hashes to
	 * (batch_shard), the same on every batch of the same devices, so an A/B
	 * pair of batches meets each operator on the same GPU. 0: one queue,
	 * the next operator to the first free device.
	 */
	int pin;
	/*
	 * A cluster task's share (`zlb task`, a job-executor batch): its state
	 * files (batch.json, ops_status.csv, .lock) go to state_dir
	 * (<batch>/.tasks/<label>/), its run directories to the batch's; label
	 * ("<array>_<index>") is every row's job.
	 */
	const char *state_dir;        /* NULL: dir */
	const char *cluster_job;      /* NULL: not a cluster task */
	/* A cluster executor's batch (batch_cluster.c): how it is cut and followed. */
	int max_parallel;             /* tasks at once; 0: the cluster decides */
	int task_ops;                 /* operators per task, at most */
	int follow;                   /* 0: submit and return (--no-follow) */
	int retry_cancelled;          /* --resume runs CANCELLED operators again */
	/*
	 * Ask the person at the terminal a yes/no question (the CLI's: library
	 * code reads no terminal); returns 1 yes, 0 no, dflt when nobody can
	 * answer. NULL: dflt.
	 */
	int (*ask)(const char *question, int dflt);
	json_t *args;                 /* command line and options for batch.json (borrowed) */
	json_t *record;               /* batch.json "resume" (batch/batch_resume.h; borrowed) */
	const struct strvec *overrides; /* --resume --override: what this session changed */
	struct reporter *rep;         /* progress and the closing line (the command's) */
};

/* The device slot (0..ndevices-1) of an operator: XXH3 of its spec, stable. */
int batch_shard(const char *spec, int ndevices);

/*
 * Run the batch (with a cluster executor: submit it and follow it,
 * batch_cluster.c). Returns the batch's exit status: 0 every operator PASS
 * or SKIP, 1 some FAIL, TIMEOUT or CANCELLED, 2 the directory cannot be
 * used (exists without --resume, nothing to resume, locked by another
 * batch), 3 the environment failed (preflight on a node), 7 the state could
 * not be written, 130 interrupted (children stopped, state kept,
 * resumable; on a cluster also: detached while the array runs). Messages go
 * through error()/warning() and the plan's reporter.
 */
int batch_execute(const struct batch_plan *p);

/*
 * Where the batch in dir stands, told to rep without changing anything:
 * its operators by status and, for a cluster batch, its last array's tasks
 * as the cluster sees them. Returns 0, or 2 when dir holds no batch.
 */
int batch_show_status(const char *dir, struct reporter *rep);

/*
 * A cluster task's share: the operators (specs) of task index of array job
 * as batch.json in dir records them. Returns 0, or -1 with error() when
 * dir holds no such round (the task was not submitted from this batch).
 */
int batch_task_share(const char *dir, const char *job, int index, struct strvec *specs);

#endif
