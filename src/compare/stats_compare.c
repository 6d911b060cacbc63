/*
 * One comparison of A's rounds with B's (stats_compare.h): a side's drift
 * and placement variance, the test, and the hierarchical bootstrap that
 * draws from each round's law (stats_round.c).
 */
#include "compare/stats_compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/stats_dist.h"
#include "compare/stats_tests.h"
#include "lib/strbuf.h"  /* xmalloc */

/* ---- one side ------------------------------------------------------------ */

struct side {
	struct stats_round *r;
	const struct stats_sample_set **set;	/* the round's samples, r[i]'s */
	size_t k;
	size_t n;		/* samples, all rounds */
	double mean;		/* ybar */
	double s2, w2;		/* scatter of the y_r, mean within variance */
	double v, df;		/* variance of ybar and its degrees of freedom */
	double shrink;		/* a */
	double floor;		/* sqrt(f^2 + place^2) (k == 1) */
	double place;		/* the row's measured placement sd, NAN when none */
	double place_ss, place_df;	/* its rounds' sum of df x placement variance, and of df */
	double ln_clock;	/* mean ln(steady SM clock) of its rounds, NAN when one has none */
	double ln_effective;	/* mean ln(effective clock) of its rounds, NAN when one has none */
	double wander2;		/* mean clock_wander^2 of its rounds */
	double trend2;		/* mean stats_sample_trend^2 of its rounds */
};

/*
 * The variance of ln(centre) between processes that a single round shows
 * of itself, and its degrees of freedom (0: it shows none). A one-graph
 * round's probes are more draws of where its buffers land; a round over p
 * placements centres on the mean of p such draws, so its strata's spread
 * over p. On an H200 one graph of a 1024x1024 softmax read 7.6% apart in
 * two processes while the assumed floor was 0.3%: false verdicts.
 */
static double placement_var(const struct stats_sample_set *set, const struct stats_round *r,
			    double *df)
{
	double m = 0, ss = 0;

	*df = 0;
	if (r->nstrata > 1) {
		for (size_t i = 0; i < r->nstrata; i++)
			m += log(r->strata[i].centre);
		m /= (double)r->nstrata;
		for (size_t i = 0; i < r->nstrata; i++) {
			double d = log(r->strata[i].centre) - m;
			ss += d * d;
		}
		*df = (double)(r->nstrata - 1);
		return ss / *df / (double)r->nstrata;
	}
	if (set->place_df > 0 && isfinite(set->place_sd) && set->place_sd >= 0) {
		*df = (double)set->place_df;
		return set->place_sd * set->place_sd;
	}
	return 0;
}

/*
 * Give a side with k >= 2 rounds the per-round variance spread2 (its own
 * s^2, or the pooled one), floored at its within-round variance, and make
 * the bootstrap reproduce it: a^2 = k (target - wbar^2)+ / ((k - 1) s^2).
 */
static void side_set_spread(struct side *s, double spread2, double df)
{
	double target = spread2 > s->w2 ? spread2 : s->w2;

	s->v = target / (double)s->k;
	s->df = df;
	s->shrink = s->s2 > 0 && target > s->w2 ?
		sqrt((double)s->k * (target - s->w2) / ((double)(s->k - 1) * s->s2)) : 0;
}

