/*
 * One comparison of A's rounds with B's (stats_compare.h): a round's exact
 * bootstrap law of its centre, a side's drift and placement variance, the
 * test and the hierarchical bootstrap. About 710 lines in one file because
 * the bootstrap draws from the laws the rounds build: split, the laws'
 * atoms and guide tables would become an interface for one caller.
 */
#include "compare/stats_compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/stats_dist.h"
#include "compare/stats_tests.h"
#include "lib/strbuf.h"

/* ---- one round ---------------------------------------------------------- */

/*
 * The law of the k-th order statistic of a resample of n:
 * F(j) = P(X*_(k) <= x_(j)) = P(Bin(n, j/n) >= k).
 */
struct os_law {
	size_t n, k;
	double lc_k, lc_km1;	/* ln C(n, k), ln C(n, k - 1) */
};

static double lchoose(double n, double k)
{
	return lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1);
}

static void os_law_init(struct os_law *L, size_t n, size_t k)
{
	L->n = n;
	L->k = k;
	if (n <= STATS_EXACT_N_MAX) {
		L->lc_k = lchoose((double)n, (double)k);
		L->lc_km1 = lchoose((double)n, (double)k - 1);
	}
}

/*
 * P(Bin(n, p) >= k), exactly, by summing the binomial terms of the smaller
 * side outward from k with the ratio recurrence (a few sqrt(n) terms; no
 * special function per term). Checked against scipy via stats_binom_sf_ge.
 */
static double binom_tail(const struct os_law *L, double p)
{
	double n = (double)L->n, k = (double)L->k, t, sum, r;

	if (p <= 0)
		return 0;
	if (p >= 1)
		return 1;
	if (k > n * p) {
		/* upper tail: sum_{i >= k} */
		t = exp(L->lc_k + k * log(p) + (n - k) * log1p(-p));
		sum = t;
		r = p / (1 - p);
		for (double i = k; i < n && t > 1e-17 * sum; i++) {
			t *= (n - i) / (i + 1) * r;
			sum += t;
		}
		return sum;
	}
	/* 1 - lower tail: sum_{i <= k-1} */
	t = exp(L->lc_km1 + (k - 1) * log(p) + (n - k + 1) * log1p(-p));
	sum = t;
	r = (1 - p) / p;
	for (double i = k - 1; i > 0 && t > 1e-17 * sum; i--) {
		t *= i / (n - i + 1) * r;
		sum += t;
	}
	return 1 - sum;
}

static double os_cdf(const struct os_law *L, size_t j)
{
	double p, sd;

	if (j == 0)
		return 0;
	if (j >= L->n)
		return 1;
	p = (double)j / (double)L->n;
	if (L->n <= STATS_EXACT_N_MAX)
		return binom_tail(L, p);
	sd = sqrt((double)L->n * p * (1 - p));
	return stats_norm_cdf(((double)j - (double)L->k + 0.5) / sd);
}

double stats_order_stat_cdf(size_t k, size_t n, size_t j)
{
	struct os_law L;

	os_law_init(&L, n, k);
	return os_cdf(&L, j);
}

static void push_atom(struct stats_round *r, double v, double cum)
{
	/* merge equal neighbours (tied samples) into one atom */
	if (r->natoms && r->val[r->natoms - 1] == v) {
		r->cum[r->natoms - 1] = cum;
		return;
	}
	r->val[r->natoms] = v;
	r->cum[r->natoms] = cum;
	r->natoms++;
}

