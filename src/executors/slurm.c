/*
 * The Slurm executor: a batch goes to the cluster as one job array
 * (`sbatch --array=0-N%P`), each array task running `zlb task` on its share
 * of the operators in the batch directory, which the nodes must share.
 *
 * Why an array and not a job per operator: a login node holds no process
 * per operator, Slurm queues and throttles the whole screen at once
 * (`squeue` shows one array named zlb:<batch>), and each task pays one
 * Python start for its share (--isolation worker) instead of one per
 * operator. The driver (batch/batch_cluster.c) only submits, follows and
 * merges what the tasks write.
 *
 * Following never uses `sbatch --wait` (it looks at 2 s, 8 s, then every
 * 32 s): the driver asks `scontrol show job -o`, which knows pending,
 * running and recently ended tasks with their exit codes; a task purged
 * from slurmctld's memory (MinJobAge) is looked up with `sacct` where
 * accounting exists, else in the jobcomp/filetxt log `scontrol show config`
 * names, else it is unknown and the task's own files decide.
 *
 * No shell anywhere: sbatch is given a script whose first line is
 * `#!<zlb> task`, so the node execs zlb itself (batch_cluster.c writes it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "lib/error.h"
#include "lib/paths.h"
#include "lib/proc.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"
#include "executors/executor.h"

extern char **environ;

/* What a Slurm command may take before it is given up on (a busy slurmctld). */
#define SLURM_CMD_TIMEOUT_MS 30000
/* A jobcomp log read for an array's last words: at most this much of it. */
#define JOBCOMP_MAX (64 << 20)

static const char *const programs[] = { "sbatch", "squeue", "scontrol", "scancel", NULL };

static int slurm_available(struct strbuf *why)
{
	for (const char *const *p = programs; *p; p++) {
		char *path = find_program(*p);

		if (!path) {
			strbuf_addf(why, "%s was not found on PATH: the slurm executor submits the "
				    "batch as a job array (sbatch) and follows it (squeue, scontrol, "
				    "scancel); run zlb batch where Slurm's client is installed (a "
				    "login node), or use --executor local", *p);
			return 0;
		}
		free(path);
	}
	return 1;
}

static int have(const char *program)
{
	char *path = find_program(program);

	free(path);
	return path != NULL;
}

/* Run a Slurm client program; its output in *out. The exit code, or -1 with error(). */
static int slurm_cmd(struct strvec *argv, struct strbuf *out)
{
	char *prog = find_program(argv->v[0]);
	int r;

	if (!prog)
		return error("%s was not found on PATH", argv->v[0]);
	free(argv->v[0]);
	argv->v[0] = prog;
	strbuf_reset(out);
	r = run_capture(argv->v, environ, NULL, SLURM_CMD_TIMEOUT_MS, out);
	return r;
}

/* The first line of text, for messages. */
static void first_line_of(const char *text, struct strbuf *out)
{
	size_t n = strcspn(text, "\n");

	strbuf_add(out, text, n);
}

/* Is the option (--name=V, --name V, -xV or -x V) among args? Its value or NULL. */
static const char *arg_value(const struct strvec *args, const char *lng, const char *shrt)
{
	size_t n = strlen(lng);

	for (size_t i = 0; args && i < args->nr; i++) {
		const char *a = args->v[i];

		if (!strncmp(a, lng, n) && a[n] == '=')
			return a + n + 1;
		if ((!strcmp(a, lng) || (shrt && !strcmp(a, shrt))) && i + 1 < args->nr)
			return args->v[i + 1];
		if (shrt && !strncmp(a, shrt, 2) && a[2] && a[1] != '-')
			return a + 2;
	}
	return NULL;
}

static int asks_for_gpus(const struct strvec *args)
{
	return arg_value(args, "--gres", NULL) || arg_value(args, "--gpus", "-G") ||
	       arg_value(args, "--gpus-per-task", NULL) || arg_value(args, "--gpus-per-node", NULL);
}

static const char *slurm_user_time(const struct strvec *args)
{
	return arg_value(args, "--time", "-t");
}

