/*
 * One row of `zlb compare`: is B's latency different from A's?
 *
 * Data. A row is measured by R_A runs (rounds) of build A and R_B rounds of
 * build B; round r holds n_r raw per-call samples (results.jsonl
 * samples_ms). bench/README.md measured on an H200 that the median of one
 * round is known to ~0.01% from its samples, while the centre moves
 * 0.05-0.3% between fresh processes (buffer placement). So the unit of
 * replication is the round (process); samples only tell how well one
 * round's centre is known. Everything below works on the log scale, where
 * a ratio is a difference and relative noise is additive.
 *
 * Per round: centre c_r = median of the samples (robust to the odd slow
 * replay, and what the engine reports as centre_ms for one placement);
 * a round sampled on p > 1 placements (sample i ran placement i % p) has
 * c_r = the mean of the p placements' medians, the engine's centre_ms,
 * each placement a stratum with the law below and, on the log scale,
 * w_r^2 = sum c_i^2 w_i^2 / (sum c_i)^2 (the delta method; a resample
 * draws each stratum's median and averages them). y_r = ln c_r; w_r^2 =
 * the variance of ln(median) under resampling of that round's samples,
 * computed exactly from the order statistics rather than by Monte Carlo:
 * the k-th order statistic of a resample is <= x_(j) with probability
 * P(Binomial(n, j/n) >= k) (Maritz & Jarrett 1978). For even n the median
 * averages order statistics n/2 and n/2+1, whose joint law has a closed
 * form (stats_compare.c). Exact up to n = 400 (checked against all n^n
 * resamples for n <= 7 in the tests); above, binomial tails by the normal
 * approximation with continuity correction and, for even n, the two middle
 * order statistics coupled through one uniform (variance within 0.5% of
 * exact at n = 200, shrinking with n), far below the sampling noise.
 *
 * Per side, with k rounds: estimate ybar = mean of y_r (the geometric mean
 * of the round centres; with k <= 2 also their median; a mean rather than a
 * median of 3 because it is what the t test below describes, and a wild
 * round should widen the interval, not vanish). Its variance v = t2 / k,
 * where the per-round variance t2 is:
 *   k >= 2: max(s^2, wbar^2), s^2 the sample variance of the y_r (df k-1)
 *           and wbar^2 the mean w_r^2. The floor at wbar^2 is conservative
 *           only: rounds cannot scatter less than their own medians do, and
 *           three rounds that agree by chance must not claim more. When
 *           rounds measured placements (below), s^2 and P + f^2 are two
 *           estimates of one between-process variance, pooled by their df:
 *           ((k-1) s^2 + pdf (P + f^2)) / (k-1 + pdf), df k-1 + pdf. The
 *           probes see where buffers land, not what moves a whole process
 *           (a clock level NVML does not show, the power state a row starts
 *           in), which f stands for in one round as below; pooled with P
 *           alone, two rounds a side of an H100 A/A (10 operators x 3 sizes)
 *           held 1.0 in their intervals on 76-93% of rows, with P + f^2 on
 *           83-100%.
 *   k == 1: w^2 + f^2 + P, where f is the *drift floor* (--drift-floor,
 *           default 0.1%): an assumed standard deviation of one process's
 *           centre around the build's true centre that placement does not
 *           explain (clocks, the driver's state). One process cannot see its
 *           own drift; without f a single-round comparison judges a 0.1%
 *           process-to-process move against a 0.01% sampling noise and flags
 *           most rows (the failure of nvbench_compare, measurement.md
 *           section 2; the A/A simulation in tests/unit/test_stats_sim_aa.c
 *           shows both). df: Satterthwaite's from P's (infinite without P).
 *   P, the row's placement variance: how far the measured graphs of two
 *           processes can land apart, per process. Where buffers land is a
 *           property of the row's shapes and allocation history on this
 *           GPU, not of the compiler build, so one P serves both sides,
 *           estimated over every round of BOTH sides:
 *           "aligned", when every round recorded its probes' draws by
 *           index (n of them): the residual variance of the additive fit
 *           (process + index) to the table d[p][j], j = 0 the measured
 *           graph (0), j >= 1 the probes every process kept, with df
 *           (processes - 1)(columns - 1). d[p][j] = z[p][j] - z[p][0],
 *           where z is the placement's effect; the process term absorbs
 *           z[p][0] and any shift between builds, the index term what the
 *           processes share, the residual what they do not: an estimate of
 *           var(z[p][0] - z[q][0]) / 2. On an H200 the probes of fresh
 *           processes of one batch repeated each other's offsets to ~0.1%
 *           (a 4096x16384 cumsum +0.8 -0.5 -0.5% in each of four) while
 *           the row's centre moved < 0.05%: the processes' placements
 *           followed one allocation history, and their spread was not a
 *           difference between them. When histories differ the table has
 *           no common index term and the residual is the within-process
 *           spread again (a 2048x4096 log_softmax whose second process read
 *           -4.8 -12.0 +0.2% where the first read 0.4 0.4 0.5%).
 *           "spread", otherwise: each round's probes' place_sd^2 with
 *           place_df df, or its strata's variance / strata with strata - 1,
 *           pooled by df (pdf the sum). 0 when no round measured it.
 *
 * Estimate: D = ybar_B - ybar_A, ratio B/A = exp(D) (> 1: B is slower).
 *
 * Test (p-value for the FDR step):
 *   both sides k >= 2, the same k ("student"): Student's t with the pooled
 *     s^2 of both sides and P (df = 2k - 2 + pdf), each side floored at its
 *     own wbar^2.
 *     Placement drift is a property of the row on this GPU, not of the
 *     compiler build, so one variance for both sides is the model; with
 *     equal rounds the pooled test is robust to unequal variances, and its
 *     4 df at 3+3 rounds beat Welch's 2.5-3.5 (simulated 2% power: 97% vs
 *     94%, false flags unchanged);
 *   both sides k >= 2, unequal k ("welch"): Welch's t, Welch-Satterthwaite
 *     df (pooling is unsafe when unequal variances meet unequal sizes);
 *   one side k == 1 ("welch+floor"): Welch's t with that side's assumed
 *     variance (infinite df) and the other side's estimated one;
 *   both sides k == 1 ("mwu+floor"): p = max(p_MWU, p_z). p_MWU is
 *     Mann-Whitney U on the two rounds' samples (distribution-free, but
 *     blind to process drift); p_z the test of D against v_A + v_B (which
 *     hold the drift floor and P; a t with Satterthwaite's df where P was
 *     measured, P counted once for both sides since it is one estimate). The maximum of two p-values is a valid p-value
 *     whenever either one is (P(max <= a) <= P(p_i <= a)). Rank tests on
 *     round centres are no use with rounds: 3 against 3 cannot go below
 *     p = 0.1;
 *   a single round with fewer than min_samples samples: no inference (one
 *     or two direct do_bench values say nothing about noise).
 *
 * Interval (95% by default): the hull of
 *   (1) the percentile interval of a hierarchical bootstrap of D, and
 *   (2) the parametric interval D +- t_{df, 0.975} sqrt(v_A + v_B), df of
 *       the test above (infinite: the normal).
 * The bootstrap (nboot replicates from a seeded generator: identical
 * output on every run) draws, per side, k rounds with replacement and, for
 * each drawn round, the median of a resample of its samples (from the
 * exact law above). Plain two-stage resampling is biased with few rounds:
 * it counts the within-round noise twice and shrinks the between-round
 * spread by (k-1)/k (Davison & Hinkley 1997, section 3.8). Each drawn
 * round therefore contributes ybar + a (y_r - ybar) + (draw - its mean),
 * with a^2 = k (t2 - wbar^2)+ / ((k - 1) s^2), which makes the bootstrap
 * variance of ybar exactly v above; a single-round side adds f N(0,1) per
 * replicate for its unseen drift. The bootstrap carries the shape (skewed
 * sample distributions, lopsided rounds); the t interval carries the
 * heavy tails that 2-5 rounds imply and no bootstrap of 3 values can
 * show. Taking the hull keeps the coverage of the better one, and makes
 * "the interval excludes 1" imply "p < 0.05" for the verdict.
 *
 * Clocks. When every round of both sides read its steady SM clock, the
 * interval is widened to cover what a difference of clocks between the
 * sides can explain: a kernel's time goes as clock^-s with s between 0
 * (memory-bound) and 1 (compute-bound), so with dc = mean ln clock_B -
 * mean ln clock_A the build's own effect is D + s dc for some s in [0, 1],
 * and the reported interval is the hull of the interval and the interval
 * shifted by dc. dc leaves out one step of the clock table each way
 * (STATS_CLOCK_STEP_MHZ): a round's steady clock is a median of readings
 * in such steps, and a difference within one says no clock differed. And
 * where rounds of one side ran at different clocks, they show how far the
 * row's time follows its clock: dc is scaled by the upper 97.5% bound of s
 * from the slope of ln time on ln clock within sides (t with rounds - 3
 * df), so a memory-bound row that read the same time at 1560 and 1972 MHz
 * is not widened for the clock (stats_compare.c clock_sensitivity_hi).
 * On an H200 a 1024^3 addmm ran at 1935 MHz (power cap) in two processes
 * of an A/A and at 1980 MHz in two others, 1.8% slower:
 * without the shift that read FASTER. The estimate D stays what was
 * measured; rounds at one clock (most rows: the boost clock) are not
 * widened. A build that draws less power and clocks higher is then no
 * longer told apart from a cooler machine: the honest answer at a power
 * cap, where only fixed clocks would separate them.
 *
 * A steady clock is a median; at a power cap the clock wanders around it
 * by hundreds of MHz within a second, and what the kernel ran at is known
 * only that well. On an H100 a 2048x2048 addmm read 33.34 us at a steady
 * 1335 MHz (its probes at 1335-1425) in one process and 31.82 us at 1365
 * (probes 1275-1515) in another: 4.6% apart where the steady clocks explain
 * 1.1%, and a false FASTER in one and in two rounds. So each round's drift
 * also holds s_hi^2 x its clock wander^2 (stats_clock_wander, the spread
 * of its clock readings beyond a step): one round, v = w^2 + f^2 + P + that;
 * rounds, their pooled variance is at least the sides' mean of it. Rounds
 * whose clocks held within a step (most: the boost clock) are untouched.
 * A round whose level moved while it sampled (stats_sample_trend) adds its
 * trend^2 the same way, whatever its clock read.
 *
 * Elasticity. Between processes the effective clock settles at another
 * level each time (an H100: 1936-1970 MHz, NVML at 1980 throughout), and
 * a row follows it by an elasticity s of its own; widened by the whole
 * difference less a step, a row 0.8% apart at clocks 0.75% apart read
 * UNSURE, and with the step kept nothing could have made it SAME. Where
 * every round of both sides read s (stats_sample_set.elasticity) and an
 * effective clock, the build's effect is D + s dc with dc = mean ln
 * effective_B - mean ln effective_A (the whole of it: the spin reads to
 * 0.01%), and the interval is shifted by s dc and widened by u |dc| each
 * way instead of by the effective clocks' hull. s is the rounds'
 * inverse-variance mean, each held to [0, 1]; u the larger of
 * STATS_ELASTICITY_SLACK, twice its standard error and half the rounds'
 * range of s. NVML's difference still widens as above; the estimate D
 * stays what was measured (stats_cmp.clock_correction says by how much
 * the interval moved).
 */
