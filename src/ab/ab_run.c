/*
 * zlb ab, the rounds (see ab.h for the scheme): child `zlb run`s in the
 * order R A1 B1 A2 B2 ..., the IR gate after round 1, one comparison at the
 * end, ab.json throughout.
 */
#include "ab/ab.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "compare/compare.h"
#include "compare/compare_report.h"
#include "compare/compare_run.h"
#include "rundir/exit_codes.h"
#include "rundir/identity.h"
#include "lib/jsonfile.h"
#include "lib/paths.h"
#include "lib/proc.h"
#include "rundir/rundir.h"
#include "compare/stats_compare.h"
#include "lib/term.h"

/*
 * How long an interrupted child zlb gets before SIGTERM, then SIGKILL: it
 * gives its own pytest 5 s and 5 s more, then writes its identity.
 */
#define AB_INTERRUPT_GRACE_MS 15000

struct ab_state {
	const struct ab_plan *p;
	char *dir;		/* the ab directory, absolute */
	char *json_path;
	json_t *j;		/* ab.json */
	char *recording;	/* R's run directory */
	int color;
	int interrupted;
};

/* A line of zlb ab's own output, in colour c when paint (and colour is on). */
#define say(st, paint, c, ...) \
	report_colored((st)->p->rep, REPORT_OUT, (paint) && (st)->color, (c), __VA_ARGS__)
/* A line that says how the A/B ended (or why it stopped): shown even with -q. */
#define result(st, c, ...) \
	report_colored((st)->p->rep, REPORT_RESULT, (st)->color, (c), __VA_ARGS__)
/* A warning, yellow when colour is on for diagnostics. */
#define warn(st, ...) \
	report_colored((st)->p->rep, REPORT_WARN, (st)->p->warn_color, TERM_YELLOW, __VA_ARGS__)

static int save(struct ab_state *st)
{
	if (json_write_file(st->json_path, st->j)) {
		warn(st, "zlb ab: warning: could not write %s: %s", st->json_path, last_error());
		return -1;
	}
	return 0;
}

/* ---- ab.json ------------------------------------------------------------------ */

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *side_json(const struct ab_plan *p, int s)
{
	const struct ab_side *side = &p->spec->side[s];
	json_t *o = json_object(), *env = json_object();

	for (size_t k = 0; k < side->nr; k++)
		json_object_set_new(env, side->set[k].key, str_or_null(side->set[k].value));
	json_object_set_new(o, "env", env);
	json_object_set_new(o, "python", str_or_null(side->python));
	json_object_set_new(o, "flaggems_dir", str_or_null(side->flaggems_dir));
	json_object_set_new(o, "checkout", str_or_null(p->checkout[s]));
	return o;
}

static json_t *initial_json(const struct ab_state *st)
{
	const struct ab_plan *p = st->p;
	struct strbuf axis = STRBUF_INIT;
	json_t *j = json_object(), *sides = json_object(), *order = json_array();

	ab_axis_describe(p->spec, &axis);
	json_object_set_new(j, "schema_version", json_integer(AB_SCHEMA_VERSION));
	json_object_set_new(j, "kind", json_string("zlb-ab"));
	json_object_set_new(j, "zlb_version", json_string(ZLB_VERSION));
	json_object_set_new(j, "status", json_string("running"));
	json_object_set_new(j, "exit_code", json_null());
	json_object_set_new(j, "op", json_string(p->op));
	json_object_set_new(j, "ab_dir", json_string(st->dir));
	json_object_set_new(j, "started_at", identity_now());
	json_object_set_new(j, "finished_at", json_null());
	json_object_set_new(j, "axis", json_string(axis.buf));
	json_object_set_new(sides, "A", side_json(p, 0));
	json_object_set_new(sides, "B", side_json(p, 1));
	json_object_set_new(j, "sides", sides);
	json_object_set_new(j, "rounds", json_integer(p->spec->rounds));
	json_object_set_new(j, "rounds_done", json_integer(0));
	json_array_append_new(order, json_string("R"));
	for (int k = 1; k <= p->spec->rounds; k++) {
		json_array_append_new(order, json_sprintf("A%d", k));
		json_array_append_new(order, json_sprintf("B%d", k));
	}
	json_object_set_new(j, "order", order);
	json_object_set_new(j, "tuner_cache", json_string(p->isolate_tuner_cache ? "isolated"
									       : "shared"));
	json_object_set_new(j, "allow_no_ir_diff", json_boolean(p->spec->allow_no_ir_diff));
	json_object_set_new(j, "shape_set", str_or_null(p->shape_set));
	json_object_set_new(j, "run_options", json_strvec(p->run_args));
	json_object_set_new(j, "recording", json_null());
	json_object_set_new(j, "runs", json_array());
	json_object_set_new(j, "switch_check", json_array());
	json_object_set_new(j, "ir", json_null());
	json_object_set_new(j, "compare", json_null());
	json_object_set_new(j, "failed", json_null());
	strbuf_release(&axis);
	return j;
}

