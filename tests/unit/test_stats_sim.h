/*
 * Simulated comparisons for zlb compare's statistics (shared by
 * test_stats_sim_aa.c and test_stats_sim_power.c), with fixed seeds: the
 * same numbers on every run. The model follows what bench/README.md
 * measured on an H200:
 *
 *   - within one round (process) a row's samples scatter around the
 *     round's centre with multiplicative (log-normal) noise sigma_s, plus
 *     1% outlier replays (+5% times an exponential: a preempted replay);
 *   - the centre itself moves between processes: ln centre_r = ln mu +
 *     sigma_d Z_r (buffer placement), independently per round;
 *   - B's centre is A's times (1 + shift) on shifted rows.
 *
 * One trial is one comparison of ROWS rows: each row is compared
 * (stats_compare), the p-values go through Benjamini-Hochberg together,
 * and each row gets its verdict at the scenario's threshold and, from the
 * same numbers, at threshold 0 (the test and the FDR step alone).
 */
#ifndef ZLB_TEST_STATS_SIM_H
#define ZLB_TEST_STATS_SIM_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compare/stats_compare.h"
#include "lib/stats_rng.h"
#include "compare/stats_tests.h"

#define ROWS 20
#define MAX_ROUNDS 5
#define FDR 0.05

struct scenario {
	const char *name;
	size_t trials;
	size_t rounds;		/* per side */
	double threshold;	/* verdict band, fraction */
	double drift_floor;
	unsigned nboot;
	uint64_t seed;
	/* each row draws its model uniformly from these ranges */
	double sigma_s_lo, sigma_s_hi;
	double sigma_d_lo, sigma_d_hi;
	size_t n_lo, n_hi;
	double shift;		/* B = A * (1 + shift) on the first `shifted` rows */
	size_t shifted;
	size_t naive;		/* run the samples-only test (pooled MWU + BH) on this many trials */
};

struct outcome {
	size_t trials_flagged;		/* comparisons with a null row FASTER/SLOWER */
	size_t trials_flagged0;		/* the same at threshold 0 */
	size_t null_rows, null_flags, null_flags0;
	size_t shifted_rows, detected;	/* SLOWER on a shifted row */
	size_t covered, intervals;	/* the interval holds the true ratio */
	size_t same, unsure;
	size_t naive_trials_flagged;	/* pooled-sample Mann-Whitney + BH */
	double secs;
};

static inline double sim_uniform_in(struct stats_rng *rng, double lo, double hi)
{
	return lo + (hi - lo) * stats_rng_uniform(rng);
}

static inline void sim_round(struct stats_rng *rng, double *x, size_t n, double mu, double sigma_s,
		      double sigma_d)
{
	double centre = mu * exp(sigma_d * stats_rng_normal(rng));

	for (size_t i = 0; i < n; i++) {
		double v = centre * exp(sigma_s * stats_rng_normal(rng));

		if (stats_rng_uniform(rng) < 0.01)
			v *= 1 + 0.05 * -log(1 - stats_rng_uniform(rng));
		x[i] = v;
	}
}

