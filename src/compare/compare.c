/*
 * Over 700 lines, kept whole for now: loading a side's runs, pairing rows
 * and the per-row analysis share struct compare's private state, and
 * issue 13 moves them into src/compare/ as separate files (load, pair,
 * analyse); splitting them here first would be done twice.
 */
#include "compare/compare.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "lib/error.h"
#include "rundir/identity.h"
#include "lib/jsonfile.h"
#include "lib/paths.h"
#include "rundir/results_file.h"
#include "rundir/rundir.h"
#include "compare/stats_tests.h"
#include "rundir/markers.h"

const char *const compare_flagged_markers[] = {
	MARKER_DIRECT,
	MARKER_MEMCPY_NODES,
	MARKER_REPLAY_FALLBACK,
	MARKER_K_DIFFERS,
	MARKER_NO_KERNELS,
	NULL,
};

/* A graph without a kernel node measured nothing: no verdict at all. */
const char *const compare_excluding_markers[] = {
	MARKER_NO_KERNELS,
	NULL,
};

void compare_init(struct compare *c, const struct compare_opts *o)
{
	memset(c, 0, sizeof(*c));
	c->opts = *o;
	c->side[0].name = "A";
	c->side[1].name = "B";
	strvec_init(&c->caliber_problems);
	strvec_init(&c->warnings);
	strvec_init(&c->notes);
	c->caliber_fields = json_array();
}

static void rounds_release(struct compare_rounds *r)
{
	for (size_t i = 0; i < r->nr; i++)
		free((double *)r->set[i].x);
	free(r->set);
}

void compare_release(struct compare *c)
{
	for (int s = 0; s < 2; s++) {
		for (size_t i = 0; i < c->side[s].nr; i++) {
			struct compare_run *r = &c->side[s].runs[i];
			free(r->dir);
			json_decref(r->identity);
			free(r->identity_error);
		}
		free(c->side[s].runs);
	}
	for (size_t i = 0; i < c->nr_rows; i++) {
		struct compare_row *row = &c->rows[i];
		free(row->op);
		free(row->op_name);
		free(row->dtype);
		free(row->shape);
		free(row->key);
		for (int s = 0; s < 2; s++) {
			strvec_clear(&row->side[s].statuses);
			strvec_clear(&row->side[s].markers);
			strvec_clear(&row->side[s].timers);
			strvec_clear(&row->side[s].ks);
			for (int k = 0; k < COMPARE_KINDS; k++)
				rounds_release(&row->side[s].r[k]);
		}
	}
	free(c->rows);
	free(c->map);
	strvec_clear(&c->caliber_problems);
	strvec_clear(&c->warnings);
	strvec_clear(&c->notes);
	json_decref(c->caliber_fields);
	memset(c, 0, sizeof(*c));
}

/* ---- runs ---------------------------------------------------------------- */

static void add_run(struct compare_side *side, const char *dir)
{
	struct compare_run *r;

	if (side->nr == side->alloc) {
		side->alloc = side->alloc ? 2 * side->alloc : 4;
		side->runs = xrealloc(side->runs, side->alloc * sizeof(*side->runs));
	}
	r = &side->runs[side->nr++];
	memset(r, 0, sizeof(*r));
	r->dir = xstrdup(dir);
}

int compare_add_path(struct compare *c, int s, const char *path)
{
	struct strvec runs = STRVEC_INIT;
	int found;

	if (!is_dir(path))
		return -1;
	found = rundir_find(path, rundir_is_run, &runs);
	for (size_t i = 0; i < runs.nr; i++)
		add_run(&c->side[s], runs.v[i]);
	strvec_clear(&runs);
	return found;
}

const char *compare_duplicate_run(const struct compare *c)
{
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < c->side[s].nr; i++)
			for (int t = s; t < 2; t++)
				for (size_t j = t == s ? i + 1 : 0; j < c->side[t].nr; j++)
					if (!strcmp(c->side[s].runs[i].dir, c->side[t].runs[j].dir))
						return c->side[s].runs[i].dir;
	return NULL;
}

/* ---- identities and caliber --------------------------------------------- */

void compare_load_identities(struct compare *c)
{
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < c->side[s].nr; i++) {
			struct compare_run *r = &c->side[s].runs[i];
			int rc = identity_load(r->dir, &r->identity);

			r->identity_state = rc;
			if (rc < 0)
				r->identity_error = xstrdup(last_error());
			if (rc)
				r->identity = NULL;
		}
}

/*
 * The operator a run measured (its FlagGems package and test node, else its
 * op): runs of one operator are rounds of each other; two batches hold one
 * run per operator each, and their calibers pair operator by operator.
 */