static int finish(struct ab_state *st, const char *status, int code)
{
	json_object_set_new(st->j, "status", json_string(status));
	json_object_set_new(st->j, "exit_code", json_integer(code));
	json_object_set_new(st->j, "finished_at", identity_now());
	save(st);
	return code;
}

/* ---- the header and the switch check ------------------------------------------ */

static void describe_side(const struct ab_plan *p, int s, struct strbuf *sb)
{
	const struct ab_side *side = &p->spec->side[s];

	for (size_t k = 0; k < side->nr; k++) {
		if (side->set[k].value)
			strbuf_addf(sb, "%s%s=%s", sb->len ? " " : "", side->set[k].key,
				    side->set[k].value);
		else
			strbuf_addf(sb, "%s%s unset", sb->len ? " " : "", side->set[k].key);
	}
	if (side->python)
		strbuf_addf(sb, "%spython %s", sb->len ? ", " : "", side->python);
	if (side->flaggems_dir)
		strbuf_addf(sb, "%sFlagGems %s", sb->len ? ", " : "", side->flaggems_dir);
	if (!sb->len)
		strbuf_addstr(sb, "(the shared settings)");
}

static void print_header(const struct ab_state *st)
{
	const struct ab_plan *p = st->p;
	struct strbuf sb = STRBUF_INIT;

	say(st, 1, TERM_BOLD, "zlb ab: %s, A vs B, %d round%s a side in the order R A1 B1%s -> %s",
	    p->op, p->spec->rounds, p->spec->rounds == 1 ? "" : "s",
	    p->spec->rounds > 1 ? " A2 B2 ..." : "", st->dir);
	for (int s = 0; s < 2; s++) {
		strbuf_reset(&sb);
		describe_side(p, s, &sb);
		say(st, 0, TERM_BOLD, "  %s: %s", s ? "B" : "A", sb.buf);
	}
	say(st, 0, TERM_BOLD, "  autotune: R records the configs A's tuners choose (tuner cache %s) "
	    "and is not compared; every round of A and B replays R", p->isolate_tuner_cache ?
	    "isolated per run" : "shared with the machine");
	strbuf_reset(&sb);
	for (size_t i = 0; i < p->run_args->nr; i++)
		strbuf_addf(&sb, "%s%s", i ? " " : "", p->run_args->v[i]);
	say(st, 0, TERM_BOLD, "  zlb run options (every round): %s", sb.len ? sb.buf : "(none)");
	strbuf_release(&sb);
}

