/*
 * Clock checks against the fake driver and the fake NVML
 * (tests/fakes/fake_nvml.c): FAKE_NVML_SM_CLOCKS is the sequence of SM
 * clock reads, two per batch (one while it runs, one after), and the
 * batch sizes are fixed by the stopping rule (1 replay, then up to 64),
 * so which samples a dip costs can be predicted exactly.
 */

/* Every request here asks for the clock check. */
#define TIMER_FAKE_CLOCK_CHECK ZLBT_CLOCK_CHECK
#include "timer_fake.h"

#include <stdio.h>

static int setup_driver(void **state)
{
	return fake_cuda_open() || fake_nvml_open() ? -1 : 0;
}

static void steady_clock_drops_nothing(void **state)
{
	struct zlbt_request q = request(1500000, 1);
	struct zlbt_result r;
	char err[256];

	q.min_samples = 100;
	result_init(&r);
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)),
			 ZLBT_OK);
	assert_int_equal(r.n, 100);
	assert_int_equal(r.discarded, 0);
	assert_true(r.clock_mhz == 1980);
	assert_true(r.clock_min_mhz == 1980);
	/* Batches of 1, 64, 35: two reads each. */
	assert_int_equal(nvml_reads(), 6);
	/* The handle is looked up once (or was already), not per read. */
	assert_true(nvml_lookups() <= 1);
}

static void dip_drops_whole_rounds_of_placements(void **state)
{
	/* Three placements of 1, 2 and 4 us per replay. */
	static uint64_t more[] = { 2000, 4000 };
	struct zlbt_request q = request(1000, 1);
	struct zlbt_result r;
	double samples[128];
	char err[256];

	/*
	 * min_samples 100 is 34 rounds: 102. Batches are whole rounds: 3,
	 * then 63 (the most of 64 that is), then the 36 still needed, which
	 * run at 1500 MHz and are dropped, then 36 again.
	 */
	setenv("FAKE_NVML_SM_CLOCKS", "1980,1980,1980,1975,1500,1980,1980,1980", 1);
	q.placement_execs = (uint64_t)(uintptr_t)more;
	q.placements = 3;
	q.min_samples = 100;
	result_init(&r);
	assert_int_equal(zlbt_time_graph(&q, &r, samples, 128, err, sizeof(err)),
			 ZLBT_OK);
	assert_int_equal(r.n, 102);
	assert_int_equal(r.discarded, 36);
	/* Each batch replays its placements in blocks, each after one untimed replay. */
	assert_int_equal(fake_launches(), 3 + 63 + 36 + 36 + 4 * 3);
	/* What was kept is still in step: sample i ran placement i % 3. */
	for (int i = 0; i < 102; i++)
		assert_near(samples[i], (double)(1000u << (i % 3)) / 1e6, 1e-9);
	assert_int_equal(r.placements, 3);
}

static void dip_drops_its_batch(void **state)
{
	struct zlbt_request q = request(1000000, 4);
	struct zlbt_result r;
	double samples[200], expect[193];
	char err[256];

	/*
	 * Batch 0 (1 replay) reads 1980, 1980; batch 1 (64) 1980, 1975;
	 * batch 2 (64) 1500, 1980: its clock is 1500, below 0.97 x the
	 * median 1975, so its 64 replays go and are made up by batch 3
	 * (64, 1980 from there on). Steady: median(1980, 1975, 1500, 1980).
	 */
	setenv("FAKE_NVML_SM_CLOCKS", "1980,1980,1980,1975,1500,1980", 1);
	setenv("FAKE_CUDA_NOISE_PPM", "20000", 1);
	setenv("FAKE_CUDA_SEED", "11", 1);
	q.min_samples = 129;
	result_init(&r);
	for (int i = 0; i < 200; i++)
		samples[i] = -1;
	assert_int_equal(zlbt_time_graph(&q, &r, samples, 200, err, sizeof(err)),
			 ZLBT_OK);
	assert_int_equal(r.n, 129);
	assert_int_equal(r.discarded, 64);
	assert_int_equal(r.stop_reason, ZLBT_STOP_RULE);
	assert_true(r.clock_mhz == 1977.5);
	assert_true(r.clock_min_mhz == 1500);
	assert_int_equal(fake_launches(), 193);
	assert_int_equal(nvml_reads(), 8);

	/* The kept samples, in the order taken: replays 0-64 and 129-192. */
	lcg = 11;
	for (int i = 0; i < 193; i++)
		expect[i] = model_replay_ms(1000000, 20000) / 4;
	for (int i = 0; i < 129; i++) {
		int taken = i < 65 ? i : i + 64;

		if (samples[i] != expect[taken])
			fail_msg("sample %d is %.17g, replay %d was %.17g",
				 i, samples[i], taken, expect[taken]);
	}
	assert_true(samples[129] == -1);
}