static char *run_group(const struct compare_run *r)
{
	const json_t *prov = r->identity ? json_object_get(r->identity, "provenance") : NULL;
	const char *pkg = json_str(prov, "flaggems_package");
	const char *node = json_str(prov, "test_node");
	const char *op = r->identity ? json_str(r->identity, "op") : NULL;

	if (node)
		return xstrfmt("%s:%s", pkg ? pkg : "", node);
	return xstrdup(op ? op : path_basename(r->dir));
}

/* The op named in a run's identity, for messages. */
static const char *run_op(const struct compare_run *r)
{
	const char *op = r->identity ? json_str(r->identity, "op") : NULL;
	return op ? op : path_basename(r->dir);
}

/* Is r a run of operator group (-1: every run is)? groups_of() numbered them. */
static int in_group(const struct compare_run *r, int group)
{
	return group < 0 || r->group == group;
}

static const json_t *caliber_of(const struct compare_run *r)
{
	const json_t *cal = r->identity ? json_object_get(r->identity, "caliber") : NULL;
	return json_is_object(cal) ? cal : NULL;
}

/* The value of field in r's caliber as compact text; "(absent)" when missing. */
static char *caliber_text(const struct compare_run *r, const char *field)
{
	const json_t *v = json_object_get(caliber_of(r), field);

	if (!v)
		return xstrdup("(absent)");
	if (json_is_string(v))
		return xstrdup(json_string_value(v));
	return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
}

/* Distinct values of field over the side's runs (of operator group; -1: all) with a caliber. */
static void side_values(const struct compare_side *side, const char *field, int group,
			struct strvec *out)
{
	for (size_t i = 0; i < side->nr; i++) {
		char *t;

		if (!in_group(&side->runs[i], group) || !caliber_of(&side->runs[i]))
			continue;
		t = caliber_text(&side->runs[i], field);
		if (strvec_find(out, t) < 0)
			strvec_push(out, t);
		free(t);
	}
}

static void join(struct strbuf *sb, const struct strvec *v, const char *sep)
{
	for (size_t i = 0; i < v->nr; i++)
		strbuf_addf(sb, "%s%s", i ? sep : "", v->v[i]);
	if (!v->nr)
		strbuf_addstr(sb, "(no identity)");
}

static json_t *strvec_to_json(const struct strvec *v)
{
	json_t *a = json_array();

	for (size_t i = 0; i < v->nr; i++)
		json_array_append_new(a, json_string(v->v[i]));
	return a;
}

/*
 * Every caliber key any compared run recorded, in the order the runs wrote
 * them (A's first): the runs say what their caliber is (zlb run's is
 * run/run_caliber.c), and a key one run has and another lacks is a
 * difference like any other.
 */
static void caliber_keys(const struct compare *c, struct strvec *keys)
{
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < c->side[s].nr; i++) {
			const char *k;
			json_t *v;

			json_object_foreach((json_t *)caliber_of(&c->side[s].runs[i]), k, v)
				if (strvec_find(keys, k) < 0)
					strvec_push(keys, k);
		}
}

static void problem(struct compare *c, const char *field, const struct strvec *a,
		    const struct strvec *b, const char *text)
{
	json_t *f = json_object();

	strvec_push(&c->caliber_problems, text);
	json_object_set_new(f, "field", json_string(field));
	json_object_set_new(f, "a", strvec_to_json(a));
	json_object_set_new(f, "b", strvec_to_json(b));
	json_object_set_new(f, "text", json_string(text));
	json_array_append_new(c->caliber_fields, f);
}

/* A path as shown: relative to the current directory when under it. */
static const char *shown(const char *path, const char *cwd)
{
	size_t n = strlen(cwd);

	if (n && !strncmp(path, cwd, n) && path[n] == '/')
		return path + n + 1;
	return path;
}

/* The compared run a recorded path names: the same path, else the one run of that name. */
static const char *compared_run(const struct compare *c, const char *path)
{
	const char *by_name = NULL;
	char *abs = path_absolute(path);	/* a relative path: from here */
	size_t named = 0;

	for (int t = 0; t < 2; t++)
		for (size_t j = 0; j < c->side[t].nr; j++) {
			const char *dir = c->side[t].runs[j].dir;

			if (!strcmp(path, dir) || !strcmp(abs, dir)) {
				free(abs);
				return dir;
			}
			if (!strcmp(path_basename(path), path_basename(dir))) {
				by_name = dir;
				named++;
			}
		}
	free(abs);
	return named == 1 ? by_name : NULL;
}

/*
 * Where each run's autotune configs came from: a recording run from its own
 * tuning, a replaying run from provenance.replay_from (matched to a
 * compared run by path, else by directory name, since runs get copied
 * between machines). The A/B design is one source for every run of an
 * operator: A1 records, B (and further A rounds) replay A1. Refused by name:
 * no run replays at all while both sides have runs (record-vs-record:
 * every run tuned itself). Warned: several sources, or a source outside
 * the compared runs.
 */