static int slurm_submit(struct cluster_submission *s, struct strbuf *job)
{
	struct strvec argv = STRVEC_INIT;
	struct strbuf out = STRBUF_INIT;
	int r;

	strvec_pushl(&argv, "sbatch", "--parsable", NULL);
	if (s->max_parallel > 0 && s->max_parallel < s->ntasks)
		strvec_pushf(&argv, "--array=0-%d%%%d", s->ntasks - 1, s->max_parallel);
	else
		strvec_pushf(&argv, "--array=0-%d", s->ntasks - 1);
	strvec_pushf(&argv, "--job-name=%s", s->name);
	strvec_pushf(&argv, "--chdir=%s", s->dir);
	strvec_pushf(&argv, "--output=%s", s->output);
	/* A task Slurm requeues (a node failed) appends: its first words stay. */
	strvec_pushl(&argv, "--open-mode=append", "--nodes=1", "--ntasks=1", NULL);
	s->user_time = arg_value(s->args, "--time", "-t");
	if (s->time_min > 0 && !s->user_time)
		strvec_pushf(&argv, "--time=%ld", s->time_min);
	if (!asks_for_gpus(s->args))
		strvec_push(&argv, "--gres=gpu:1");
	for (size_t i = 0; s->args && i < s->args->nr; i++)
		strvec_push(&argv, s->args->v[i]);
	strvec_push(&argv, s->script);
	r = slurm_cmd(&argv, &out);
	if (r != 0) {
		struct strbuf line = STRBUF_INIT;

		first_line_of(out.buf, &line);
		if (r > 0)
			error("sbatch refused the array (exit %d): %s", r,
			      line.len ? line.buf : "(no message)");
		strbuf_release(&line);
		r = -1;
	} else {
		/* --parsable: "<jobid>" or "<jobid>;<cluster>" */
		size_t n = strcspn(out.buf, ";\n");

		if (!n || strspn(out.buf, "0123456789") != n) {
			r = error("sbatch answered '%.*s', not a job id", (int)n, out.buf);
		} else {
			strbuf_reset(job);
			strbuf_add(job, out.buf, n);
		}
	}
	strbuf_release(&out);
	strvec_clear(&argv);
	return r;
}

/* ---- reading Slurm's words ----------------------------------------------------- */

/* The value of Key= in a "Key=Value Key=Value" line (up to the next space), or NULL. */
static int field(const char *line, const char *key, char *val, size_t size)
{
	size_t n = strlen(key);
	const char *p = line;

	while ((p = strstr(p, key))) {
		if ((p == line || p[-1] == ' ') && p[n] == '=') {
			size_t len = strcspn(p + n + 1, " \n");

			if (len >= size)
				len = size - 1;
			memcpy(val, p + n + 1, len);
			val[len] = '\0';
			return 1;
		}
		p += n;
	}
	return 0;
}

static enum cluster_state state_of(const char *s)
{
	static const struct { const char *name; enum cluster_state st; } map[] = {
		{ "PENDING", CLUSTER_PENDING }, { "CONFIGURING", CLUSTER_PENDING },
		{ "REQUEUED", CLUSTER_PENDING }, { "REQUEUE_FED", CLUSTER_PENDING },
		{ "REQUEUE_HOLD", CLUSTER_PENDING }, { "RESV_DEL_HOLD", CLUSTER_PENDING },
		{ "RUNNING", CLUSTER_RUNNING }, { "COMPLETING", CLUSTER_RUNNING },
		{ "SUSPENDED", CLUSTER_RUNNING }, { "STAGE_OUT", CLUSTER_RUNNING },
		{ "SIGNALING", CLUSTER_RUNNING }, { "RESIZING", CLUSTER_RUNNING },
		{ "STOPPED", CLUSTER_RUNNING },
		{ "COMPLETED", CLUSTER_ENDED }, { "FAILED", CLUSTER_ENDED },
		{ "OUT_OF_MEMORY", CLUSTER_ENDED }, { "SPECIAL_EXIT", CLUSTER_ENDED },
		{ "CANCELLED", CLUSTER_CANCELLED },
		{ "TIMEOUT", CLUSTER_TIMEOUT }, { "DEADLINE", CLUSTER_TIMEOUT },
		{ "NODE_FAIL", CLUSTER_LOST }, { "PREEMPTED", CLUSTER_LOST },
		{ "BOOT_FAIL", CLUSTER_LOST }, { "REVOKED", CLUSTER_LOST },
	};
	size_t n = strcspn(s, " +");