static void finish_law(struct stats_round *r)
{
	double prev = 0;
	size_t a = 0;

	if (r->natoms)
		r->cum[r->natoms - 1] = 1.0;
	r->bmean = 0;
	for (size_t i = 0; i < r->natoms; i++) {
		r->bmean += r->val[i] * (r->cum[i] - prev);
		prev = r->cum[i];
	}
	r->bvar = 0;
	prev = 0;
	for (size_t i = 0; i < r->natoms; i++) {
		double d = r->val[i] - r->bmean;
		r->bvar += d * d * (r->cum[i] - prev);
		prev = r->cum[i];
	}
	/*
	 * A guide table for O(1) draws (Chen 1974): guide[g] is the first atom
	 * whose cumulative probability exceeds g / natoms; a draw u starts its
	 * search at guide[floor(u natoms)].
	 */
	r->guide = xmalloc((r->natoms ? r->natoms : 1) * sizeof(*r->guide));
	for (size_t g = 0; g < r->natoms; g++) {
		double level = (double)g / (double)r->natoms;

		while (a + 1 < r->natoms && r->cum[a] <= level)
			a++;
		r->guide[g] = a;
	}
}

/* The window of order statistics [*jlo, *jhi] (1-based) that holds the law. */
static void law_window(size_t n, size_t k1, size_t k2, size_t *jlo, size_t *jhi)
{
	size_t h;

	if (n <= 64) {
		*jlo = 1;
		*jhi = n;
		return;
	}
	/*
	 * The index of a resampled median has sd ~ sqrt(n)/2: keep 5 sd each
	 * side; the 6e-7 of mass beyond goes to the window's end atoms.
	 */
	h = (size_t)ceil(2.5 * sqrt((double)n)) + 2;
	*jlo = k1 > h ? k1 - h : 1;
	*jhi = k2 + h < n ? k2 + h : n;
}

/*
 * ln((a + b) / 2) from la = ln a, lb = ln b: the log of the geometric mean
 * plus ln cosh(d/2), d = lb - la, by its series when d is small (neighbouring
 * order statistics: |d| < 0.05 leaves an error below 1e-13) — one log per
 * pair saved, thousands per round.
 */
static double log_mid(double la, double lb)
{
	double d = lb - la, d2 = d * d;

	if (fabs(d) < 0.05)
		return 0.5 * (la + lb) + d2 / 8 * (1 - d2 / 24 * (1 - d2 / 15));
	return log(0.5 * (exp(la) + exp(lb)));
}

/* ln(r^m - (r-1)^m) for r >= 1. */
static double log_pow_step(double r, double m)
{
	if (r <= 1)
		return 0;
	return m * log(r) + log(-expm1(m * log1p(-1.0 / r)));
}

/*
 * Even n = 2m, exact: the resample's order statistics m and m+1 sit at
 * positions I <= J of the sorted sample with, for i < j,
 *   P(I = i, J = j) = C(n, m) n^-n (i^m - (i-1)^m) ((n-j+1)^m - (n-j)^m)
 * (exactly m draws at positions <= i, at least one of them at i; none
 * strictly between; at least one at j), and
 *   P(I = J = i) = P(I = i) - C(n, m) n^-n (i^m - (i-1)^m) (n-i)^m,
 * the sum over j > i telescoping. A gap of g positions with no draw has
 * probability ~e^-g: gaps beyond EVEN_GAP_MAX are left out.
 */