struct autotune_sources {
	size_t recording[2], replaying[2], outside;
	struct strvec sources;
};

static void autotune_sources(const struct compare *c, int group,
			     struct autotune_sources *a)
{
	memset(a, 0, sizeof(*a));
	strvec_init(&a->sources);
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < c->side[s].nr; i++) {
			const struct compare_run *r = &c->side[s].runs[i];
			const char *mode, *from, *src = NULL;

			if (!in_group(r, group))
				continue;
			mode = json_str(caliber_of(r), "autotune_mode");
			if (!mode)
				continue;
			if (!strcmp(mode, "record")) {
				a->recording[s]++;
				src = r->dir;
			} else if (!strcmp(mode, "replay")) {
				a->replaying[s]++;
				from = json_str(json_object_get(r->identity, "provenance"), "replay_from");
				src = from ? compared_run(c, from) : NULL;
				if (!src) {
					src = from ? from : "(unknown)";
					a->outside++;
				}
			} else {
				continue;
			}
			if (strvec_find(&a->sources, src) < 0)
				strvec_push(&a->sources, src);
		}
}

static int record_vs_record(const struct autotune_sources *a)
{
	return a->recording[0] && a->recording[1] && !a->replaying[0] && !a->replaying[1];
}

#define RECORD_VS_RECORD "record-vs-record: both sides tuned themselves; configs may " \
	"differ, so a difference may be the autotuner's choice, not the compiler's. " \
	"Replay one from the other: record A, then run B with --replay-from A " \
	"(REPLAY_FROM; zlb batch --replay-root A)"

static void outside_warning(struct compare *c, size_t outside)
{
	char *t;

	if (!outside)
		return;
	t = xstrfmt("%zu replaying run%s replay%s configs recorded by a run that is not "
		    "compared here (provenance.replay_from)", outside, outside == 1 ? "" : "s",
		    outside == 1 ? "s" : "");
	strvec_push(&c->warnings, t);
	free(t);
}

/* "a, b, c (+N more)": the first few operators of a list, for one line. */
static void name_ops(struct strbuf *sb, const struct strvec *ops)
{
	size_t shown_max = 5;

	for (size_t i = 0; i < ops->nr && i < shown_max; i++)
		strbuf_addf(sb, "%s%s", i ? ", " : "", ops->v[i]);
	if (ops->nr > shown_max)
		strbuf_addf(sb, " (+%zu more)", ops->nr - shown_max);
}

static void check_autotune_sources(struct compare *c, const struct strvec *groups,
				   const struct strvec *group_ops)
{
	struct strvec none = STRVEC_INIT, rvr = STRVEC_INIT, several = STRVEC_INIT;
	struct strbuf sb = STRBUF_INIT;
	struct autotune_sources a;
	size_t outside = 0;
	char cwd[4096];

	if (!getcwd(cwd, sizeof(cwd)))
		cwd[0] = '\0';
	if (!groups) {
		autotune_sources(c, -1, &a);
		if (record_vs_record(&a)) {
			problem(c, "autotune_mode", &none, &none, "autotune_mode: " RECORD_VS_RECORD);
		} else if (a.sources.nr > 1) {
			strbuf_addf(&sb, "the runs' autotune configs come from %zu runs (",
				    a.sources.nr);
			for (size_t i = 0; i < a.sources.nr; i++)
				strbuf_addf(&sb, "%s%s", i ? ", " : "", shown(a.sources.v[i], cwd));
			strbuf_addstr(&sb, "): a row may differ between rounds by the autotuner's "
				      "choice; replay one recording in every other run (A1 records, "
				      "A2.. and B --replay-from A1)");
			strvec_push(&c->warnings, sb.buf);
		}
		outside_warning(c, a.outside);
		strvec_clear(&a.sources);
		strbuf_release(&sb);
		return;
	}
	/* Several operators (two batches): the rule holds per operator. */
	for (size_t g = 0; g < groups->nr; g++) {
		autotune_sources(c, (int)g, &a);
		if (record_vs_record(&a))
			strvec_push(&rvr, group_ops->v[g]);
		else if (a.sources.nr > 1)
			strvec_push(&several, group_ops->v[g]);
		outside += a.outside;
		strvec_clear(&a.sources);
	}
	if (rvr.nr) {
		strbuf_addf(&sb, "autotune_mode: %zu of %zu operators are ", rvr.nr, groups->nr);
		strbuf_addstr(&sb, RECORD_VS_RECORD);
		strbuf_addstr(&sb, ": ");
		name_ops(&sb, &rvr);
		problem(c, "autotune_mode", &none, &none, sb.buf);
	}
	if (several.nr) {
		strbuf_reset(&sb);
		strbuf_addf(&sb, "for %zu operator%s the runs' autotune configs come from several "
			    "runs (", several.nr, several.nr == 1 ? "" : "s");
		name_ops(&sb, &several);
		strbuf_addstr(&sb, "): a row may differ by the autotuner's choice; replay one "
			      "recording per operator (zlb batch --replay-root A)");
		strvec_push(&c->warnings, sb.buf);
	}
	outside_warning(c, outside);
	strvec_clear(&rvr);
	strvec_clear(&several);
	strbuf_release(&sb);
}

