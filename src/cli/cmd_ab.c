/*
 * zlb ab: one operator, build A against build B, in interleaved rounds
 * (src/ab/ab.h for the scheme).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/usage.h"
#include "ab/ab.h"
#include "lib/error.h"
#include "lib/options.h"
#include "lib/paths.h"
#include "run/preflight.h"
#include "run/run_config.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"
#include "lib/term.h"
#include "backends/backend.h"

extern char **environ;

/*
 * zlb ab's own options. Their values are read by parse_args (repeatable
 * --a-env/--b-env, the side setters' own checks), so the kinds here are
 * for help and completion; every other option is zlb run's.
 */
static const struct opt_def ab_option_defs[] = {
	{ "axis", NULL, NULL, NULL, OPT_STRING, NULL, 0, 0, "NAME=VA,VB",
	  "the switch: A runs with NAME=VA, B with NAME=VB (one --axis; one comma; an "
	  "empty value sets the variable empty)" },
	{ "a-env", NULL, NULL, NULL, OPT_STRING, NULL, 0, 0, "K=V",
	  "another setting of side A, repeatable; a variable named for one side only is "
	  "removed from the other side's environment" },
	{ "b-env", NULL, NULL, NULL, OPT_STRING, NULL, 0, 0, "K=V",
	  "another setting of side B, repeatable" },
	{ "a-python", NULL, NULL, NULL, OPT_STRING, NULL, 0, 0, "PROG",
	  "side A's interpreter (its Triton build); a side without one uses --python" },
	{ "b-python", NULL, NULL, NULL, OPT_STRING, NULL, 0, 0, "PROG",
	  "side B's interpreter" },
	{ "a-flaggems-dir", NULL, NULL, NULL, OPT_STRING, NULL, 0, 0, "DIR",
	  "side A's FlagGems checkout" },
	{ "b-flaggems-dir", NULL, NULL, NULL, OPT_STRING, NULL, 0, 0, "DIR",
	  "side B's FlagGems checkout" },
	{ "rounds", NULL, NULL, "3", OPT_STRING, NULL, 0, 0, "N",
	  "rounds a side, 1 to 100, run A1 B1 A2 B2 ... after the recording R" },
	{ "allow-no-ir-diff", NULL, NULL, NULL, OPT_BOOL, NULL, 0, 0, NULL,
	  "go on after SWITCH_NO_IR_DIFF (measure anyway); also SWITCH_ALLOW_NO_IR_DIFF=1" },
	{ "shape-set", NULL, NULL, NULL, OPT_STRING, NULL, 0, 0, "FILE",
	  "repeatable: one whole A/B per shape file, each in a directory of its own under "
	  "<runs-dir>/ab_<op>_sets_<time>/, then one table of all (compare_sets.csv, "
	  "ab_sets.json) and ab.log; instead of --shapes" },
	{ "shared-tuner-cache", NULL, NULL, NULL, OPT_BOOL, NULL, 0, 0, NULL,
	  "run on the machine's FlagGems tuner cache instead of one isolated cache per run "
	  "(the default, so R tunes for itself); also --isolate-tuner-cache=0 or "
	  "ZL_ISOLATE_TUNER_CACHE=0" },
	{ "threshold", NULL, NULL, "1", OPT_STRING, NULL, 0, 0, "PCT",
	  "the comparison's band of no practical difference, percent (\"0.5\" or \"0.5%\")" },
	{ "elasticity-from", NULL, NULL, NULL, OPT_STRING, NULL, 0, 0, "DIR",
	  "the comparison's rounds take the clock elasticity that a calibration batch under "
	  "DIR read (zlb compare --elasticity-from)" },
	/*
	 * Issue 28's matrix on an H100: with s from a calibration run apart,
	 * single pairs read SAME on 81.5-88.9% of gems rows where they read
	 * 74.1-85.2% without (bench/README, "the clock elasticity, read in the
	 * process"). R is that run here: it is not compared, and the burns it
	 * leaves behind reach no measured row; the configs and calls per
	 * replay the rounds replay were chosen in R after them, alike for A
	 * and B.
	 */
	{ "calibrate", NULL, NULL, NULL, OPT_BOOL, NULL, 0, 0, NULL,
	  "the recording R also reads each hot row's clock elasticity (zlb run "
	  "--clock-elasticity, 0.6-0.9 s a row on an H100), and the comparison corrects the "
	  "rounds for their sides' effective clocks by it instead of widening; R is not "
	  "compared, so its burns reach no measured row (the configs and calls per replay "
	  "the rounds replay were chosen in R after them, alike for both sides)" },
	{ NULL },
};

