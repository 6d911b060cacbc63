/*
 * The warm workers of a batch run with --isolation worker (one per device
 * lane; python/zlbench/worker.py says what one is and what it resets
 * between jobs). A worker is a child of the batch listening on a Unix
 * socket in a directory of the batch's own (mkdtemp, mode 0700, under
 * $TMPDIR or /tmp: a socket path must fit in 108 bytes, a batch directory
 * need not); each `zlb run --worker SOCKET` of that lane hands it its
 * pytest session. A worker serves one checkout: an operator of another
 * repo (vllm) gets a fresh worker.
 */
#ifndef ZLB_BATCH_WORKERS_H
#define ZLB_BATCH_WORKERS_H

#include "lib/proc.h"

struct worker {
	struct child c;          /* c.pid 0: none running */
	char *socket;            /* its socket path */
	const char *repo;        /* the checkout it serves (opspec repo), or NULL */
	int jobs;                /* jobs handed to it so far */
	int log_fd;
	int started;             /* workers started on this lane, for the log name */
};

struct worker_pool {
	char *dir;               /* the private socket directory */
	char *log_dir;           /* <batch>/.logs/workers */
	char *python;            /* the interpreter (absolute) */
	char *const *envp;       /* the workers' environment (zlbench on PYTHONPATH) */
	struct worker *w;
	int n;
};

/* Create the socket directory and n idle lanes. Returns 0 or -1 with error(). */
int worker_pool_open(struct worker_pool *p, int n, const char *batch_dir,
		     const char *python, char *const *envp);

/*
 * The socket of lane i's worker for an operator of repo, starting a worker
 * when none runs or the one that runs serves another repo. *job is set to
 * the job number this operator will be for the worker (1: its first).
 * Returns NULL with error() when no worker could be started.
 */
const char *worker_for(struct worker_pool *p, int i, const char *repo, int *job);

/* Reap lane i's worker if it has ended (after each job). 1 if it has. */
int worker_check(struct worker_pool *p, int i);

/* Stop lane i's worker: SIGTERM, grace_ms, SIGKILL; reaped. */
void worker_stop(struct worker_pool *p, int i, int grace_ms);

/* Stop every worker and remove the socket directory. */
void worker_pool_close(struct worker_pool *p, int grace_ms);

#endif