#ifndef ZLB_STATS_COMPARE_H
#define ZLB_STATS_COMPARE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/stats_rng.h"

/*
 * The SM clock table's step: an H200 read 1935, 1950, 1965 and 1980 MHz
 * (a median of an even count of readings can fall half-way between).
 */
#define STATS_CLOCK_STEP_MHZ 15.0

/*
 * Effective clocks (stats_sample_set.effective_mhz) widen the interval by
 * their difference less one step of the clock table (STATS_CLOCK_STEP_MHZ),
 * as NVML's do, or less the verdict band (stats_cmp_opts.band) where that
 * is narrower. The spin reads its clock to 0.01%, so the step is not left
 * for the reading: it is what no verdict can come from. A row whose sides
 * differ only by a clock d reads at most s d apart (s <= 1), and its
 * interval, widened by d - L, then reaches back to L - (its half-width)
 * of 1: with L no wider than the band, never a verdict. On an H100 matrix
 * (10 operators x 3 sizes, four replays) widening by the whole difference
 * turned UNSURE 12-48% of the single pairs' rows that read SAME without it,
 * mostly memory-bound rows that follow no clock (mul 8192^2: 0.9997 with
 * its sides' spins 1.5% apart), and turned no false verdict. What is given
 * up: a change of the build that a clock difference hides can read SAME
 * up to L beyond the band, and a verdict's change can be L smaller than
 * the band says; NVML's step has always left as much.
 */