	for (size_t i = 0; i < sizeof(map) / sizeof(*map); i++)
		if (strlen(map[i].name) == n && !strncmp(map[i].name, s, n))
			return map[i].st;
	return CLUSTER_UNKNOWN;
}

/* Slurm's "code:signal" as one exit code (128+signal when a signal ended it). */
static int exit_of(const char *s)
{
	int code = 0, sig = 0;

	if (sscanf(s, "%d:%d", &code, &sig) < 1)
		return -1;
	return sig ? 128 + sig : code;
}

static void set_task(struct cluster_task *t, const char *state, const char *reason,
		     const char *exitcode, const char *node)
{
	t->state = state_of(state);
	t->exit_code = t->state == CLUSTER_ENDED && exitcode ? exit_of(exitcode) : -1;
	snprintf(t->detail, sizeof(t->detail), "%s%s%s", state,
		 reason && *reason && strcmp(reason, "None") ? " " : "",
		 reason && strcmp(reason, "None") ? reason : "");
	snprintf(t->node, sizeof(t->node), "%s",
		 node && strcmp(node, "(null)") && strcmp(node, "None") ? node : "");
}

/*
 * Apply fn to each index of an ArrayTaskId ("3", "0-5", "2,4-7%2"), those
 * below ntasks. Returns 0, or -1 for text that is not such a list.
 */
static int each_index(const char *ids, int ntasks, void (*fn)(int, void *), void *ctx)
{
	char buf[4096], *save = NULL, *tok;

	snprintf(buf, sizeof(buf), "%s", ids);
	buf[strcspn(buf, "%")] = '\0';
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		long a = strtol(tok, &end, 10), b = a;

		if (end == tok)
			return -1;
		if (*end == '-') {
			char *e2;

			b = strtol(end + 1, &e2, 10);
			if (e2 == end + 1 || *e2)
				return -1;
		} else if (*end) {
			return -1;
		}
		for (long i = a; i <= b && i < ntasks; i++)
			if (i >= 0)
				fn((int)i, ctx);
	}
	return 0;
}

struct line_ctx {
	struct cluster_task *tasks;
	const char *state, *reason, *exitcode, *node;
};

static void set_one(int i, void *ctx)
{
	struct line_ctx *c = ctx;

	set_task(&c->tasks[i], c->state, c->reason, c->exitcode, c->node);
}

/* `scontrol show job -o J`: every task still in slurmctld's memory. 0, or -1 (no record). */
static int poll_scontrol(const char *job, struct cluster_task *tasks, int ntasks)
{
	struct strvec argv = STRVEC_INIT;
	struct strbuf out = STRBUF_INIT;
	int r;

	strvec_pushl(&argv, "scontrol", "show", "job", "-o", job, NULL);
	r = slurm_cmd(&argv, &out);
	strvec_clear(&argv);
	if (r != 0) {
		strbuf_release(&out);
		return -1;
	}
	for (char *line = out.buf, *nl; line && *line; line = nl ? nl + 1 : NULL) {
		char aj[32], ids[4096], state[64], reason[128], ex[32], node[64];
		struct line_ctx c = { tasks, state, reason, ex, node };

		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (!field(line, "ArrayJobId", aj, sizeof(aj)) || strcmp(aj, job) ||
		    !field(line, "ArrayTaskId", ids, sizeof(ids)) ||
		    !field(line, "JobState", state, sizeof(state)))
			continue;
		if (!field(line, "Reason", reason, sizeof(reason)))
			*reason = '\0';
		if (!field(line, "ExitCode", ex, sizeof(ex)))
			strcpy(ex, "0:0");
		if (!field(line, "NodeList", node, sizeof(node)))
			*node = '\0';
		each_index(ids, ntasks, set_one, &c);
	}
	strbuf_release(&out);
	return 0;
}