static int side_init(struct side *s, const struct stats_sample_set *sets, size_t k)
{
	memset(s, 0, sizeof(*s));
	s->place = NAN;
	s->r = xcalloc(k ? k : 1, sizeof(*s->r));
	s->set = xcalloc(k ? k : 1, sizeof(*s->set));
	for (size_t i = 0; i < k; i++)
		if (!stats_round_init_strata(&s->r[s->k], sets[i].x, sets[i].n,
					     sets[i].strata)) {
			double pdf, pv = placement_var(&sets[i], &s->r[s->k], &pdf);

			if (pdf > 0) {
				s->place_ss += pdf * pv;
				s->place_df += pdf;
			}
			s->set[s->k] = &sets[i];
			s->n += s->r[s->k].n;
			s->k++;
		}
	if (!s->k)
		return -1;
	for (size_t i = 0; i < s->k; i++) {
		double mhz = s->set[i]->clock_mhz;

		s->mean += s->r[i].y;
		s->w2 += s->r[i].bvar;
		double eff = s->set[i]->effective_mhz;

		s->ln_clock += mhz > 0 && isfinite(mhz) ? log(mhz) : NAN;
		s->ln_effective += eff > 0 && isfinite(eff) ? log(eff) : NAN;
		double t = stats_sample_trend(s->set[i]->x, s->set[i]->n, s->set[i]->strata,
					      s->r[i].bvar);

		if (isfinite(s->set[i]->clock_wander) && s->set[i]->clock_wander > 0)
			s->wander2 += s->set[i]->clock_wander * s->set[i]->clock_wander;
		s->trend2 += t * t;
	}
	s->wander2 /= (double)s->k;
	s->trend2 /= (double)s->k;
	s->ln_clock /= (double)s->k;
	s->ln_effective /= (double)s->k;
	s->mean /= (double)s->k;
	s->w2 /= (double)s->k;
	if (s->k == 1)
		return 0;
	for (size_t i = 0; i < s->k; i++)
		s->s2 += (s->r[i].y - s->mean) * (s->r[i].y - s->mean);
	s->s2 /= (double)(s->k - 1);
	return 0;
}

/*
 * A side's variance once the row's placement variance pv (df pdf, pooled
 * over every round of both sides; pdf 0: none measured) is known, and wv,
 * what its clock's wander makes of its time (stats_compare.h, "Clocks").
 * One round: w^2 + f^2 + pv + wv, Satterthwaite df from pv's. Rounds: their
 * own scatter and pv + f^2 are two estimates of one between-process
 * variance, pooled by their degrees of freedom, and no less than wv.
 */
static void side_finish(struct side *s, double pv, double pdf, double drift_floor, double wv)
{
	if (s->k == 1) {
		double f2 = drift_floor * drift_floor + pv + wv;

		s->floor = sqrt(f2);
		s->v = s->w2 + f2;
		s->df = pdf > 0 && pv > 0 ? s->v * s->v / (pv * pv / pdf) : INFINITY;
		if (pdf > 0)
			s->place = sqrt(pv);
		return;
	}
	side_set_spread(s, fmax(wv, ((double)(s->k - 1) * s->s2 +
				    pdf * (pv + drift_floor * drift_floor)) /
				((double)(s->k - 1) + pdf)),
			(double)(s->k - 1) + pdf);
}

static void side_release(struct side *s)
{
	for (size_t i = 0; i < s->k; i++)
		stats_round_release(&s->r[i]);
	free(s->r);
	free(s->set);
}

/* The used round i of both sides taken as one list, A's first. */
static const struct stats_sample_set *round_set(const struct side *A, const struct side *B,
						size_t i)
{
	return i < A->k ? A->set[i] : B->set[i - A->k];
}

/*
 * P "aligned" (stats_compare.h): the residual variance of the additive fit
 * to the processes' draws by probe index. 0 with *pv and *pdf set; -1 when
 * it does not apply: a round without draws, a round over several
 * placements, draws of unequal count, fewer than two processes or no
 * probe that every process kept.
 */