/*
 * What s read in the row's process is sure of at least, beyond its
 * standard error: it is read over the tail of a climb from a burn and the
 * plateau after it (_elasticity.py), not between processes. On an H100
 * the fit over a whole climb read up to 0.27 above the between-process s
 * of bench/clock_elasticity.py; the window near the steady clock is what
 * narrows that, and this much is left for it.
 */
#define STATS_ELASTICITY_SLACK 0.15
/* An s read with a smaller standard error weighs as if read with this. */
#define STATS_ELASTICITY_SE_FLOOR 0.02

/* The exact-binomial limit of the centre law (normal approximation above). */
#define STATS_EXACT_N_MAX 400

/*
 * One round's samples in milliseconds (non-positive or non-finite values
 * are dropped). strata 0 or 1: one placement; p > 1: sample i ran
 * placement i % p, and only whole rounds of p samples are used.
 */
struct stats_sample_set {
	const double *x;
	size_t n;
	size_t strata;
	/*
	 * What the engine measured of where the work's buffers land, for one
	 * graph: the sample sd of ln(median) over the measured graph and
	 * place_df more placements (the row's placement_sd and
	 * placement_probes); place_df 0: not measured.
	 */
	double place_sd;
	size_t place_df;
	/*
	 * The same probes as draws lined up by probe index: draw i is ln(probe
	 * i) - ln(the measured graph), NAN where the probe was left out;
	 * place_ndraws 0: none recorded. Probe i of one process lands where
	 * probe i of another does when their allocation histories agree, so
	 * how the draws of two processes disagree says how far their measured
	 * graphs' placements do (P below).
	 */
	const double *place_draws;
	size_t place_ndraws;
	/*
	 * The round's steady SM clock in MHz (the measurement's clock_mhz; 0:
	 * not read): the interval covers what a difference of clocks between
	 * the sides can explain (above, "Clocks").
	 */
	double clock_mhz;
	/*
	 * How far the round's clock wandered while it measured, as an sd of
	 * ln clock (stats_clock_wander; 0: it held still, or was not read).
	 * Each round's drift grows by it (above, "Clocks").
	 */
	double clock_wander;
	/*
	 * The SM clock the round's kernels really ran at, in MHz: a spin
	 * graph's reading just before and just after its sampling (the
	 * measurement's effective_mhz, their geometric mean; 0: not read).
	 * NVML's clock moves in 15 MHz steps and on an H100 read 1980 MHz while
	 * the spin read 1960 or 1975 and a gelu followed it, 0.34% apart. Where
	 * every round of both sides has one it is the clock of "Clocks" above,
	 * less a step or the band (above).
	 */
	double effective_mhz;
	/*
	 * How far the round's time follows the SM clock: the measurement's
	 * clock_elasticity s (ln time = c - s ln clock), its standard error
	 * and the pairs it was fitted on (elasticity_n 0: not read, and the
	 * other two say nothing). Where every round of both sides has one and
	 * an effective clock, the comparison corrects for the clocks by it
	 * instead of widening (above, "Elasticity").
	 */
	double elasticity, elasticity_se;
	size_t elasticity_n;
};