/*
 * The operators of both sides (run_group keys, and their op for messages),
 * first seen first; each run gets its operator's index, once, so that the
 * per-operator checks below cost a comparison of integers per run.
 */
static void groups_of(struct compare *c, struct strvec *groups, struct strvec *ops)
{
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < c->side[s].nr; i++) {
			struct compare_run *r = &c->side[s].runs[i];
			char *g = run_group(r);

			r->group = strvec_find(groups, g);
			if (r->group < 0) {
				r->group = (int)groups->nr;
				strvec_push(groups, g);
				strvec_push(ops, run_op(r));
			}
			free(g);
		}
}

/*
 * Does field differ for operator group (-1: all runs)? Fills va, vb with each
 * side's distinct values. autotune_mode may mix record and replay (where
 * the configs came from is checked apart); only a run that does not say is
 * a problem there.
 */
static int field_differs(const struct compare *c, const char *field, int group,
			 struct strvec *va, struct strvec *vb)
{
	struct strvec all = STRVEC_INIT;
	int differs;

	side_values(&c->side[0], field, group, va);
	side_values(&c->side[1], field, group, vb);
	for (size_t i = 0; i < va->nr; i++)
		strvec_push(&all, va->v[i]);
	for (size_t i = 0; i < vb->nr; i++)
		if (strvec_find(&all, vb->v[i]) < 0)
			strvec_push(&all, vb->v[i]);
	if (!strcmp(field, "autotune_mode"))
		differs = all.nr > 1 && strvec_find(&all, "(absent)") >= 0;
	else
		differs = all.nr > 1;
	strvec_clear(&all);
	return differs;
}

/* "A=x | y B=z (differs between A's rounds)" */
static void describe_values(struct strbuf *sb, const struct strvec *va, const struct strvec *vb)
{
	strbuf_addstr(sb, "A=");
	join(sb, va, " | ");
	strbuf_addstr(sb, " B=");
	join(sb, vb, " | ");
	if (va->nr > 1 && vb->nr > 1)
		strbuf_addstr(sb, " (differs between A's rounds and between B's)");
	else if (va->nr > 1 || vb->nr > 1)
		strbuf_addf(sb, " (differs between %s's rounds)", va->nr > 1 ? "A" : "B");
}

/*
 * Several operators: each differing (field, values) once, with the
 * operators it holds for, so a thousand-operator batch whose device
 * differs gives one line, not a thousand.
 */
static void check_field_by_operator(struct compare *c, const char *field,
				    const struct strvec *groups, const struct strvec *group_ops)
{
	struct strvec texts = STRVEC_INIT;
	struct strvec *ops = NULL;
	struct strvec *a_vals = NULL, *b_vals = NULL;

	for (size_t g = 0; g < groups->nr; g++) {
		struct strvec va = STRVEC_INIT, vb = STRVEC_INIT;
		struct strbuf t = STRBUF_INIT;
		int k;

		if (field_differs(c, field, (int)g, &va, &vb)) {
			describe_values(&t, &va, &vb);
			k = strvec_find(&texts, t.buf);
			if (k < 0) {
				k = (int)texts.nr;
				strvec_push(&texts, t.buf);
				ops = xrealloc(ops, texts.nr * sizeof(*ops));
				a_vals = xrealloc(a_vals, texts.nr * sizeof(*a_vals));
				b_vals = xrealloc(b_vals, texts.nr * sizeof(*b_vals));
				strvec_init(&ops[k]);
				a_vals[k] = va;
				b_vals[k] = vb;
				strvec_init(&va);
				strvec_init(&vb);
			}
			strvec_push(&ops[k], group_ops->v[g]);
		}
		strbuf_release(&t);
		strvec_clear(&va);
		strvec_clear(&vb);
	}
	for (size_t k = 0; k < texts.nr; k++) {
		struct strbuf sb = STRBUF_INIT;

		strbuf_addf(&sb, "%s: %s for %zu of %zu operators: ", field, texts.v[k],
			    ops[k].nr, groups->nr);
		name_ops(&sb, &ops[k]);
		problem(c, field, &a_vals[k], &b_vals[k], sb.buf);
		strbuf_release(&sb);
		strvec_clear(&ops[k]);
		strvec_clear(&a_vals[k]);
		strvec_clear(&b_vals[k]);
	}
	free(ops);
	free(a_vals);
	free(b_vals);
	strvec_clear(&texts);
}