/* `sacct` where accounting exists: "J_K|STATE|code:sig|node" lines. */
static void poll_sacct(const char *job, struct cluster_task *tasks, int ntasks)
{
	struct strvec argv = STRVEC_INIT;
	struct strbuf out = STRBUF_INIT;

	if (!have("sacct"))
		return;
	strvec_pushl(&argv, "sacct", "-n", "-P", "-X", "-j", job, "-o",
		     "JobID,State,ExitCode,NodeList", NULL);
	if (slurm_cmd(&argv, &out) == 0) {
		for (char *line = out.buf, *nl; line && *line; line = nl ? nl + 1 : NULL) {
			char id[64], state[96], ex[32], node[64];
			long k;
			char *us, *end;

			nl = strchr(line, '\n');
			if (nl)
				*nl = '\0';
			if (sscanf(line, "%63[^|]|%95[^|]|%31[^|]|%63[^\n]", id, state, ex, node) < 3)
				continue;
			us = strchr(id, '_');
			if (!us || strncmp(id, job, (size_t)(us - id)) || strlen(job) != (size_t)(us - id))
				continue;
			k = strtol(us + 1, &end, 10);
			if (end == us + 1 || *end || k < 0 || k >= ntasks ||
			    tasks[k].state != CLUSTER_UNKNOWN)
				continue;
			set_task(&tasks[k], state, NULL, ex, node);
		}
	}
	strbuf_release(&out);
	strvec_clear(&argv);
}

/* The jobcomp/filetxt log's path, from `scontrol show config`, or NULL. */
static char *jobcomp_log(void)
{
	struct strvec argv = STRVEC_INIT;
	struct strbuf out = STRBUF_INIT;
	char *path = NULL;
	int filetxt = 0;

	strvec_pushl(&argv, "scontrol", "show", "config", NULL);
	if (slurm_cmd(&argv, &out) == 0) {
		for (char *line = out.buf, *nl; line && *line; line = nl ? nl + 1 : NULL) {
			char key[64], val[1024];

			nl = strchr(line, '\n');
			if (nl)
				*nl = '\0';
			if (sscanf(line, "%63s = %1023s", key, val) != 2)
				continue;
			if (!strcmp(key, "JobCompType"))
				filetxt = !strcmp(val, "jobcomp/filetxt");
			else if (!strcmp(key, "JobCompLoc") && val[0] == '/')
				path = xstrdup(val);
		}
	}
	strbuf_release(&out);
	strvec_clear(&argv);
	if (!filetxt) {
		free(path);
		return NULL;
	}
	return path;
}

static void poll_jobcomp(const char *job, struct cluster_task *tasks, int ntasks)
{
	char *path = jobcomp_log();
	struct strbuf log = STRBUF_INIT;

	if (!path)
		return;
	if (strbuf_read_file(&log, path, JOBCOMP_MAX) >= 0) {
		for (char *line = log.buf, *nl; line && *line; line = nl ? nl + 1 : NULL) {
			char aj[32], id[32], state[64], ex[32], node[64];
			char *end;
			long k;

			nl = strchr(line, '\n');
			if (nl)
				*nl = '\0';
			if (!field(line, "ArrayJobId", aj, sizeof(aj)) || strcmp(aj, job) ||
			    !field(line, "ArrayTaskId", id, sizeof(id)) ||
			    !field(line, "JobState", state, sizeof(state)))
				continue;
			k = strtol(id, &end, 10);
			if (end == id || *end || k < 0 || k >= ntasks)
				continue;
			if (!field(line, "ExitCode", ex, sizeof(ex)))
				strcpy(ex, "0:0");
			if (!field(line, "NodeList", node, sizeof(node)))
				*node = '\0';
			/* later lines are later ends (a requeued task's last one wins) */
			set_task(&tasks[k], state, NULL, ex, node);
		}
	}
	strbuf_release(&log);
	free(path);
}

