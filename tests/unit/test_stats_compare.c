/*
 * stats_compare on hand-made rounds: which test a layout of rounds gets,
 * the point estimate, the drift floor of single rounds, the interval as the
 * hull of bootstrap and t interval, determinism, and the cases where no
 * inference is made.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare/stats_compare.h"
#include "lib/stats_dist.h"
#include "lib/stats_rng.h"
#include "compare/stats_tests.h"

#define N 101
#define K 5

struct fixture {
	double x[2][K][N];
	struct stats_sample_set set[2][K];
};

/* Side s, round k: centre * exp(0.01 Z) samples, centre drifting by 0.2%. */
static void fill(struct fixture *f, uint64_t seed, double shift)
{
	struct stats_rng rng;

	stats_rng_seed(&rng, seed);
	for (int s = 0; s < 2; s++)
		for (int k = 0; k < K; k++) {
			double c = (s ? 1 + shift : 1.0) * exp(0.002 * stats_rng_normal(&rng));
			for (int i = 0; i < N; i++)
				f->x[s][k][i] = c * exp(0.01 * stats_rng_normal(&rng));
			f->set[s][k].x = f->x[s][k];
			f->set[s][k].n = N;
		}
}

static struct fixture *fx(void)
{
	static struct fixture f;
	fill(&f, 5, 0.0);
	return &f;
}

static void run(struct fixture *f, size_t ka, size_t kb, struct stats_cmp_opts *o,
		struct stats_cmp *c)
{
	assert_int_equal(stats_compare(f->set[0], ka, f->set[1], kb, o, c), 0);
}

static void test_test_by_layout(void **state)
{
	struct fixture *f = fx();
	struct stats_cmp_opts o = STATS_CMP_OPTS_INIT;
	struct stats_cmp c;

	run(f, 3, 3, &o, &c);
	assert_true(c.ok);
	assert_string_equal(c.test, "student");
	assert_true(c.df == 4.0);
	run(f, 3, 2, &o, &c);
	assert_string_equal(c.test, "welch");
	assert_true(c.df > 1 && c.df < 3);
	run(f, 1, 3, &o, &c);
	assert_string_equal(c.test, "welch+floor");
	assert_true(c.floor_a && !c.floor_b);
	run(f, 1, 1, &o, &c);
	assert_string_equal(c.test, "mwu+floor");
	assert_true(isinf(c.df));
	assert_true(c.p >= c.p_mwu);		/* p = max(p_MWU, p_z) */
	assert_true(c.floor_a && c.floor_b);
}

static void test_point_estimate(void **state)
{
	struct fixture *f = fx();
	struct stats_cmp_opts o = STATS_CMP_OPTS_INIT;
	struct stats_cmp c;
	double la = 0, lb = 0;

	run(f, 3, 3, &o, &c);
	for (int k = 0; k < 3; k++) {
		la += log(stats_median(f->x[0][k], N));
		lb += log(stats_median(f->x[1][k], N));
	}
	assert_true(fabs(c.a_ms - exp(la / 3)) < 1e-15);
	assert_true(fabs(c.b_ms - exp(lb / 3)) < 1e-15);
	assert_true(fabs(c.ratio - c.b_ms / c.a_ms) < 1e-14);
	assert_true(c.lo < c.ratio && c.ratio < c.hi);
	assert_int_equal(c.na, 3 * N);
}

static void test_deterministic_and_hull(void **state)
{
	struct fixture *f = fx();
	struct stats_cmp_opts o = STATS_CMP_OPTS_INIT, t = STATS_CMP_OPTS_INIT;
	struct stats_cmp c1, c2, ct;

	for (size_t ka = 1; ka <= 3; ka += 2) {
		run(f, ka, ka, &o, &c1);
		run(f, ka, ka, &o, &c2);
		assert_memory_equal(&c1, &c2, sizeof(c1));
		t.nboot = 0;	/* the t interval alone */
		run(f, ka, ka, &t, &ct);
		assert_true(c1.lo <= ct.lo && ct.hi <= c1.hi);
		/* the t interval is D +- t_{df} se */
		{
			double q = stats_t_ppf(0.975, ct.df);
			assert_true(fabs(log(ct.lo) - (ct.diff - q * ct.se)) < 1e-12);
			assert_true(fabs(log(ct.hi) - (ct.diff + q * ct.se)) < 1e-12);
		}
	}
}

static void test_drift_floor_widens_single_rounds(void **state)
{
	struct fixture *f = fx();
	struct stats_cmp_opts o = STATS_CMP_OPTS_INIT;
	struct stats_cmp wide, narrow;

	assert_true(o.drift_floor == 0.001);
	run(f, 1, 1, &o, &wide);
	o.drift_floor = 0;
	run(f, 1, 1, &o, &narrow);
	/* with f per side the half-width is at least 1.96 sqrt(2) f */
	assert_true(log(wide.hi) - log(wide.lo) >= 2 * 1.959 * sqrt(2) * 0.001);
	assert_true(log(narrow.hi) - log(narrow.lo) < log(wide.hi) - log(wide.lo));
	assert_true(wide.p >= narrow.p);
	assert_false(narrow.floor_a);
	/* the t interval adds f^2 per side to the variance, nothing else */
	o.nboot = 0;
	run(f, 1, 1, &o, &narrow);
	o.drift_floor = 0.001;
	run(f, 1, 1, &o, &wide);
	assert_true(fabs(wide.se * wide.se - narrow.se * narrow.se - 2 * 0.001 * 0.001) < 1e-15);
}