#define EVEN_GAP_MAX 16
static void centre_law_even_exact(struct stats_round *r)
{
	size_t n = r->n, m = n / 2, jlo, jhi, w, cap;
	double lc, md = (double)m, cum = 0, *G, *H, *lx;
	struct os_law L;

	law_window(n, m, m + 1, &jlo, &jhi);
	w = jhi - jlo + 1;
	os_law_init(&L, n, m);
	cap = w * (EVEN_GAP_MAX + 1) + 1;
	r->val = xmalloc(cap * sizeof(double));
	r->cum = xmalloc(cap * sizeof(double));
	r->natoms = 0;
	/*
	 * C(n, m) n^-n underflows for n in the hundreds while the powers
	 * overflow: split it evenly between the two factors, each then O(1).
	 */
	lc = 0.5 * (lchoose((double)n, md) - (double)n * log((double)n));
	G = xmalloc(w * sizeof(double));
	H = xmalloc(w * sizeof(double));
	lx = xmalloc(w * sizeof(double));
	for (size_t i = jlo; i <= jhi; i++) {
		G[i - jlo] = exp(lc + log_pow_step((double)i, md));
		H[i - jlo] = exp(lc + log_pow_step((double)(n - i + 1), md));
		lx[i - jlo] = log(r->x[i - 1]);
	}
	/* F(i - 1) is the previous step's F(i): each binomial tail computed once */
	double cdf_prev = os_cdf(&L, jlo - 1);

	for (size_t i = jlo; i <= jhi; i++) {
		double g = G[i - jlo], same, cdf = os_cdf(&L, i);

		same = cdf - cdf_prev;
		cdf_prev = cdf;
		if (i < n)
			same -= g * exp(lc + md * log((double)(n - i)));
		if (same > 0) {
			cum += same;
			r->val[r->natoms] = lx[i - jlo];
			r->cum[r->natoms++] = cum;
		}
		for (size_t j = i + 1; j <= jhi && j <= i + EVEN_GAP_MAX; j++) {
			double p = g * H[j - jlo];

			if (!(p > 0))
				continue;
			cum += p;
			r->val[r->natoms] = log_mid(lx[i - jlo], lx[j - jlo]);
			r->cum[r->natoms++] = cum;
		}
	}
	free(G);
	free(H);
	free(lx);
	/* the window holds all but ~1e-6 of the mass: renormalise */
	for (size_t i = 0; i < r->natoms; i++)
		r->cum[i] /= cum;
	finish_law(r);
}

/*
 * Fill the atoms of ln(median of a resample). x is sorted, 0-based.
 * Odd n: the median is order statistic k = (n+1)/2, whose law is
 * F(j) = P(Bin(n, j/n) >= k). Even n above STATS_EXACT_N_MAX: the two
 * middle order statistics, each with its exact marginal law, coupled
 * through one uniform (comonotone); this overstates their dependence a
 * little (the variance by +1.6% at n = 64, -0.5% at n = 200 in
 * gen_fixtures-style checks), negligible at the sizes where it is used.
 */
static void centre_law(struct stats_round *r)
{
	size_t n = r->n, k1, k2, jlo, jhi, cap;
	double *f1, *f2;
	struct os_law L1, L2;

	if (n % 2 == 0 && n <= STATS_EXACT_N_MAX) {
		centre_law_even_exact(r);
		return;
	}
	k1 = (n + 1) / 2;		/* odd n: the median; even n: n/2 */
	k2 = n % 2 ? k1 : k1 + 1;	/* even n: n/2 + 1 */
	law_window(n, k1, k2, &jlo, &jhi);
	cap = 2 * (jhi - jlo + 1) + 2;
	r->val = xmalloc(cap * sizeof(double));
	r->cum = xmalloc(cap * sizeof(double));
	r->natoms = 0;
	os_law_init(&L1, n, k1);
	os_law_init(&L2, n, k2);
	f1 = xmalloc((jhi - jlo + 1) * sizeof(double));
	f2 = xmalloc((jhi - jlo + 1) * sizeof(double));
	for (size_t j = jlo; j <= jhi; j++) {
		/* the window's ends take the (negligible) mass outside it */
		f1[j - jlo] = j == jhi ? 1.0 : os_cdf(&L1, j);
		f2[j - jlo] = j == jhi ? 1.0 : (k2 == k1 ? f1[j - jlo] : os_cdf(&L2, j));
	}
	/*
	 * Walk u over (0, 1]: order statistic k1 sits at the smallest j with
	 * F1(j) >= u, k2 at the smallest j with F2(j) >= u.
	 */
	{
		size_t p1 = 0, p2 = 0, m = jhi - jlo + 1;
		double u = 0;

		while (p1 < m && p2 < m) {
			double next = f1[p1] < f2[p2] ? f1[p1] : f2[p2];
			double v;

			if (next > u) {
				if (k1 == k2)
					v = log(r->x[jlo + p1 - 1]);
				else
					v = log(0.5 * (r->x[jlo + p1 - 1] + r->x[jlo + p2 - 1]));
				push_atom(r, v, next);
				u = next;
			}
			if (f1[p1] <= next)
				p1++;
			if (f2[p2] <= next)
				p2++;
		}
	}
	free(f1);
	free(f2);
	finish_law(r);
}

