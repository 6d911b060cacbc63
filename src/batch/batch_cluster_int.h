/*
 * What the three files of a cluster batch share (batch_cluster.c: submit
 * and follow; batch_cluster_round.c: a round's tasks and what they wrote;
 * batch_cluster_settle.c: what the cluster says of a task, as statuses).
 * Private to src/batch/.
 */
#ifndef ZLB_BATCH_CLUSTER_INT_H
#define ZLB_BATCH_CLUSTER_INT_H

#include <time.h>

#include "batch/batch_int.h"
#include "executors/executor.h"

#define TASKS_DIR ".tasks"
#define CLUSTER_DIR ".cluster"

struct task_view {
	char *label;             /* "<job>_<index>" */
	char *state_dir;         /* <batch>/.tasks/<label> */
	size_t *ops, nops;       /* indices into b->ops */
	time_t seen_mtime;       /* its ops_status.csv, last read */
	long seen_size;
	char status[32];         /* its batch.json status ("" none yet) */
	int exit_code;           /* its batch.json exit_code, -1 none */
	char environment[512];   /* its batch.json environment (why it stopped), "" */
};

struct round {
	json_t *json;            /* its entry in batch.json cluster.rounds (borrowed) */
	char *job;
	int ntasks;
	struct task_view *tasks;
	struct cluster_task *st; /* the cluster's view, latest poll */
	unsigned char *was_pending; /* per task: 1 PENDING at the last poll, 2 gone since */
	int cancelled_by_zlb;    /* zlb cancelled the array: for an interrupt, or ... */
	int stopped_for_env;     /* ... because a task met an environment no task escapes */
};

struct driver {
	struct batch *b;
	const struct batch_plan *p;
	const struct cluster_ops *co;
	int *requeues;           /* per operator, this session */
	unsigned char *requeue;  /* per operator: goes into the next round */
	int interrupted;         /* 1 cancelled, 2 detached */
};

/* batch.json's "cluster" object, made when missing. */
json_t *cluster_json(struct batch *b);
const char *cluster_state_name(enum cluster_state s);

/* The round of batch.json entry rj: its tasks and their operators. 0, or -1 with error(). */
int round_load(struct driver *d, json_t *rj, struct round *r);
void round_release(struct round *r);
/* Take what the round's tasks wrote (said as operators finish); saves the table if it changed. */
int round_merge(struct driver *d, struct round *r);
/* "[<task> 3/12] PASS softmax 1.2s ...": an operator's end, as it is known. */
void round_say_op(struct driver *d, const struct task_view *tv, struct op_state *o);
/* How many of the round's tasks have said they ended (their own batch.json). */
int round_tasks_said_ended(const struct round *r);
/* After each poll: a task seen PENDING and then nowhere was cancelled. */
void round_note_vanished(struct round *r);

/* Has a task met an environment every task would (see batch_cluster_settle.c)? */
int round_environment_failed(const struct round *r);
/* The round has ended: the cluster's words become statuses (batch_cluster_settle.c). */
void round_settle(struct driver *d, struct round *r);

#endif
