/*
 * An A/B page from directories (report_ab.h): the comparison made here
 * through the compare library, as zlb compare and zlb ab make it, then
 * the IR of each operator measured on both sides.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare/compare.h"
#include "compare/compare_report.h"
#include "lib/error.h"
#include "lib/jsonfile.h"
#include "lib/paths.h"
#include "report/report_ab.h"
#include "report/report_safe.h"
#include "rundir/exit_codes.h"

/*
 * Where an A/B directory's comparison took its clock elasticity from
 * (compare.json settings.elasticity_from), taken again only when it lies
 * inside the A/B directory (zlb ab --calibrate: its recording R) and holds
 * no link out of it: a path read from a file leads nowhere else. A path
 * under the directory where zlb ab wrote it (ab.json's ab_dir) is read
 * under ab_dir, so that a moved or copied A/B still finds its R. Returns
 * that path (fresh), or NULL, with a warning naming what was left out.
 */
static char *ab_elasticity_from(const char *ab_dir, const json_t *ab, const char *given)
{
	const char *was = ab ? json_str(ab, "ab_dir") : NULL;
	char root[PATH_MAX], at[PATH_MAX], *moved = NULL;
	size_t n;
	int inside;

	if (!given)
		return NULL;
	if (was && (n = strlen(was)) && !strncmp(given, was, n) && given[n] == '/')
		moved = path_join(ab_dir, given + n + 1);
	inside = realpath(ab_dir, root) && realpath(moved ? moved : given, at) &&
		 (n = strlen(root)) && !strncmp(at, root, n) && at[n] == '/' &&
		 !report_check_tree(at, 4);
	free(moved);
	if (inside)
		return xstrdup(at);
	warning("the A/B's comparison took the clock elasticity of %s, which is not in %s: "
		"the page compares without it; give --elasticity-from %s to show zlb ab's "
		"verdicts", given, ab_dir, given);
	return NULL;
}

/*
 * An A/B directory's own settings (its compare.json), so the page shows
 * the verdicts zlb ab printed. Only numbers in their ranges are taken;
 * anything else keeps compare's default. *elast: where its rounds took s
 * as compare.json says (fresh), or NULL.
 */
static void ab_settings(const char *ab_dir, struct compare_opts *opts, char **elast)
{
	char *p = path_join(ab_dir, COMPARE_JSON);
	json_t *doc = NULL, *set;
	double v;

	if (!json_read_file(p, &doc) && (set = json_object_get(doc, "settings"))) {
		v = json_number_value(json_object_get(set, "threshold"));
		if (v >= 0 && v < 1)
			opts->threshold = v;
		v = json_number_value(json_object_get(set, "fdr"));
		if (v > 0 && v < 1)
			opts->fdr = v;
		v = json_number_value(json_object_get(set, "drift_floor"));
		if (v >= 0 && v < 1)
			opts->drift_floor = v;
		v = json_number_value(json_object_get(set, "confidence"));
		if (v > 0 && v < 1)
			opts->confidence = v;
		if (json_is_integer(json_object_get(set, "bootstrap"))) {
			json_int_t n = json_integer_value(json_object_get(set, "bootstrap"));
			if (n == 0 || (n >= 100 && n <= 10000000))
				opts->nboot = (unsigned)n;
		}
		if (json_is_integer(json_object_get(set, "seed")) &&
		    json_integer_value(json_object_get(set, "seed")) >= 0)
			opts->seed = (uint64_t)json_integer_value(json_object_get(set, "seed"));
		if (json_str(set, "elasticity_from"))
			*elast = xstrdup(json_str(set, "elasticity_from"));
	}
	json_decref(doc);
	free(p);
}

/* The operator of a run entry of compare.json: its op, else its directory's name. */
static const char *run_op(const json_t *run)
{
	const char *op = json_str(run, "op"), *dir = json_str(run, "dir");

	return op ? op : dir ? path_basename(dir) : NULL;
}

/* Per operator on both sides, the IR of its first run on each. */
static void pair_ir(struct report_ab *m, const char *link_base)
{
	size_t na = json_array_size(m->runs[0]), i;
	struct strvec seen = STRVEC_INIT;

	m->ir = xcalloc(na + 1, sizeof(*m->ir));
	for (i = 0; i < na; i++) {
		const json_t *ra = json_array_get(m->runs[0], i), *rb;
		const char *op = run_op(ra), *dir_b = NULL;
		size_t j;

		if (!op || strvec_find(&seen, op) >= 0 || !json_str(ra, "dir"))
			continue;
		json_array_foreach(m->runs[1], j, rb) {
			const char *ob = run_op(rb);
			if (ob && !strcmp(ob, op) && json_str(rb, "dir")) {
				dir_b = json_str(rb, "dir");
				break;
			}
		}
		if (!dir_b)
			continue;
		strvec_push(&seen, op);
		report_ir_pair(&m->ir[m->nr_ir++], op, json_str(ra, "dir"), dir_b, link_base);
	}
	strvec_clear(&seen);
}