/*
 * The wander of a round's clock from its readings: the steady clock and
 * the others read during it (the probes'), each moved one step of the
 * clock table towards the steady one (a step says nothing moved), then the
 * sample sd of their ln; 0 with fewer than two readings or no steady
 * clock. Readings that are not positive and finite are skipped.
 */
double stats_clock_wander(double steady_mhz, const double *mhz, size_t n);

/*
 * How far a round's level moved while it sampled, beyond its noise: d =
 * ln(median of the second half of x) - ln(median of the first), in the
 * order taken (whole rounds of strata placements each), and the result
 * sqrt(d^2 - 4 bvar) with bvar the variance of ln(median) of the whole
 * round (a half's median has about twice it, and two halves' four times),
 * once |d| is beyond STATS_TREND_Z sd of that (else 0: a stationary
 * round's halves differ by their noise, and would widen every row a
 * little); 0 with fewer than STATS_TREND_MIN_HALF valid samples a half.
 *
 * Why: the device can change under a measurement where neither the clock
 * reading nor the placements show it. On an H200 a 1024^3 addmm measured
 * right after its own autotuning (seconds at the power cap) read 6.45 us
 * for its first samples, then 6.48-6.55, settling at 6.525, with the SM
 * clock read at 1950-1980 MHz throughout; the replays, which tune
 * nothing, read 6.42-6.43: a false FASTER in one round, the interval
 * (0.2% wide) knowing nothing of the move. So each round's drift also
 * holds its trend^2: a round that moved is known only as well as it held.
 */