static const struct cmd_exit ab_exits[] = {
	{ "0", "compared; no gems row SLOWER beyond the threshold" },
	{ "1", "a gems row is SLOWER (or, from a round, pytest reported failed tests)" },
	{ "2", "bad command line (nothing started), or an --elasticity-from that holds no run, "
	       "no s, or another GPU's (found at the comparison: the rounds are kept)" },
	{ "3", "a preflight check of side A or B failed (nothing started)" },
	{ "4", "the rounds' calibers differ; nothing compared" },
	{ "7", "zlb could not write the ab directory or the compare files" },
	{ "8", "nothing to compare (no row SUCCESS on both sides)" },
	{ "10", "SWITCH_NO_IR_DIFF: after round 1 the IR of A and B was byte-identical, or "
		"neither side captured IR (without --allow-no-ir-diff)" },
	{ "130", "interrupted; what was written is kept, ab.json says interrupted" },
	{ "other", "a round failed: the exit status of that `zlb run` (5, 6, 128+N, ...); "
		   "with --shape-set: the first non-zero status of the sets, in their order" },
	{ NULL, NULL },
};

const struct cmd_doc ab_doc = {
	.name = "ab",
	.summary = "A/B one operator in interleaved rounds: record/replay, IR gate, compare",
	.synopsis = "[OP] --axis NAME=VALUE_A,VALUE_B [--rounds N] [zlb run options]\n"
		    "[OP] --a-env K=V --b-env K=V ... [options]\n"
		    "[OP] --a-python PYTHON_A --b-python PYTHON_B [options]\n"
		    "[OP] --a-flaggems-dir DIR_A --b-flaggems-dir DIR_B [options]",
	.about =
		"Measure OP on build A and build B in interleaved rounds (A1 B1 A2 B2 ...), each\n"
		"round a `zlb run` into <runs-dir>/ab_<op>_<time>/<A|B>/r<k>/. First the\n"
		"recording R (<ab>/R/, side A's settings) records the autotune configs and is\n"
		"not compared; every round, A1 included, replays R's, so both sides run one set\n"
		"of configs in one kind of process. Before round 1 each switch variable is looked up in the\n"
		"FlagGems source (a warning when it appears nowhere: renamed or removed\n"
		"upstream?). After round 1 the IR of A1 and B1 is fingerprinted: byte-identical\n"
		"IR (or none on either side) means the switch changed no generated code, and\n"
		"zlb ab stops with SWITCH_NO_IR_DIFF. At the end one `zlb compare` over all\n"
		"rounds writes compare.csv and compare.json beside ab.json.\n"
		"\n"
		"The sides differ by what --axis, --a-env/--b-env, --a-python/--b-python and\n"
		"--a-flaggems-dir/--b-flaggems-dir name (at least one difference; they combine).\n"
		"zlb's own variables (a run option's environment default such as BENCH_LEVEL or\n"
		"ZL_TIMER, or ZLB_*) are caliber and cannot differ between the sides. Switches\n"
		"named TRITON_* or FLAGTREE_* belong to the compiler and are not looked up in\n"
		"FlagGems; only the checkout's src/ is searched. A switch name may hold\n"
		"<VENDOR>, the backend's FlagTree vendor: --axis 'FLAGTREE_<VENDOR>_RLC_ENHANCE=0,1'\n"
		"is FLAGTREE_MUSA_RLC_ENHANCE on musa and FLAGTREE_RLC_ENHANCE on cuda (refused\n"
		"where zlb does not know the spelling). -q and -v (zlb run's) go to every round\n"
		"and quiet or widen zlb ab's own lines alike.\n",
	.opts = ab_option_defs,
	.more_opts = run_option_defs,
	.more_opts_note = "Every other option is a zlb run option (zlb run --help), given to every "
			  "round unchanged; --runs-dir says where the ab directory goes; "
			  "--replay-from is zlb ab's to decide and refused.",
	.exits = ab_exits,
	.positional = CMD_ARG_NONE,
};

static int parse_percent(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno)
		return -1;
	if (*end == '%')
		end++;
	if (*end || !(v >= 0) || v >= 100)
		return -1;
	*out = v / 100;
	return 0;
}