/* Each variable whose value differs between the sides, in each side's FlagGems source. */
static void check_switches(struct ab_state *st)
{
	const struct ab_spec *spec = st->p->spec;
	json_t *arr = json_object_get(st->j, "switch_check");

	for (size_t k = 0; k < spec->side[0].nr; k++) {
		const struct ab_setting *a = &spec->side[0].set[k];
		const struct ab_setting *b = ab_side_find(&spec->side[1], a->key);
		const char *exempt = ab_switch_exempt(a->key);

		if (b && (a->value == b->value ||
			  (a->value && b->value && !strcmp(a->value, b->value))))
			continue;
		if (exempt) {
			json_array_append_new(arr, json_pack("{s:s,s:n,s:n,s:s}", "name", a->key,
				"searched", "found", "skipped",
				"the compiler's own switch: not looked up in FlagGems"));
			say(st, 0, TERM_BOLD, "zlb ab: %s is a %s* switch (Triton/FlagTree's own), not "
			    "looked up in FlagGems; the IR check after round 1 tells whether it "
			    "changes anything", a->key, exempt);
			continue;
		}
		for (int s = 0; s < 2; s++) {
			struct ab_switch_hit hit;
			const char *co = st->p->checkout[s];

			if (!co || (s == 1 && st->p->checkout[0] && !strcmp(co, st->p->checkout[0])))
				continue;
			if (ab_switch_search(co, a->key, &hit)) {
				warn(st, "zlb ab: warning: could not search %s for %s: %s", co, a->key,
				     last_error());
				json_array_append_new(arr, json_pack("{s:s,s:s,s:n,s:s}", "name", a->key,
					"searched", co, "found", "skipped", last_error()));
				ab_switch_hit_release(&hit);
				continue;
			}
			json_array_append_new(arr, json_pack("{s:s,s:s,s:b,s:o,s:I,s:n}", "name",
				a->key, "searched", hit.root, "found", hit.found, "where",
				str_or_null(hit.where), "files", (json_int_t)hit.files, "skipped"));
			if (hit.found)
				say(st, 0, TERM_BOLD, "zlb ab: switch %s found in %s/%s", a->key,
				    hit.root, hit.where);
			else
				warn(st, "zlb ab: warning: the switch %s appears nowhere in %s (%zu .py "
				     "files): if it was renamed or removed upstream, both sides run the "
				     "same code; the IR check after round 1 decides", a->key, hit.root,
				     hit.files);
			ab_switch_hit_release(&hit);
		}
	}
	save(st);
}

/* ---- one round of one side ----------------------------------------------------- */

/* What the exit status of a `zlb run` means (README "Exit codes"), after "exit N". */
static void explain_exit(int code, struct strbuf *sb)
{
	const char *what = NULL;

	switch (code) {
	case ZLB_EXIT_TESTS_FAILED: what = "pytest reported failed tests"; break;
	case ZLB_EXIT_USAGE: what = "a bad option value"; break;
	case ZLB_EXIT_PREFLIGHT: what = "a preflight check failed"; break;
	case ZLB_EXIT_NO_TESTS: what = "pytest collected no test"; break;
	case ZLB_EXIT_PYTEST_ERROR: what = "pytest itself failed"; break;
	case ZLB_EXIT_IO: what = "zlb could not write its run directory"; break;
	default: break;
	}
	if (what) {
		strbuf_addf(sb, ": %s", what);
	} else if (code > 128 && code < 128 + 65) {
		const char *abbrev = sigabbrev_np(code - 128);
		if (abbrev)
			strbuf_addf(sb, ": pytest was killed by SIG%s", abbrev);
	}
}

static void on_line(void *ctx, const char *line, size_t len, size_t shown)
{
}

static const struct pump_ops inherit_ops = { on_line, NULL, NULL };

/* The one run directory a child claimed under runs_dir, or NULL. */
static char *claimed_run(const char *runs_dir)
{
	DIR *d = opendir(runs_dir);
	struct dirent *e;
	char *found = NULL;

	if (!d)
		return NULL;
	while ((e = readdir(d))) {
		char *path;
		if (e->d_name[0] == '.')
			continue;
		path = path_join(runs_dir, e->d_name);
		if (is_dir(path) && (!found || strcmp(path, found) < 0)) {
			free(found);
			found = path;
		} else {
			free(path);
		}
	}
	closedir(d);
	return found;
}

struct round_result {
	int code;		/* the child's exit status (128+N for a signal) */
	char *run_dir;		/* NULL: none claimed */
	struct strbuf end;	/* "exit 1", "killed by SIGSEGV" */
};

/*
 * Round k of side s; round 0 is the recording R, run with A's settings.
 * Returns 0 (see r), or -1 with error() when the child could not be started.
 */
