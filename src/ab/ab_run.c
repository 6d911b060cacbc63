/*
 * zlb ab, the rounds (see ab.h for the scheme): child `zlb run`s in the
 * order R A1 B1 A2 B2 ..., the IR gate after round 1 (ab_gate.c), one
 * comparison at the end (ab_compare.c), ab.json throughout.
 */
#include "ab/ab_run_int.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rundir/exit_codes.h"
#include "rundir/identity.h"
#include "lib/jsonfile.h"
#include "lib/paths.h"
#include "lib/proc.h"
#include "rundir/rundir.h"
#include "lib/term.h"

/*
 * How long an interrupted child zlb gets before SIGTERM, then SIGKILL: it
 * gives its own pytest 5 s and 5 s more, then writes its identity.
 */
#define AB_INTERRUPT_GRACE_MS 15000

int ab_save(struct ab_state *st)
{
	if (json_write_file(st->json_path, st->j)) {
		warn(st, "zlb ab: warning: could not write %s: %s", st->json_path, last_error());
		return -1;
	}
	return 0;
}

/* ---- ab.json ------------------------------------------------------------------ */

json_t *ab_str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *side_json(const struct ab_plan *p, int s)
{
	const struct ab_side *side = &p->spec->side[s];
	json_t *o = json_object(), *env = json_object();

	for (size_t k = 0; k < side->nr; k++)
		json_object_set_new(env, side->set[k].key, ab_str_or_null(side->set[k].value));
	json_object_set_new(o, "env", env);
	json_object_set_new(o, "python", ab_str_or_null(side->python));
	json_object_set_new(o, "flaggems_dir", ab_str_or_null(side->flaggems_dir));
	json_object_set_new(o, "checkout", ab_str_or_null(p->checkout[s]));
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
	json_object_set_new(j, "shape_set", ab_str_or_null(p->shape_set));
	json_object_set_new(j, "run_options", json_strvec(p->run_args));
	json_object_set_new(j, "calibrate", json_boolean(p->spec->calibrate));
	json_object_set_new(j, "recording", json_null());
	json_object_set_new(j, "runs", json_array());
	json_object_set_new(j, "switch_check", json_array());
	json_object_set_new(j, "ir", json_null());
	json_object_set_new(j, "compare", json_null());
	json_object_set_new(j, "failed", json_null());
	strbuf_release(&axis);
	return j;
}

int ab_finish(struct ab_state *st, const char *status, int code)
{
	json_object_set_new(st->j, "status", json_string(status));
	json_object_set_new(st->j, "exit_code", json_integer(code));
	json_object_set_new(st->j, "finished_at", identity_now());
	ab_save(st);
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
	if (p->spec->calibrate)
		say(st, 0, TERM_BOLD, "  calibration: R also reads each hot row's clock elasticity "
		    "(--clock-elasticity), which the comparison corrects the rounds' clocks by");
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
				ab_str_or_null(hit.where), "files", (json_int_t)hit.files, "skipped"));
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
	ab_save(st);
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
	else if (p->spec->calibrate)
		strvec_push(&argv, "--clock-elasticity=1");
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
			"replay_from", ab_str_or_null(replay ? st->recording : NULL), "exit_code");
	json_array_append_new(json_object_get(st->j, "runs"), run);
	ab_save(st);

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
	json_object_set_new(run, "dir", ab_str_or_null(r->run_dir));
	json_object_set_new(run, "exit_code", json_integer(r->code));
	ab_save(st);
	ret = 0;
out:
	strvec_clear(&argv);
	strvec_clear(&env);
	free(rel);
	free(runs_dir);
	return ret;
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
		*code = ab_finish(st, "error", ZLB_EXIT_IO);
		done = 1;
	} else if (interrupt_pending() || r.code == ZLB_EXIT_INTERRUPTED) {
		st->interrupted = 1;
		result(st, TERM_RED, "zlb ab: interrupted during %s%s%s", what,
		    r.run_dir ? "; its run directory " : "",
		    r.run_dir ? r.run_dir : "");
	} else if (r.code != ZLB_EXIT_OK) {
		json_object_set_new(st->j, "failed", json_pack("{s:s,s:i,s:o,s:i,s:s}",
			"side", sn, "round", k, "dir", ab_str_or_null(r.run_dir),
			"exit_code", r.code, "end", r.end.buf));
		result(st, TERM_RED, "zlb ab: %s failed (zlb run %s): %s%s; "
		    "stopping, the rounds so far are kept in %s", what, r.end.buf,
		    r.run_dir ? "run directory " : "no run directory (zlb run "
		    "stopped before creating one)", r.run_dir ? r.run_dir : "", st->dir);
		*code = ab_finish(st, "round_failed", r.code);
		done = 1;
	} else if (k == 0 && r.run_dir) {
		st->recording = xstrdup(r.run_dir);
		json_object_set_new(st->j, "recording", json_string(r.run_dir));
	} else if (k == 1) {
		*first = xstrdup(r.run_dir ? r.run_dir : "");
	}
	if (!done && !st->interrupted && !r.run_dir) {
		warn(st, "zlb ab: %s left no run directory", what);
		*code = ab_finish(st, "error", ZLB_EXIT_IO);
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
	if (ab_save(&st)) {
		code = ZLB_EXIT_IO;
		goto out;
	}
	if (interrupts_install()) {
		warn(&st, "zlb ab: %s", last_error());
		code = ab_finish(&st, "error", ZLB_EXIT_IO);
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
		ab_save(&st);
		if (k == 1) {
			int stop = ab_ir_gate(&st, a1, b1);
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
		code = ab_finish(&st, "interrupted", ZLB_EXIT_INTERRUPTED);
	} else if (!done) {
		code = ab_run_compare(&st);
		ab_finish(&st, "completed", code);
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
