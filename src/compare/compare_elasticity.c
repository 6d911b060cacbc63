/*
 * zlb compare --elasticity-from: the clock elasticity of each row, read in
 * a calibration run, for rounds that did not read their own
 * (compare.h, compare_take_elasticity).
 */
#include "compare/compare_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare/stats_tests.h"
#include "lib/error.h"
#include "lib/jsonfile.h"
#include "lib/strbuf.h"

/* What the calibration read of one row's kind: its rounds' s. */
struct calibrated {
	double s, se;
	size_t pairs;
};

/* The calibration row's kind k: 1 with *out, or 0 when no round read s. */
static int calibrated_of(const struct compare_row *row, int k, struct calibrated *out)
{
	const struct compare_rounds *r = &row->side[0].r[k];
	double *v = xcalloc(r->nr ? r->nr : 1, sizeof(*v)), mean = 0, ss = 0, se = 0;
	size_t n = 0, pairs = 0;

	for (size_t i = 0; i < r->nr; i++) {
		const struct stats_sample_set *set = &r->set[i];

		if (!set->elasticity_n)
			continue;
		v[n++] = set->elasticity;
		mean += set->elasticity;
		se = fmax(se, set->elasticity_se);
		pairs += set->elasticity_n;
	}
	if (!n) {
		free(v);
		return 0;
	}
	mean /= (double)n;
	for (size_t i = 0; i < n; i++)
		ss += (v[i] - mean) * (v[i] - mean);
	out->s = stats_quantile_select(v, n, 0.5);
	out->se = n > 1 ? fmax(se, sqrt(ss / (double)(n - 1))) : se;
	out->pairs = pairs;
	free(v);
	return 1;
}

/* The device the runs of c's sides were measured on (their caliber's), or NULL. */
static const char *device_of(const struct compare_run *r)
{
	const json_t *cal = r->identity ? json_object_get(r->identity, "caliber") : NULL;

	return cal ? json_str(cal, "device") : NULL;
}

/* NULL when every run of c names device; else the first that does not. */
static const struct compare_run *other_device(const struct compare *c, int sides,
					      const char *device)
{
	for (int s = 0; s < sides; s++)
		for (size_t i = 0; i < c->side[s].nr; i++) {
			const char *d = device_of(&c->side[s].runs[i]);

			if (!d || strcmp(d, device))
				return &c->side[s].runs[i];
		}
	return NULL;
}

int compare_take_elasticity(struct compare *c, const char *dir, const char *via, int optional)
{
	struct compare cal;
	const struct compare_run *odd;
	const char *device;
	size_t given = 0, rounds = 0, read = 0;
	int ret = -1, n;

	compare_init(&cal, &c->opts);
	n = compare_add_path(&cal, 0, dir);
	if (n < 0) {
		error("%s %s is not a directory", via, dir);
		goto out;
	}
	if (n == 0) {
		error("%s %s holds no run (a run directory, or a directory of "
		      "runs, made with zlb run or zlb batch --clock-elasticity)", via, dir);
		goto out;
	}
	compare_load_identities(&cal);
	device = cal.side[0].nr ? device_of(&cal.side[0].runs[0]) : NULL;
	if (!device || (odd = other_device(&cal, 1, device))) {
		error("%s %s: its runs do not all name one device in their "
		      "identity; read s on one GPU", via, dir);
		goto out;
	}
	if ((odd = other_device(c, 2, device))) {
		error("%s %s ran on %s, and run %s on %s: s is a kernel's on one "
		      "GPU; read it on the GPU the sides ran on", via, dir, device, odd->dir,
		      device_of(odd) ? device_of(odd) : "(no device recorded)");
		goto out;
	}
	if (compare_load_results(&cal))
		goto out;
	for (size_t i = 0; i < cal.nr_rows; i++)
		for (int k = 0; k < COMPARE_KINDS; k++) {
			struct calibrated e;

			read += calibrated_of(&cal.rows[i], k, &e);
		}
	if (!read && optional) {
		char *note = xstrfmt("clock elasticity: %s read none (%s; each row's "
				     "clock_elasticity_why in its results.jsonl says why): the "
				     "rounds are compared without it", dir, via);

		strvec_push(&c->notes, note);
		free(note);
		ret = 0;
		goto out;
	}
	if (!read) {
		error("%s %s: none of its rows read a clock elasticity (run it "
		      "with zlb run or zlb batch --clock-elasticity)", via, dir);
		goto out;
	}
	for (size_t i = 0; i < c->nr_rows; i++) {
		struct compare_row *row = &c->rows[i];
		const struct compare_row *from = compare_find_row(&cal, row->key);
		int took = 0;

		for (int k = 0; from && k < COMPARE_KINDS; k++) {
			struct calibrated e;

			if (!calibrated_of(from, k, &e))
				continue;
			for (int s = 0; s < 2; s++)
				for (size_t j = 0; j < row->side[s].r[k].nr; j++) {
					struct stats_sample_set *set = &row->side[s].r[k].set[j];

					if (set->elasticity_n)
						continue;
					set->elasticity = e.s;
					set->elasticity_se = e.se;
					set->elasticity_n = e.pairs;
					rounds++;
					took = 1;
				}
		}
		given += took;
	}
	{
		char *note = xstrfmt("clock elasticity: %zu round%s of %zu row%s took s from %s "
				     "(%s)", rounds, rounds == 1 ? "" : "s", given,
				     given == 1 ? "" : "s", dir, via);
		strvec_push(&c->notes, note);
		free(note);
	}
	free(c->elasticity_from);
	c->elasticity_from = xstrdup(dir);
	ret = (int)given;
out:
	compare_release(&cal);
	return ret;
}