size_t compare_check_caliber(struct compare *c)
{
	struct strvec keys = STRVEC_INIT, none = STRVEC_INIT, groups = STRVEC_INIT,
		      group_ops = STRVEC_INIT;
	int by_operator;
	struct strbuf sb = STRBUF_INIT;

	/* runs whose caliber cannot be known */
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < c->side[s].nr; i++) {
			const struct compare_run *r = &c->side[s].runs[i];

			strbuf_reset(&sb);
			if (r->identity_state == 1)
				strbuf_addf(&sb, "identity: %s run %s has no %s; its caliber is unknown",
					    c->side[s].name, r->dir, IDENTITY_FILE);
			else if (r->identity_state < 0)
				strbuf_addf(&sb, "identity: %s run %s: %s", c->side[s].name, r->dir,
					    r->identity_error ? r->identity_error : "unreadable");
			else if (!caliber_of(r))
				strbuf_addf(&sb, "identity: %s run %s: %s has no caliber section",
					    c->side[s].name, r->dir, IDENTITY_FILE);
			else
				continue;
			problem(c, "identity", &none, &none, sb.buf);
		}

	caliber_keys(c, &keys);
	groups_of(c, &groups, &group_ops);
	by_operator = c->by_operator = groups.nr > 1;
	for (size_t k = 0; k < keys.nr; k++) {
		const char *field = keys.v[k];
		struct strvec va = STRVEC_INIT, vb = STRVEC_INIT;

		if (by_operator) {
			check_field_by_operator(c, field, &groups, &group_ops);
			continue;
		}
		if (field_differs(c, field, -1, &va, &vb)) {
			strbuf_reset(&sb);
			strbuf_addf(&sb, "%s: ", field);
			describe_values(&sb, &va, &vb);
			problem(c, field, &va, &vb, sb.buf);
		}
		strvec_clear(&va);
		strvec_clear(&vb);
	}

	check_autotune_sources(c, by_operator ? &groups : NULL, &group_ops);
	strvec_clear(&groups);
	strvec_clear(&group_ops);

	/* recording on a shared cache: the "tuning" may be an earlier run's cache */
	for (int s = 0; s < 2; s++) {
		struct strvec caches = STRVEC_INIT;

		for (size_t i = 0; i < c->side[s].nr; i++) {
			const json_t *cal = caliber_of(&c->side[s].runs[i]);
			const char *mode = json_str(cal, "autotune_mode");
			const char *cache = json_str(cal, "tuner_cache");

			if (mode && !strcmp(mode, "record") && cache && starts_with(cache, "shared(") &&
			    strvec_find(&caches, cache) < 0)
				strvec_push(&caches, cache);
		}
		for (size_t i = 0; i < caches.nr; i++) {
			strbuf_reset(&sb);
			strbuf_addf(&sb, "%s records autotune configs on a shared tuner cache (%s): "
				    "configs cached by earlier runs, possibly of the other build, "
				    "are reused instead of tuned; zlb run --isolate-tuner-cache "
				    "avoids this", c->side[s].name, caches.v[i]);
			strvec_push(&c->warnings, sb.buf);
		}
		strvec_clear(&caches);
	}

	/* runs that did not end cleanly: compared, but worth knowing */
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < c->side[s].nr; i++) {
			const struct compare_run *r = &c->side[s].runs[i];
			const char *st = r->identity ? json_str(r->identity, "status") : NULL;

			if (st && strcmp(st, "completed")) {
				strbuf_reset(&sb);
				strbuf_addf(&sb, "%s run %s has status '%s'", c->side[s].name, r->dir, st);
				strvec_push(&c->notes, sb.buf);
			}
		}
	strvec_clear(&keys);
	strbuf_release(&sb);
	c->warnings_early = c->warnings.nr;
	return c->caliber_problems.nr;
}

/* ---- results --------------------------------------------------------------- */

static uint64_t key_hash(const char *key)
{
	return XXH3_64bits(key, strlen(key));
}

static void map_grow(struct compare *c)
{
	size_t cap = c->map_cap ? 2 * c->map_cap : 256;
	size_t *m = xmalloc(cap * sizeof(*m));

	for (size_t i = 0; i < cap; i++)
		m[i] = SIZE_MAX;
	for (size_t r = 0; r < c->nr_rows; r++) {
		size_t h = key_hash(c->rows[r].key) & (cap - 1);
		while (m[h] != SIZE_MAX)
			h = (h + 1) & (cap - 1);
		m[h] = r;
	}
	free(c->map);
	c->map = m;
	c->map_cap = cap;
}

/* The row of key, created when new. */
static struct compare_row *row_for(struct compare *c, const char *key, int *created)
{
	size_t h;
	struct compare_row *row;