static int placement_aligned(const struct side *A, const struct side *B, double *pv,
			     double *pdf)
{
	size_t np = A->k + B->k, n, m = 1;
	double *col, grand = 0, ss = 0;
	unsigned char *kept;

	if (np < 2)
		return -1;
	n = round_set(A, B, 0)->place_ndraws;
	for (size_t p = 0; p < np; p++) {
		const struct stats_sample_set *set = round_set(A, B, p);
		const struct stats_round *r = p < A->k ? &A->r[p] : &B->r[p - A->k];

		if (!n || set->place_ndraws != n || !set->place_draws || r->nstrata > 1)
			return -1;
	}
	kept = xcalloc(n, 1);
	for (size_t j = 0; j < n; j++) {
		kept[j] = 1;
		for (size_t p = 0; p < np && kept[j]; p++)
			kept[j] = isfinite(round_set(A, B, p)->place_draws[j]);
		m += kept[j];
	}
	if (m < 2) {
		free(kept);
		return -1;
	}
	/* column means over the processes (column 0, the measured graph, is 0) */
	col = xcalloc(n, sizeof(*col));
	for (size_t j = 0; j < n; j++)
		if (kept[j]) {
			for (size_t p = 0; p < np; p++)
				col[j] += round_set(A, B, p)->place_draws[j];
			col[j] /= (double)np;
			grand += col[j];
		}
	grand /= (double)m;
	for (size_t p = 0; p < np; p++) {
		const double *d = round_set(A, B, p)->place_draws;
		double row = 0, e;

		for (size_t j = 0; j < n; j++)
			if (kept[j])
				row += d[j];
		row /= (double)m;
		e = grand - row;	/* column 0: d = 0, and so its mean */
		ss += e * e;
		for (size_t j = 0; j < n; j++)
			if (kept[j]) {
				e = d[j] - row - col[j] + grand;
				ss += e * e;
			}
	}
	free(col);
	free(kept);
	*pdf = (double)(np - 1) * (double)(m - 1);
	*pv = ss / *pdf;
	return 0;
}

static double side_draw(const struct side *s, struct stats_rng *rng)
{
	double sum = 0;

	if (s->k == 1) {
		const struct stats_round *r = &s->r[0];
		double d = s->mean + (stats_round_draw(r, rng) - r->bmean);
		if (s->floor > 0)
			d += s->floor * stats_rng_normal(rng);
		return d;
	}
	for (size_t i = 0; i < s->k; i++) {
		const struct stats_round *r = &s->r[stats_rng_below(rng, s->k)];
		sum += s->mean + s->shrink * (r->y - s->mean) +
		       (stats_round_draw(r, rng) - r->bmean);
	}
	return sum / (double)s->k;
}

/*
 * ln(clock_B / clock_A) less one step of the clock table each way: a
 * round's steady clock is the median of readings in STATS_CLOCK_STEP_MHZ
 * steps, so two sides at one clock can read a step apart. NAN when a side
 * has no clock.
 */
static double clock_shift(double ln_a, double ln_b)
{
	double d = ln_b - ln_a, step;

	if (!isfinite(d))
		return NAN;
	step = log1p(STATS_CLOCK_STEP_MHZ / exp(fmin(ln_a, ln_b)));
	return fabs(d) <= step ? 0 : d > 0 ? d - step : d + step;
}

/*
 * ln(effective_B / effective_A) less one clock step, or less the verdict
 * band where narrower (stats_compare.h, "Effective clocks"); NAN when a
 * side has none.
 */
static double effective_shift(double ln_a, double ln_b, double band)
{
	double d = ln_b - ln_a, left;

	if (!isfinite(d))
		return NAN;
	left = fmin(log1p(STATS_CLOCK_STEP_MHZ / exp(fmin(ln_a, ln_b))), log1p(fmax(0, band)));
	return fabs(d) <= left ? 0 : d > 0 ? d - left : d + left;
}

/*
 * The clock difference a comparison reports (clock_shift): NVML's (a step
 * left out) or the effective clocks', whichever says more; either where
 * only one is had. The interval is widened by both.
 */
static double larger_shift(double nvml, double effective)
{
	if (!isfinite(effective))
		return nvml;
	if (!isfinite(nvml))
		return effective;
	return fabs(effective) > fabs(nvml) ? effective : nvml;
}

/*
 * The row's elasticity s and its slack u (stats_compare.h, "Elasticity"),
 * or 0 where some round of either side read no s or no effective clock.
 */
