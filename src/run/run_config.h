/*
 * Everything that configures one `zlb run`: the option table (every knob of
 * the original tool, each a --flag that reads its environment variable as
 * the default) and the typed configuration built from it.
 */
#ifndef ZLB_RUN_CONFIG_H
#define ZLB_RUN_CONFIG_H

#include "lib/options.h"
#include "lib/strvec.h"

extern const struct opt_def run_option_defs[];

/*
 * A DTYPES value's names are dtype names (torch's spelling); which ones
 * FlagGems accepts is read from the checkout at preflight. Returns 0, or -1
 * with why filled (an option validator).
 */
int valid_dtype_names(const char *v, struct strbuf *why);

struct run_config {
	char *op;               /* operator (test function without test_) */
	char *op_file;          /* benchmark file stem, or NULL to search */
	char *shape_file;       /* user shape file, or NULL */
	char *flaggems_dir;     /* explicit checkout, or NULL to discover */
	char *test_node;        /* explicit pytest node, or NULL */
	char *shape_mode;       /* explicit shape mode, or NULL to derive */
	struct strvec dtypes;   /* empty: upstream's own dtype list */
	char *bench_level;      /* core | comprehensive */
	int use_flagtune;
	char *color;            /* always | never | auto */
	char *backend;          /* as given (name or alias) */
	int direct_repeat;
	struct strvec extra_plugins;
	char *replay_from;
	int isolate_tuner_cache;
	int parallel_warmup_gpus; /* < 2: serial autotune sweep */
	int device;             /* logical device index */
	char *timer;            /* auto | graph | direct */
	int warmup_ms;
	int rep_ms;             /* stopping rule: minimum GPU time per measurement */
	int min_samples;        /* stopping rule: minimum samples */
	char *noise_target;     /* stopping rule: relative noise of the centre, as given */
	int max_wall_ms;        /* stopping rule: wall-clock limit per measurement */
	char *l2_mode;          /* hot | cold */
	char *clock_floor;      /* discard samples below this fraction of the steady clock */
	char *power_duty;       /* resample power-capped measurements at this duty; 0: never */
	char *power_settle;     /* ms of idle before that second sampling; 0: none */
	char *preload;          /* ms of untimed back-to-back replays before sampling */
	char *preload_steady;   /* stop the preload once its level holds within this */
	int placements;         /* graphs per measurement, each on its own memory */
	int placement_probes;   /* more graphs timed briefly for placement_sd */
	int tune_placement_probes; /* the same after an autotuner's timing of a config */
	int clock_elasticity;   /* read each row's clock elasticity after its sampling */
	char *tune_rule;        /* rows | budget: how an autotuner's timing of a config stops */
	char *replay_target_ms; /* GPU time one replay is sized for, as given */
	int warmup_max_calls;   /* the warm-up budget's cap on calls */
	int ir;                 /* capture IR (compile listener + launch attribution) */
	int seed;
	char *python;
	char *runs_dir;
	/*
	 * Exact run directory (--run-dir), or NULL for <runs_dir>/<op>_<time>.
	 * Its parent is created; the directory itself must not exist or be
	 * empty (a batch gives each operator a fixed place).
	 */
	char *run_dir;
	int interrupt_grace_ms; /* after an interrupt: SIGINT, this, SIGTERM, this, SIGKILL */
	char *worker;           /* a warm worker's socket (zlb batch --isolation worker), or NULL */
	char *cluster_job;      /* the cluster task running this run (zlb batch), or NULL */
	char *preset;           /* full | screen: the defaults the knobs started from */
	int op_given;           /* op came from the command line or OP */
	int keep_compile_cache; /* keep <run dir>/triton_cache after the run */
	int mm_cluster_fix;     /* keep FlagGems' Hopper fp16 mm off its cluster kernel */
	/* What parsing decided that the run header should say (OP and TEST_NODE both set). */
	struct strvec notes;
	int print_engine_env;   /* --print-engine-env: say run_config_engine_env, run nothing */
	/*
	 * What the terminal shows: -q only the result and errors, by default
	 * zlb's lines and tables without pytest's own, -v everything pytest
	 * prints too (run.log always has everything). Not caliber.
	 */
	int quiet, verbose;
};

/*
 * Parse `zlb run` arguments and the environment into cfg. Returns 0,
 * 1 when --help was asked, 2 when --version was, or -1 with error()
 * describing bad input.
 */
int run_config_parse(struct run_config *cfg, int argc, char **argv,
		     char *const *envp, struct opt_values *raw);
void run_config_release(struct run_config *cfg);

/*
 * Set in env the ZLB_* variables that shape a measurement (stopping rule,
 * what a sample is, warm-up cap, direct repeat), from cfg. The plugins
 * have no defaults of their own for these: this is their one source.
 */
void run_config_engine_env(const struct run_config *cfg, struct strvec *env);

#endif