static void test_no_inference(void **state)
{
	double few[3] = { 1.0, 1.01, 0.99 }, many[N], same[3][4];
	struct stats_sample_set a = { few, 3 }, b = { many, N }, s[3] = { { 0 } };
	struct stats_cmp_opts o = STATS_CMP_OPTS_INIT;
	struct stats_cmp c;

	for (int i = 0; i < N; i++)
		many[i] = 1 + 0.001 * i;
	/* a single round of 3 samples says nothing about its noise */
	assert_int_equal(stats_compare(&a, 1, &b, 1, &o, &c), 0);
	assert_false(c.ok);
	assert_string_equal(c.test, "none");
	assert_non_null(c.why);
	assert_true(c.p == 1 && isnan(c.lo));
	assert_true(isfinite(c.ratio));
	assert_int_equal(stats_verdict(&c, 0, 0.05, 0.01), STATS_UNSURE);
	/* identical values everywhere: no variation to test against */
	for (int k = 0; k < 3; k++) {
		for (int i = 0; i < 4; i++)
			same[k][i] = 2.0;
		s[k].x = same[k];
		s[k].n = 4;
	}
	assert_int_equal(stats_compare(s, 3, s, 3, &o, &c), 0);
	assert_false(c.ok);
	/* a side with no valid sample at all */
	{
		double bad[2] = { NAN, -1 };
		struct stats_sample_set z = { bad, 2 };
		assert_int_equal(stats_compare(&z, 1, &b, 1, &o, &c), -1);
	}
}

static void test_invalid_samples_are_dropped(void **state)
{
	struct fixture *f = fx();
	double with_junk[N + 3];
	struct stats_sample_set a[1] = { { 0 } }, b[1];
	struct stats_cmp_opts o = STATS_CMP_OPTS_INIT;
	struct stats_cmp clean, junk;

	memcpy(with_junk, f->x[0][0], sizeof(f->x[0][0]));
	with_junk[N] = NAN;
	with_junk[N + 1] = 0;
	with_junk[N + 2] = -INFINITY;
	a[0].x = with_junk;
	a[0].n = N + 3;
	b[0] = f->set[1][0];
	assert_int_equal(stats_compare(a, 1, b, 1, &o, &junk), 0);
	assert_int_equal(stats_compare(f->set[0], 1, b, 1, &o, &clean), 0);
	assert_int_equal(junk.na, N);
	assert_true(junk.ratio == clean.ratio && junk.lo == clean.lo && junk.p == clean.p);
}

static void test_shift_is_found_and_mirrored(void **state)
{
	static struct fixture f;
	struct stats_cmp_opts o = STATS_CMP_OPTS_INIT;
	struct stats_cmp c, m;

	fill(&f, 9, 0.03);
	run(&f, 5, 5, &o, &c);
	assert_true(c.ratio > 1.02 && c.lo > 1.01 && c.p < 1e-4);
	assert_int_equal(stats_verdict(&c, c.p, 0.05, 0.01), STATS_SLOWER);
	/* B against A is A against B mirrored */
	assert_int_equal(stats_compare(f.set[1], 5, f.set[0], 5, &o, &m), 0);
	assert_true(fabs(m.diff + c.diff) < 1e-15);
	assert_true(fabs(m.p - c.p) < 1e-15);
	assert_int_equal(stats_verdict(&m, m.p, 0.05, 0.01), STATS_FASTER);
}

/*
 * A round sampled round-robin on 8 placements, 5 of them at 1.000 and 3
 * at 1.010: the pooled median sits in the big cluster, the centre is the
 * mean of the placements' medians, as the engine reports it.
 */
#define P 8
#define PER 40

static void placements_fill(double *x, size_t n)
{
	struct stats_rng rng;

	stats_rng_seed(&rng, 77);
	for (size_t i = 0; i < n; i++)
		x[i] = (i % P < 5 ? 1.0 : 1.010) * exp(0.001 * stats_rng_normal(&rng));
}

static void test_placements_are_strata(void **state)
{
	double x[P * PER + 3], one[PER], sum = 0, var = 0, m = 0, m2 = 0;
	struct stats_round r, pooled, tail, s;
	struct stats_rng rng;
	const int draws = 20000;

	placements_fill(x, P * PER + 3);
	assert_int_equal(stats_round_init_strata(&r, x, P * PER, P), 0);
	assert_int_equal(r.nstrata, P);
	assert_int_equal(r.n, P * PER);
	for (size_t k = 0; k < P; k++) {
		for (size_t i = 0; i < PER; i++)
			one[i] = x[i * P + k];
		assert_int_equal(stats_round_init(&s, one, PER), 0);
		sum += s.centre;
		var += s.centre * s.centre * s.bvar;
		stats_round_release(&s);
	}
	assert_true(fabs(r.centre - sum / P) < 1e-15);
	assert_true(fabs(r.y - log(sum / P)) < 1e-15);
	assert_true(fabs(r.bvar - var / (sum * sum)) < 1e-20);
	/* the pooled median is the big cluster's; the centre is 1.00375 */
	assert_int_equal(stats_round_init(&pooled, x, P * PER), 0);
	assert_true(pooled.centre < 1.0015 && fabs(r.centre - 1.00375) < 0.0003);
	/* draws: ln of the mean of each placement's resampled median */
	stats_rng_seed(&rng, 3);
	for (int i = 0; i < draws; i++) {
		double d = stats_round_draw(&r, &rng);
		m += d;
		m2 += d * d;
	}
	m /= draws;
	m2 = m2 / draws - m * m;
	assert_true(fabs(m - r.bmean) < 4 * sqrt(r.bvar / draws));
	assert_true(fabs(m2 / r.bvar - 1) < 0.1);
	/* a tail short of a whole round of placements is left out */
	assert_int_equal(stats_round_init_strata(&tail, x, P * PER + 3, P), 0);
	assert_true(tail.centre == r.centre && tail.n == r.n);
	/* one placement without a valid sample: no centre can be formed */
	for (size_t i = 0; i < PER; i++)
		x[i * P + 3] = NAN;
	assert_int_equal(stats_round_init_strata(&s, x, P * PER, P), -1);
	/* p <= 1 is a plain round */
	placements_fill(x, P * PER);
	stats_round_release(&tail);
	assert_int_equal(stats_round_init_strata(&tail, x, P * PER, 1), 0);
	assert_true(tail.nstrata == 0 && tail.centre == pooled.centre);
	stats_round_release(&tail);
	stats_round_release(&pooled);
	stats_round_release(&r);
}

