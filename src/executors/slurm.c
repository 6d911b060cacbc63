/*
 * The Slurm executor: each job runs as a Slurm job of one task on one GPU,
 * started with srun from the machine that runs `zlb batch`.
 *
 * Why srun jobs and not an sbatch array of shards with a merge step: the
 * batch stays one scheduler whatever the executor. The same process keeps
 * ops_status.csv, retries, dtype fallback, timeouts and resume, and every
 * operator writes its run directory straight into the batch directory (on
 * a file system the nodes share), so there is nothing to merge and `zlb
 * summary` reads the batch as it does a local one. Slurm decides where a
 * job runs; the batch decides what runs and in what order.
 *
 * srun is a child of zlb like any local job (no shell, its own process
 * group, PR_SET_PDEATHSIG), so this executor delegates process handling to
 * the local one and only rewrites the argv:
 *
 *   srun --job-name=zlb --nodes=1 --ntasks=1 --gres=gpu:1 --kill-on-bad-exit=1
 *        --quiet [--time=M] [--slurm-arg ...] <zlb> run ... --device 0
 *
 * The job sees only the GPU Slurm gave it, so `zlb run` is told --device 0
 * (the batch's device list numbers parallel slots instead: see
 * executor_ops.remote_devices). A deadline sends SIGTERM to srun, which
 * cancels the job's step and forwards the signal; after the grace SIGKILL
 * ends srun and Slurm reaps the job. --time (timeout plus grace, rounded up
 * to minutes, plus one) is the cluster-side backstop should srun itself die.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/error.h"
#include "lib/paths.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"
#include "executors/executor.h"

extern const struct executor_ops local_executor;

struct slurm {
	struct executor local;   /* the processes (srun) are local children */
	char *srun;              /* absolute path */
};

struct slurm_job {
	struct exec_job inner;   /* what the local executor runs: srun ... */
	struct strvec argv;
	struct exec_job *outer;  /* the caller's job */
};

#define NO_SRUN "srun was not found on PATH: the slurm executor starts each operator " \
	"as a Slurm job through srun; run zlb batch where Slurm's client is installed " \
	"(a login node), or use --executor local"

static int slurm_available(struct strbuf *why)
{
	char *srun = find_program("srun");

	if (srun) {
		free(srun);
		return 1;
	}
	strbuf_addstr(why, NO_SRUN);
	return 0;
}

static int slurm_open(struct executor *ex)
{
	struct slurm *s;
	char *srun = find_program("srun");

	if (!srun)
		return error(NO_SRUN);
	s = xcalloc(1, sizeof(*s));
	s->srun = srun;
	s->local.ops = &local_executor;
	s->local.wake_fd = ex->wake_fd;
	if (local_executor.open(&s->local)) {
		free(srun);
		free(s);
		return -1;
	}
	ex->priv = s;
	return 0;
}

/* The minutes of --time for a job: its deadline and grace, rounded up, plus one. */
static long time_limit_min(const struct exec_job *job)
{
	if (job->timeout_s <= 0)
		return 0;
	return (long)ceil((job->timeout_s + job->grace_s) / 60.0) + 1;
}

static int slurm_start(struct executor *ex, struct exec_job *job)
{
	struct slurm *s = ex->priv;
	struct slurm_job *sj = xcalloc(1, sizeof(*sj));
	long minutes = time_limit_min(job);

	strvec_init(&sj->argv);
	strvec_push(&sj->argv, s->srun);
	strvec_push(&sj->argv, "--job-name=zlb");
	strvec_push(&sj->argv, "--nodes=1");
	strvec_push(&sj->argv, "--ntasks=1");
	strvec_push(&sj->argv, "--gres=gpu:1");
	strvec_push(&sj->argv, "--kill-on-bad-exit=1");
	strvec_push(&sj->argv, "--quiet");
	if (minutes > 0)
		strvec_pushf(&sj->argv, "--time=%ld", minutes);
	for (size_t i = 0; ex->args && i < ex->args->nr; i++)
		strvec_push(&sj->argv, ex->args->v[i]);
	for (char *const *a = job->argv; *a; a++)
		strvec_push(&sj->argv, *a);

	sj->outer = job;
	sj->inner.argv = sj->argv.v;
	sj->inner.envp = job->envp;
	sj->inner.console = job->console;
	sj->inner.timeout_s = job->timeout_s;
	sj->inner.grace_s = job->grace_s;
	sj->inner.owner = sj;
	s->local.wake_fd = ex->wake_fd;
	if (local_executor.start(&s->local, &sj->inner)) {
		strvec_clear(&sj->argv);
		free(sj);
		return -1;
	}
	job->priv = sj;
	return 0;
}

static int slurm_wait(struct executor *ex, int timeout_ms, struct exec_job **done)
{
	struct slurm *s = ex->priv;
	struct exec_job *inner = NULL;
	struct slurm_job *sj;
	int r;

	s->local.wake_fd = ex->wake_fd;
	r = local_executor.wait(&s->local, timeout_ms, &inner);
	if (r != 1)
		return r;
	sj = inner->owner;
	sj->outer->exit_code = inner->exit_code;
	sj->outer->timed_out = inner->timed_out;
	sj->outer->stopped = inner->stopped;
	sj->outer->seconds = inner->seconds;
	sj->outer->priv = NULL;
	*done = sj->outer;
	strvec_clear(&sj->argv);
	free(sj);
	return 1;
}

static int slurm_running(const struct executor *ex)
{
	const struct slurm *s = ex->priv;
	return local_executor.running(&s->local);
}

static void slurm_stop_all(struct executor *ex)
{
	struct slurm *s = ex->priv;
	local_executor.stop_all(&s->local);
}

static void slurm_close(struct executor *ex)
{
	struct slurm *s = ex->priv;

	if (!s)
		return;
	local_executor.close(&s->local);
	free(s->srun);
	free(s);
	ex->priv = NULL;
}

const struct executor_ops slurm_executor = {
	.name = "slurm",
	.description = "one Slurm job per operator (srun, 1 task, 1 GPU); run directories "
		       "on a shared file system",
	.remote_devices = 1,
	.available = slurm_available,
	.open = slurm_open,
	.start = slurm_start,
	.wait = slurm_wait,
	.running = slurm_running,
	.stop_all = slurm_stop_all,
	.close = slurm_close,
};