static int run_round(struct ab_state *st, int s, int k, struct round_result *r)
{
	const struct ab_plan *p = st->p;
	const struct ab_side *side = &p->spec->side[s];
	struct strvec argv = STRVEC_INIT, env = STRVEC_INIT;
	struct child c = { 0 };
	int replay = k > 0;
	char *rel = replay ? xstrfmt("%s/r%d", side->name, k) : xstrdup(AB_RECORDING);
	char *runs_dir = path_join(st->dir, rel);
	json_t *run;
	int ret = -1;

	memset(r, 0, sizeof(*r));
	strbuf_init(&r->end, 0);
	r->code = ZLB_EXIT_IO;
	if (mkdir_p(runs_dir, 0777))
		goto out;
	strvec_pushl(&argv, p->exe, "run", NULL);
	strvec_pushv(&argv, (const char *const *)p->run_args->v);
	strvec_pushl(&argv, "--runs-dir", runs_dir, NULL);
	strvec_push(&argv, p->isolate_tuner_cache ? "--isolate-tuner-cache=1"
						  : "--isolate-tuner-cache=0");
	if (side->python)
		strvec_pushl(&argv, "--python", side->python, NULL);
	if (side->flaggems_dir)
		strvec_pushl(&argv, "--flaggems-dir", side->flaggems_dir, NULL);
	if (replay)
		strvec_pushl(&argv, "--replay-from", st->recording, NULL);
	ab_side_env(side, p->envp, &env);

	say(st, 0, TERM_BOLD, "%s", "");
	if (replay)
		say(st, 1, TERM_BOLD, "=== zlb ab: round %d/%d, side %s (replays R's autotune "
		    "configs) -> %s/", k, p->spec->rounds, side->name, runs_dir);
	else
		say(st, 1, TERM_BOLD, "=== zlb ab: the recording R (side A's settings; records "
		    "the autotune configs, not compared) -> %s/", runs_dir);

	run = json_pack("{s:s,s:i,s:s,s:n,s:s,s:o,s:n}", "side", replay ? side->name : AB_RECORDING,
			"round", k,
			"runs_dir", runs_dir, "dir", "autotune_mode", replay ? "replay" : "record",
			"replay_from", str_or_null(replay ? st->recording : NULL), "exit_code");
	json_array_append_new(json_object_get(st->j, "runs"), run);
	save(st);

	c.argv = argv.v;
	c.envp = env.v;
	c.new_pgroup = 1;	/* a Ctrl-C reaches zlb ab, which stops the child in order */
	c.capture = 0;		/* the child writes to our terminal itself */
	if (child_start(&c))
		goto out;
	if (child_pump(&c, &inherit_ops, NULL, AB_INTERRUPT_GRACE_MS))
		goto out;
	r->code = child_exit_code(&c);
	child_describe_end(&c, &r->end);
	if (starts_with(r->end.buf, "exit "))
		explain_exit(r->code, &r->end);
	r->run_dir = claimed_run(runs_dir);
	json_object_set_new(run, "dir", str_or_null(r->run_dir));
	json_object_set_new(run, "exit_code", json_integer(r->code));
	save(st);
	ret = 0;
out:
	strvec_clear(&argv);
	strvec_clear(&env);
	free(rel);
	free(runs_dir);
	return ret;
}

/* ---- the IR gate ------------------------------------------------------------ */

static json_t *ir_side_json(const struct ab_ir_side *s)
{
	if (!s->has_ir)
		return json_pack("{s:b,s:n,s:i,s:s}", "captured", 0, "fingerprint", "files", 0,
				 "why", s->why);
	return json_pack("{s:b,s:o,s:I,s:n}", "captured", 1, "fingerprint",
			 json_sprintf("%016llx", (unsigned long long)s->fp.hash),
			 "files", (json_int_t)s->fp.files, "why");
}