/*
 * A single round that measured where its buffers land: its probes' spread
 * joins the drift floor, with the probes' degrees of freedom. Two one-graph
 * processes 5% apart with 1% sample noise are a shift by samples alone and
 * no verdict once their placements scatter by 3%. The placement variance is
 * the row's on this GPU, not a build's: probes of either side serve both.
 */
static void test_placement_sd_widens_single_rounds(void **state)
{
	struct fixture *f = fx();
	double b[N];
	struct stats_sample_set a1, b1;
	struct stats_cmp_opts o = STATS_CMP_OPTS_INIT;
	struct stats_cmp bare, probed, one;
	double f2 = o.drift_floor * o.drift_floor;

	for (int i = 0; i < N; i++)
		b[i] = 1.05 * f->x[0][0][i];
	a1 = f->set[0][0];
	b1 = (struct stats_sample_set){ b, N, 0, 0, 0 };
	assert_int_equal(stats_compare(&a1, 1, &b1, 1, &o, &bare), 0);
	assert_true(bare.ok && bare.p < 1e-6 && bare.lo > 1.03);
	assert_true(fabs(bare.drift_a - o.drift_floor) < 1e-15 && isnan(bare.place_a));
	assert_true(isinf(bare.df));

	/* A alone probed: B's side is widened by A's probes too */
	a1.place_sd = 0.03;
	a1.place_df = 3;
	assert_int_equal(stats_compare(&a1, 1, &b1, 1, &o, &one), 0);
	assert_true(one.ok && one.p > 0.05 && one.lo < 1.0);
	assert_true(fabs(one.place_a - 0.03) < 1e-15 && fabs(one.place_b - 0.03) < 1e-15);
	assert_true(fabs(one.drift_b - sqrt(f2 + 0.03 * 0.03)) < 1e-15);
	/* one variance estimate of 3 df under both sides: about 3 df, not 6 */
	assert_true(one.df > 2.9 && one.df < 3.3);

	b1.place_sd = 0.03;
	b1.place_df = 3;
	assert_int_equal(stats_compare(&a1, 1, &b1, 1, &o, &probed), 0);
	assert_true(probed.ok && probed.p > 0.05 && probed.lo < 1.0);
	assert_true(fabs(probed.ratio - bare.ratio) < 1e-15);
	assert_true(fabs(probed.drift_a - sqrt(f2 + 0.03 * 0.03)) < 1e-15);
	assert_true(fabs(probed.place_a - 0.03) < 1e-15 && fabs(probed.place_b - 0.03) < 1e-15);
	/* two sides of 3 probes each pool into 6 df, mostly placement */
	assert_true(probed.df > 5.5 && probed.df < 6.6);
	assert_true(probed.p < one.p);

	/* unequal probes pool by their degrees of freedom */
	a1.place_sd = 0.02;
	b1.place_sd = 0.04;
	b1.place_df = 9;
	assert_int_equal(stats_compare(&a1, 1, &b1, 1, &o, &probed), 0);
	{
		double pv = (3 * 0.02 * 0.02 + 9 * 0.04 * 0.04) / 12;

		assert_true(fabs(probed.place_a - sqrt(pv)) < 1e-15);
		assert_true(fabs(probed.place_b - sqrt(pv)) < 1e-15);
	}

	/* rounds without probes measure the drift themselves */
	assert_int_equal(stats_compare(f->set[0], 3, f->set[1], 3, &o, &bare), 0);
	assert_true(isnan(bare.drift_a) && isnan(bare.place_a));
}

/*
 * Rounds with probes: their scatter and the probes' variance estimate one
 * between-process variance; Student's t takes both degrees of freedom.
 */
static void test_placement_sd_joins_rounds(void **state)
{
	struct fixture *f = fx();
	struct stats_sample_set a[3], b[3];
	struct stats_cmp_opts o = STATS_CMP_OPTS_INIT;
	struct stats_cmp bare, probed;

	for (int i = 0; i < 3; i++) {
		a[i] = f->set[0][i];
		b[i] = f->set[1][i];
	}
	assert_int_equal(stats_compare(a, 3, b, 3, &o, &bare), 0);
	assert_true(bare.ok && fabs(bare.df - 4) < 1e-12);
	for (int i = 0; i < 3; i++) {
		a[i].place_sd = b[i].place_sd = 0.02;
		a[i].place_df = b[i].place_df = 3;
	}
	assert_int_equal(stats_compare(a, 3, b, 3, &o, &probed), 0);
	assert_true(probed.ok && fabs(probed.df - (4 + 18)) < 1e-12);
	assert_true(fabs(probed.ratio - bare.ratio) < 1e-15);
	/* 2% placements over rounds that scatter far less: a wider interval */
	assert_true(log(probed.hi) - log(probed.lo) > log(bare.hi) - log(bare.lo));
}

/*
 * Rounds pool their scatter with P + f^2, not P alone: probes see where
 * buffers land, not what moves a whole process (clock levels, the power
 * state), which the drift floor stands for in one round. With P alone, an
 * H100 matrix's two-round intervals held 1.0 on 76-93% of rows of an A/A.
 */