static int slurm_poll(const char *job, struct cluster_task *tasks, int ntasks)
{
	int active = 0, unknown = 0;

	for (int i = 0; i < ntasks; i++) {
		memset(&tasks[i], 0, sizeof(tasks[i]));
		tasks[i].index = i;
		tasks[i].state = CLUSTER_UNKNOWN;
		tasks[i].exit_code = -1;
	}
	if (poll_scontrol(job, tasks, ntasks) < 0) {
		/* Unknown to slurmctld: purged long ago, or slurmctld cannot be reached. */
		struct strvec argv = STRVEC_INIT;
		struct strbuf out = STRBUF_INIT;
		int r;

		strvec_pushl(&argv, "squeue", "-h", "-o", "%i", NULL);
		r = slurm_cmd(&argv, &out);
		strvec_clear(&argv);
		if (r != 0) {
			struct strbuf line = STRBUF_INIT;

			first_line_of(out.buf, &line);
			error("Slurm could not be asked about job %s (squeue: %s)", job,
			      line.len ? line.buf : "no answer");
			strbuf_release(&line);
			strbuf_release(&out);
			return -1;
		}
		strbuf_release(&out);
	}
	for (int i = 0; i < ntasks; i++)
		unknown += tasks[i].state == CLUSTER_UNKNOWN;
	if (unknown)
		poll_sacct(job, tasks, ntasks);
	unknown = 0;
	for (int i = 0; i < ntasks; i++)
		unknown += tasks[i].state == CLUSTER_UNKNOWN;
	if (unknown)
		poll_jobcomp(job, tasks, ntasks);
	for (int i = 0; i < ntasks; i++)
		active += tasks[i].state == CLUSTER_PENDING || tasks[i].state == CLUSTER_RUNNING;
	return active;
}

static int slurm_cancel(const char *job)
{
	struct strvec argv = STRVEC_INIT;
	struct strbuf out = STRBUF_INIT;
	int r;

	strvec_pushl(&argv, "scancel", job, NULL);
	r = slurm_cmd(&argv, &out);
	if (r > 0) {
		struct strbuf line = STRBUF_INIT;

		first_line_of(out.buf, &line);
		error("scancel %s failed (exit %d): %s", job, r, line.buf);
		strbuf_release(&line);
	}
	strbuf_release(&out);
	strvec_clear(&argv);
	return r ? -1 : 0;
}

/* A non-negative integer in an environment variable, or -1. */
static long env_number(const char *name)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	return errno || *end || v < 0 ? -1 : v;
}

static int slurm_task_identity(struct strbuf *label, int *index)
{
	long job = env_number("SLURM_ARRAY_JOB_ID"), k = env_number("SLURM_ARRAY_TASK_ID");

	if (job < 0 || k < 0)
		return -1;
	strbuf_reset(label);
	strbuf_addf(label, "%ld_%ld", job, k);
	*index = (int)k;
	return 0;
}