/* Returns -1 to go on, or the exit status to stop with. */
static int ir_gate(struct ab_state *st, const char *run_a, const char *run_b)
{
	const struct ab_plan *p = st->p;
	struct ab_ir_result r;
	struct strbuf axis = STRBUF_INIT;
	json_t *ir;
	int ret = -1;

	say(st, 0, TERM_BOLD, "%s", "");
	if (ab_ir_compare(run_a, run_b, &r)) {
		warn(st, "zlb ab: the IR of round 1 could not be read: %s", last_error());
		json_object_set_new(st->j, "ir", json_pack("{s:s}", "error", last_error()));
		ab_ir_result_release(&r);
		return finish(st, "error", ZLB_EXIT_IO);
	}
	ir = json_object();
	json_object_set_new(ir, "A", ir_side_json(&r.side[0]));
	json_object_set_new(ir, "B", ir_side_json(&r.side[1]));
	json_object_set_new(ir, "verdict", json_string(ab_ir_verdict_name(r.verdict)));
	json_object_set_new(ir, "same", json_integer((json_int_t)r.same));
	json_object_set_new(ir, "differing", json_integer((json_int_t)r.differing));
	json_object_set_new(ir, "only_a", json_integer((json_int_t)r.only_a));
	json_object_set_new(ir, "only_b", json_integer((json_int_t)r.only_b));
	json_object_set_new(ir, "first", json_strvec(&r.first));
	json_object_set_new(ir, "allowed", json_boolean(p->spec->allow_no_ir_diff));
	json_object_set_new(st->j, "ir", ir);
	save(st);

	ab_axis_describe(p->spec, &axis);
	switch (r.verdict) {
	case AB_IR_DIFFER: {
		size_t total = r.same + r.differing + r.only_a + r.only_b;
		say(st, 1, TERM_GREEN, "zlb ab: IR after round 1: A %016llx, B %016llx: the sides "
		    "generated different code (%zu of %zu stage files differ, %zu only in A, "
		    "%zu only in B)", (unsigned long long)r.side[0].fp.hash,
		    (unsigned long long)r.side[1].fp.hash, r.differing, total, r.only_a, r.only_b);
		for (size_t i = 0; i < r.first.nr; i++)
			say(st, 0, TERM_BOLD, "  %s", r.first.v[i]);
		if (r.differing + r.only_a + r.only_b > r.first.nr)
			say(st, 0, TERM_BOLD, "  ... (zlb ir diff %s %s shows them all)", run_a, run_b);
		break;
	}
	case AB_IR_ONE_SIDE: {
		int has = r.side[0].has_ir ? 0 : 1;
		warn(st, "zlb ab: warning: only %s captured IR (%s: %s); the IR check cannot "
		     "tell whether the switch changed the code, going on", has ? "B" : "A",
		     has ? "A" : "B", r.side[1 - has].why);
		break;
	}
	case AB_IR_IDENTICAL:
	case AB_IR_NONE: {
		int none = r.verdict == AB_IR_NONE;
		char hex[17] = "none";

		if (!none)
			snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)r.side[0].fp.hash);
		result(st, TERM_RED, "SWITCH_NO_IR_DIFF op=%s axis=%s fingerprint=%s", p->op,
		    axis.buf, hex);
		if (none)
			say(st, 0, TERM_BOLD, "zlb ab: neither side captured any IR (A: %s), so nothing "
			    "shows that %s changes the code of %s", r.side[0].why, axis.buf, p->op);
		else
			say(st, 0, TERM_BOLD, "zlb ab: A and B generated byte-identical IR (%zu stage "
			    "files): with the autotune configs pinned, %s changed no code Triton "
			    "generated for %s, and more rounds would measure the same code twice and "
			    "report it as \"no difference\"; check that the switch still exists "
			    "upstream and reaches this operator's kernels", r.side[0].fp.files,
			    axis.buf, p->op);
		if (p->spec->allow_no_ir_diff) {
			say(st, 0, TERM_BOLD, "zlb ab: --allow-no-ir-diff: measuring anyway");
		} else {
			result(st, TERM_RED, "zlb ab: stopped after round 1 (exit %d); "
			    "--allow-no-ir-diff measures anyway. %s", ZLB_EXIT_NO_IR_DIFF,
			    st->json_path);
			ret = finish(st, "no_ir_diff", ZLB_EXIT_NO_IR_DIFF);
		}
		break;
	}
	}
	strbuf_release(&axis);
	ab_ir_result_release(&r);
	return ret;
}

/* ---- the comparison ------------------------------------------------------------ */

static json_t *counts_json(const struct compare_counts *c)
{
	json_t *o = json_object();

	for (int v = STATS_SAME; v <= STATS_UNSURE; v++)
		json_object_set_new(o, stats_verdict_name((enum stats_verdict)v),
				    json_integer((json_int_t)c->n[v]));
	return o;
}

static int write_compare_files(struct ab_state *st, const struct compare *c, int code,
			       char **csv, char **js)
{
	struct strbuf sb = STRBUF_INIT;
	json_t *j = compare_to_json(c, 0, code, NULL);
	char *text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
	int r = 0;

	*csv = path_join(st->dir, COMPARE_CSV);
	*js = path_join(st->dir, COMPARE_JSON);
	strbuf_addstr(&sb, text ? text : "");
	strbuf_addch(&sb, '\n');
	free(text);
	if (compare_write_csv(c, *csv) || write_file_atomic(*js, sb.buf, sb.len)) {
		warn(st, "zlb ab: %s", last_error());
		r = -1;
	} else {
		say(st, 0, TERM_BOLD, "wrote %s and %s", *csv, *js);
	}
	json_decref(j);
	strbuf_release(&sb);
	return r;
}