static void test_drift_floor_joins_pooled_rounds(void **state)
{
	struct fixture *f = fx();
	struct stats_sample_set a[2], b[2];
	struct stats_cmp_opts o = STATS_CMP_OPTS_INIT;
	struct stats_cmp none, floor;

	for (int i = 0; i < 2; i++) {
		a[i] = f->set[0][i];
		b[i] = f->set[1][i];
		a[i].place_sd = b[i].place_sd = 0.0001;
		a[i].place_df = b[i].place_df = 30;
	}
	o.drift_floor = 0;
	assert_int_equal(stats_compare(a, 2, b, 2, &o, &none), 0);
	o.drift_floor = 0.005;
	assert_int_equal(stats_compare(a, 2, b, 2, &o, &floor), 0);
	assert_true(none.ok && floor.ok);
	assert_string_equal(floor.test, "student");
	assert_true(fabs(floor.ratio - none.ratio) < 1e-15);
	/* per side v = t2 / 2, t2 ~ (2 s^2 + 120 (P + f^2)) / 122 ~ f^2: the
	 * difference's se near f, against ~0.1% from the rounds alone */
	assert_true(floor.se > 0.8 * 0.005 && floor.se < 1.2 * 0.005);
	assert_true(none.se < 0.5 * floor.se);
}

/*
 * The rounds a side for an interval 0.4 of the band wide each way, worked
 * by hand (band 1%: 0.4 x ln(1.01) = 0.0039801):
 *   0.2% a side, no placement df: k = 1 (z) 1.960 x sqrt(8e-6) = 0.00554;
 *   k = 2 (t, 2 df) 4.303 x 0.002 = 0.00861; k = 3 (t, 4 df) 2.776 x
 *   sqrt(8e-6 / 3) = 0.00453; k = 4 (t, 6 df) 2.447 x sqrt(2e-6) =
 *   0.00346: 4. With many placement df, k = 2 already reads 1.960 x 0.002
 *   = 0.00392: 2.
 *   2% a side: z^2 x 8e-4 / 0.0039801^2 = 194.0, and t at ~390 df
 *   (1.96607, t^2 = 3.86543) asks 3.86543 x 8e-4 / 1.58412e-5 = 195.2:
 *   196.
 */
static void test_rounds_needed_by_hand(void **state)
{
	double v02 = 0.002 * 0.002, v2 = 0.02 * 0.02;

	(void)state;
	assert_int_equal(stats_rounds_needed(v02, v02, 0, 0, 0.01, 0.95), 4);
	assert_int_equal(stats_rounds_needed(v02, v02, v02, 1e9, 0.01, 0.95), 2);
	assert_int_equal(stats_rounds_needed(v2, v2, v2, 4, 0.01, 0.95), 196);
	/* a wider band asks fewer; a higher confidence more */
	assert_true(stats_rounds_needed(v2, v2, v2, 4, 0.02, 0.95) < 60);
	assert_true(stats_rounds_needed(v02, v02, 0, 0, 0.01, 0.99) > 4);
	/* nothing to plan: no band, no variance */
	assert_int_equal(stats_rounds_needed(v02, v02, 0, 0, 0, 0.95), 0);
	assert_int_equal(stats_rounds_needed(0, 0, 0, 0, 0.01, 0.95), 0);
	assert_int_equal(stats_rounds_needed(NAN, v02, 0, 0, 0.01, 0.95), 0);
	/* far out it is the normal's answer, and it still returns */
	assert_true(stats_rounds_needed(1.0, 1.0, 0, 0, 0.0001, 0.95) > 1000000);
}

static void test_rounds_needed_of_a_row(void **state)
{
	struct fixture *f = fx();
	struct stats_sample_set a = f->set[0][0], b = f->set[1][0];
	struct stats_cmp_opts o = STATS_CMP_OPTS_INIT;
	struct stats_cmp quiet, lottery, noband;

	assert_int_equal(stats_compare(&a, 1, &b, 1, &o, &quiet), 0);
	assert_true(quiet.ok && quiet.rounds_needed >= 1);
	/* what one process could read of another's buffers: 2% */
	a.place_sd = b.place_sd = 0.02;
	a.place_df = b.place_df = 2;
	assert_int_equal(stats_compare(&a, 1, &b, 1, &o, &lottery), 0);
	assert_true(lottery.rounds_needed > 150 && lottery.rounds_needed < 300);
	assert_true(lottery.rounds_needed > quiet.rounds_needed);
	o.band = 0;
	assert_int_equal(stats_compare(&a, 1, &b, 1, &o, &noband), 0);
	assert_int_equal(noband.rounds_needed, 0);
}

/* var(x) / 2 over x = {0, dA[0] - dB[0], ...}: P aligned for two processes. */
static double half_var_of_differences(const double *da, const double *db, size_t n)
{
	double x[8] = { 0 }, m = 0, ss = 0;

	for (size_t j = 0; j < n; j++)
		x[j + 1] = da[j] - db[j];
	for (size_t j = 0; j <= n; j++)
		m += x[j] / (double)(n + 1);
	for (size_t j = 0; j <= n; j++)
		ss += (x[j] - m) * (x[j] - m);
	return ss / (double)n / 2;
}