int stats_round_init(struct stats_round *r, const double *samples, size_t n)
{
	memset(r, 0, sizeof(*r));
	r->x = xmalloc((n ? n : 1) * sizeof(double));
	for (size_t i = 0; i < n; i++)
		if (isfinite(samples[i]) && samples[i] > 0)
			r->x[r->n++] = samples[i];
	if (!r->n) {
		free(r->x);
		r->x = NULL;
		return -1;
	}
	stats_sort(r->x, r->n);
	r->centre = stats_median_sorted(r->x, r->n);
	r->y = log(r->centre);
	centre_law(r);
	return 0;
}

/*
 * p strata: each placement's samples (i % p) a round of its own; the
 * centre is the mean of their medians.
 */
int stats_round_init_strata(struct stats_round *r, const double *samples, size_t n,
			    size_t p)
{
	size_t per = p > 1 ? n / p : 0;
	double *buf, sum = 0, var = 0;

	if (per < 1)
		return stats_round_init(r, samples, n);
	memset(r, 0, sizeof(*r));
	r->strata = xcalloc(p, sizeof(*r->strata));
	buf = xmalloc(per * sizeof(*buf));
	for (size_t k = 0; k < p; k++) {
		for (size_t i = 0; i < per; i++)
			buf[i] = samples[i * p + k];
		if (stats_round_init(&r->strata[k], buf, per)) {
			free(buf);
			stats_round_release(r);
			return -1;
		}
		r->nstrata++;
		r->n += r->strata[k].n;
		sum += r->strata[k].centre;
	}
	free(buf);
	r->x = xmalloc(r->n * sizeof(double));
	r->n = 0;
	for (size_t k = 0; k < p; k++) {
		const struct stats_round *s = &r->strata[k];

		memcpy(r->x + r->n, s->x, s->n * sizeof(double));
		r->n += s->n;
		var += s->centre * s->centre * s->bvar;
	}
	stats_sort(r->x, r->n);
	r->centre = sum / (double)p;
	r->y = log(r->centre);
	/* The delta method: ln of a mean of nearly equal, independent medians. */
	r->bvar = var / (sum * sum);
	r->bmean = 0;
	for (size_t k = 0; k < p; k++)
		r->bmean += exp(r->strata[k].bmean);
	r->bmean = log(r->bmean / (double)p);
	return 0;
}

void stats_round_release(struct stats_round *r)
{
	for (size_t k = 0; k < r->nstrata; k++)
		stats_round_release(&r->strata[k]);
	free(r->strata);
	free(r->x);
	free(r->val);
	free(r->cum);
	free(r->guide);
	memset(r, 0, sizeof(*r));
}

double stats_round_draw(const struct stats_round *r, struct stats_rng *rng)
{
	double u, sum = 0;
	size_t i;

	if (r->nstrata) {
		for (size_t k = 0; k < r->nstrata; k++)
			sum += exp(stats_round_draw(&r->strata[k], rng));
		return log(sum / (double)r->nstrata);
	}
	u = stats_rng_uniform(rng);
	i = r->guide[(size_t)(u * (double)r->natoms)];

	/* the first atom whose cumulative probability exceeds u */
	while (r->cum[i] <= u && i + 1 < r->natoms)
		i++;
	return r->val[i];
}

/* ---- one side ------------------------------------------------------------ */