static void ramp_drops_first_batch(void **state)
{
	struct zlbt_request q = request(1500000, 1);
	struct zlbt_result r;
	char err[256];

	/*
	 * A GPU still ramping up: the first batch (1 replay) runs at 1500
	 * and is kept while it is all there is; the next at 1980 moves the
	 * median to 1740, and 1500 < 0.97 x 1740 drops it after the fact.
	 * One more replay makes up for it.
	 */
	setenv("FAKE_NVML_SM_CLOCKS", "1500,1500,1980", 1);
	q.min_samples = 65;
	result_init(&r);
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)),
			 ZLBT_OK);
	assert_int_equal(r.n, 65);
	assert_int_equal(r.discarded, 1);
	assert_true(r.clock_mhz == 1980);
	assert_true(r.clock_min_mhz == 1500);
	assert_int_equal(fake_launches(), 66);
}

static void lasting_sag_is_the_clock(void **state)
{
	struct zlbt_request q = request(1500000, 1);
	struct zlbt_result r;
	double samples[300];
	char err[256];

	/*
	 * 1980 for two batches (1 + 64 replays), then 1700 for good. Batch
	 * 2 is dropped against 1980, batch 3 too against 1840, but with
	 * batch 4 the median is 1700: the sag is the clock the measurement
	 * runs at, and batches 2 and 3 come back. Kept: 1 + 4 x 64 = 257,
	 * more than max_samples, so the newest 57 are left out.
	 */
	setenv("FAKE_NVML_SM_CLOCKS", "1980,1980,1980,1980,1700", 1);
	q.min_samples = 200;
	q.max_samples = 200;
	result_init(&r);
	assert_int_equal(zlbt_time_graph(&q, &r, samples, 300, err, sizeof(err)),
			 ZLBT_OK);
	assert_int_equal(r.n, 200);
	assert_int_equal(r.discarded, 0);
	assert_true(r.clock_mhz == 1700);
	assert_true(r.clock_min_mhz == 1700);
	assert_int_equal(fake_launches(), 257);
	assert_int_equal(nvml_reads(), 10);
	assert_true(fabs(r.total_gpu_ms - 300) < 1e-9);
}

static void floor_is_the_callers(void **state)
{
	struct zlbt_request q = request(1500000, 1);
	struct zlbt_result r;
	char err[256];

	/* 1500 / 1980 = 0.76: kept above a floor of 0.7. */
	setenv("FAKE_NVML_SM_CLOCKS", "1980,1980,1980,1980,1500,1980", 1);
	q.min_samples = 129;
	q.clock_floor = 0.7;
	result_init(&r);
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)),
			 ZLBT_OK);
	assert_int_equal(r.n, 129);
	assert_int_equal(r.discarded, 0);
	assert_true(r.clock_min_mhz == 1500);
	assert_int_equal(fake_launches(), 129);
}

static void off_reads_nothing(void **state)
{
	struct zlbt_request q = request(1500000, 1);
	struct zlbt_result r;
	char err[256];

	setenv("FAKE_NVML_SM_CLOCKS", "1980,1500", 1);
	q.clock_check = ZLBT_CLOCK_OFF;
	q.min_samples = 100;
	result_init(&r);
	r.clock_mhz = 7;
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)),
			 ZLBT_OK);
	assert_int_equal(r.n, 100);
	assert_true(r.clock_mhz == 0);
	assert_true(r.clock_min_mhz == 0);
	assert_int_equal(nvml_reads(), 0);
}