	*created = 0;
	if (2 * (c->nr_rows + 1) > c->map_cap)
		map_grow(c);
	h = key_hash(key) & (c->map_cap - 1);
	while (c->map[h] != SIZE_MAX) {
		if (!strcmp(c->rows[c->map[h]].key, key))
			return &c->rows[c->map[h]];
		h = (h + 1) & (c->map_cap - 1);
	}
	if (c->nr_rows == c->alloc_rows) {
		c->alloc_rows = c->alloc_rows ? 2 * c->alloc_rows : 64;
		c->rows = xrealloc(c->rows, c->alloc_rows * sizeof(*c->rows));
	}
	row = &c->rows[c->nr_rows];
	memset(row, 0, sizeof(*row));
	row->key = xstrdup(key);
	for (int s = 0; s < 2; s++) {
		strvec_init(&row->side[s].statuses);
		strvec_init(&row->side[s].markers);
		strvec_init(&row->side[s].timers);
		strvec_init(&row->side[s].ks);
	}
	c->map[h] = c->nr_rows++;
	*created = 1;
	return row;
}

static void push_round(struct compare_rounds *r, const struct stats_sample_set *set)
{
	if (r->nr == r->alloc) {
		r->alloc = r->alloc ? 2 * r->alloc : 4;
		r->set = xrealloc(r->set, r->alloc * sizeof(*r->set));
	}
	r->set[r->nr++] = *set;
}

/*
 * What the measurement says of its own placement drift: placement_sd over
 * 1 + placement_probes graphs (docs/protocol.md section 3). Anything else
 * (absent, null, negative, no probe) leaves the set without one.
 */
static void measurement_placement(const json_t *meas, struct stats_sample_set *set)
{
	const json_t *sd = json_object_get(meas, "placement_sd");
	const json_t *probes = json_object_get(meas, "placement_probes");

	set->place_sd = 0;
	set->place_df = 0;
	if (json_is_number(sd) && json_number_value(sd) >= 0 && isfinite(json_number_value(sd)) &&
	    json_is_integer(probes) && json_integer_value(probes) > 0) {
		set->place_sd = json_number_value(sd);
		set->place_df = (size_t)json_integer_value(probes);
	}
}

static void add_unique(struct strvec *v, const char *s)
{
	if (s && *s && strvec_find(v, s) < 0)
		strvec_push(v, s);
}

static void collect_markers(struct strvec *out, const json_t *markers)
{
	size_t i;
	json_t *m;

	json_array_foreach((json_t *)markers, i, m)
		add_unique(out, json_string_value(m));
}

/*
 * The samples of one measurement: samples_ms when present (the engine's raw
 * per-call times, *strata the placements they ran on round-robin when every
 * one is a number), else the centre_ms (median_ms before it existed), else
 * the row's latency (one value).
 */
static size_t measurement_samples(const json_t *meas, const json_t *row, const char *latency_key,
				  double **out, size_t *strata)
{
	const json_t *s = json_object_get(meas, "samples_ms");
	const json_t *p = json_object_get(meas, "placements");
	size_t n = json_array_size(s), k = 0;
	double v;

	*strata = 0;
	if (n) {
		*out = xmalloc(n * sizeof(double));
		for (size_t i = 0; i < n; i++) {
			json_t *e = json_array_get(s, i);
			if (json_is_number(e))
				(*out)[k++] = json_number_value(e);
		}
		/* A gap would put later samples on the wrong placement. */
		if (k == n && json_is_integer(p) && json_integer_value(p) > 1)
			*strata = (size_t)json_integer_value(p);
		if (k)
			return k;
		free(*out);
	}
	v = json_num(meas, "centre_ms", NAN);
	if (!isfinite(v))
		v = json_num(meas, "median_ms", NAN);
	if (!isfinite(v))
		v = json_num(row, latency_key, NAN);
	if (!isfinite(v) || v <= 0) {
		*out = NULL;
		return 0;
	}
	*out = xmalloc(sizeof(double));
	(*out)[0] = v;
	return 1;
}

struct load_ctx {
	struct compare *c;
	int side;
	size_t run;		/* index in the side */
	struct compare_run *r;
	struct strvec fallback_nodes;	/* nodeids with AUTOTUNE_REPLAY_FALLBACK events */
	int fallback_all;		/* one without a nodeid: every row of the run */
};

/*
 * AUTOTUNE_REPLAY_FALLBACK is an event (events.jsonl), tied to the test
 * node that was running, not to a row: every row of that node is flagged
 * (which of its shapes used the point cannot be told), every row of the run
 * when the event has no node (a recorded tuner that never appeared).
 */
