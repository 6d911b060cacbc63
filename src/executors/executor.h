/*
 * Executors: where the jobs of a batch run (after fio's ioengine_ops). A
 * job is one attempt of one operator: an argv (zlb itself, `zlb run ...`),
 * its environment, a console file for its output, and a deadline. The
 * scheduler (batch/batch.c) decides what runs and when; an executor starts
 * jobs, enforces their deadlines and says when each has ended.
 *
 * Executors are listed once in src/executors/registry.c. "local" runs jobs
 * as child processes of this machine; "slurm" runs each as a Slurm job
 * through srun (a local child too, so it reuses local's process handling).
 */
#ifndef ZLB_EXECUTORS_EXECUTOR_H
#define ZLB_EXECUTORS_EXECUTOR_H

struct strbuf;
struct strvec;

struct exec_job {
	/* Set by the caller before start(). */
	char *const *argv;       /* argv[0] absolute */
	char *const *envp;
	const char *console;     /* stdout+stderr go here (created, truncated) */
	double timeout_s;        /* 0: no deadline */
	double grace_s;          /* SIGTERM to the job's process group, this, then SIGKILL */
	void *owner;             /* the caller's, untouched */

	/* Set by the executor once the job has ended. */
	int exit_code;           /* exit status, 128+N for a signal */
	int timed_out;           /* stopped at its deadline */
	int stopped;             /* stopped by stop_all() */
	double seconds;          /* wall time, start to end */

	void *priv;              /* the executor's */
};

struct executor;

struct executor_ops {
	const char *name;
	const char *description;
	/*
	 * 0: jobs run on this machine and see its devices, so a job is told
	 * the device it runs on. 1: each job is given one device by the
	 * cluster and sees only that one (as index 0): the batch's device list
	 * then numbers parallel slots, and no local device is needed.
	 */
	int remote_devices;
	/*
	 * Can this executor run here at all (its programs installed)? NULL:
	 * always. Returns 1, or 0 with a sentence naming what is missing and
	 * the fix in *why (a strbuf). Asked before a batch creates anything.
	 */
	int (*available)(struct strbuf *why);
	int (*open)(struct executor *ex);
	/* Start job. Returns 0, or -1 with error() (nothing left running). */
	int (*start)(struct executor *ex, struct exec_job *job);
	/*
	 * Wait up to timeout_ms (-1: no limit) for a job to end, enforcing
	 * deadlines meanwhile. Returns 1 with *done set (the job is over and
	 * nothing of it runs), 0 when the time passed or wake_fd became
	 * readable, -1 on an internal error.
	 */
	int (*wait)(struct executor *ex, int timeout_ms, struct exec_job **done);
	/* Number of jobs started and not yet returned by wait(). */
	int (*running)(const struct executor *ex);
	/* Stop every job: SIGTERM (or cancel) now, SIGKILL after each one's grace. */
	void (*stop_all)(struct executor *ex);
	void (*close)(struct executor *ex);
};

struct executor {
	const struct executor_ops *ops;
	int wake_fd;             /* polled beside the jobs (the interrupt pipe), or -1 */
	const struct strvec *args; /* the executor's own arguments (--slurm-arg), or NULL */
	void *priv;
};

/* The executor named name, or NULL. */
const struct executor_ops *executor_find(const char *name);
/* "local, ..." for messages. Fresh allocation. */
char *executor_names(void);

#endif