static void test_placement_draws_line_up_by_index(void **state)
{
	struct fixture *f = fx();
	struct stats_sample_set a, b;
	struct stats_cmp_opts o = STATS_CMP_OPTS_INIT;
	struct stats_cmp spread, aligned, apart, hole, other;
	/* the same allocation history: each process's probes land alike */
	double da[3] = { 0.0084, -0.0050, -0.0047 }, db[3] = { 0.0063, -0.0051, -0.0047 };
	/* another history: B's measured graph landed where A's probes did not */
	double flat[3] = { 0.0004, 0.0004, 0.0005 }, far[3] = { -0.0475, -0.1201, 0.0016 };
	double holed[3] = { 0.0063, NAN, -0.0047 }, two[2] = { 0.0063, -0.0051 };

	a = f->set[0][0];
	b = f->set[1][0];
	a.place_sd = b.place_sd = 0.006;
	a.place_df = b.place_df = 3;
	assert_int_equal(stats_compare(&a, 1, &b, 1, &o, &spread), 0);
	assert_string_equal(spread.place_model, "spread");

	a.place_draws = da;
	b.place_draws = db;
	a.place_ndraws = b.place_ndraws = 3;
	assert_int_equal(stats_compare(&a, 1, &b, 1, &o, &aligned), 0);
	assert_string_equal(aligned.place_model, "aligned");
	assert_true(fabs(aligned.place_a * aligned.place_a - half_var_of_differences(da, db, 3)) <
		    1e-15);
	assert_true(aligned.place_a == aligned.place_b && aligned.place_a < 0.001);
	assert_true(fabs(aligned.ratio - spread.ratio) < 1e-15);
	/* the spreads said 0.6% each; the draws say the processes landed alike */
	assert_true(log(aligned.hi) - log(aligned.lo) < 0.5 * (log(spread.hi) - log(spread.lo)));

	a.place_draws = flat;
	b.place_draws = far;
	assert_int_equal(stats_compare(&a, 1, &b, 1, &o, &apart), 0);
	assert_string_equal(apart.place_model, "aligned");
	assert_true(fabs(apart.place_a * apart.place_a - half_var_of_differences(flat, far, 3)) <
		    1e-15);
	assert_true(apart.place_a > 0.03 && log(apart.hi) - log(apart.lo) > 0.1);

	/* a probe one process left out is left out of every process */
	a.place_draws = da;
	b.place_draws = holed;
	assert_int_equal(stats_compare(&a, 1, &b, 1, &o, &hole), 0);
	{
		double ka[2] = { da[0], da[2] }, kb[2] = { holed[0], holed[2] };

		assert_string_equal(hole.place_model, "aligned");
		assert_true(fabs(hole.place_a * hole.place_a - half_var_of_differences(ka, kb, 2)) <
			    1e-15);
	}

	/* draws of unequal count, or one side without any: the spreads */
	b.place_draws = two;
	b.place_ndraws = 2;
	assert_int_equal(stats_compare(&a, 1, &b, 1, &o, &other), 0);
	assert_string_equal(other.place_model, "spread");
	assert_true(other.lo == spread.lo && other.hi == spread.hi);
	b.place_draws = NULL;
	b.place_ndraws = 0;
	assert_int_equal(stats_compare(&a, 1, &b, 1, &o, &other), 0);
	assert_string_equal(other.place_model, "spread");
	(void)state;
}

/* A round over P placements: the spread of their centres over P. */
static void test_strata_spread_joins_a_single_round(void **state)
{
	double x[P * PER], c[P], m = 0, ss = 0;
	struct stats_sample_set a = { 0 }, b = { 0 };
	struct stats_cmp_opts o = STATS_CMP_OPTS_INIT;
	struct stats_cmp r;
	struct stats_round round;

	placements_fill(x, P * PER);
	a.x = b.x = x;
	a.n = b.n = P * PER;
	a.strata = b.strata = P;
	assert_int_equal(stats_round_init_strata(&round, x, P * PER, P), 0);
	for (size_t k = 0; k < P; k++) {
		c[k] = log(round.strata[k].centre);
		m += c[k] / P;
	}
	for (size_t k = 0; k < P; k++)
		ss += (c[k] - m) * (c[k] - m);
	stats_round_release(&round);
	assert_int_equal(stats_compare(&a, 1, &b, 1, &o, &r), 0);
	assert_true(fabs(r.place_a - sqrt(ss / (P - 1) / P)) < 1e-12);
	assert_true(fabs(r.drift_a * r.drift_a - o.drift_floor * o.drift_floor - ss / (P - 1) / P) < 1e-12);
	assert_true(isfinite(r.df));
}

/*
 * Three rounds a side, B's samples A's times 0.982: a 1.8% FASTER at one
 * clock (the H200's 1024^3 addmm below). xb holds B's samples.
 */
static void rounds_b_faster(const struct fixture *f, struct stats_sample_set a[3],
			    struct stats_sample_set b[3], double xb[3][N])
{
	for (int k = 0; k < 3; k++) {
		a[k] = f->set[0][k];
		for (int i = 0; i < N; i++)
			xb[k][i] = 0.982 * f->x[0][k][i];
		b[k] = a[k];
		b[k].x = xb[k];
	}
}

/*
 * Rounds at different clocks: the interval covers what the clocks explain.
 * An H200 A/A of a 1024^3 addmm read 1.8% faster on the side whose rounds
 * ran at 1980 MHz against 1935 MHz: a false FASTER without the clocks.
 */
