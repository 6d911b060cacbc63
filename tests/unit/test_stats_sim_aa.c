/*
 * A/A: the "over 1000 simulated A/A comparisons of 20 rows the
 * false-flag rate stays under the nominal level". A false flag is a
 * FASTER or SLOWER verdict on a row where A and B are the same build; a
 * comparison is false-flagged when any of its 20 rows is. Under a
 * complete null the BH step bounds that rate by the FDR level, 5%.
 *
 * Rows vary as a real suite does: sample noise 0.2%..5%, process drift
 * 0.05%..0.3% (bench/README.md's range), 40..200 samples per round.
 * Asserted, for 3 rounds per side and for single rounds with the default
 * drift floor, at the default 1% threshold and at threshold 0: at most
 * 50 of 1000 comparisons false-flagged; interval coverage >= 94%.
 * Contrast (asserted too, it is why rounds are the unit): the same data
 * judged by samples alone flag most comparisons, while data without
 * process drift are judged correctly from samples alone.
 * See test_stats_sim.h for the model.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_stats_sim.h"

#define SUITE_ROWS .sigma_s_lo = 0.002, .sigma_s_hi = 0.05, .sigma_d_lo = 0.0005, \
	.sigma_d_hi = 0.003, .n_lo = 40, .n_hi = 200

static void test_aa_three_rounds(void **state)
{
	struct scenario sc = { .name = "A/A, 3 rounds per side", .trials = 1000, .rounds = 3,
			       .threshold = 0.01, .drift_floor = 0.003, .nboot = 200, .seed = 11,
			       SUITE_ROWS, .naive = 200 };
	struct outcome o;

	sim_run(&sc, &o);
	sim_report(&sc, &o);
	assert_true(o.trials_flagged <= 50);
	assert_true(o.trials_flagged0 <= 50);
	assert_true(o.covered >= 0.94 * (double)o.intervals);
	/* samples alone (what nvbench_compare does) flag most A/A comparisons */
	assert_true(o.naive_trials_flagged >= 100);
	/* A/A rows are SAME or UNSURE, and a fair share is SAME at 1% */
	assert_true(o.same + o.unsure == 1000 * ROWS - o.null_flags);
	assert_true(o.same >= 1000 * ROWS / 4);
}

static void test_aa_single_round(void **state)
{
	struct scenario sc = { .name = "A/A, 1 round per side, drift floor 0.3%", .trials = 1000,
			       .rounds = 1, .threshold = 0.01, .drift_floor = 0.003, .nboot = 200,
			       .seed = 12, SUITE_ROWS, .naive = 0 };
	struct outcome o;

	sim_run(&sc, &o);
	sim_report(&sc, &o);
	assert_true(o.trials_flagged <= 50);
	assert_true(o.trials_flagged0 <= 50);
	assert_true(o.covered >= 0.94 * (double)o.intervals);

	/* without the floor one process's samples cannot see its drift */
	sc.name = "A/A, 1 round per side, NO drift floor (--drift-floor 0)";
	sc.drift_floor = 0;
	sc.trials = 200;
	sim_run(&sc, &o);
	sim_report(&sc, &o);
	assert_true(o.trials_flagged0 >= 60);
	assert_true(o.covered < 0.9 * (double)o.intervals);

	/* ... while with no drift in the data the samples' bootstrap is right */
	sc.name = "A/A, 1 round per side, data without drift, no floor";
	sc.sigma_d_lo = sc.sigma_d_hi = 0;
	sc.seed = 13;
	sim_run(&sc, &o);
	sim_report(&sc, &o);
	assert_true(o.covered >= 0.94 * (double)o.intervals);
	assert_true(o.trials_flagged0 <= 0.05 * (double)sc.trials);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_aa_three_rounds),
		cmocka_unit_test(test_aa_single_round),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