static void print_preflight(const struct preflight *pf, const char *side, const char *color)
{
	struct strbuf sb = STRBUF_INIT;

	preflight_failure_text(pf, side, term_color_wanted(STDERR_FILENO, color), &sb);
	fputs(sb.buf, stderr);
	strbuf_release(&sb);
}

/* Leave through the cleanup with a usage error. */

/* What zlb ab gathers from its command line before the rounds run. */
struct ab_cmd {
	struct ab_spec spec;
	struct strvec pos, given, kept;   /* positionals; run options as given; kept for rounds */
	struct strvec run_args;           /* what every round's zlb run gets */
	struct strvec side_env[2];
	struct run_config cfg, scfg[2];   /* the options as given; each side as it will run */
	int parsed, sparsed[2];
	struct opt_values raw;
	struct preflight pf[2];
	int pfdone[2];
	const char *runs_dir;
	int isolate;                      /* one tuner cache policy for every run */
	/* --axis / --a-env / --b-env values holding <VENDOR>: "axis", "a", "b" + text */
	struct strvec deferred;
};

/* Refuse with a usage error from a step of cmd_ab (exit 2). */
#define REFUSE(...) return usage_error("ab", __VA_ARGS__)

/* One of zlb ab's own options, d with its value v, into ac->spec: 0 or a usage error. */
static int parse_own(struct ab_cmd *ac, const struct opt_def *d, const char *v)
{
	const char *n = d->name;

	if (!strcmp(n, "allow-no-ir-diff")) {
		ac->spec.allow_no_ir_diff = opt_parse_bool(v) == 1;
	} else if (!strcmp(n, "shared-tuner-cache")) {
		ac->spec.shared_tuner_cache = opt_parse_bool(v) == 1;
	} else if (!strcmp(n, "shape-set")) {
		if (!*v)
			REFUSE("--shape-set needs a shape file");
		strvec_push(&ac->spec.shape_sets, v);
	} else if (!strcmp(n, "axis")) {
		if (strstr(v, AB_VENDOR_PLACEHOLDER))
			/* Expanded once the backend is known (check_run_options). */
			strvec_pushf(&ac->deferred, "axis %s", v);
		else if (ab_spec_add_axis(&ac->spec, v))
			REFUSE("%s", last_error());
	} else if (!strcmp(n, "a-env") || !strcmp(n, "b-env")) {
		if (strstr(v, AB_VENDOR_PLACEHOLDER))
			strvec_pushf(&ac->deferred, "%s %s", n[0] == 'b' ? "b" : "a", v);
		else if (ab_spec_add_env(&ac->spec, n[0] == 'b', v))
			REFUSE("%s", last_error());
	} else if (!strcmp(n, "a-python") || !strcmp(n, "b-python")) {
		if (ab_spec_set_python(&ac->spec, n[0] == 'b', v))
			REFUSE("%s", last_error());
	} else if (!strcmp(n, "a-flaggems-dir") || !strcmp(n, "b-flaggems-dir")) {
		if (ab_spec_set_flaggems_dir(&ac->spec, n[0] == 'b', v))
			REFUSE("%s", last_error());
	} else if (!strcmp(n, "rounds")) {
		char *end;
		long r;

		errno = 0;
		r = strtol(v, &end, 10);
		if (errno || end == v || *end)
			REFUSE("--rounds takes a whole number of rounds a side (1 to %d); got '%s'",
			       AB_MAX_ROUNDS, v);
		ac->spec.rounds = r < INT_MIN ? INT_MIN : r > INT_MAX ? INT_MAX : (int)r;
	} else if (!strcmp(n, "threshold")) {
		if (parse_percent(v, &ac->spec.threshold))
			REFUSE("--threshold takes a percentage in [0, 100), e.g. 1 or 0.5%%; got '%s'",
			       v);
	} else if (!strcmp(n, "calibrate")) {
		ac->spec.calibrate = opt_parse_bool(v) == 1;
	} else if (!strcmp(n, "elasticity-from")) {
		/* said now, not after the rounds; what DIR holds, compare says */
		if (!is_dir(v))
			REFUSE("--elasticity-from takes a calibration batch made with "
			       "--clock-elasticity; '%s' is not a directory", v);
		ac->spec.elasticity_from = v;
	} else {
		BUG("zlb ab's option --%s is not read", n);
	}
	return 0;
}

