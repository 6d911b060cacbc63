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
#include "lib/proc.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"
#include "executors/executor.h"

extern const struct executor_ops local_executor;
extern char **environ;

struct slurm {
	struct executor local;   /* the processes (srun) are local children */
	char *srun;              /* absolute path */
	int limit_known;         /* the partition's time limit was asked for */
	long limit_min;          /* it, in minutes; -1 unlimited or unknown */
	char *partition;         /* its name, for messages */
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

/* Is the option (--name=V, --name V, -xV or -x V) among the executor's args? Its value or NULL. */
static const char *arg_value(const struct strvec *args, const char *lng, const char *shrt)
{
	size_t n = strlen(lng);

	for (size_t i = 0; args && i < args->nr; i++) {
		const char *a = args->v[i];

		if (!strncmp(a, lng, n) && a[n] == '=')
			return a + n + 1;
		if ((!strcmp(a, lng) || !strcmp(a, shrt)) && i + 1 < args->nr)
			return args->v[i + 1];
		if (!strncmp(a, shrt, 2) && a[2])
			return a + 2;
	}
	return NULL;
}

/*
 * A Slurm time ("M", "M:S", "H:M:S", "D-H", "D-H:M", "D-H:M:S") in minutes,
 * seconds dropped; -1 for infinite or unreadable.
 */
static long parse_limit(const char *t)
{
	long days = 0, f[3] = { 0 }, nf = 0;
	const char *dash = strchr(t, '-');
	char *end;

	if (!strncmp(t, "infinite", 8) || !strncmp(t, "UNLIMITED", 9))
		return -1;
	if (dash) {
		days = strtol(t, &end, 10);
		if (end != dash)
			return -1;
		t = dash + 1;
	}
	while (nf < 3) {
		f[nf++] = strtol(t, &end, 10);
		if (end == t)
			return -1;
		if (*end != ':')
			break;
		t = end + 1;
	}
	/* with days: hours[:minutes[:seconds]]; without: minutes[:seconds] or h:m:s */
	if (dash)
		return days * 1440 + f[0] * 60 + (nf > 1 ? f[1] : 0);
	if (nf < 3)
		return f[0];
	return f[0] * 60 + f[1];
}

/*
 * The time limit of the partition jobs go to (the one in --slurm-args, else
 * the default), from sinfo, asked once. Unknown (no sinfo, no answer) never
 * stops a job: the check is there to refuse one that can never start.
 */
static void learn_limit(struct slurm *s, const struct strvec *args)
{
	const char *part = arg_value(args, "--partition", "-p");
	char *sinfo = find_program("sinfo");
	struct strbuf out = STRBUF_INIT;
	struct strvec argv = STRVEC_INIT;

	s->limit_known = 1;
	s->limit_min = -1;
	if (!sinfo)
		return;
	strvec_pushl(&argv, sinfo, "-h", "-o", "%P %l", NULL);
	if (part)
		strvec_pushl(&argv, "-p", part, NULL);
	if (run_capture(argv.v, environ, NULL, 5000, &out) == 0) {
		for (char *line = out.buf, *nl; line && *line; line = nl ? nl + 1 : NULL) {
			char name[256], lim[64];

			nl = strchr(line, '\n');
			if (sscanf(line, "%255s %63s", name, lim) != 2)
				continue;
			if (part || (*name && name[strlen(name) - 1] == '*')) {
				if (name[strlen(name) - 1] == '*')
					name[strlen(name) - 1] = '\0';
				s->limit_min = parse_limit(lim);
				s->partition = xstrdup(name);
				break;
			}
		}
	}
	strbuf_release(&out);
	strvec_clear(&argv);
	free(sinfo);
}

static int slurm_start(struct executor *ex, struct exec_job *job)
{
	struct slurm *s = ex->priv;
	struct slurm_job *sj;
	long minutes = time_limit_min(job);

	/* A --time in --slurm-args is the user's and wins over zlb's: theirs to fit. */
	if (minutes > 0 && !arg_value(ex->args, "--time", "-t")) {
		if (!s->limit_known)
			learn_limit(s, ex->args);
		if (s->limit_min >= 0 && minutes > s->limit_min)
			return error("an operator's deadline (--op-timeout plus --grace) asks Slurm "
				     "for --time=%ld minutes and partition %s allows %ld: the job "
				     "would pend for ever (PartitionTimeLimit); lower --op-timeout, "
				     "or give a partition that allows it (--slurm-args "
				     "--partition=...)", minutes, s->partition, s->limit_min);
	}
	sj = xcalloc(1, sizeof(*sj));

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
	free(s->partition);
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
