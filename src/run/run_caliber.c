#include "run/run_caliber.h"

#include "rundir/identity.h"

static const char *const timing_placement_order = "blocked";

typedef json_t *(*fact_fn)(const struct run_config *cfg, const struct run_facts *f);

static json_t *backend(const struct run_config *c, const struct run_facts *f)
{
	return json_string(f->backend);
}

static json_t *device(const struct run_config *c, const struct run_facts *f)
{
	return json_string(f->device ? f->device : "unknown");
}

static json_t *timer(const struct run_config *c, const struct run_facts *f)
{
	return json_string(f->timer);
}

/* FlagGems' --mode: zlb always runs the kernel mode and times it itself. */
static json_t *mode(const struct run_config *c, const struct run_facts *f)
{
	return json_string("kernel");
}

static json_t *shape_mode(const struct run_config *c, const struct run_facts *f)
{
	return json_string(f->shape_mode);
}

static json_t *tuner_cache(const struct run_config *c, const struct run_facts *f)
{
	return json_string(f->tuner_cache);
}

static json_t *autotune_mode(const struct run_config *c, const struct run_facts *f)
{
	return json_string(c->replay_from ? "replay" : "record");
}

/* The requested dtypes, or "upstream": each operator's own list. */
static json_t *dtypes(const struct run_config *c, const struct run_facts *f)
{
	json_t *a;

	if (!c->dtypes.nr)
		return json_string("upstream");
	a = json_array();
	for (size_t i = 0; i < c->dtypes.nr; i++)
		json_array_append_new(a, json_string(c->dtypes.v[i]));
	return a;
}

/* libzlbtimer replays each placement's share of a batch in one block. */
static json_t *placement_order(const struct run_config *c, const struct run_facts *f)
{
	return json_string(timing_placement_order);
}

/* Every run compiles into a Triton cache of its own (runner_run). */
static json_t *compile_cache(const struct run_config *c, const struct run_facts *f)
{
	return json_string("own");
}

/*
 * Whether pytest ran in a process of its own or in a warm worker that served
 * other runs before (python/zlbench/worker.py): the CUDA context and the
 * allocator's history are then not this run's alone.
 */
static json_t *isolation(const struct run_config *c, const struct run_facts *f)
{
	return json_string(c->worker ? "worker" : "process");
}

/* What the reported latency is (docs/protocol.md section 5). */
static json_t *centre(const struct run_config *c, const struct run_facts *f)
{
	return json_string(TIMER_CENTRE);
}

/*
 * The autotune sweep: how many devices chose the configs (1: serially, the
 * default and every fallback) and how many keys got different winners on
 * different shards. Written as serial here; run_caliber_set_sweep() puts
 * what the sweep did.
 */
static json_t *parallel_warmup_gpus(const struct run_config *c, const struct run_facts *f)
{
	return json_integer(1);
}

static json_t *sweep_conflicts(const struct run_config *c, const struct run_facts *f)
{
	return json_integer(0);
}

void run_caliber_set_sweep(json_t *cal, int shards, long conflicts)
{
	json_object_set_new(cal, "parallel_warmup_gpus", json_integer(shards));
	json_object_set_new(cal, "sweep_conflicts", json_integer(conflicts));
}

struct fact {
	const char *key;
	fact_fn value;
};

/* Resolved before the options' keys are written, and after them. */
static const struct fact facts_before[] = {
	{ "backend", backend },
	{ "device", device },
	{ "timer", timer },
	{ "mode", mode },
	{ "shape_mode", shape_mode },
	{ "tuner_cache", tuner_cache },
	{ "autotune_mode", autotune_mode },
	{ "dtypes", dtypes },
	{ NULL },
};
static const struct fact facts_after[] = {
	{ "placement_order", placement_order },
	{ "compile_cache", compile_cache },
	{ "centre", centre },
	{ "isolation", isolation },
	{ "parallel_warmup_gpus", parallel_warmup_gpus },
	{ "sweep_conflicts", sweep_conflicts },
	{ NULL },
};

json_t *run_caliber(const struct run_config *cfg, const struct run_facts *facts)
{
	json_t *cal = json_object();

	for (const struct fact *f = facts_before; f->key; f++)
		json_object_set_new(cal, f->key, f->value(cfg, facts));
	for (const struct opt_def *d = run_option_defs; d->name; d++)
		if (d->record)
			json_object_set_new(cal, d->record, opt_record_json(d, cfg));
	for (const struct fact *f = facts_after; f->key; f++)
		json_object_set_new(cal, f->key, f->value(cfg, facts));
	return cal;
}

void run_caliber_fields(struct strvec *out)
{
	for (const struct fact *f = facts_before; f->key; f++)
		strvec_push(out, f->key);
	for (const struct opt_def *d = run_option_defs; d->name; d++)
		if (d->record)
			strvec_push(out, d->record);
	for (const struct fact *f = facts_after; f->key; f++)
		strvec_push(out, f->key);
}