/* The A/B's own options into ac->spec; zlb run's into ac->given (and ac->kept). */
static int parse_args(struct ab_cmd *ac, int argc, char **argv, int *help)
{
	int only_pos = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = NULL;
		const struct opt_def *d = NULL;
		enum opt_arg k;

		if (only_pos || a[0] != '-' || !strcmp(a, "-")) {
			strvec_push(&ac->pos, a);
			continue;
		}
		if (!strcmp(a, "--")) {
			only_pos = 1;
			continue;
		}
		k = opt_next(ab_option_defs, argc, argv, &i, &d, &v);
		if (k == OPT_ARG_HELP || k == OPT_ARG_VERSION) {
			*help = k == OPT_ARG_HELP ? OPT_WANT_HELP : OPT_WANT_VERSION;
			return 0;
		}
		if (k == OPT_ARG_ERROR)
			REFUSE("%s", !strcmp(a, "--axis") ? "--axis needs NAME=VALUE_A,VALUE_B" :
			       last_error());
		if (k == OPT_ARG_OPTION) {
			if (parse_own(ac, d, v))
				return ZLB_EXIT_USAGE;
			continue;
		}
		/* A zlb run option: ac->kept (with its value) for every round. */
		d = opt_find(run_option_defs, a);
		if (!d) {
			const char *near = opt_suggest(ab_option_defs, a);

			if (!near)
				near = opt_suggest(run_option_defs, a);
			if (near)
				REFUSE("unknown option '%s'; did you mean --%s?", a, near);
			REFUSE("unknown option '%s'", a);
		}
		{
			int strip = !strcmp(d->name, "runs-dir") ||
				    !strcmp(d->name, "isolate-tuner-cache");
			int has_value = d->kind != OPT_BOOL && !strchr(a, '=') && i + 1 < argc;

			strvec_push(&ac->given, a);
			if (!strip)
				strvec_push(&ac->kept, a);
			if (has_value) {
				strvec_push(&ac->given, argv[++i]);
				if (!strip)
					strvec_push(&ac->kept, argv[i]);
			}
		}
	}
	return 0;
}

/*
 * The switches written with <VENDOR>, now that the backend is known: its
 * FlagTree vendor put in, then added as if given so. Returns 0, or a usage
 * error's status.
 */
static int expand_deferred(struct ab_cmd *ac)
{
	const struct backend_ops *b = backend_find(ac->cfg.backend);

	for (size_t i = 0; i < ac->deferred.nr; i++) {
		const char *d = ac->deferred.v[i], *text = strchr(d, ' ') + 1;
		char *x = ab_expand_vendor(text, b ? b->flagtree_vendor : NULL,
					   b ? b->name : ac->cfg.backend);
		int r;

		if (!x)
			REFUSE("%s", last_error());
		if (starts_with(d, "axis "))
			r = ab_spec_add_axis(&ac->spec, x);
		else
			r = ab_spec_add_env(&ac->spec, d[0] == 'b', x);
		free(x);
		if (r)
			REFUSE("%s", last_error());
	}
	if (ac->deferred.nr && ab_spec_finish(&ac->spec))
		REFUSE("%s", last_error());
	return 0;
}

/*
 * SWITCH_ALLOW_NO_IR_DIFF=1, the original's way of saying --allow-no-ir-diff.
 * Returns 0, or a usage error's status for a value that is not a boolean.
 */
static int allow_from_env(struct ab_cmd *ac)
{
	const char *v = getenv("SWITCH_ALLOW_NO_IR_DIFF");

	if (!v || !*v)
		return 0;
	if (!strcmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "yes") ||
	    !strcasecmp(v, "on")) {
		ac->spec.allow_no_ir_diff = 1;
		return 0;
	}
	if (!strcmp(v, "0") || !strcasecmp(v, "false") || !strcasecmp(v, "no") ||
	    !strcasecmp(v, "off"))
		return 0;
	REFUSE("SWITCH_ALLOW_NO_IR_DIFF=%s: give 1 (measure after SWITCH_NO_IR_DIFF) or 0", v);
}

