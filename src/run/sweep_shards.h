/*
 * The parallel autotune sweep of `zlb run --parallel-warmup-gpus N`
 * (PARALLEL_WARMUP_GPUS): before the measurement, the run's shapes are dealt
 * round-robin to up to N shards, each a pytest process of the same test on
 * one visible device, in record mode with ZLB_SWEEP_ONLY=1 (its tuners
 * choose, nothing is timed); their autotune records are merged into the
 * run's autotune_records/, which the serial measurement then replays.
 *
 * Only the choice of configs is parallel: N processes on one box couple
 * through power and heat, so the measurement stays one process on one
 * device. A sweep that could leave keys unswept is never published: a
 * shard that fails, --level comprehensive (FlagGems adds shapes zlb cannot
 * see), a shape entry zlb cannot resolve; the run then sweeps serially, as
 * without the option, and says why.
 */
#ifndef ZLB_SWEEP_SHARDS_H
#define ZLB_SWEEP_SHARDS_H

#include <jansson.h>

#include "backends/backend.h"
#include "providers/flaggems.h"
#include "run/shapefile.h"
#include "run/tee.h"
#include "lib/strvec.h"

/* Where shard k's files go while it runs: <run dir>/SWEEP_DIR/shard<k>{,.log}. */
#define SWEEP_DIR "sweep_shards"

struct sweep_input {
	int gpus;                          /* requested N (the option); < 2: nothing to do */
	const char *run_dir;               /* the run's directory (absolute) */
	const char *bench_level;           /* core | comprehensive */
	const char *replay_from;           /* the run's --replay-from, or NULL */
	const char *worker;                /* the run's warm worker socket, or NULL */
	const struct backend_ops *backend;
	const struct device_list *devices; /* the devices this run sees */
	const struct strvec *inherited;    /* zlb's own environment: its visibility list */
	const struct strvec *env;          /* the measured child's environment */
	const struct flaggems_target *target;
	const struct shape_file *shapes;   /* the run's shapes; NULL in upstream mode */
	int grace_ms;                      /* after an interrupt: SIGINT, this, SIGTERM, ... */
	struct tee *tee;                   /* the run's output */
	/* The pytest command of a shard whose shapes are in shape_file. */
	void (*shard_argv)(void *ctx, const char *shape_file, struct strvec *argv);
	void *ctx;
};

enum sweep_state {
	SWEEP_OFF,          /* not asked for (N < 2) */
	SWEEP_SKIPPED,      /* asked, not applicable (a replay, one device, one shape) */
	SWEEP_FALLBACK,     /* tried or refused: the serial sweep does it */
	SWEEP_MERGED,       /* autotune_records/ of the run hold the merged choices */
	SWEEP_INTERRUPTED,  /* a signal came: every shard ended, nothing merged */
};

struct sweep_result {
	enum sweep_state state;
	int shards;         /* shard processes of the merged sweep (1 when serial) */
	long conflicts;     /* config keys whose winner differed across shards */
	long entries;       /* merged entries */
	char *why;          /* skipped or fallback: the sentence said */
	json_t *about;      /* provenance "parallel_sweep": what happened, per shard */
};

/*
 * Run the sweep, saying on in->tee what it does. Returns 0 with out filled
 * whatever the sweep's fate (out->state), or -1 with error() when zlb could
 * not do its part (a file it could not write).
 */
int sweep_shards_run(const struct sweep_input *in, struct sweep_result *out);
void sweep_result_release(struct sweep_result *r);

/*
 * Merge the autotune records of shard_dirs[0..n) (each holding
 * autotune_records/<op>.json and meta.json, as zlbench.autotune writes
 * them) into dest_dir/autotune_records/. A key chosen in several shards
 * keeps the first shard's config; each key whose configs differ counts
 * once in *conflicts. Returns 0, or -1 with error() (a shard without a
 * record, an unreadable file).
 */
int sweep_merge_records(const char *const *shard_dirs, size_t n, const char *dest_dir,
			long *entries, long *conflicts);

#endif
