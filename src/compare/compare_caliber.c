/*
 * The identities of a comparison's runs and the caliber check: every key
 * any run recorded, per operator where the sides hold several, and where
 * each run's autotune configs came from.
 */
#include "compare/compare.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "compare/compare_int.h"
#include "compare/stats_tests.h"
#include "lib/error.h"
#include "lib/jsonfile.h"
#include "lib/paths.h"
#include "rundir/identity.h"
#include "rundir/markers.h"
#include "rundir/results_file.h"
#include "rundir/rundir.h"

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
const char *compare_run_op(const struct compare_run *r)
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

/*
 * Caliber keys added after runs were recorded without them, and what their
 * absence meant: every run before them ran that way. Any other missing key
 * is "(absent)" and differs from every value.
 */
static const struct { const char *field, *then; } implied[] = {
	{ "isolation", "process" },   /* warm workers came later (zlb batch --isolation) */
	{ "preset", "full" },         /* presets came later (zlb run --preset) */
	/* Tuning probed as rows did: 3 unless --placement-probes said otherwise. */
	{ "tune_placement_probes", "3" },
	{ "tune_rule", "rows" },        /* configs were timed under the rows' rule */
	{ "mm_cluster_fix", "false" },  /* --mm-cluster-fix came later; off by default */
	{ "parallel_warmup_gpus", "1" },  /* the parallel sweep came later: one device */
	{ "sweep_conflicts", "0" },
	{ "power_duty", "0" },        /* --power-duty came later: sampled back to back */
	{ "power_settle_ms", "0" },   /* --power-settle came later: to the duty at once */
	{ "preload_ms", "0" },        /* --preload came later: sampled straight after the spin */
	{ "preload_steady", "0" },    /* --preload-steady came later: the whole preload */
	{ "clock_elasticity", "false" },  /* --clock-elasticity came later; off by default */
	{ NULL, NULL },
};

/* The value of field in r's caliber as compact text; "(absent)" when missing. */
static char *caliber_text(const struct compare_run *r, const char *field)
{
	const json_t *v = json_object_get(caliber_of(r), field);

	if (!v && caliber_of(r))
		for (size_t i = 0; implied[i].field; i++)
			if (!strcmp(implied[i].field, field))
				return xstrdup(implied[i].then);
	if (!v)
		return xstrdup("(absent)");
	if (json_is_string(v))
		return xstrdup(json_string_value(v));
	/* 15 digits: a decimal as given (0.97), not its binary neighbour (0.96999999999999997) */
	return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
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

/* Fields whose difference deserves its reason beside the values. */
static const struct { const char *field, *why; } field_reasons[] = {
	{ "preset", "a screening run is for triage, not for a verdict against a full one: "
		    "compare screen with screen, or measure both at full caliber" },
	{ "isolation", "a warm worker shares its CUDA context and allocator history between "
		       "operators: compare runs of one isolation" },
	{ NULL, NULL },
};

static void problem(struct compare *c, const char *field, const struct strvec *a,
		    const struct strvec *b, const char *text)
{
	json_t *f = json_object();
	struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, text);
	for (size_t i = 0; field_reasons[i].field; i++)
		if (!strcmp(field, field_reasons[i].field))
			strbuf_addf(&sb, " (%s)", field_reasons[i].why);
	text = sb.buf;
	strvec_push(&c->caliber_problems, text);
	json_object_set_new(f, "field", json_string(field));
	json_object_set_new(f, "a", json_strvec(a));
	json_object_set_new(f, "b", json_strvec(b));
	json_object_set_new(f, "text", json_string(text));
	json_array_append_new(c->caliber_fields, f);
	strbuf_release(&sb);
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
 * operator: one run records, every compared round replays it (zlb ab's R).
 * Refused by name: no run replays at all while both sides have runs
 * (record-vs-record: every run tuned itself). Warned: several sources, or a source outside
 * the compared runs where the runs' configs do not all come from it (two
 * replays of one recording kept apart, the sharpest A/B, are one source).
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

/*
 * One side is recordings only, the other replays only (so some run replays:
 * never record-vs-record): the one-round
 * "A records, B replays A". The recording's rows ran in a process that
 * tuned, the replays' in processes that did not, and that history reaches
 * the measurement itself: on an H100 (10 operators x 3 sizes, gpu10) the
 * recording's rows read up to 1% apart from three replays of it that
 * agreed within 0.1%, and its single-round A/A was SAME on 78-89% of gems
 * rows against 93% for replay-vs-replay. Not a caliber difference (the
 * configs are one), so a warning that says how to avoid it.
 */
static int record_vs_replay(const struct autotune_sources *a)
{
	for (int s = 0; s < 2; s++)
		if (a->recording[s] && !a->replaying[s] && a->replaying[!s] &&
		    !a->recording[!s])
			return 1;
	return 0;
}

#define RECORD_VS_REPLAY "a recording compared with its replays: the recording's rows " \
	"ran in a process that tuned and read up to 1% apart from replays that agree " \
	"with each other; for the sharpest verdicts compare replays only (replay the " \
	"recording on both sides: zlb run --replay-from REC, or zlb batch --replay-root " \
	"REC, for A and for B; zlb ab does so)"

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
	struct strvec rvp = STRVEC_INIT;
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
				      "choice; replay one recording in every compared run (R records, "
				      "A1.. and B1.. --replay-from R, as zlb ab does)");
			strvec_push(&c->warnings, sb.buf);
		}
		if (record_vs_replay(&a))
			strvec_push(&c->warnings, RECORD_VS_REPLAY);
		if (a.sources.nr > 1)
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
		if (record_vs_replay(&a))
			strvec_push(&rvp, group_ops->v[g]);
		if (a.sources.nr > 1)
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
	if (rvp.nr) {
		strbuf_reset(&sb);
		strbuf_addf(&sb, "for %zu of %zu operators, ", rvp.nr, groups->nr);
		strbuf_addstr(&sb, RECORD_VS_REPLAY);
		strbuf_addstr(&sb, ": ");
		name_ops(&sb, &rvp);
		strvec_push(&c->warnings, sb.buf);
	}
	outside_warning(c, outside);
	strvec_clear(&rvr);
	strvec_clear(&rvp);
	strvec_clear(&several);
	strbuf_release(&sb);
}