/* zlb run's options, checked once by its own table, and what they decide for the A/B. */
static int check_run_options(struct ab_cmd *ac)
{
	struct strvec check = STRVEC_INIT;
	enum opt_source isrc;
	int r;

	strvec_push(&check, "run");
	strvec_pushv(&check, (const char *const *)ac->pos.v);
	strvec_pushv(&check, (const char *const *)ac->given.v);
	ac->parsed = 1;
	r = run_config_parse(&ac->cfg, (int)check.nr, check.v, environ, &ac->raw);
	strvec_clear(&check);
	if (r < 0)
		REFUSE("%s", last_error());
	if (ac->cfg.replay_from)
		REFUSE("%s: zlb ab records A's first round itself and replays it in every "
		       "other run; drop it", opt_source_of(run_option_defs, &ac->raw, "replay-from") ==
		       OPT_FROM_FLAG ? "--replay-from" : "REPLAY_FROM");
	isrc = opt_source_of(run_option_defs, &ac->raw, "isolate-tuner-cache");
	if (ac->spec.shared_tuner_cache && isrc == OPT_FROM_FLAG && ac->cfg.isolate_tuner_cache)
		REFUSE("--shared-tuner-cache and --isolate-tuner-cache contradict each other");
	ac->isolate = ac->spec.shared_tuner_cache ? 0 :
		      isrc == OPT_FROM_DEFAULT ? 1 : ac->cfg.isolate_tuner_cache;
	if (ac->spec.shape_sets.nr && opt_source_of(run_option_defs, &ac->raw, "shapes") ==
	    OPT_FROM_FLAG)
		REFUSE("--shape-set gives each A/B its shape file; drop --shapes");
	if (expand_deferred(ac))
		return ZLB_EXIT_USAGE;
	if (ac->spec.calibrate && ac->spec.elasticity_from)
		REFUSE("--calibrate reads s in R and --elasticity-from %s takes it from there: "
		       "give one", ac->spec.elasticity_from);
	if (ac->spec.calibrate && ac->cfg.clock_elasticity)
		REFUSE("--calibrate reads s in R alone, and --clock-elasticity in every round "
		       "(its burns then reach the measured rows): give one");
	if (ac->spec.calibrate && !strcmp(ac->cfg.l2_mode, "cold"))
		REFUSE("--calibrate reads the clock elasticity of hot rows, and --l2 cold has "
		       "none to read (a cold row's calls read from HBM): drop --calibrate");
	if (!ac->cfg.ir && !ac->spec.allow_no_ir_diff)
		REFUSE("--ir off leaves the check after round 1 (did the switch change the "
		       "IR?) nothing to read; add --allow-no-ir-diff to measure without it");
	ac->runs_dir = ac->cfg.runs_dir ? ac->cfg.runs_dir : "runs";
	strvec_pushv(&ac->run_args, (const char *const *)ac->pos.v);
	strvec_pushv(&ac->run_args, (const char *const *)ac->kept.v);
	return 0;
}

/*
 * Each side as its rounds will run: options parsed and preflight passed.
 * set: the shape file every round of that A/B adds (--shape-set), or NULL.
 */
static int prepare_sides(struct ab_cmd *ac, const char *set)
{
	for (int s = 0; s < 2; s++) {
		if (ac->pfdone[s]) {
			preflight_release(&ac->pf[s]);
			ac->pfdone[s] = 0;
		}
		if (ac->sparsed[s]) {
			run_config_release(&ac->scfg[s]);
			ac->sparsed[s] = 0;
		}
		strvec_clear(&ac->side_env[s]);
	}
	for (int s = 0; s < 2; s++) {
		const struct ab_side *side = &ac->spec.side[s];
		struct strvec sargv = STRVEC_INIT;
		struct opt_values sraw = { 0 };
		int r;

		ab_side_env(side, environ, &ac->side_env[s]);
		strvec_push(&sargv, "run");
		strvec_pushv(&sargv, (const char *const *)ac->run_args.v);
		strvec_pushl(&sargv, "--runs-dir", ac->runs_dir, NULL);
		strvec_push(&sargv, ac->isolate ? "--isolate-tuner-cache=1" :
			    "--isolate-tuner-cache=0");
		if (side->python)
			strvec_pushl(&sargv, "--python", side->python, NULL);
		if (side->flaggems_dir)
			strvec_pushl(&sargv, "--flaggems-dir", side->flaggems_dir, NULL);
		if (set)
			strvec_pushl(&sargv, "--shapes", set, NULL);
		r = run_config_parse(&ac->scfg[s], (int)sargv.nr, sargv.v, ac->side_env[s].v, &sraw);
		opt_values_release(&sraw);
		strvec_clear(&sargv);
		ac->sparsed[s] = 1;
		if (r < 0)
			REFUSE("side %s: %s", side->name, last_error());
		ac->pfdone[s] = 1;
		if (preflight_run(&ac->pf[s], &ac->scfg[s], ac->side_env[s].v)) {
			if (set)
				fprintf(stderr, "zlb ab: shape set %s:\n", set);
			print_preflight(&ac->pf[s], side->name, ac->cfg.color);
			return ZLB_EXIT_PREFLIGHT;
		}
	}
	if (strcmp(ac->pf[0].plan.target.op, ac->pf[1].plan.target.op))
		REFUSE("A measures '%s' and B '%s' (their checkouts resolve the operator "
		       "differently); name it with --op-file or --test-node", ac->pf[0].plan.target.op,
		       ac->pf[1].plan.target.op);
	return 0;
}