static int row_elasticity(const struct side *A, const struct side *B, double *s, double *u)
{
	const struct side *sides[2] = { A, B };
	double sw = 0, sws = 0, lo = INFINITY, hi = -INFINITY;

	if (!isfinite(A->ln_effective) || !isfinite(B->ln_effective))
		return 0;
	for (int j = 0; j < 2; j++)
		for (size_t i = 0; i < sides[j]->k; i++) {
			const struct stats_sample_set *set = sides[j]->set[i];
			double e = set->elasticity, se = set->elasticity_se, w;

			if (!set->elasticity_n || !isfinite(e) || !isfinite(se) || se < 0)
				return 0;
			e = fmin(1, fmax(0, e));
			se = fmax(se, STATS_ELASTICITY_SE_FLOOR);
			w = 1 / (se * se);
			sw += w;
			sws += w * e;
			lo = fmin(lo, e);
			hi = fmax(hi, e);
		}
	*s = sws / sw;
	*u = fmax(STATS_ELASTICITY_SLACK, fmax(2 / sqrt(sw), (hi - lo) / 2));
	return 1;
}

/*
 * How far, at most, a row's time follows its clock: the upper 97.5% bound
 * of s (time ~ clock^-s) from the rounds whose clocks differ within a side,
 * the slope of ln time on ln clock with a mean per side, clamped to [0, 1];
 * 1 when the rounds cannot tell (no clock differs within a side, or fewer
 * than 4 rounds). An H200's 16384x4096 layer_norm read the same time at
 * 1560 and 1972 MHz in three rounds: memory-bound, its time follows no clock.
 * The effective clocks where every round has one, NVML's otherwise.
 */
static double clock_sensitivity_hi(const struct side *A, const struct side *B)
{
	const struct side *sides[2] = { A, B };
	double sxx = 0, sxy = 0, syy = 0, b, se, df = (double)(A->k + B->k) - 3;
	int effective = isfinite(A->ln_effective) && isfinite(B->ln_effective);

	if (df < 1)
		return 1;
	for (int s = 0; s < 2; s++) {
		const struct side *d = sides[s];

		for (size_t i = 0; i < d->k; i++) {
			double x = effective ? log(d->set[i]->effective_mhz) - d->ln_effective :
					       log(d->set[i]->clock_mhz) - d->ln_clock;
			double y = d->r[i].y - d->mean;

			sxx += x * x;
			sxy += x * y;
			syy += y * y;
		}
	}
	if (!(sxx > 0))
		return 1;
	b = sxy / sxx;
	/* the residual sum of squares of the fit, syy - b sxy, never below 0 */
	se = sqrt(fmax(0, syy - b * sxy) / df / sxx);
	return fmin(1, fmax(0, -b + stats_t_ppf(0.975, df) * se));
}

double stats_clock_wander(double steady_mhz, const double *mhz, size_t n)
{
	double v[64], m = 0, ss = 0;
	size_t k = 0;

	if (!(steady_mhz > 0) || !isfinite(steady_mhz))
		return 0;
	v[k++] = log(steady_mhz);
	for (size_t i = 0; i < n && k < sizeof(v) / sizeof(v[0]); i++) {
		double c = mhz[i];

		if (!(c > 0) || !isfinite(c))
			continue;
		/* one step towards the steady clock: a step apart is no move */
		if (fabs(c - steady_mhz) <= STATS_CLOCK_STEP_MHZ)
			c = steady_mhz;
		else
			c += c > steady_mhz ? -STATS_CLOCK_STEP_MHZ : STATS_CLOCK_STEP_MHZ;
		v[k++] = log(c);
	}
	if (k < 2)
		return 0;
	for (size_t i = 0; i < k; i++)
		m += v[i];
	m /= (double)k;
	for (size_t i = 0; i < k; i++)
		ss += (v[i] - m) * (v[i] - m);
	return sqrt(ss / (double)(k - 1));
}