static void device_of_the_context(void **state)
{
	struct zlbt_request q = request(1500000, 1);
	struct zlbt_result r;
	char err[256];

	/* A context on device 1: NVML is asked for bus 01, which it knows. */
	setenv("FAKE_CUDA_DEVICES", "2", 1);
	setenv("FAKE_CUDA_CONTEXT_DEVICE", "1", 1);
	q.min_samples = 10;
	result_init(&r);
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)),
			 ZLBT_OK);
	assert_true(r.clock_mhz == 1980);
	assert_int_equal(nvml_lookups(), 1);

	/* A device NVML does not know: unchecked, not an error. */
	nvml_reset();
	setenv("FAKE_CUDA_DEVICES", "3", 1);
	setenv("FAKE_CUDA_CONTEXT_DEVICE", "2", 1);
	setenv("FAKE_NVML_DEVICES", "2", 1);
	result_init(&r);
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)),
			 ZLBT_OK);
	unsetenv("FAKE_NVML_DEVICES");
	assert_int_equal(r.n, 10);
	assert_true(r.clock_mhz == 0);
	assert_int_equal(r.discarded, 0);
	assert_int_equal(nvml_reads(), 0);
}

static void v1_request_reads_no_clock(void **state)
{
	struct zlbt_request q = request(1500000, 1);
	struct zlbt_result r;
	char err[256];

	/* clock_check set beyond a version 1 struct_size is not read. */
	q.struct_size = 56;
	q.min_samples = 10;
	result_init(&r);
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)),
			 ZLBT_OK);
	assert_int_equal(r.n, 10);
	assert_int_equal(nvml_reads(), 0);
	assert_true(r.clock_mhz == 0);
}

/*
 * FAKE_NVML_SM_CLOCKS for 200 batches (two reads each): batch b reads
 * slow MHz when slow_batch(b), else fast.
 */
static void set_batch_clocks(unsigned fast, unsigned slow, int (*slow_batch)(int b))
{
	static char seq[8192];
	size_t len = 0;

	for (int i = 0; i < 400; i++)
		len += (size_t)snprintf(seq + len, sizeof(seq) - len, "%s%u", i ? "," : "",
					slow_batch(i / 2) ? slow : fast);
	setenv("FAKE_NVML_SM_CLOCKS", seq, 1);
	nvml_reset();
}

static int every_other(int b) { return b % 2; }
static int first_three(int b) { return b < 3; }

/* A noisy workload whose noise target is out of reach: only a clock stops it early. */
static struct zlbt_request noisy_request(void)
{
	struct zlbt_request q = request(1000000, 1);

	setenv("FAKE_CUDA_NOISE_PPM", "20000", 1);
	setenv("FAKE_CUDA_SEED", "1", 1);
	q.noise_target = 1e-4;
	q.min_samples = 100;
	q.max_samples = 4000;
	return q;
}

/*
 * The batches' clock wanders between 1980 and 1800 MHz (a power cap) and
 * the noise target is out of reach: the run stops once the median's noise
 * is a quarter of the clock's wander, not at its limits; at a steady clock
 * the same samples go on to max_samples.
 */
static void wandering_clock_stops_sampling(void **state)
{
	struct zlbt_request q = noisy_request();
	struct zlbt_result r;
	char err[256];

	set_batch_clocks(1980, 1800, every_other);
	q.clock_floor = 0.85;
	result_init(&r);
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)), ZLBT_OK);
	assert_int_equal(r.stop_reason, ZLBT_STOP_CLOCK);
	assert_int_equal(r.discarded, 0);
	assert_true(r.noise > q.noise_target);
	assert_in_range(r.n, 100, 1000);

	setenv("FAKE_NVML_SM_CLOCKS", "1980", 1);
	result_init(&r);
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)), ZLBT_OK);
	assert_int_equal(r.stop_reason, ZLBT_STOP_MAX_SAMPLES);
	assert_int_equal(r.n, 4000);
}

