/*
 * run_caliber.c and the option table's bindings: the caliber block is the
 * facts a run resolves plus every option with a .record key, written and
 * listed from the same tables; the child's engine environment is every
 * option with an .export_env variable.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "lib/strvec.h"
#include "run/run_caliber.h"
#include "run/run_config.h"

static const struct run_facts facts = {
	.backend = "cuda", .device = "NVIDIA H200", .timer = "graph",
	.shape_mode = "inline", .tuner_cache = "isolated",
};

static void parse(struct run_config *cfg, struct opt_values *raw, char **argv, int argc)
{
	char *envp[] = { NULL };

	assert_int_equal(run_config_parse(cfg, argc, argv, envp, raw), 0);
}

static void fields_are_unique_and_provenance_is_not_caliber(void **state)
{
	static const char *const must[] = {
		"backend", "device", "timer", "bench_level", "shape_mode", "tuner_cache",
		"direct_repeat", "autotune_mode", "min_samples", "noise_target", "l2_mode",
		"placements", "replay_target_ms", "warmup_max_calls", "centre",
	};
	struct strvec fields = STRVEC_INIT, seen = STRVEC_INIT;

	run_caliber_fields(&fields);
	for (size_t i = 0; i < fields.nr; i++) {
		assert_int_equal(strvec_find(&seen, fields.v[i]), -1);
		strvec_push(&seen, fields.v[i]);
	}
	for (size_t i = 0; i < sizeof(must) / sizeof(*must); i++)
		if (strvec_find(&fields, must[i]) < 0)
			fail_msg("caliber field '%s' missing", must[i]);
	/* The compiler under test is provenance. */
	assert_int_equal(strvec_find(&fields, "flaggems_commit"), -1);
	assert_int_equal(strvec_find(&fields, "op"), -1);
	/* The probes are caliber: their graphs' memory is where later buffers land. */
	assert_int_not_equal(strvec_find(&fields, "placement_probes"), -1);
	assert_int_not_equal(strvec_find(&fields, "tune_placement_probes"), -1);
	assert_int_not_equal(strvec_find(&fields, "tune_rule"), -1);
	strvec_clear(&fields);
	strvec_clear(&seen);
}

/* What is written is what is listed, key for key, in order. */
static void the_block_has_the_listed_keys(void **state)
{
	struct run_config cfg;
	struct opt_values raw;
	char *argv[] = { "run" };
	struct strvec fields = STRVEC_INIT;
	json_t *cal;
	const char *k;
	json_t *v;
	size_t i = 0;

	parse(&cfg, &raw, argv, 1);
	cal = run_caliber(&cfg, &facts);
	run_caliber_fields(&fields);
	assert_int_equal(json_object_size(cal), fields.nr);
	json_object_foreach(cal, k, v)
		assert_string_equal(k, fields.v[i++]);
	for (const struct opt_def *d = run_option_defs; d->name; d++)
		if (d->record && !json_object_get(cal, d->record))
			fail_msg("--%s is recorded as '%s' but missing", d->name, d->record);
	json_decref(cal);
	strvec_clear(&fields);
	run_config_release(&cfg);
	opt_values_release(&raw);
}

static void values_take_their_kinds(void **state)
{
	struct run_config cfg;
	struct opt_values raw;
	char *plain[] = { "run" };
	char *given[] = { "run", "--dtypes", "float16,bfloat16", "--noise-target", "0.002",
			  "--use-flagtune", "--replay-from", "/r/A", "--iter", "50" };
	json_t *cal;

	parse(&cfg, &raw, plain, 1);
	cal = run_caliber(&cfg, &facts);
	assert_string_equal(json_string_value(json_object_get(cal, "dtypes")), "upstream");
	assert_true(json_is_real(json_object_get(cal, "noise_target")));
	assert_true(json_real_value(json_object_get(cal, "noise_target")) == 0.001);
	assert_true(json_is_false(json_object_get(cal, "use_flagtune")));
	assert_int_equal(json_integer_value(json_object_get(cal, "min_samples")), 10);
	assert_int_equal(json_integer_value(json_object_get(cal, "min_time_ms")), 100);
	assert_string_equal(json_string_value(json_object_get(cal, "autotune_mode")), "record");
	assert_string_equal(json_string_value(json_object_get(cal, "device")), "NVIDIA H200");
	assert_string_equal(json_string_value(json_object_get(cal, "bench_level")), "core");
	json_decref(cal);
	run_config_release(&cfg);
	opt_values_release(&raw);

	parse(&cfg, &raw, given, sizeof(given) / sizeof(*given));
	cal = run_caliber(&cfg, &facts);
	assert_int_equal(json_array_size(json_object_get(cal, "dtypes")), 2);
	assert_string_equal(json_string_value(json_array_get(json_object_get(cal, "dtypes"), 1)),
			    "bfloat16");
	assert_true(json_real_value(json_object_get(cal, "noise_target")) == 0.002);
	assert_true(json_is_true(json_object_get(cal, "use_flagtune")));
	assert_int_equal(json_integer_value(json_object_get(cal, "min_time_ms")), 50);
	assert_string_equal(json_string_value(json_object_get(cal, "autotune_mode")), "replay");
	json_decref(cal);
	run_config_release(&cfg);
	opt_values_release(&raw);
}

/* Every .export_env knob, and nothing else, reaches the child as given. */
static void the_engine_environment_is_the_exported_knobs(void **state)
{
	struct run_config cfg;
	struct opt_values raw;
	char *argv[] = { "run", "--noise-target", "0.0005", "--placements", "8",
			 "--l2", "cold" };
	struct strvec env = STRVEC_INIT;
	size_t exported = 0;

	parse(&cfg, &raw, argv, sizeof(argv) / sizeof(*argv));
	run_config_engine_env(&cfg, &env);
	for (const struct opt_def *d = run_option_defs; d->name; d++) {
		if (!d->export_env)
			continue;
		exported++;
		if (!env_get(&env, d->export_env))
			fail_msg("--%s is exported as %s but not set", d->name, d->export_env);
	}
	assert_int_equal(env.nr, exported);
	assert_string_equal(env_get(&env, "ZLB_NOISE_TARGET"), "0.0005");	/* as given */
	assert_string_equal(env_get(&env, "ZLB_PLACEMENTS"), "8");
	assert_string_equal(env_get(&env, "ZLB_L2"), "cold");
	assert_string_equal(env_get(&env, "ZLB_PLACEMENT_PROBES"), "2");
	strvec_clear(&env);
	run_config_release(&cfg);
	opt_values_release(&raw);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fields_are_unique_and_provenance_is_not_caliber),
		cmocka_unit_test(the_block_has_the_listed_keys),
		cmocka_unit_test(values_take_their_kinds),
		cmocka_unit_test(the_engine_environment_is_the_exported_knobs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