static void test_clock_difference_widens_the_interval(void **state)
{
	struct fixture *f = fx();
	double xb[3][N];
	struct stats_sample_set a[3], b[3];
	struct stats_cmp_opts o = STATS_CMP_OPTS_INIT;
	struct stats_cmp none, same, apart, mirrored, partial;

	rounds_b_faster(f, a, b, xb);
	assert_int_equal(stats_compare(a, 3, b, 3, &o, &none), 0);
	assert_true(isnan(none.clock_shift));
	assert_true(none.hi < 1 / 1.01);	/* FASTER beyond a 1% band */

	for (int k = 0; k < 3; k++)
		a[k].clock_mhz = b[k].clock_mhz = 1980;
	assert_int_equal(stats_compare(a, 3, b, 3, &o, &same), 0);
	assert_true(same.clock_shift == 0 && same.lo == none.lo && same.hi == none.hi);
	for (int k = 0; k < 3; k++)
		a[k].clock_mhz = 1965;	/* a step apart: not widened */
	assert_int_equal(stats_compare(a, 3, b, 3, &o, &same), 0);
	assert_true(same.clock_shift == 0 && same.hi == none.hi);

	for (int k = 0; k < 3; k++)
		a[k].clock_mhz = 1935;
	assert_int_equal(stats_compare(a, 3, b, 3, &o, &apart), 0);
	/* one step of the clock table (15 MHz) is no evidence of a clock apart */
	assert_true(fabs(apart.clock_shift - log(1980.0 / 1935.0) + log1p(15 / 1935.0)) < 1e-12);
	/* the estimate is what was measured; the interval reaches the shifted one */
	assert_true(apart.ratio == none.ratio && apart.lo == none.lo);
	assert_true(fabs(log(apart.hi) - log(none.hi) - apart.clock_shift) < 1e-12);
	assert_true(apart.hi > 1);
	/* mirrored: B on the slow clock widens the interval downwards */
	assert_int_equal(stats_compare(b, 3, a, 3, &o, &mirrored), 0);
	assert_true(fabs(mirrored.clock_shift + apart.clock_shift) < 1e-12);
	assert_true(mirrored.lo < 1 && fabs(mirrored.hi - 1 / none.lo) < 1e-9);
	/* a round without a clock: nothing to say of the clocks */
	b[1].clock_mhz = 0;
	assert_int_equal(stats_compare(a, 3, b, 3, &o, &partial), 0);
	assert_true(isnan(partial.clock_shift) && partial.hi == none.hi);
}

/*
 * NVML reads 1980 MHz on both sides while the spin graphs read levels an
 * H100 switches between: two levels apart (1945.4 and 1975.0 MHz) widen
 * the interval by the difference less one 15 MHz step; one level apart
 * (1960.2 and 1975.0) is within the step, as is a difference within the
 * verdict band where the band is the narrower; a round without one leaves
 * NVML's.
 */
static void test_effective_clock_difference_widens_the_interval(void **state)
{
	struct fixture *f = fx();
	double xb[3][N];
	struct stats_sample_set a[3], b[3];
	struct stats_cmp_opts o = STATS_CMP_OPTS_INIT;
	struct stats_cmp none, apart, narrow, near, partial, both;

	rounds_b_faster(f, a, b, xb);
	for (int k = 0; k < 3; k++)
		a[k].clock_mhz = b[k].clock_mhz = 1980;
	assert_int_equal(stats_compare(a, 3, b, 3, &o, &none), 0);
	assert_true(none.clock_shift == 0 && none.hi < 1 / 1.01);
	assert_true(isnan(none.effective_a) && isnan(none.effective_b));

	for (int k = 0; k < 3; k++) {
		a[k].effective_mhz = 1945.4;
		b[k].effective_mhz = 1975.0;
	}
	assert_int_equal(stats_compare(a, 3, b, 3, &o, &apart), 0);
	assert_true(fabs(apart.clock_shift - (log(1975.0 / 1945.4) - log1p(15 / 1945.4))) < 1e-12);
	assert_true(apart.clock_shift > 0.007);
	assert_true(fabs(apart.effective_a - 1945.4) < 1e-9 && fabs(apart.effective_b - 1975.0) < 1e-9);
	assert_true(apart.ratio == none.ratio && apart.lo == none.lo);
	assert_true(fabs(log(apart.hi) - log(none.hi) - apart.clock_shift) < 1e-12);

	/* a band of 0.2%, narrower than the step: only that is left out */
	o.band = 0.002;
	assert_int_equal(stats_compare(a, 3, b, 3, &o, &narrow), 0);
	assert_true(fabs(narrow.clock_shift - (log(1975.0 / 1945.4) - log1p(0.002))) < 1e-12);
	o.band = 0.01;

	for (int k = 0; k < 3; k++)
		a[k].effective_mhz = 1960.2;	/* one level, 0.75%: within a step */
	assert_int_equal(stats_compare(a, 3, b, 3, &o, &near), 0);
	assert_true(near.clock_shift == 0 && near.hi == none.hi);
	o.band = 0.002;	/* ... and beyond a band of 0.2% */
	assert_int_equal(stats_compare(a, 3, b, 3, &o, &narrow), 0);
	assert_true(fabs(narrow.clock_shift - (log(1975.0 / 1960.2) - log1p(0.002))) < 1e-12);
	assert_true(narrow.hi > none.hi);
	o.band = 0.01;

	for (int k = 0; k < 3; k++)
		a[k].effective_mhz = 1945.4;	/* two levels, but a round of B has none */
	b[2].effective_mhz = 0;
	assert_int_equal(stats_compare(a, 3, b, 3, &o, &partial), 0);
	assert_true(partial.clock_shift == 0 && partial.hi == none.hi && isnan(partial.effective_b));

	/*
	 * The two disagree in sign (NVML: B two steps slower; the spins: B two
	 * levels faster): each widens its own way, neither undoes the other.
	 */
	b[2].effective_mhz = 1975.0;
	for (int k = 0; k < 3; k++) {
		a[k].effective_mhz = 1945.4;
		b[k].clock_mhz = 1950;
	}
	assert_int_equal(stats_compare(a, 3, b, 3, &o, &both), 0);
	assert_true(fabs(log(both.hi) - log(none.hi) -
			 (log(1975.0 / 1945.4) - log1p(15 / 1945.4))) < 1e-12);
	assert_true(fabs(log(both.lo) - log(none.lo) -
			 (log(1950.0 / 1980.0) + log1p(15 / 1950.0))) < 1e-12);
	/* and the larger of the two is the one reported: NVML's, 0.76% */
	assert_true(fabs(both.clock_shift - (log(1950.0 / 1980.0) + log1p(15 / 1950.0))) < 1e-12);
}