#define STATS_TREND_MIN_HALF 5
#define STATS_TREND_Z 3.0
double stats_sample_trend(const double *x, size_t n, size_t strata, double bvar);

struct stats_round {
	double *x;		/* the valid samples, sorted (all strata) */
	size_t n;
	double centre;		/* median, or the mean of the strata's medians, ms */
	double y;		/* ln(centre) */
	/* law of ln(median of a resample): atoms val[i], cumulative cum[i] */
	double *val, *cum;
	size_t natoms;
	size_t *guide;		/* draw accelerator, natoms entries */
	double bmean, bvar;	/* its mean and variance (bvar is w_r^2) */
	struct stats_round *strata;	/* p > 1 placements: one round each */
	size_t nstrata;
};

/* Build a round from samples; -1 when no valid sample is left. */
int stats_round_init(struct stats_round *r, const double *samples, size_t n);
/*
 * The same for samples taken round-robin on p placements (p <= 1: as
 * stats_round_init). -1 when some placement has no valid sample.
 */
int stats_round_init_strata(struct stats_round *r, const double *samples, size_t n,
			    size_t p);
void stats_round_release(struct stats_round *r);
/*
 * P(k-th order statistic of a resample of n values <= the j-th smallest of
 * them) = P(Bin(n, j/n) >= k): exact up to STATS_EXACT_N_MAX, normal
 * approximation above. Exposed for the tests.
 */
double stats_order_stat_cdf(size_t k, size_t n, size_t j);

/* One draw of ln(centre of a resample). */
double stats_round_draw(const struct stats_round *r, struct stats_rng *rng);

struct stats_cmp_opts {
	double confidence;	/* 0.95 */
	double drift_floor;	/* f: assumed sd of ln(centre) of one process; 0.001 */
	unsigned nboot;		/* bootstrap replicates; 2000 */
	size_t min_samples;	/* a single round needs this many samples; 5 */
	uint64_t seed;		/* the bootstrap's seed for this row */
	double band;		/* the verdict band the interval is judged by; 0.01 */
};

#define STATS_CMP_OPTS_INIT { 0.95, 0.001, 2000, 5, 1, 0.01 }

struct stats_cmp {
	int ok;			/* 1: an interval and a p-value were computed */
	const char *test;	/* "student", "welch", "welch+floor", "mwu+floor", "none" */
	const char *why;	/* why not ok (static text), or NULL */
	size_t ka, kb;		/* rounds used */
	size_t na, nb;		/* samples used, all rounds */
	double a_ms, b_ms;	/* exp(ybar): geometric mean of the round centres */
	double ratio;		/* b_ms / a_ms */
	double lo, hi;		/* interval of the ratio; NAN when !ok */
	double diff;		/* ln ratio */
	double se, df;		/* of diff; df INFINITY when all variances are assumed */
	double p;		/* two-sided p-value (1 when !ok) */
	double p_mwu;		/* Mann-Whitney's part (single rounds), else NAN */
	double spread_a, spread_b;	/* sd of ln round-centres (k >= 2), else NAN */
	int floor_a, floor_b;	/* the side's variance holds the drift floor */
	/*
	 * A single-round side's assumed drift, the sd of ln(centre) a second
	 * process could read: sqrt(drift_floor^2 + P) with P the row's
	 * placement variance pooled over both sides' rounds (above); NAN for
	 * k >= 2.
	 */
	double drift_a, drift_b;
	double place_a, place_b;	/* that placement part as an sd, NAN when none */
	/*
	 * How P was measured: "aligned" (the probes' draws lined up by index
	 * over every round), "spread" (each round's own spread, pooled), NULL
	 * (not measured).
	 */
	const char *place_model;
	/*
	 * What the sides' clocks can explain of ln(B/A) (above, "Clocks":
	 * their mean ln difference less a step, or their effective clocks'
	 * difference, whichever is the larger, times the bound on s); NAN when
	 * some round has no clock. The interval was widened by both.
	 */
	double clock_shift;
	/*
	 * The row's elasticity (above, "Elasticity") and what it moved the
	 * interval by in ln: s dc; NAN both where some round read no s or no
	 * effective clock (the effective clocks then widen as before).
	 */
	double elasticity, clock_correction;
	/*
	 * The sides' effective clocks (geometric mean over rounds of
	 * effective_mhz), NAN where some round has none.
	 */
	double effective_a, effective_b;
	/*
	 * The sides' mean clock wander as an sd of ln time (s_hi x
	 * stats_clock_wander, above), by which each round's drift grew; 0 when
	 * no round's clock wandered, NAN when not computed.
	 */
	double clock_wander;
	/*
	 * The sides' rounds' mean trend^2 (stats_sample_trend), as an sd, by
	 * which each round's drift grew too; 0 when every round held still.
	 */
	double trend;
	/*
	 * Rounds a side at which this row, with the per-round variance the
	 * comparison used for each side (drift floor, placement, clock wander
	 * and trend included), would get a parametric interval no wider than
	 * STATS_PLAN_HALF_WIDTH of the band each way. It is a plan for the
	 * next run, not a verdict: the variance it starts from was estimated
	 * with few degrees of freedom, and what the sides' clocks explain
	 * (clock_shift) is left out, since rounds only average it where the
	 * clocks differ by chance. 0 when !ok or the band is 0.
	 */
	size_t rounds_needed;
};