static void ab_cmd_release(struct ab_cmd *ac)
{
	for (int s = 0; s < 2; s++) {
		if (ac->pfdone[s])
			preflight_release(&ac->pf[s]);
		if (ac->sparsed[s])
			run_config_release(&ac->scfg[s]);
		strvec_clear(&ac->side_env[s]);
	}
	if (ac->parsed)
		run_config_release(&ac->cfg);
	opt_values_release(&ac->raw);
	strvec_clear(&ac->pos);
	strvec_clear(&ac->given);
	strvec_clear(&ac->kept);
	strvec_clear(&ac->run_args);
	strvec_clear(&ac->deferred);
	ab_spec_release(&ac->spec);
}

int cmd_ab(int argc, char **argv)
{
	struct ab_cmd ac;
	struct stream_reporter term;
	struct ab_plan plan;
	char exe[PATH_MAX];
	int rc, help = 0;
	ssize_t n;

	memset(&ac, 0, sizeof(ac));
	ab_spec_init(&ac.spec);
	strvec_init(&ac.pos);
	strvec_init(&ac.given);
	strvec_init(&ac.kept);
	strvec_init(&ac.run_args);
	strvec_init(&ac.deferred);
	strvec_init(&ac.side_env[0]);
	strvec_init(&ac.side_env[1]);
	set_error_routine(error_quiet);

	rc = parse_args(&ac, argc, argv, &help);
	if (!rc && help) {
		rc = help == OPT_WANT_HELP ? cli_help("ab", &ab_doc) : cli_version();
		goto out;
	}
	if (rc)
		goto out;
	if ((rc = allow_from_env(&ac)))
		goto out;
	/* With <VENDOR> in a switch, the sides are complete only once it is expanded. */
	if (!ac.deferred.nr && ab_spec_finish(&ac.spec)) {
		rc = usage_error("ab", "%s", last_error());
		goto out;
	}
	if ((rc = check_run_options(&ac)))
		goto out;
	if (ac.spec.shape_sets.nr) {
		for (size_t i = 0; i < ac.spec.shape_sets.nr && !rc; i++)
			rc = prepare_sides(&ac, ac.spec.shape_sets.v[i]);
	} else {
		rc = prepare_sides(&ac, NULL);
	}
	if (rc)
		goto out;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0) {
		fprintf(stderr, "zlb ab: cannot find zlb's own binary (/proc/self/exe): %s\n",
			strerror(errno));
		rc = ZLB_EXIT_IO;
		goto out;
	}
	exe[n] = '\0';

	memset(&plan, 0, sizeof(plan));
	plan.spec = &ac.spec;
	plan.exe = exe;
	plan.envp = environ;
	plan.runs_dir = ac.runs_dir;
	plan.op = ac.pf[0].plan.target.op;
	plan.checkout[0] = ac.pf[0].plan.target.dir;
	plan.checkout[1] = ac.pf[1].plan.target.dir;
	plan.run_args = &ac.run_args;
	plan.isolate_tuner_cache = ac.isolate;
	plan.color = term_color_wanted(STDOUT_FILENO, ac.cfg.color);
	plan.color_setting = ac.cfg.color;
	plan.warn_color = term_color_wanted(STDERR_FILENO, ac.cfg.color);
	stream_reporter_init(&term, stdout, stderr);
	/* -q and -v are zlb run's, given to every round; zlb ab's own lines follow them */
	term.verbosity = ac.cfg.quiet ? REPORT_QUIET : ac.cfg.verbose ? REPORT_VERBOSE :
			 REPORT_NORMAL;
	plan.rep = &term.r;
	/* ab_execute reports what the parts it calls fail with; no second copy */
	set_error_routine(error_quiet);
	rc = ac.spec.shape_sets.nr ? ab_execute_sets(&plan) : ab_execute(&plan);
out:
	ab_cmd_release(&ac);
	return rc;
}