static int load_event(void *vctx, json_t *obj, size_t lineno)
{
	struct load_ctx *ctx = vctx;
	const char *ev = json_str(obj, "event"), *node = json_str(obj, "nodeid");

	if (!ev || strcmp(ev, MARKER_REPLAY_FALLBACK))
		return 0;
	ctx->r->replay_fallbacks++;
	if (!node || !*node)
		ctx->fallback_all = 1;
	else if (strvec_find(&ctx->fallback_nodes, node) < 0)
		strvec_push(&ctx->fallback_nodes, node);
	(void)lineno;
	return 0;
}

static const char *latency_key[COMPARE_KINDS] = { "latency_ms", "latency_base_ms" };
static const char *kind_name[COMPARE_KINDS] = { "gems", "torch" };

static int load_row(void *vctx, json_t *obj, size_t lineno)
{
	struct load_ctx *ctx = vctx;
	struct results_row rr;
	struct strbuf key = STRBUF_INIT;
	struct compare_row *row;
	int created;

	if (results_row_get(obj, &rr))
		return 0;
	strbuf_addf(&key, "%s%c%s%c%s%c%s", rr.op, 0x1f, rr.op_name, 0x1f, rr.dtype, 0x1f,
		    rr.shape);
	row = row_for(ctx->c, key.buf, &created);
	strbuf_release(&key);
	if (created) {
		row->op = xstrdup(rr.op);
		row->op_name = xstrdup(rr.op_name);
		row->dtype = xstrdup(rr.dtype);
		row->shape = xstrdup(rr.shape);
	}
	ctx->r->rows++;
	if (row->side[ctx->side].last_run == ctx->run + 1) {
		ctx->r->duplicates++;	/* the same key twice in one run: keep the first */
		return 0;
	}
	row->side[ctx->side].last_run = ctx->run + 1;
	row->side[ctx->side].present++;
	add_unique(&row->side[ctx->side].statuses, rr.status ? rr.status : "(none)");
	collect_markers(&row->side[ctx->side].markers, json_object_get(obj, "markers"));
	if (ctx->fallback_all || (rr.nodeid &&
				  strvec_find(&ctx->fallback_nodes, rr.nodeid) >= 0))
		add_unique(&row->side[ctx->side].markers, MARKER_REPLAY_FALLBACK);
	if (!rr.status || strcmp(rr.status, "SUCCESS"))
		return 0;
	row->side[ctx->side].success++;
	for (int k = 0; k < COMPARE_KINDS; k++) {
		const json_t *meas = k == COMPARE_GEMS ? rr.gems : rr.torch;
		struct stats_sample_set set;
		double *x;
		size_t n, strata;

		if (meas) {
			const json_t *k_json = json_object_get(meas, "calls_per_replay");

			results_meas_markers(meas, &row->side[ctx->side].markers);
			add_unique(&row->side[ctx->side].timers, json_str(meas, "timer"));
			if (json_is_integer(k_json)) {
				char *kk = xstrfmt("%s=%lld", kind_name[k],
						   (long long)json_integer_value(k_json));
				add_unique(&row->side[ctx->side].ks, kk);
				free(kk);
			}
		}
		n = measurement_samples(meas, obj, latency_key[k], &x, &strata);
		if (!n)
			continue;
		set.x = x;
		set.n = n;
		set.strata = strata;
		measurement_placement(meas, &set);
		push_round(&row->side[ctx->side].r[k], &set);
	}
	(void)lineno;
	return 0;
}

int compare_load_results(struct compare *c)
{
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < c->side[s].nr; i++) {
			struct compare_run *r = &c->side[s].runs[i];
			char *path = path_join(r->dir, EVENTS_FILE);
			struct load_ctx ctx = { c, s, i, r, STRVEC_INIT, 0 };
			size_t skipped;
			int rc = jsonl_each(path, load_event, &ctx, &skipped);

			free(path);
			path = path_join(r->dir, RESULTS_FILE);
			if (rc >= 0)
				rc = jsonl_each(path, load_row, &ctx, &r->skipped_lines);
			free(path);
			strvec_clear(&ctx.fallback_nodes);
			if (rc < 0)
				return -1;
			r->has_results = rc == 0;
			if (r->replay_fallbacks) {
				char *w = xstrfmt("%s run %s: %zu autotune point%s could not be "
						  "replayed (AUTOTUNE_REPLAY_FALLBACK) and tuned live; "
						  "the rows of %s test%s are flagged", c->side[s].name,
						  path_basename(r->dir), r->replay_fallbacks,
						  r->replay_fallbacks == 1 ? "" : "s",
						  ctx.fallback_all ? "every" : "its",
						  ctx.fallback_all ? "" : "s");
				strvec_push(&c->warnings, w);
				free(w);
			}
		}
	return 0;
}

/* ---- analysis -------------------------------------------------------------- */

