/*
 * The caliber block of a run's identity: every setting two runs must share
 * to be compared (run_identity.json "caliber"; zlb compare stops on a
 * difference). Its keys come from two places, each listed once: the
 * options of run_option_defs with a .record key, and the facts a run
 * resolves itself (the backend's name, the device model, the timer in
 * effect, ...), in the table of run_caliber.c.
 */
#ifndef ZLB_RUN_CALIBER_H
#define ZLB_RUN_CALIBER_H

#include <jansson.h>

#include "lib/strvec.h"
#include "run/run_config.h"

/* What a run resolved before it starts, beyond its options. */
struct run_facts {
	const char *backend;     /* the backend's own name (not an alias) */
	const char *device;      /* device model name */
	const char *timer;       /* graph or direct, as resolved */
	const char *shape_mode;  /* inline | file | upstream, as resolved */
	const char *tuner_cache; /* shared(<path>) | isolated */
};

/* The caliber object of a run with cfg and facts: a new reference. */
json_t *run_caliber(const struct run_config *cfg, const struct run_facts *facts);

/*
 * What the autotune sweep was (run/sweep_shards.h): shards devices chose
 * the configs (1: serially), conflicts keys got different winners on
 * different shards. Overwrites the two keys in cal.
 */
void run_caliber_set_sweep(json_t *cal, int shards, long conflicts);

/* Every key run_caliber writes, in its order, appended to out. */
void run_caliber_fields(struct strvec *out);

#endif