/*
 * An unchanged row whose B process ran 1.0% faster on the spin's clock
 * and read 0.8% faster (s = 0.8): widened by the clocks it is UNSURE;
 * with every round's s read, the interval moves by s dc, widens by
 * STATS_ELASTICITY_SLACK dc each way and is SAME. A round without s, or
 * without an effective clock, leaves the widening. The rounds' range of
 * s widens it further, and an s beyond [0, 1] counts as its bound.
 */
static void test_elasticity_corrects_for_the_clocks(void **state)
{
	struct fixture *f = fx();
	double xb[3][N], dc = log(1.01), want;
	struct stats_sample_set a[3], b[3];
	struct stats_cmp_opts o = STATS_CMP_OPTS_INIT;
	struct stats_cmp widened, corrected, missing, spread, clipped;

	for (int k = 0; k < 3; k++) {
		a[k] = f->set[0][k];
		for (int i = 0; i < N; i++)
			xb[k][i] = exp(-0.8 * dc) * f->x[0][k][i];
		b[k] = a[k];
		b[k].x = xb[k];
		a[k].effective_mhz = 1945.4;
		b[k].effective_mhz = 1945.4 * 1.01;
	}
	assert_int_equal(stats_compare(a, 1, b, 1, &o, &widened), 0);
	assert_true(isnan(widened.elasticity) && isnan(widened.clock_correction));
	assert_int_equal(stats_verdict(&widened, widened.p, 0.05, o.band), STATS_UNSURE);

	for (int k = 0; k < 3; k++) {
		a[k].elasticity = b[k].elasticity = 0.8;
		a[k].elasticity_se = b[k].elasticity_se = 0.005;
		a[k].elasticity_n = b[k].elasticity_n = 120;
	}
	assert_int_equal(stats_compare(a, 1, b, 1, &o, &corrected), 0);
	assert_true(fabs(corrected.elasticity - 0.8) < 1e-12);
	assert_true(fabs(corrected.clock_correction - 0.8 * dc) < 1e-12);
	/* the estimate stays what was measured; the interval moved around 1 */
	assert_true(corrected.ratio == widened.ratio && corrected.ratio < 0.993);
	assert_true(corrected.lo < 1 && corrected.hi > 1);
	assert_int_equal(stats_verdict(&corrected, corrected.p, 0.05, o.band), STATS_SAME);

	/* a round of B without s: the clocks widen as before */
	b[0].elasticity_n = 0;
	assert_int_equal(stats_compare(a, 1, b, 1, &o, &missing), 0);
	assert_true(isnan(missing.elasticity) && missing.lo == widened.lo &&
		    missing.hi == widened.hi);
	b[0].elasticity_n = 120;
	a[0].effective_mhz = 0;
	assert_int_equal(stats_compare(a, 1, b, 1, &o, &missing), 0);
	assert_true(isnan(missing.elasticity));
	a[0].effective_mhz = 1945.4;

	/* s read 0.4 and 1.2 (held to 1): mean 0.7, u half their range, 0.3 */
	a[0].elasticity = 0.4;
	b[0].elasticity = 1.2;
	assert_int_equal(stats_compare(a, 1, b, 1, &o, &clipped), 0);
	assert_true(fabs(clipped.elasticity - 0.7) < 1e-12);
	want = log(corrected.hi) - 0.8 * dc - STATS_ELASTICITY_SLACK * dc + 0.7 * dc + 0.3 * dc;
	assert_true(fabs(log(clipped.hi) - want) < 1e-9);

	/* rounds: every round's s counts, by its standard error */
	a[0].elasticity = b[0].elasticity = 0.8;
	a[1].elasticity_se = 0.05;
	a[1].elasticity = 0.3;
	assert_int_equal(stats_compare(a, 3, b, 3, &o, &spread), 0);
	assert_true(spread.elasticity > 0.75 && spread.elasticity < 0.8);
}

static void test_clock_wander_of_readings(void **state)
{
	const double still[] = { 1965, 1980, 1995 }, capped[] = { 1425, 1350, 1335 };
	const double junk[] = { 0, NAN, -5, INFINITY };
	double m, ss = 0, v[4];

	/* a step either way is no move */
	assert_true(stats_clock_wander(1980, still, 3) == 0);
	assert_true(stats_clock_wander(1980, NULL, 0) == 0);
	assert_true(stats_clock_wander(0, capped, 3) == 0);
	assert_true(stats_clock_wander(1980, junk, 4) == 0);
	/* an H100's addmm at its power cap: 1335 steady, probes 1335-1425 */
	v[0] = log(1335), v[1] = log(1410), v[2] = log(1335), v[3] = log(1335);
	m = (v[0] + v[1] + v[2] + v[3]) / 4;
	for (int i = 0; i < 4; i++)
		ss += (v[i] - m) * (v[i] - m);
	assert_true(fabs(stats_clock_wander(1335, capped, 3) - sqrt(ss / 3)) < 1e-12);
}

/*
 * A round whose clock wandered is known only as well as its clock: its
 * drift grows by the wander, in one round a side and in rounds. On an H100
 * a power-capped 2048^2 addmm read 4.6% apart in two processes whose steady
 * clocks explained 1.1%: a false FASTER without it.
 */