static int has_marker_of(const char *const *list, const struct strvec *m)
{
	for (const char *const *f = list; *f; f++)
		if (strvec_find(m, *f) >= 0)
			return 1;
	return 0;
}

/*
 * Graph-timed rows whose sides captured different numbers of calls per
 * replay (K). K follows from each process's estimate of a call's cost, so
 * a call near a power-of-two boundary can get another K in another run,
 * and for ~1 us kernels K alone moves the per-call time: another caliber.
 */
static void mark_k_difference(struct compare_row *row)
{
	struct strvec *a = &row->side[0].ks, *b = &row->side[1].ks;
	int same = a->nr == b->nr;

	if (!a->nr || !b->nr)
		return;
	strvec_sort(a);
	strvec_sort(b);
	for (size_t i = 0; same && i < a->nr; i++)
		same = !strcmp(a->v[i], b->v[i]);
	if (same)
		return;
	add_unique(&row->side[0].markers, MARKER_K_DIFFERS);
	add_unique(&row->side[1].markers, MARKER_K_DIFFERS);
}

void compare_analyse(struct compare *c)
{
	double *p = xmalloc((c->nr_rows ? c->nr_rows : 1) * sizeof(double));
	double *q = xmalloc((c->nr_rows ? c->nr_rows : 1) * sizeof(double));
	size_t *idx = xmalloc((c->nr_rows ? c->nr_rows : 1) * sizeof(size_t));

	for (size_t i = 0; i < c->nr_rows; i++) {
		struct compare_row *row = &c->rows[i];
		int in_a = row->side[0].present > 0, in_b = row->side[1].present > 0;

		mark_k_difference(row);
		row->fallback = has_marker_of(compare_flagged_markers, &row->side[0].markers) ||
				has_marker_of(compare_flagged_markers, &row->side[1].markers);
		row->excluded = has_marker_of(compare_excluding_markers, &row->side[0].markers) ||
				has_marker_of(compare_excluding_markers, &row->side[1].markers);
		if (!in_a || !in_b) {
			row->unpaired_reason = in_a ? "only in A" : "only in B";
			*(in_a ? &c->only_a : &c->only_b) += 1;
			continue;
		}
		if (!row->side[0].success || !row->side[1].success) {
			row->unpaired_reason = !row->side[0].success && !row->side[1].success ?
				"not SUCCESS in A nor in B" :
				!row->side[0].success ? "not SUCCESS in A" : "not SUCCESS in B";
			c->not_success++;
			continue;
		}
		row->paired = 1;
		c->paired++;
		c->fallback_rows += row->fallback;
		c->excluded_rows += row->excluded;
		for (int k = 0; k < COMPARE_KINDS; k++) {
			struct stats_cmp_opts so = STATS_CMP_OPTS_INIT;
			struct compare_rounds *a = &row->side[0].r[k], *b = &row->side[1].r[k];

			if (!a->nr || !b->nr)
				continue;
			so.confidence = c->opts.confidence;
			so.drift_floor = c->opts.drift_floor;
			so.nboot = c->opts.nboot;
			so.seed = stats_mix64(c->opts.seed ^ key_hash(row->key) ^ (uint64_t)k);
			if (stats_compare(a->set, a->nr, b->set, b->nr, &so, &row->res[k]))
				continue;
			row->has[k] = 1;
			if (row->res[k].ka == 1 || row->res[k].kb == 1)
				c->single_round_rows = 1;
		}
	}
	/* Benjamini-Hochberg per kind over the rows not excluded, then verdicts */
	for (int k = 0; k < COMPARE_KINDS; k++) {
		size_t m = 0;

		for (size_t i = 0; i < c->nr_rows; i++)
			if (c->rows[i].excluded)
				c->rows[i].q[k] = NAN;
			else if (c->rows[i].has[k]) {
				idx[m] = i;
				p[m++] = c->rows[i].res[k].p;
			}
		stats_bh_adjust(p, m, q);
		for (size_t j = 0; j < m; j++) {
			struct compare_row *row = &c->rows[idx[j]];

			row->q[k] = q[j];
			row->verdict[k] = stats_verdict(&row->res[k], q[j], c->opts.fdr,
							c->opts.threshold);
			c->counts[k].n[row->verdict[k]]++;
			c->counts[k].compared++;
		}
	}
	c->regression = c->counts[COMPARE_GEMS].n[STATS_SLOWER] > 0;
	free(p);
	free(q);
	free(idx);
}

size_t compare_row_runs(const struct compare *c, int s, const struct compare_row *row)
{
	size_t n = 0;

	if (!c->by_operator)
		return c->side[s].nr;
	for (size_t i = 0; i < c->side[s].nr; i++)
		if (row->op && !strcmp(run_op(&c->side[s].runs[i]), row->op))
			n++;
	return n;
}