static const char *slurm_allocation(struct strbuf *what)
{
	const char *id = getenv("SLURM_JOB_ID");
	const char *nodes = getenv("SLURM_JOB_NUM_NODES");
	const char *gpus = getenv("SLURM_JOB_GPUS");

	if (!id || !*id)
		return NULL;
	strbuf_addf(what, "%s node(s), GPUs %s", nodes && *nodes ? nodes : "1",
		    gpus && *gpus ? gpus : "none named (SLURM_JOB_GPUS unset)");
	return id;
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
 * The time limit of the partition tasks go to (the one in args, else the
 * default), from sinfo. Unknown (no sinfo, no answer) is -1: the check is
 * there to refuse what could never start, not to guess.
 */
static long slurm_time_limit(const struct strvec *args, struct strbuf *partition)
{
	const char *part = arg_value(args, "--partition", "-p");
	struct strbuf out = STRBUF_INIT;
	struct strvec argv = STRVEC_INIT;
	long limit = -1;

	strvec_pushl(&argv, "sinfo", "-h", "-o", "%P %l", NULL);
	if (part)
		strvec_pushl(&argv, "-p", part, NULL);
	if (have("sinfo") && slurm_cmd(&argv, &out) == 0) {
		for (char *line = out.buf, *nl; line && *line; line = nl ? nl + 1 : NULL) {
			char name[256], lim[64];

			nl = strchr(line, '\n');
			if (sscanf(line, "%255s %63s", name, lim) != 2)
				continue;
			if (part || (*name && name[strlen(name) - 1] == '*')) {
				if (name[strlen(name) - 1] == '*')
					name[strlen(name) - 1] = '\0';
				limit = parse_limit(lim);
				strbuf_reset(partition);
				strbuf_addstr(partition, name);
				break;
			}
		}
	}
	strbuf_release(&out);
	strvec_clear(&argv);
	return limit;
}

/* File systems whose files other machines see (statfs f_type). */
static int network_fs(long type)
{
	static const long shared[] = {
		0x6969,                /* NFS */
		(long)0xFF534D42,      /* CIFS */
		(long)0xFE534D42,      /* SMB2 */
		0x0BD00BD0,            /* Lustre */
		0x47504653,            /* GPFS */
		0x19830326,            /* BeeGFS */
		0x00C36400,            /* CephFS */
		0x65735546,            /* FUSE (sshfs, ...): may be either; taken as shared */
		0x01021997,            /* 9P */
		0x5346414F,            /* AFS */
		0x6B414653,            /* kAFS */
		0x20030528,            /* PanFS */
		0x013111A8,            /* IBRIX */
		0x564C,                /* NCP */
	};

	for (size_t i = 0; i < sizeof(shared) / sizeof(*shared); i++)
		if (shared[i] == type)
			return 1;
	return 0;
}

static int slurm_dir_shared(const char *dir, const struct strvec *args, struct strbuf *why)
{
	const char *part = arg_value(args, "--partition", "-p");
	struct statfs fs;
	struct strbuf out = STRBUF_INIT, host = STRBUF_INIT;
	struct strvec argv = STRVEC_INIT;
	char name[256];
	int others = 0, r;

	if (statfs(dir, &fs) || network_fs((long)fs.f_type))
		return 1;
	/* A local file system: fine only if every node the tasks may get is this machine. */
	if (gethostname(name, sizeof(name)))
		return 1;
	name[sizeof(name) - 1] = '\0';
	name[strcspn(name, ".")] = '\0';
	strvec_pushl(&argv, "sinfo", "-h", "-N", "-o", "%N", NULL);
	if (part)
		strvec_pushl(&argv, "-p", part, NULL);
	if (!have("sinfo") || slurm_cmd(&argv, &out) != 0) {
		strvec_clear(&argv);
		strbuf_release(&out);
		return 1;  /* cannot tell: the first task will */
	}
	strvec_clear(&argv);
	for (char *line = out.buf, *nl; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		line[strcspn(line, ". ")] = '\0';
		if (*line && strcmp(line, name) && strcmp(line, "localhost")) {
			if (others++ < 3)
				strbuf_addf(&host, "%s%s", host.len ? ", " : "", line);
		}
	}
	r = others == 0;
	if (!r)
		strbuf_addf(why, "the batch directory %s is on a file system local to this "
			    "machine (%s), and the tasks may run on %s%s, which cannot see it; "
			    "give a --batch-dir on a file system the nodes share (NFS, Lustre, "
			    "GPFS, ...)", dir, name, host.buf, others > 3 ? ", ..." : "");
	strbuf_release(&out);
	strbuf_release(&host);
	return r;
}

static const struct cluster_ops slurm_cluster = {
	.output_pattern = "%A_%a.out",
	.submit = slurm_submit,
	.user_time = slurm_user_time,
	.poll = slurm_poll,
	.cancel = slurm_cancel,
	.task_identity = slurm_task_identity,
	.allocation = slurm_allocation,
	.time_limit_min = slurm_time_limit,
	.dir_shared = slurm_dir_shared,
};

const struct executor_ops slurm_executor = {
	.name = "slurm",
	.description = "the batch as one Slurm job array (sbatch --array): each task runs "
		       "its share of the operators on the GPU Slurm gave it; the batch "
		       "directory must be on a file system the nodes share",
	.available = slurm_available,
	.cluster = &slurm_cluster,
};