static void test_clock_wander_widens_rounds(void **state)
{
	struct fixture *f = fx();
	double xb[3][N];
	struct stats_sample_set a[3], b[3];
	struct stats_cmp_opts o = STATS_CMP_OPTS_INIT;
	struct stats_cmp still, wandered, one_still, one_wandered;

	for (int k = 0; k < 3; k++) {
		a[k] = f->set[0][k];
		for (int i = 0; i < N; i++)
			xb[k][i] = 0.955 * f->x[0][k][i];
		b[k] = a[k];
		b[k].x = xb[k];
		a[k].clock_mhz = b[k].clock_mhz = 1350;
	}
	assert_int_equal(stats_compare(a, 3, b, 3, &o, &still), 0);
	assert_true(still.clock_wander == 0 && still.hi < 1 / 1.01);
	assert_int_equal(stats_compare(a, 1, b, 1, &o, &one_still), 0);
	assert_true(one_still.hi < 1 / 1.01);

	for (int k = 0; k < 3; k++)
		a[k].clock_wander = b[k].clock_wander = 0.03;
	assert_int_equal(stats_compare(a, 3, b, 3, &o, &wandered), 0);
	assert_true(fabs(wandered.clock_wander - 0.03) < 1e-12);
	assert_true(wandered.ratio == still.ratio);
	assert_true(wandered.lo < still.lo && wandered.hi > 1 / 1.01);
	assert_int_equal(stats_compare(a, 1, b, 1, &o, &one_wandered), 0);
	/* one round: v = w^2 + f^2 + wander^2 */
	assert_true(fabs(one_wandered.drift_a * one_wandered.drift_a -
			 o.drift_floor * o.drift_floor - 0.03 * 0.03) < 1e-12);
	assert_true(one_wandered.hi > 1);
}

static void test_trend_of_samples(void **state)
{
	double step[40], flat[40], few[8], pairs[40];

	for (int i = 0; i < 40; i++) {
		/* a level that moved 1.2% half-way, and the same values interleaved */
		step[i] = (i < 20 ? 6.45 : 6.53) + 1e-4 * (i % 3);
		flat[i] = (i % 2 ? 6.45 : 6.53) + 1e-4 * (i % 3);
		/* two placements round-robin, 1% apart, on a level that held */
		pairs[i] = i % 2 ? 6.50 : 6.435;
	}
	for (int i = 0; i < 8; i++)
		few[i] = i < 4 ? 6.45 : 6.53;
	assert_true(fabs(stats_sample_trend(step, 40, 1, 0) - log(6.53 / 6.45)) < 1e-3);
	assert_true(stats_sample_trend(flat, 40, 1, 0) == 0);
	assert_true(stats_sample_trend(pairs, 40, 2, 0) == 0);
	/* too few a half to say */
	assert_true(stats_sample_trend(few, 8, 1, 0) == 0);
	assert_true(stats_sample_trend(NULL, 0, 1, 0) == 0);
	/* a move within the noise of two halves' medians is no move */
	assert_true(stats_sample_trend(step, 40, 1, 1e-4) == 0);
	/* beyond it, what is left over the noise */
	assert_true(fabs(stats_sample_trend(step, 40, 1, 1e-6) -
			 sqrt(log(6.53 / 6.45) * log(6.53 / 6.45) - 4e-6)) < 1e-3);
}

/*
 * A round whose level moved while it sampled is known only as well as it
 * held: the H200 addmm measured right after its own tuning (6.45 us, then
 * 6.53) against replays at 6.43 us read FASTER in one round; the same
 * samples in an order with no move still do.
 */
static void test_trend_widens_a_round(void **state)
{
	double moved[100], still[100], b[100];
	struct stats_sample_set sa = { 0 }, sb = { 0 };
	struct stats_cmp_opts o = STATS_CMP_OPTS_INIT;
	struct stats_cmp c_moved, c_still;

	for (int i = 0; i < 100; i++) {
		double jitter = 2e-3 * ((i * 37) % 11 - 5) / 5;

		/* 30 samples at 6.45 us, 70 at 6.53: first, or spread out */
		moved[i] = (i < 30 ? 6.45 : 6.53) + jitter;
		still[i] = (i % 10 < 3 ? 6.45 : 6.53) + jitter;
		b[i] = 6.43 + jitter;
	}
	sb.x = b, sb.n = 100;
	sa.x = still, sa.n = 100;
	assert_int_equal(stats_compare(&sa, 1, &sb, 1, &o, &c_still), 0);
	assert_true(c_still.trend == 0);
	assert_true(c_still.hi < 1 / 1.01);
	sa.x = moved;
	assert_int_equal(stats_compare(&sa, 1, &sb, 1, &o, &c_moved), 0);
	assert_true(fabs(c_moved.ratio - c_still.ratio) < 1e-3);
	/* the sides' mean trend^2: A's move, B held */
	assert_true(fabs(c_moved.trend - log(6.53 / 6.45) / sqrt(2)) < 2e-3);
	assert_true(c_moved.hi > 1 / 1.01 && c_moved.lo < c_still.lo);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_test_by_layout),
		cmocka_unit_test(test_point_estimate),
		cmocka_unit_test(test_deterministic_and_hull),
		cmocka_unit_test(test_drift_floor_widens_single_rounds),
		cmocka_unit_test(test_no_inference),
		cmocka_unit_test(test_invalid_samples_are_dropped),
		cmocka_unit_test(test_shift_is_found_and_mirrored),
		cmocka_unit_test(test_placements_are_strata),
		cmocka_unit_test(test_placement_sd_widens_single_rounds),
		cmocka_unit_test(test_placement_sd_joins_rounds),
		cmocka_unit_test(test_drift_floor_joins_pooled_rounds),
		cmocka_unit_test(test_rounds_needed_by_hand),
		cmocka_unit_test(test_rounds_needed_of_a_row),
		cmocka_unit_test(test_placement_draws_line_up_by_index),
		cmocka_unit_test(test_strata_spread_joins_a_single_round),
		cmocka_unit_test(test_clock_difference_widens_the_interval),
		cmocka_unit_test(test_effective_clock_difference_widens_the_interval),
		cmocka_unit_test(test_elasticity_corrects_for_the_clocks),
		cmocka_unit_test(test_clock_wander_of_readings),
		cmocka_unit_test(test_clock_wander_widens_rounds),
		cmocka_unit_test(test_trend_of_samples),
		cmocka_unit_test(test_trend_widens_a_round),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
