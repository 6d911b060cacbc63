/*
 * Executors: where the operators of a batch run (after fio's ioengine_ops).
 * Two kinds, listed once in src/executors/registry.c:
 *
 *  - job executors ("local"): a job is one attempt of one operator, an argv
 *    (zlb itself, `zlb run ...`), its environment, a console file and a
 *    deadline; the scheduler (batch/batch.c) decides what runs and when, the
 *    executor starts jobs, enforces their deadlines and says when each ended;
 *  - cluster executors ("slurm"): the batch is cut into tasks, submitted at
 *    once as an array of the cluster's own jobs; each task runs `zlb task`,
 *    which is a job-executor batch of its share on the node it got
 *    (batch/batch_cluster.c follows the array and merges what tasks wrote).
 *    Nothing above src/executors/ knows which cluster it is.
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

/* Where a cluster task stands, in the executor's words mapped to zlb's. */
enum cluster_state {
	CLUSTER_PENDING,     /* queued, not started: its wait is not run time */
	CLUSTER_RUNNING,
	CLUSTER_ENDED,       /* its process ended by itself: exit_code says how */
	CLUSTER_CANCELLED,   /* cancelled by someone (a user's scancel) */
	CLUSTER_TIMEOUT,     /* killed at the cluster's time limit */
	CLUSTER_LOST,        /* the cluster lost it (node failure, preemption, boot
			      * failure): not the task's doing, worth one more try */
	CLUSTER_UNKNOWN,     /* no record of it is left anywhere the executor can read */
};

struct cluster_task {
	int index;           /* the task's index in its array */
	enum cluster_state state;
	int exit_code;       /* CLUSTER_ENDED: exit status, 128+N for a signal; else -1 */
	char detail[96];     /* the cluster's own words (state, reason), for remarks */
	char node[64];       /* where it ran or runs, or "" */
};

/* One array to submit: ntasks tasks running script, each in dir. */
struct cluster_submission {
	const char *dir;         /* the batch directory: each task's working directory */
	const char *script;      /* what each task runs (absolute; executable) */
	const char *name;        /* the array's name as the cluster shows it */
	const char *output;      /* each task's stdout+stderr, with the executor's
				  * own placeholders for array and task (see
				  * cluster_ops.output_pattern) */
	int ntasks;
	int max_parallel;        /* tasks that may run at once; 0: no limit */
	long time_min;           /* each task's time limit in minutes; 0: the cluster's */
	const struct strvec *args; /* the user's own options for the cluster, or NULL */
	char *const *envp;       /* what the tasks inherit */
	/* Set by submit: the user's own time limit in args, which won over time_min, or NULL. */
	const char *user_time;
};

struct cluster_ops {
	/* The output file name of task %a of array %A, as this cluster spells it. */
	const char *output_pattern;
	/* Submit. Returns 0 with the array's id in *job, or -1 with error() (nothing queued). */
	int (*submit)(struct cluster_submission *s, struct strbuf *job);
	/*
	 * Where each of array job's ntasks tasks stands (tasks[i].index = i).
	 * Returns how many are PENDING or RUNNING, or -1 with error() when
	 * the cluster could not be asked at all.
	 */
	int (*poll)(const char *job, struct cluster_task *tasks, int ntasks);
	/* Cancel every task of the array. 0, or -1 with error(). */
	int (*cancel)(const char *job);
	/*
	 * Inside a task: "<array>_<index>" into label and the index; 0, or -1
	 * when this process is not one of the cluster's array tasks.
	 */
	int (*task_identity)(struct strbuf *label, int *index);
	/*
	 * Is this process inside an allocation of the cluster (a job, not an
	 * array task of zlb's)? Its id, with a sentence about what it holds in
	 * *what, or NULL.
	 */
	const char *(*allocation)(struct strbuf *what);
	/* The user's own time limit for each task in args (theirs to fit), or NULL. */
	const char *(*user_time)(const struct strvec *args);
	/*
	 * The longest a task may ask for, in minutes (-1: no limit known),
	 * for the partition args choose; asked once before submitting.
	 */
	long (*time_limit_min)(const struct strvec *args, struct strbuf *partition);
	/*
	 * Is dir visible to every node the tasks may get? 1 yes or cannot
	 * tell, 0 no with the sentence in *why.
	 */
	int (*dir_shared)(const char *dir, const struct strvec *args, struct strbuf *why);
};

struct executor_ops {
	const char *name;
	const char *description;
	/*
	 * Can this executor run here at all (its programs installed)? NULL:
	 * always. Returns 1, or 0 with a sentence naming what is missing and
	 * the fix in *why (a strbuf). Asked before a batch creates anything.
	 */
	int (*available)(struct strbuf *why);
	/* A cluster executor's operations (then the job operations below are NULL). */
	const struct cluster_ops *cluster;
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
/* The registered names, NULL-terminated (an option table's choices). */
extern const char *const executor_choices[];

#endif