/* The median of the valid values of x[from..to), copied into tmp; NAN with none. */
static double half_median(const double *x, size_t from, size_t to, double *tmp, size_t *n)
{
	*n = 0;
	for (size_t i = from; i < to; i++)
		if (x[i] > 0 && isfinite(x[i]))
			tmp[(*n)++] = x[i];
	return *n ? stats_quantile_select(tmp, *n, 0.5) : NAN;
}

double stats_sample_trend(const double *x, size_t n, size_t strata, double bvar)
{
	size_t p = strata > 1 ? strata : 1, half = n / p / 2 * p, n1, n2;
	double *tmp, m1, m2, d, excess;

	if (!x || half < STATS_TREND_MIN_HALF || !isfinite(bvar))
		return 0;
	tmp = xmalloc(half * sizeof(*tmp));
	m1 = half_median(x, 0, half, tmp, &n1);
	m2 = half_median(x, half, 2 * half, tmp, &n2);
	free(tmp);
	if (n1 < STATS_TREND_MIN_HALF || n2 < STATS_TREND_MIN_HALF)
		return 0;
	d = log(m2 / m1);
	/* a move within STATS_TREND_Z sd of the halves' difference is noise */
	if (d * d <= STATS_TREND_Z * STATS_TREND_Z * 4 * fmax(bvar, 0))
		return 0;
	excess = d * d - 4 * fmax(bvar, 0);
	return excess > 0 ? sqrt(excess) : 0;
}

/* ---- the comparison -------------------------------------------------------- */

static void not_ok(struct stats_cmp *c, const char *why)
{
	c->ok = 0;
	c->why = why;
	c->test = "none";
	c->lo = c->hi = NAN;
	c->p = 1;
}

/* What the comparison reports of each side, whatever the test. */
static void describe_sides(const struct side *A, const struct side *B, struct stats_cmp *c)
{
	c->effective_a = exp(A->ln_effective);
	c->effective_b = exp(B->ln_effective);
	c->ka = A->k;
	c->kb = B->k;
	c->na = A->n;
	c->nb = B->n;
	c->a_ms = exp(A->mean);
	c->b_ms = exp(B->mean);
	c->diff = B->mean - A->mean;
	c->ratio = exp(c->diff);
	c->floor_a = A->k == 1 && A->floor > 0;
	c->floor_b = B->k == 1 && B->floor > 0;
	c->drift_a = A->k == 1 ? A->floor : NAN;
	c->drift_b = B->k == 1 ? B->floor : NAN;
	c->place_a = A->place;
	c->place_b = B->place;
	if (A->k >= 2)
		c->spread_a = sqrt(A->s2);
	if (B->k >= 2)
		c->spread_b = sqrt(B->s2);
}

/*
 * The hierarchical bootstrap's percentile interval of the log ratio; the
 * reported interval is the wider of it and the parametric one (c->lo, hi).
 */
static void widen_by_bootstrap(const struct side *A, const struct side *B, const struct stats_cmp_opts *o,
			       double alpha, struct stats_cmp *c)
{
	struct stats_rng rng;
	double *d = xmalloc(o->nboot * sizeof(*d));
	double plo, phi;

	stats_rng_seed(&rng, o->seed);
	for (unsigned i = 0; i < o->nboot; i++)
		d[i] = side_draw(B, &rng) - side_draw(A, &rng);
	phi = stats_quantile_select(d, o->nboot, 1 - alpha / 2);
	plo = stats_quantile_select(d, o->nboot, alpha / 2);
	free(d);
	if (plo < c->lo)
		c->lo = plo;
	if (phi > c->hi)
		c->hi = phi;
}

/*
 * The df of one round a side whose variances sum to v, each holding the
 * one placement variance pv (pdf df): Satterthwaite's, pv's uncertainty
 * counted once for both sides, doubled; infinite where pv was not measured.
 */
static double single_rounds_df(double v, double pv, double pdf)
{
	return pdf > 0 && pv > 0 ? v * v / (4 * pv * pv / pdf) : INFINITY;
}

