/*
 * zlb task SCRIPT: one task of a cluster batch, as the cluster starts it.
 *
 * `zlb batch --executor slurm` submits <batch>/.cluster/task, a file whose
 * first line is `#!<zlb> task`: the node execs zlb with the script's path
 * after it, in the batch directory (sbatch --chdir). The task's identity
 * (array and index) comes from the cluster's environment through the
 * executor the batch was started with; the task then continues the batch
 * with its share of the operators, on the GPUs it was given:
 *
 *   zlb batch --batch-dir <cwd> --resume --task <array>_<index>
 *
 * A person never needs to type this; `zlb task --help` says what it is.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch/batch.h"
#include "cli/commands.h"
#include "cli/usage.h"
#include "executors/executor.h"
#include "lib/jsonfile.h"
#include "lib/paths.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"

static const struct cmd_exit task_exits[] = {
	{ "any", "zlb batch's (zlb batch --help), for this task's share of the operators" },
	{ "2", "not started by a cluster in a batch directory (no task script, no cluster "
	       "batch here)" },
	{ NULL, NULL },
};

const struct cmd_doc task_doc = {
	.name = "task",
	.summary = "one task of a cluster batch, as the cluster starts it (#!zlb task)",
	.synopsis = "SCRIPT",
	.about = "What a cluster runs for each task of a `zlb batch --executor slurm`: the\n"
		 "batch's <batch>/.cluster/task starts with `#!<zlb> task`. Run in the batch\n"
		 "directory, it continues the batch with this task's share of the operators\n"
		 "(batch.json cluster.rounds) on the GPUs the task was given; its state goes\n"
		 "to <batch>/.tasks/<array>_<index>/. A person never needs to type it.\n",
	.exits = task_exits,
	.positional = CMD_ARG_FILE,
};

/* The executor the batch in dir was started with (batch.json options.executor). */
static const struct executor_ops *batch_executor(const char *dir)
{
	char *path = path_join(dir, "batch.json");
	json_t *j = NULL;
	const struct executor_ops *xo = NULL;

	if (json_read_file(path, &j) == 0) {
		const char *name = json_str(json_object_get(j, "options"), "executor");
		xo = name ? executor_find(name) : NULL;
	}
	json_decref(j);
	free(path);
	return xo;
}

int cmd_task(int argc, char **argv)
{
	char cwd[PATH_MAX];
	const struct executor_ops *xo;
	struct strbuf label = STRBUF_INIT;
	struct strvec args = STRVEC_INIT;
	int index, rc;

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
		return cli_help("task", &task_doc);
	if (argc == 2 && (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")))
		return cli_version();
	if (argc != 2)
		return usage_error("task", "give the task script the cluster runs (it names "
				   "nothing else: the batch is the working directory)");
	if (!getcwd(cwd, sizeof(cwd))) {
		fprintf(stderr, "zlb task: cannot tell the working directory\n");
		return ZLB_EXIT_IO;
	}
	xo = batch_executor(cwd);
	if (!xo || !xo->cluster) {
		fprintf(stderr, "zlb task: %s holds no batch started for a cluster executor "
			"(batch.json options.executor); a task runs in its batch directory\n", cwd);
		return ZLB_EXIT_USAGE;
	}
	if (xo->cluster->task_identity(&label, &index)) {
		fprintf(stderr, "zlb task: this process is not an array task of %s (its task "
			"variables are unset); the cluster runs zlb task, not a person\n", xo->name);
		strbuf_release(&label);
		return ZLB_EXIT_USAGE;
	}
	strvec_pushl(&args, "batch", "--batch-dir", cwd, "--resume", "--task", label.buf,
		     "--progress", "plain", NULL);
	printf("zlb task %s: %s\n", label.buf, cwd);
	fflush(stdout);
	rc = cmd_batch((int)args.nr, args.v);
	strvec_clear(&args);
	strbuf_release(&label);
	return rc;
}
