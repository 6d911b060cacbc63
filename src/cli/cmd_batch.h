/*
 * What the files of `zlb batch` share: cmd_batch.c runs the command's
 * steps (operators, paths, children, devices) and hands the plan to
 * batch_execute(); cmd_batch_options.c holds the option tables and the
 * steps that read them (the command line, --resume's restore, the record
 * a later --resume continues); cmd_batch_children.c the steps that settle
 * where and how the children run (backend, executor, environment,
 * interpreter, devices). Private to src/cli/.
 */
#ifndef ZLB_CLI_CMD_BATCH_H
#define ZLB_CLI_CMD_BATCH_H

#include <jansson.h>

#include "backends/backend.h"
#include "batch/opspec.h"
#include "lib/options.h"
#include "lib/strvec.h"
#include "run/run_config.h"

extern const struct opt_def batch_option_defs[];
/* zlb run options a batch sets per operator itself: refused as batch arguments. */
extern const char *const owned_run_options[];
/* Variables of the caller's environment the children never see. */
extern const char *const scrubbed_env[];

/* What zlb batch gathers from its command line before the scheduler runs. */
struct batch_cmd {
	struct strvec bargv;        /* the batch's own options, for its table */
	struct strvec run_args;     /* zlb run options, given to every child */
	struct strvec spec_text;    /* the operators as written */
	struct strvec dtypes, env, exec_args;
	struct opt_values raw;
	struct opt_values rraw;     /* zlb run's options as given (flags, environment) */
	json_t *record;             /* batch.json "resume": what a later --resume continues */
	struct strvec overrides;    /* with --resume --override: what this session changed */
	int resume;
	struct op_spec *specs;
	size_t nspecs;
	struct run_config cfg;      /* what the children resolve from run_args */
	int have_cfg;
	struct device_list devs;
	const struct backend_ops *be;
	int *devices, ndevices;
	int cluster;                /* a cluster executor submits and follows the batch */
	const char *executor;       /* the executor that runs the operators from here */
	char *task;                 /* --task: this process is cluster task "<array>_<index>" */
	char *state_dir;            /* and its state files go here */
	char *alloc;                /* inside the cluster's allocation of this id, or NULL */
	char *python;               /* the interpreter the batch probed (local executor) */
	struct strvec worker_env;   /* the warm workers' environment */
	int ops_given;
	char *dir, *shape_file, *replay_root, *main_dir, *vllm_dir;
};

/* Refuse with a usage error from a step of cmd_batch (exit 2). */
#define REFUSE(...) return usage_error("batch", __VA_ARGS__)

/* argv into the batch's own options and zlb run's, in the order given; *help: enum opt_want. */
int batch_cmd_split_args(struct batch_cmd *bc, int argc, char **argv, int *help);
/* The batch's options and zlb run's, parsed (the latter as given: flags and environment). */
int batch_cmd_check_options(struct batch_cmd *bc);
/* --resume: every option restored from batch.json, or a refusal naming the differences. */
int batch_cmd_continue_batch(struct batch_cmd *bc);
/* zlb run's options for every child, as flags, checked once by zlb run's own table. */
int batch_cmd_check_run_options(struct batch_cmd *bc);
/* What a later --resume continues (bc->record). */
int batch_cmd_record_batch(struct batch_cmd *bc);
/* The backend, the executor, the children's environment, and their interpreter probed once. */
int batch_cmd_prepare_children(struct batch_cmd *bc);
/* The cluster's own options, as the executor's arguments; and the device lanes. */
int batch_cmd_resolve_devices(struct batch_cmd *bc);

#endif