size_t stats_rounds_needed(double va, double vb, double pv, double pdf, double band,
			   double confidence)
{
	double half = STATS_PLAN_HALF_WIDTH * log1p(band), s2 = va + vb, p = 1 - (1 - confidence) / 2;
	double z = stats_t_ppf(p, INFINITY);
	size_t k;

	if (!(half > 0) || !(s2 > 0) || !isfinite(s2) || !isfinite(half) ||
	    !(confidence > 0 && confidence < 1))
		return 0;
	/* t >= z at every df: no k below the normal's answer can do */
	k = (size_t)fmax(1.0, floor(fmin(z * z * s2 / (half * half), 1e12)));
	/* that far out t is z to a millionth: a row no number of rounds settles */
	if (k > 1000000)
		return k;
	for (;; k++) {
		double df = k >= 2 ? 2.0 * (double)(k - 1) + pdf : single_rounds_df(s2, pv, pdf);

		if (stats_t_ppf(p, df) * sqrt(s2 / (double)k) <= half)
			return k;
	}
}

int stats_compare(const struct stats_sample_set *a, size_t ka,
		  const struct stats_sample_set *b, size_t kb,
		  const struct stats_cmp_opts *o, struct stats_cmp *c)
{
	struct side A, B;
	struct stats_welch w;
	double alpha = 1 - o->confidence, tq, pv, pdf, s_hi, wva, wvb;
	double nvml_shift, eff_shift, lo, hi, el, slack;
	int ra, rb, pooled;

	memset(c, 0, sizeof(*c));
	c->p_mwu = c->spread_a = c->spread_b = NAN;
	c->drift_a = c->drift_b = c->place_a = c->place_b = c->clock_shift = NAN;
	c->effective_a = c->effective_b = NAN;
	c->elasticity = c->clock_correction = NAN;
	c->clock_wander = c->trend = NAN;
	ra = side_init(&A, a, ka);
	rb = side_init(&B, b, kb);
	if (ra || rb) {
		not_ok(c, "no valid sample on one side");
		c->ratio = c->a_ms = c->b_ms = c->diff = NAN;
		side_release(&A);
		side_release(&B);
		return -1;
	}
	/* where buffers land is the row's on this GPU, not a build's: pooled */
	if (!placement_aligned(&A, &B, &pv, &pdf)) {
		c->place_model = "aligned";
	} else {
		pdf = A.place_df + B.place_df;
		pv = pdf > 0 ? (A.place_ss + B.place_ss) / pdf : 0;
		c->place_model = pdf > 0 ? "spread" : NULL;
	}
	s_hi = clock_sensitivity_hi(&A, &B);
	wva = s_hi * s_hi * A.wander2;
	wvb = s_hi * s_hi * B.wander2;
	c->clock_wander = sqrt((wva + wvb) / 2);
	c->trend = sqrt((A.trend2 + B.trend2) / 2);
	wva += A.trend2;
	wvb += B.trend2;
	side_finish(&A, pv, pdf, o->drift_floor, wva);
	side_finish(&B, pv, pdf, o->drift_floor, wvb);
	describe_sides(&A, &B, c);

	if ((A.k == 1 && A.n < o->min_samples) || (B.k == 1 && B.n < o->min_samples)) {
		not_ok(c, "a single round with too few samples to know its noise");
		goto out;
	}
	pooled = A.k >= 2 && A.k == B.k;
	if (pooled) {
		/* balanced rounds: one drift variance for both builds (Student's t) */
		double df = (double)(A.k + B.k - 2) + pdf;
		double s2p = fmax((wva + wvb) / 2,
				  ((double)(A.k - 1) * A.s2 + (double)(B.k - 1) * B.s2 +
				   pdf * (pv + o->drift_floor * o->drift_floor)) / df);

		side_set_spread(&A, s2p, df);
		side_set_spread(&B, s2p, df);
	}
	if (stats_welch_parts(c->diff, A.v, A.df, B.v, B.df, &w)) {
		not_ok(c, "no variation at all: identical values");
		goto out;
	}
	if (pooled) {
		w.df = A.df;
		w.p = fmin(1.0, 2.0 * stats_t_sf(fabs(w.t), w.df));
	} else if (A.k == 1 && B.k == 1 && pdf > 0 && pv > 0) {
		w.df = single_rounds_df(A.v + B.v, pv, pdf);
		w.p = fmin(1.0, 2.0 * stats_t_sf(fabs(w.t), w.df));
	}
	c->ok = 1;
	c->se = w.se;
	c->df = w.df;
	c->p = w.p;
	if (A.k == 1 && B.k == 1) {
		struct stats_mwu m;

		c->test = "mwu+floor";
		if (!stats_mann_whitney(A.r[0].x, A.r[0].n, B.r[0].x, B.r[0].n, &m)) {
			c->p_mwu = m.p;
			if (m.p > c->p)
				c->p = m.p;
		}
	} else {
		c->test = pooled ? "student" : A.k == 1 || B.k == 1 ? "welch+floor" : "welch";
	}

	/* the parametric interval */
	tq = stats_t_ppf(1 - alpha / 2, w.df);
	c->lo = c->diff - tq * w.se;
	c->hi = c->diff + tq * w.se;
	if (o->nboot >= 2)
		widen_by_bootstrap(&A, &B, o, alpha, c);
	/*
	 * What the sides' clocks can explain: the hull with the interval
	 * shifted by NVML's difference and by the effective clocks' (both: the
	 * one never undoes the other's widening); clock_shift reports the
	 * larger.
	 */
	nvml_shift = clock_shift(A.ln_clock, B.ln_clock) * s_hi;
	if (row_elasticity(&A, &B, &el, &slack)) {
		/* the effect is D + s dc, s known to +-slack: moved, not widened */
		double dc = B.ln_effective - A.ln_effective;

		c->elasticity = el;
		c->clock_correction = el * dc;
		c->lo += el * dc - slack * fabs(dc);
		c->hi += el * dc + slack * fabs(dc);
		eff_shift = NAN;
	} else {
		eff_shift = effective_shift(A.ln_effective, B.ln_effective, o->band) * s_hi;
	}
	c->clock_shift = larger_shift(nvml_shift, eff_shift);
	lo = c->lo;
	hi = c->hi;
	for (int i = 0; i < 2; i++) {
		double shift = i ? eff_shift : nvml_shift;

		if (isfinite(shift)) {
			c->lo = fmin(c->lo, lo + shift);
			c->hi = fmax(c->hi, hi + shift);
		}
	}
	c->lo = exp(c->lo);
	c->hi = exp(c->hi);
	/* each side's per-round variance: v is it over k rounds */
	c->rounds_needed = stats_rounds_needed(A.v * (double)A.k, B.v * (double)B.k, pv, pdf,
					       o->band, o->confidence);
out:
	side_release(&A);
	side_release(&B);
	return 0;
}

enum stats_verdict stats_verdict(const struct stats_cmp *c, double q, double fdr,
				 double threshold)
{
	double up = 1 + threshold, down = 1 / (1 + threshold);

	if (!c->ok || isnan(c->lo) || isnan(c->hi))
		return STATS_UNSURE;
	if (q <= fdr && c->lo > up)
		return STATS_SLOWER;
	if (q <= fdr && c->hi < down)
		return STATS_FASTER;
	if (c->lo >= down && c->hi <= up)
		return STATS_SAME;
	return STATS_UNSURE;
}

const char *stats_verdict_name(enum stats_verdict v)
{
	switch (v) {
	case STATS_SAME:
		return "SAME";
	case STATS_FASTER:
		return "FASTER";
	case STATS_SLOWER:
		return "SLOWER";
	case STATS_UNSURE:
		return "UNSURE";
	}
	return "UNSURE";
}