struct side {
	struct stats_round *r;
	size_t k;
	size_t n;		/* samples, all rounds */
	double mean;		/* ybar */
	double s2, w2;		/* scatter of the y_r, mean within variance */
	double v, df;		/* variance of ybar and its degrees of freedom */
	double shrink;		/* a */
	double floor;		/* sqrt(f^2 + place^2) (k == 1) */
	double place;		/* the row's measured placement sd, NAN when none */
	double place_ss, place_df;	/* its rounds' sum of df x placement variance, and of df */
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
	for (size_t i = 0; i < k; i++)
		if (!stats_round_init_strata(&s->r[s->k], sets[i].x, sets[i].n,
					     sets[i].strata)) {
			double pdf, pv = placement_var(&sets[i], &s->r[s->k], &pdf);

			if (pdf > 0) {
				s->place_ss += pdf * pv;
				s->place_df += pdf;
			}
			s->n += s->r[s->k].n;
			s->k++;
		}
	if (!s->k)
		return -1;
	for (size_t i = 0; i < s->k; i++) {
		s->mean += s->r[i].y;
		s->w2 += s->r[i].bvar;
	}
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
 * over every round of both sides; pdf 0: none measured) is known. One
 * round: w^2 + f^2 + pv, Satterthwaite df from pv's. Rounds: their own
 * scatter and pv are two estimates of one between-process variance,
 * pooled by their degrees of freedom.
 */
static void side_finish(struct side *s, double pv, double pdf, double drift_floor)
{
	if (s->k == 1) {
		double f2 = drift_floor * drift_floor + pv;

		s->floor = sqrt(f2);
		s->v = s->w2 + f2;
		s->df = pdf > 0 && pv > 0 ? s->v * s->v / (pv * pv / pdf) : INFINITY;
		if (pdf > 0)
			s->place = sqrt(pv);
		return;
	}
	side_set_spread(s, ((double)(s->k - 1) * s->s2 + pdf * pv) / ((double)(s->k - 1) + pdf),
			(double)(s->k - 1) + pdf);
}

static void side_release(struct side *s)
{
	for (size_t i = 0; i < s->k; i++)
		stats_round_release(&s->r[i]);
	free(s->r);
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

int stats_compare(const struct stats_sample_set *a, size_t ka,
		  const struct stats_sample_set *b, size_t kb,
		  const struct stats_cmp_opts *o, struct stats_cmp *c)
{
	struct side A, B;
	struct stats_welch w;
	double alpha = 1 - o->confidence, tq, pv, pdf;
	int ra, rb, pooled;

	memset(c, 0, sizeof(*c));
	c->p_mwu = c->spread_a = c->spread_b = NAN;
	c->drift_a = c->drift_b = c->place_a = c->place_b = NAN;
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
	pdf = A.place_df + B.place_df;
	pv = pdf > 0 ? (A.place_ss + B.place_ss) / pdf : 0;
	side_finish(&A, pv, pdf, o->drift_floor);
	side_finish(&B, pv, pdf, o->drift_floor);
	describe_sides(&A, &B, c);

	if ((A.k == 1 && A.n < o->min_samples) || (B.k == 1 && B.n < o->min_samples)) {
		not_ok(c, "a single round with too few samples to know its noise");
		goto out;
	}
	pooled = A.k >= 2 && A.k == B.k;
	if (pooled) {
		/* balanced rounds: one drift variance for both builds (Student's t) */
		double df = (double)(A.k + B.k - 2) + pdf;
		double s2p = ((double)(A.k - 1) * A.s2 + (double)(B.k - 1) * B.s2 + pdf * pv) / df;

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
		/* both sides hold the same pv: its uncertainty counts once, doubled */
		w.df = (A.v + B.v) * (A.v + B.v) / (4 * pv * pv / pdf);
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
	c->lo = exp(c->lo);
	c->hi = exp(c->hi);
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