/*
 * The half-width, as a fraction of the band, that rounds_needed plans
 * for. An unchanged row measured again with the planned rounds reads SAME
 * when its estimate and its interval both stay inside the band; both are
 * random, and so is the plan, made from few degrees of freedom. In the
 * simulation of tests/unit/test_stats_sim_rounds.c (rows planned from one
 * round a side, placement 0.1-1%, probes of 2 df) half the band made 82%
 * of unchanged rows SAME at the planned rounds, 0.4 made 91% (1.56 times
 * the rounds), 1/3 made 94.5% (2.25 times): 0.4 keeps the promise "9 times
 * in 10" at the smaller price.
 */
#define STATS_PLAN_HALF_WIDTH 0.4

/*
 * The rounds a side of stats_cmp.rounds_needed, from the sides' per-round
 * variances va and vb of ln time, the placement variance pv with its pdf
 * degrees of freedom (pdf 0: none measured), the band (a fraction) and
 * the confidence. With k rounds a side the interval's half-width is
 * t_{df} sqrt((va + vb) / k), df = 2k - 2 + pdf for k >= 2 (the pooled
 * Student test) and, for single rounds, Satterthwaite's from pv (infinite
 * without it), as stats_compare judges them; the answer is the least k
 * that brings it to STATS_PLAN_HALF_WIDTH x ln(1 + band). 0 when the band
 * or the variance is not positive and finite. Exposed for the tests.
 */
size_t stats_rounds_needed(double va, double vb, double pv, double pdf, double band,
			   double confidence);

/*
 * Compare B against A. a[0..ka-1] and b[0..kb-1] are the rounds of each
 * side; rounds left empty by invalid samples are ignored. Always fills out
 * (ok = 0 with a reason when nothing can be said); returns -1 only when a
 * side has no usable round at all.
 */
int stats_compare(const struct stats_sample_set *a, size_t ka,
		  const struct stats_sample_set *b, size_t kb,
		  const struct stats_cmp_opts *o, struct stats_cmp *out);

enum stats_verdict {
	STATS_SAME,
	STATS_FASTER,
	STATS_SLOWER,
	STATS_UNSURE,
};

/*
 * The verdict of a row given its FDR-adjusted p-value q:
 *   SLOWER: q <= fdr and lo > 1 + threshold   (B slower beyond the band)
 *   FASTER: q <= fdr and hi < 1 / (1 + threshold)
 *   SAME:   1 / (1 + threshold) <= lo and hi <= 1 + threshold
 *   UNSURE: otherwise, and whenever !c->ok.
 * The band is symmetric on the log scale, so A/B and B/A get mirrored
 * verdicts. threshold is a fraction (0.01 = 1%).
 */
enum stats_verdict stats_verdict(const struct stats_cmp *c, double q, double fdr,
				 double threshold);
const char *stats_verdict_name(enum stats_verdict v);

#endif