static inline double sim_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline void sim_run(const struct scenario *sc, struct outcome *o)
{
	struct stats_rng rng;
	size_t nmax = sc->n_hi;
	double *buf = malloc(2 * MAX_ROUNDS * nmax * sizeof(double));
	double *pool_a = malloc(MAX_ROUNDS * nmax * sizeof(double));
	double *pool_b = malloc(MAX_ROUNDS * nmax * sizeof(double));
	double t0 = sim_now();

	memset(o, 0, sizeof(*o));
	stats_rng_seed(&rng, sc->seed);
	for (size_t t = 0; t < sc->trials; t++) {
		struct stats_cmp cmp[ROWS];
		double p[ROWS], q[ROWS], pn[ROWS], qn[ROWS], truth[ROWS];
		int flagged = 0, flagged0 = 0, naive_flagged = 0;

		for (size_t r = 0; r < ROWS; r++) {
			struct stats_sample_set a[MAX_ROUNDS] = { { 0 } }, b[MAX_ROUNDS] = { { 0 } };
			struct stats_cmp_opts opts = STATS_CMP_OPTS_INIT;
			double mu = exp(sim_uniform_in(&rng, log(2e-3), log(0.5)));	/* 2..500 us */
			double sigma_s = sim_uniform_in(&rng, sc->sigma_s_lo, sc->sigma_s_hi);
			double sigma_d = sim_uniform_in(&rng, sc->sigma_d_lo, sc->sigma_d_hi);
			size_t n = sc->n_lo + stats_rng_below(&rng, sc->n_hi - sc->n_lo + 1);
			double shift = r < sc->shifted ? sc->shift : 0;

			truth[r] = 1 + shift;
			for (size_t k = 0; k < sc->rounds; k++) {
				double *xa = buf + (2 * k) * nmax, *xb = buf + (2 * k + 1) * nmax;

				sim_round(&rng, xa, n, mu, sigma_s, sigma_d);
				sim_round(&rng, xb, n, mu * (1 + shift), sigma_s, sigma_d);
				a[k].x = xa;
				a[k].n = n;
				b[k].x = xb;
				b[k].n = n;
				if (t < sc->naive) {
					memcpy(pool_a + k * n, xa, n * sizeof(double));
					memcpy(pool_b + k * n, xb, n * sizeof(double));
				}
			}
			opts.drift_floor = sc->drift_floor;
			opts.nboot = sc->nboot;
			opts.seed = stats_mix64(sc->seed ^ (t * ROWS + r));
			stats_compare(a, sc->rounds, b, sc->rounds, &opts, &cmp[r]);
			p[r] = cmp[r].p;
			pn[r] = 1;
			if (t < sc->naive) {
				struct stats_mwu mw;
				stats_mann_whitney(pool_a, sc->rounds * n, pool_b, sc->rounds * n, &mw);
				pn[r] = mw.p;
			}
		}
		stats_bh_adjust(p, ROWS, q);
		stats_bh_adjust(pn, ROWS, qn);
		for (size_t r = 0; r < ROWS; r++) {
			enum stats_verdict v = stats_verdict(&cmp[r], q[r], FDR, sc->threshold);
			enum stats_verdict v0 = stats_verdict(&cmp[r], q[r], FDR, 0);

			if (cmp[r].ok) {
				o->intervals++;
				o->covered += cmp[r].lo <= truth[r] && truth[r] <= cmp[r].hi;
			}
			o->same += v == STATS_SAME;
			o->unsure += v == STATS_UNSURE;
			if (truth[r] == 1) {
				o->null_rows++;
				if (v == STATS_FASTER || v == STATS_SLOWER) {
					o->null_flags++;
					flagged = 1;
				}
				if (v0 == STATS_FASTER || v0 == STATS_SLOWER) {
					o->null_flags0++;
					flagged0 = 1;
				}
				naive_flagged |= qn[r] <= FDR;
			} else {
				o->shifted_rows++;
				o->detected += v == STATS_SLOWER;
			}
		}
		o->trials_flagged += flagged;
		o->trials_flagged0 += flagged0;
		o->naive_trials_flagged += naive_flagged;
	}
	o->secs = sim_now() - t0;
	free(buf);
	free(pool_a);
	free(pool_b);
}

static inline double frac(size_t a, size_t b)
{
	return b ? (double)a / (double)b : 0.0;
}

/* One line per scenario; ctest -V (or running the binary) shows them. */
static inline void sim_report(const struct scenario *sc, const struct outcome *o)
{
	printf("# %s: %zu comparisons x %d rows, %zu round(s)/side\n", sc->name, sc->trials, ROWS,
	       sc->rounds);
	if (o->null_rows)
		printf("#   false-flag rate (comparisons with any FASTER/SLOWER null row): "
		       "%.4f at threshold %.1f%%, %.4f at threshold 0; per null row %.5f / %.5f\n",
		       frac(o->trials_flagged, sc->trials), 100 * sc->threshold,
		       frac(o->trials_flagged0, sc->trials), frac(o->null_flags, o->null_rows),
		       frac(o->null_flags0, o->null_rows));
	if (sc->naive)
		printf("#   samples-only test (pooled Mann-Whitney + BH) flags %.4f of %zu comparisons\n",
		       frac(o->naive_trials_flagged, sc->naive), sc->naive);
	if (o->shifted_rows)
		printf("#   power: %zu of %zu shifted rows SLOWER = %.4f\n", o->detected,
		       o->shifted_rows, frac(o->detected, o->shifted_rows));
	printf("#   95%% interval coverage %.4f; verdicts SAME %.3f UNSURE %.3f; %.2f s\n",
	       frac(o->covered, o->intervals), frac(o->same, sc->trials * ROWS),
	       frac(o->unsure, sc->trials * ROWS), o->secs);
	fflush(stdout);
}

#endif