/*
 * Step by step as compare_run(), without its terminal text. elast: the
 * runs whose s the rounds without one take (via: how it was named;
 * optional: none read is a note), or NULL.
 */
static int compare_sides(struct compare *c, const char *const *sides, const char *const *shown,
			 int allow, const char *elast, const char *via, int optional)
{
	for (int s = 0; s < 2; s++) {
		int n = compare_add_path(c, s, sides[s]);
		if (n <= 0) {
			error(n < 0 ? "%s: '%s' is not a directory" :
			      "%s: '%s' is not a run directory (no run_identity.json or "
			      "results.jsonl) and holds none", s ? "B" : "A", shown[s]);
			return ZLB_EXIT_NO_DATA;
		}
	}
	if (compare_duplicate_run(c)) {
		error("run '%s' is on both sides; give two different runs or batches",
		      compare_duplicate_run(c));
		return ZLB_EXIT_NO_DATA;
	}
	compare_load_identities(c);
	if (compare_check_caliber(c) && !allow) {
		struct strbuf sb = STRBUF_INIT;
		for (size_t i = 0; i < c->caliber_problems.nr; i++)
			strbuf_addf(&sb, "\n  %s", c->caliber_problems.v[i]);
		error("the runs were not measured the same way, so a report would compare "
		      "unlike things:%s\n--allow-caliber-mismatch reports anyway, with these "
		      "differences shown at the top", sb.buf);
		strbuf_release(&sb);
		return ZLB_EXIT_CALIBER;
	}
	if (compare_load_results(c))
		return ZLB_EXIT_NO_DATA;
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < c->side[s].nr; i++)
			if (!c->side[s].runs[i].has_results) {
				error("%s: run %s has no results.jsonl: it measured nothing to "
				      "compare", s ? "B" : "A", c->side[s].runs[i].dir);
				return ZLB_EXIT_NO_DATA;
			}
	if (elast && compare_take_elasticity(c, elast, via, optional) < 0)
		return ZLB_EXIT_USAGE;
	compare_analyse(c);
	return ZLB_EXIT_OK;
}

int report_ab_build(const char *ab_dir, const char *const *paths,
		    const struct report_opts *o, struct strbuf *html)
{
	struct compare_opts opts = COMPARE_OPTS_INIT;
	struct compare c;
	struct report_ab m;
	struct strbuf result = STRBUF_INIT;
	char *sides[2] = { NULL, NULL }, *elast = NULL;
	const char *shown[2];
	json_t *doc = NULL, *ab = NULL;
	int rc, code;

	if (ab_dir) {
		char *p = path_join(ab_dir, "ab.json"), *said = NULL;

		if (json_read_file(p, &ab) < 0)
			ab = NULL;	/* the page goes without the A/B's own story */
		free(p);
		ab_settings(ab_dir, &opts, &said);
		if (!o->elasticity_from)
			elast = ab_elasticity_from(ab_dir, ab, said);
		free(said);
		sides[0] = path_join(ab_dir, "A");
		sides[1] = path_join(ab_dir, "B");
	} else {
		sides[0] = xstrdup(paths[0]);
		sides[1] = xstrdup(paths[1]);
	}
	shown[0] = ab_dir ? sides[0] : paths[0];
	shown[1] = ab_dir ? sides[1] : paths[1];
	if (o->threshold >= 0)
		opts.threshold = o->threshold;
	for (int s = 0; s < 2; s++)
		if (report_check_tree(sides[s], 4)) {
			free(sides[0]);
			free(sides[1]);
			free(elast);
			json_decref(ab);
			return ZLB_EXIT_NO_DATA;
		}

	compare_init(&c, &opts);
	if (o->elasticity_from)
		rc = compare_sides(&c, (const char *const *)sides, shown, o->allow_caliber,
				   o->elasticity_from, "--elasticity-from", 0);
	else
		rc = compare_sides(&c, (const char *const *)sides, shown, o->allow_caliber,
				   elast, "the A/B's own", 1);
	if (rc)
		goto out;
	code = compare_render_result(&c, &result, 0);
	strbuf_rtrim(&result);
	doc = compare_to_json(&c, o->allow_caliber, code, NULL);
	if (report_ab_load(&m, doc)) {
		rc = ZLB_EXIT_NO_DATA;
		goto out;
	}
	m.names[0] = shown[0];
	m.names[1] = shown[1];
	m.result = result.buf;
	m.ab = json_is_object(ab) ? ab : NULL;
	pair_ir(&m, o->link_base);
	report_ab_render(&m, o, html);
	report_ab_release(&m);
out:
	json_decref(doc);
	json_decref(ab);
	compare_release(&c);
	strbuf_release(&result);
	free(sides[0]);
	free(sides[1]);
	free(elast);
	return rc;
}