static int run_compare(struct ab_state *st)
{
	const struct ab_plan *p = st->p;
	struct compare_opts opts = COMPARE_OPTS_INIT;
	struct compare c;
	struct strbuf sb = STRBUF_INIT;
	char *csv = NULL, *js = NULL;
	json_t *cj = json_object();
	int rc = ZLB_EXIT_OK;
	struct compare_run_opts run_opts = {
		.who = "zlb ab", .color = term_color_wanted(STDOUT_FILENO, p->color_setting),
		.warn_color = p->warn_color, .report_table = 1,
	};
	enum compare_stage stage;
	char *hint;

	if (p->spec->threshold >= 0)
		opts.threshold = p->spec->threshold;
	compare_init(&c, &opts);
	say(st, 0, TERM_BOLD, "%s", "");
	say(st, 1, TERM_BOLD, "=== zlb ab: compare A (%s/A) against B (%s/B) ===", st->dir, st->dir);
	for (int s = 0; s < 2; s++) {
		char *side = path_join(st->dir, s ? "B" : "A");
		int n = compare_add_path(&c, s, side);
		free(side);
		if (n <= 0) {
			warn(st, "zlb ab: side %s has no run to compare", s ? "B" : "A");
			rc = ZLB_EXIT_NO_DATA;
			goto out;
		}
	}
	hint = xstrfmt("The runs are kept: zlb compare --allow-caliber-mismatch %s/A %s/B "
		       "compares anyway", st->dir, st->dir);
	run_opts.caliber_hint = hint;
	rc = compare_run(&c, &run_opts, p->rep, &stage);
	free(hint);
	json_object_set_new(cj, "caliber_problems", json_strvec(&c.caliber_problems));
	if (stage != COMPARE_DONE)
		goto out;
	if (write_compare_files(st, &c, rc, &csv, &js))
		rc = ZLB_EXIT_IO;
	json_object_set_new(cj, "paired", json_integer((json_int_t)c.paired));
	json_object_set_new(cj, "regression", json_boolean(c.regression));
	json_object_set_new(cj, "gems", counts_json(&c.counts[COMPARE_GEMS]));
	json_object_set_new(cj, "torch", counts_json(&c.counts[COMPARE_TORCH]));
out:
	json_object_set_new(cj, "exit_code", json_integer(rc));
	json_object_set_new(cj, "csv", str_or_null(csv));
	json_object_set_new(cj, "json", str_or_null(js));
	json_object_set_new(st->j, "compare", cj);
	save(st);
	free(csv);
	free(js);
	strbuf_release(&sb);
	compare_release(&c);
	return rc;
}

/* ---- the whole A/B ----------------------------------------------------------------- */

/*
 * Run round k of side s and judge it: 1 when the A/B stops (*code set, or
 * st->interrupted), 0 to go on. Round 0 is the recording R every round
 * replays; round 1's run directory goes to *first.
 */
static int one_round(struct ab_state *st, int s, int k, char **first, int *code)
{
	struct round_result r;
	const char *sn = k == 0 ? AB_RECORDING : s ? "B" : "A";
	char *what = k ? xstrfmt("round %d %s", k, sn) : xstrdup("the recording " AB_RECORDING);
	int done = 0;

	if (interrupt_pending()) {
		st->interrupted = 1;
		free(what);
		return 1;
	}
	if (run_round(st, s, k, &r)) {
		warn(st, "zlb ab: %s could not be started: %s", what, last_error());
		*code = finish(st, "error", ZLB_EXIT_IO);
		done = 1;
	} else if (interrupt_pending() || r.code == ZLB_EXIT_INTERRUPTED) {
		st->interrupted = 1;
		result(st, TERM_RED, "zlb ab: interrupted during %s%s%s", what,
		    r.run_dir ? "; its run directory " : "",
		    r.run_dir ? r.run_dir : "");
	} else if (r.code != ZLB_EXIT_OK) {
		json_object_set_new(st->j, "failed", json_pack("{s:s,s:i,s:o,s:i,s:s}",
			"side", sn, "round", k, "dir", str_or_null(r.run_dir),
			"exit_code", r.code, "end", r.end.buf));
		result(st, TERM_RED, "zlb ab: %s failed (zlb run %s): %s%s; "
		    "stopping, the rounds so far are kept in %s", what, r.end.buf,
		    r.run_dir ? "run directory " : "no run directory (zlb run "
		    "stopped before creating one)", r.run_dir ? r.run_dir : "", st->dir);
		*code = finish(st, "round_failed", r.code);
		done = 1;
	} else if (k == 0 && r.run_dir) {
		st->recording = xstrdup(r.run_dir);
		json_object_set_new(st->j, "recording", json_string(r.run_dir));
	} else if (k == 1) {
		*first = xstrdup(r.run_dir ? r.run_dir : "");
	}
	if (!done && !st->interrupted && !r.run_dir) {
		warn(st, "zlb ab: %s left no run directory", what);
		*code = finish(st, "error", ZLB_EXIT_IO);
		done = 1;
	}
	free(r.run_dir);
	strbuf_release(&r.end);
	free(what);
	return done || st->interrupted;
}