/* The GPU a run measured on (provenance.device_uuid), or NULL when unrecorded. */
static const char *run_gpu(const struct compare_run *r)
{
	return r->identity ? json_str(json_object_get(r->identity, "provenance"), "device_uuid")
			   : NULL;
}

/* Does every GPU of one side's runs of operator g appear on the other's, and back? */
static int same_gpus(const struct compare *c, int g, const char **a_gpu, const char **b_gpu)
{
	const char **first[2] = { a_gpu, b_gpu };

	*a_gpu = *b_gpu = NULL;
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < c->side[s].nr && !*first[s]; i++)
			if (g < 0 || c->side[s].runs[i].group == g)
				*first[s] = run_gpu(&c->side[s].runs[i]);
	if (!*a_gpu || !*b_gpu)
		return 1;   /* unrecorded on a side: nothing to tell */
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < c->side[s].nr; i++) {
			const struct compare_run *r = &c->side[s].runs[i];
			const char *u = run_gpu(r);
			int found = 0;

			if ((g >= 0 && r->group != g) || !u)
				continue;
			for (size_t k = 0; k < c->side[!s].nr && !found; k++) {
				const struct compare_run *o = &c->side[!s].runs[k];
				const char *v = run_gpu(o);
				found = (g < 0 || o->group == g) && (!v || !strcmp(u, v));
			}
			if (!found) {
				*first[s] = u;	/* the GPU the other side lacks, not its first */
				return 0;
			}
		}
	return 1;
}

/*
 * Operators measured on other GPUs in A than in B: two GPUs of one model
 * differ by more than the threshold on some kernels, so the difference may
 * be the GPU's and not the build's. A warning, not a caliber problem: the
 * device model (caliber device) is checked already.
 */
static void check_gpus(struct compare *c, const struct strvec *groups,
		       const struct strvec *group_ops)
{
	struct strvec differ = STRVEC_INIT;
	struct strbuf sb = STRBUF_INIT;
	const char *a = NULL, *b = NULL;

	if (!groups) {
		if (!same_gpus(c, -1, &a, &b))
			strvec_pushf(&differ, "A on %s, B on %s", a, b);
	} else {
		for (size_t g = 0; g < groups->nr; g++)
			if (!same_gpus(c, (int)g, &a, &b))
				strvec_pushf(&differ, "%s (A on %s, B on %s)", group_ops->v[g], a, b);
	}
	if (differ.nr) {
		if (groups)
			strbuf_addf(&sb, "%zu operator%s ran on other GPUs in A than in B (by uuid): ",
				    differ.nr, differ.nr == 1 ? "" : "s");
		else
			strbuf_addstr(&sb, "the runs ran on other GPUs (by uuid): ");
		name_ops(&sb, &differ);
		strbuf_addstr(&sb, "; a difference may be the GPU's, not the build's: run both "
			      "batches with zlb batch --pin on the same devices");
		strvec_push(&c->warnings, sb.buf);
	}
	strvec_clear(&differ);
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
				strvec_push(ops, compare_run_op(r));
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
	check_gpus(c, by_operator ? &groups : NULL, &group_ops);
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