/*
 * A power cap as an H100 showed it: every other batch well below the
 * floor of the steady clock. The kept batches all read 1980 MHz and look
 * steady; the dropped half says the clock wanders, and the run stops by
 * the clock rule instead of sampling through dropped replays to its
 * limits. A cold GPU's few ramp-up batches are no such evidence.
 */
static void dropped_batches_show_the_wander(void **state)
{
	struct zlbt_request q = noisy_request();
	struct zlbt_result r;
	char err[256];

	set_batch_clocks(1980, 1650, every_other);
	result_init(&r);
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)), ZLBT_OK);
	assert_int_equal(r.stop_reason, ZLBT_STOP_CLOCK);
	assert_true(r.discarded > 0);
	assert_in_range(r.n, 100, 1000);

	/* ramp-up: the first three batches slow, then the boost clock */
	set_batch_clocks(1980, 1200, first_three);
	result_init(&r);
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)), ZLBT_OK);
	assert_int_equal(r.stop_reason, ZLBT_STOP_MAX_SAMPLES);
	assert_int_equal(r.n, 4000);
	assert_true(r.discarded > 0);
}

/*
 * A first sampling that the caller will sample again at a duty below 1
 * (stop_when_capped) stops at min_samples once the power cap shows: its
 * noise target is out of reach there, and its samples are thrown away.
 * Without the flag, or without the cap, the same run goes on to its
 * limits.
 */
static void power_cap_stops_a_first_sampling(void **state)
{
	struct zlbt_request q = noisy_request();
	struct zlbt_result r;
	char err[256];

	setenv("FAKE_NVML_SM_CLOCKS", "1980", 1);
	setenv("FAKE_NVML_REASONS", "0,4", 1);	/* the cap's bit after the first read */
	q.stop_when_capped = 1;
	result_init(&r);
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)), ZLBT_OK);
	assert_int_equal(r.stop_reason, ZLBT_STOP_CAPPED);
	assert_int_equal(r.n, q.min_samples);
	assert_true(r.clock_reasons & 0x4);

	q.stop_when_capped = 0;
	nvml_reset();
	result_init(&r);
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)), ZLBT_OK);
	assert_int_equal(r.stop_reason, ZLBT_STOP_MAX_SAMPLES);

	q.stop_when_capped = 1;
	setenv("FAKE_NVML_REASONS", "0", 1);
	nvml_reset();
	result_init(&r);
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)), ZLBT_OK);
	assert_int_equal(r.stop_reason, ZLBT_STOP_MAX_SAMPLES);
}

/*
 * The cap's bit can be missed at every read: a steady clock below the
 * floor of the board's top, with no reason named, is the cap too; with a
 * reason named (here the application clocks) it is not.
 */
static void clock_held_below_the_top_stops_a_first_sampling(void **state)
{
	struct zlbt_request q = noisy_request();
	struct zlbt_result r;
	char err[256];

	setenv("FAKE_NVML_SM_CLOCKS", "1500", 1);
	setenv("FAKE_NVML_REASONS", "0", 1);
	q.stop_when_capped = 1;
	result_init(&r);
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)), ZLBT_OK);
	assert_int_equal(r.stop_reason, ZLBT_STOP_CAPPED);
	assert_int_equal(r.clock_max_mhz, 1980);
	assert_true(r.clock_mhz == 1500);

	setenv("FAKE_NVML_REASONS", "2", 1);
	nvml_reset();
	result_init(&r);
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)), ZLBT_OK);
	assert_int_not_equal(r.stop_reason, ZLBT_STOP_CAPPED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(wandering_clock_stops_sampling),
		T(power_cap_stops_a_first_sampling),
		T(clock_held_below_the_top_stops_a_first_sampling),
		T(dropped_batches_show_the_wander),
		T(steady_clock_drops_nothing),
		T(dip_drops_its_batch),
		T(dip_drops_whole_rounds_of_placements),
		T(ramp_drops_first_batch),
		T(lasting_sag_is_the_clock),
		T(floor_is_the_callers),
		T(off_reads_nothing),
		T(device_of_the_context),
		T(v1_request_reads_no_clock),
	};

	return cmocka_run_group_tests(tests, setup_driver, NULL);
}