int ab_execute(const struct ab_plan *p)
{
	struct ab_state st = { .p = p };
	char *name = xstrfmt("ab_%s", p->op);
	char *a1 = NULL, *b1 = NULL;
	int code = ZLB_EXIT_OK, done = 0;

	st.color = p->color;
	if (p->dir_name) {
		char *want = path_join(p->runs_dir, p->dir_name);
		int r = rundir_claim_exact(want, &st.dir);
		free(want);
		if (r) {
			warn(&st, "zlb ab: %s", last_error());
			free(name);
			return ZLB_EXIT_IO;
		}
	} else if (rundir_claim(p->runs_dir, name, time(NULL), &st.dir)) {
		warn(&st, "zlb ab: %s", last_error());
		free(name);
		return ZLB_EXIT_IO;
	}
	free(name);
	st.json_path = path_join(st.dir, AB_FILE);
	st.j = initial_json(&st);
	if (save(&st)) {
		code = ZLB_EXIT_IO;
		goto out;
	}
	if (interrupts_install()) {
		warn(&st, "zlb ab: %s", last_error());
		code = finish(&st, "error", ZLB_EXIT_IO);
		goto out;
	}
	print_header(&st);
	if (!p->isolate_tuner_cache)
		warn(&st, "zlb ab: warning: R records autotune configs on a shared tuner cache: "
		     "configs cached by earlier runs, possibly of the other build, are reused "
		     "instead of tuned; --isolate-tuner-cache avoids this");
	check_switches(&st);

	/*
	 * The recording first, apart from the rounds: a run that tunes is
	 * another process than one that replays, and on an H100 a recording's
	 * rows read up to 1% apart from three replays of it that agreed within
	 * 0.1% (gpu10, 10 operators x 3 sizes). So every compared round
	 * replays, A1 included, and the recording is not compared.
	 */
	done = one_round(&st, 0, 0, NULL, &code);
	for (int k = 1; k <= p->spec->rounds && !done; k++) {
		for (int s = 0; s < 2 && !done; s++)
			done = one_round(&st, s, k, s ? &b1 : &a1, &code);
		if (done)
			break;
		json_object_set_new(st.j, "rounds_done", json_integer(k));
		save(&st);
		if (k == 1) {
			int stop = ir_gate(&st, a1, b1);
			if (stop >= 0) {
				code = stop;
				done = 1;
			}
		}
		if (!done && interrupt_pending())
			st.interrupted = done = 1;
	}
	if (st.interrupted) {
		result(&st, TERM_RED, "zlb ab: interrupted; kept what was written in %s (ab.json "
		    "says interrupted)", st.dir);
		code = finish(&st, "interrupted", ZLB_EXIT_INTERRUPTED);
	} else if (!done) {
		code = run_compare(&st);
		finish(&st, "completed", code);
		result(&st, code == ZLB_EXIT_OK ? TERM_GREEN : TERM_RED,
		    "zlb ab: %s, exit %d; %s", code == ZLB_EXIT_OK ? "compared" :
		    code == ZLB_EXIT_REGRESSION ? "B is SLOWER on at least one row" :
		    code == ZLB_EXIT_CALIBER ? "not compared: calibers differ" :
		    code == ZLB_EXIT_NO_DATA ? "nothing to compare" : "compared, files not written",
		    code, st.json_path);
	}
	interrupts_restore();
out:
	free(a1);
	free(b1);
	free(st.recording);
	free(st.json_path);
	free(st.dir);
	json_decref(st.j);
	return code;
}
