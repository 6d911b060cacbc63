/*
 * zlb ab: one operator, build A against build B, in interleaved rounds
 * (src/ab/ab.h for the scheme).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/usage.h"
#include "ab/ab.h"
#include "lib/error.h"
#include "lib/options.h"
#include "run/preflight.h"
#include "run/run_config.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"
#include "lib/term.h"

extern char **environ;

static const char usage_text[] =
	"usage: zlb ab [OP] --axis NAME=VALUE_A,VALUE_B [--rounds N] [zlb run options]\n"
	"       zlb ab [OP] --a-env K=V --b-env K=V ... [options]\n"
	"       zlb ab [OP] --a-python PYTHON_A --b-python PYTHON_B [options]\n"
	"       zlb ab [OP] --a-flaggems-dir DIR_A --b-flaggems-dir DIR_B [options]\n"
	"\n"
	"Measure OP on build A and build B in interleaved rounds (A1 B1 A2 B2 ...), each\n"
	"round a `zlb run` into <runs-dir>/ab_<op>_<time>/<A|B>/r<k>/. A1 records the\n"
	"autotune configs; every other run, B1 included, replays A1's, so both sides run\n"
	"one set of configs. Before round 1 each switch variable is looked up in the\n"
	"FlagGems source (a warning when it appears nowhere: renamed or removed\n"
	"upstream?). After round 1 the IR of A1 and B1 is fingerprinted: byte-identical\n"
	"IR (or none on either side) means the switch changed no generated code, and\n"
	"zlb ab stops with SWITCH_NO_IR_DIFF. At the end one `zlb compare` over all\n"
	"rounds writes compare.csv and compare.json beside ab.json.\n"
	"\n"
	"the sides (at least one difference; they combine):\n"
	"  --axis NAME=VA,VB       A runs with NAME=VA, B with NAME=VB (one --axis; one\n"
	"                          comma; an empty value sets the variable empty)\n"
	"  --a-env K=V, --b-env K=V\n"
	"                          more settings, repeatable; a variable named for one side\n"
	"                          only is removed from the other side's environment\n"
	"  --a-python P, --b-python P\n"
	"                          each side's interpreter (two Triton builds in two\n"
	"                          environments); a side without one uses --python\n"
	"  --a-flaggems-dir D, --b-flaggems-dir D\n"
	"                          each side's FlagGems checkout\n"
	"zlb's own variables (a run option's environment default such as BENCH_LEVEL or\n"
	"ZL_TIMER, or ZLB_*) are caliber and cannot differ between the sides.\n"
	"\n"
	"options:\n"
	"  --rounds N              rounds a side, 1 to 100 (default 3)\n"
	"  --allow-no-ir-diff      go on after SWITCH_NO_IR_DIFF (measure anyway)\n"
	"  --shared-tuner-cache    run on the machine's FlagGems tuner cache instead of one\n"
	"                          isolated cache per run (the default, so A1 tunes for\n"
	"                          itself); also --isolate-tuner-cache=0 or\n"
	"                          ZL_ISOLATE_TUNER_CACHE=0\n"
	"  --threshold PCT         compare's band of no practical difference (default 1)\n"
	"  -h, --help              this text\n"
	"Every other option is a `zlb run` option (zlb run --help), given to every round\n"
	"unchanged; --runs-dir says where the ab directory goes; --replay-from is zlb ab's\n"
	"to decide and refused. Switches named TRITON_* or FLAGTREE_* belong to the\n"
	"compiler and are not looked up in FlagGems; only the checkout's src/ is searched.\n"
	"\n"
	"exit codes:\n"
	"  0    compared; no gems row SLOWER beyond the threshold\n"
	"  1    a gems row is SLOWER (or, from a round, pytest reported failed tests)\n"
	"  2    bad command line (nothing started)\n"
	"  3    a preflight check of side A or B failed (nothing started)\n"
	"  4    the rounds' calibers differ; nothing compared\n"
	"  7    zlb could not write the ab directory or the compare files\n"
	"  8    nothing to compare (no row SUCCESS on both sides)\n"
	"  10   SWITCH_NO_IR_DIFF: after round 1 the IR of A and B was byte-identical, or\n"
	"       neither side captured IR (without --allow-no-ir-diff)\n"
	"  130  interrupted; what was written is kept, ab.json says interrupted\n"
	"  other  a round failed: the exit status of that `zlb run` (5, 6, 128+N, ...)\n";

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
#define FAIL_USAGE(...) do { rc = usage_error("ab", __VA_ARGS__); goto out; } while (0)

int cmd_ab(int argc, char **argv)
{
	struct stream_reporter term;
	struct ab_spec spec;
	struct strvec pos = STRVEC_INIT, given = STRVEC_INIT, kept = STRVEC_INIT,
		      check = STRVEC_INIT, run_args = STRVEC_INIT;
	struct strvec side_env[2] = { STRVEC_INIT, STRVEC_INIT };
	struct run_config cfg, scfg[2];
	struct opt_values raw = { 0 };
	struct preflight pf[2];
	struct ab_plan plan;
	char exe[PATH_MAX];
	const char *runs_dir;
	int rc = ZLB_EXIT_OK, only_pos = 0, isolate, parsed = 0, sparsed[2] = { 0, 0 },
	    pfdone[2] = { 0, 0 };
	enum opt_source isrc;
	ssize_t n;

	ab_spec_init(&spec);
	memset(&cfg, 0, sizeof(cfg));
	memset(scfg, 0, sizeof(scfg));
	memset(pf, 0, sizeof(pf));
	set_error_routine(error_quiet);

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = NULL;
		const struct opt_def *d;
		int m;

		if (only_pos || a[0] != '-' || !strcmp(a, "-")) {
			strvec_push(&pos, a);
			continue;
		}
		if (!strcmp(a, "--")) {
			only_pos = 1;
			continue;
		}
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage_text, stdout);
			goto out;
		}
		if (!strcmp(a, "--allow-no-ir-diff")) {
			spec.allow_no_ir_diff = 1;
			continue;
		}
		if (!strcmp(a, "--shared-tuner-cache")) {
			spec.shared_tuner_cache = 1;
			continue;
		}
		if ((m = opt_take(argc, argv, &i, "--axis", &v))) {
			if (m < 0)
				FAIL_USAGE("--axis needs NAME=VALUE_A,VALUE_B");
			if (ab_spec_add_axis(&spec, v))
				FAIL_USAGE("%s", last_error());
			continue;
		}
		m = 0;
		for (int s = 0; s < 2 && !m; s++) {
			const char *env_flag = s ? "--b-env" : "--a-env";
			const char *py_flag = s ? "--b-python" : "--a-python";
			const char *dir_flag = s ? "--b-flaggems-dir" : "--a-flaggems-dir";

			if ((m = opt_take(argc, argv, &i, env_flag, &v))) {
				if (m < 0)
					FAIL_USAGE("%s needs NAME=VALUE", env_flag);
				if (ab_spec_add_env(&spec, s, v))
					FAIL_USAGE("%s", last_error());
			} else if ((m = opt_take(argc, argv, &i, py_flag, &v))) {
				if (m < 0 || ab_spec_set_python(&spec, s, v))
					FAIL_USAGE("%s", m < 0 ? "--a-python/--b-python need an "
						   "interpreter" : last_error());
			} else if ((m = opt_take(argc, argv, &i, dir_flag, &v))) {
				if (m < 0 || ab_spec_set_flaggems_dir(&spec, s, v))
					FAIL_USAGE("%s", m < 0 ? "--a-flaggems-dir/--b-flaggems-dir "
						   "need a directory" : last_error());
			}
		}
		if (m)
			continue;
		if ((m = opt_take(argc, argv, &i, "--rounds", &v))) {
			char *end;
			long r;

			errno = 0;
			r = m < 0 ? 0 : strtol(v, &end, 10);
			if (m < 0 || errno || end == v || *end)
				FAIL_USAGE("--rounds takes a whole number of rounds a side (1 to %d); "
					   "got '%s'", AB_MAX_ROUNDS, m < 0 ? "" : v);
			spec.rounds = r < INT_MIN ? INT_MIN : r > INT_MAX ? INT_MAX : (int)r;
			continue;
		}
		if ((m = opt_take(argc, argv, &i, "--threshold", &v))) {
			if (m < 0 || parse_percent(v, &spec.threshold))
				FAIL_USAGE("--threshold takes a percentage in [0, 100), e.g. 1 or "
					   "0.5%%; got '%s'", m < 0 ? "" : v);
			continue;
		}
		/* A zlb run option: kept (with its value) for every round. */
		d = opt_find(run_option_defs, a);
		{
			int strip = d && (!strcmp(d->name, "runs-dir") ||
					  !strcmp(d->name, "isolate-tuner-cache"));
			int has_value = d && d->kind != OPT_BOOL && !strchr(a, '=') && i + 1 < argc;

			strvec_push(&given, a);
			if (!strip)
				strvec_push(&kept, a);
			if (has_value) {
				strvec_push(&given, argv[++i]);
				if (!strip)
					strvec_push(&kept, argv[i]);
			}
		}
	}

	if (ab_spec_finish(&spec))
		FAIL_USAGE("%s", last_error());

	/* The run options, checked once by zlb run's own table. */
	strvec_push(&check, "run");
	strvec_pushv(&check, (const char *const *)pos.v);
	strvec_pushv(&check, (const char *const *)given.v);
	parsed = 1;
	if (run_config_parse(&cfg, (int)check.nr, check.v, environ, &raw) < 0)
		FAIL_USAGE("%s", last_error());
	if (cfg.replay_from)
		FAIL_USAGE("%s: zlb ab records A's first round itself and replays it in every "
			   "other run; drop it", opt_source_of(run_option_defs, &raw, "replay-from") ==
			   OPT_FROM_FLAG ? "--replay-from" : "REPLAY_FROM");
	isrc = opt_source_of(run_option_defs, &raw, "isolate-tuner-cache");
	if (spec.shared_tuner_cache && isrc == OPT_FROM_FLAG && cfg.isolate_tuner_cache)
		FAIL_USAGE("--shared-tuner-cache and --isolate-tuner-cache contradict each other");
	isolate = spec.shared_tuner_cache ? 0 :
		  isrc == OPT_FROM_DEFAULT ? 1 : cfg.isolate_tuner_cache;
	if (!cfg.ir && !spec.allow_no_ir_diff)
		FAIL_USAGE("--ir off leaves the check after round 1 (did the switch change the "
			   "IR?) nothing to read; add --allow-no-ir-diff to measure without it");
	runs_dir = cfg.runs_dir ? cfg.runs_dir : "runs";

	strvec_pushv(&run_args, (const char *const *)pos.v);
	strvec_pushv(&run_args, (const char *const *)kept.v);

	/* Each side as its rounds will run: options parsed and preflight passed. */
	for (int s = 0; s < 2; s++) {
		const struct ab_side *side = &spec.side[s];
		struct strvec sargv = STRVEC_INIT;
		struct opt_values sraw = { 0 };
		int r;

		ab_side_env(side, environ, &side_env[s]);
		strvec_push(&sargv, "run");
		strvec_pushv(&sargv, (const char *const *)run_args.v);
		strvec_pushl(&sargv, "--runs-dir", runs_dir, NULL);
		strvec_push(&sargv, isolate ? "--isolate-tuner-cache=1" : "--isolate-tuner-cache=0");
		if (side->python)
			strvec_pushl(&sargv, "--python", side->python, NULL);
		if (side->flaggems_dir)
			strvec_pushl(&sargv, "--flaggems-dir", side->flaggems_dir, NULL);
		r = run_config_parse(&scfg[s], (int)sargv.nr, sargv.v, side_env[s].v, &sraw);
		opt_values_release(&sraw);
		strvec_clear(&sargv);
		sparsed[s] = 1;
		if (r < 0)
			FAIL_USAGE("side %s: %s", side->name, last_error());
		if (preflight_run(&pf[s], &scfg[s], side_env[s].v)) {
			print_preflight(&pf[s], side->name, cfg.color);
			pfdone[s] = 1;
			rc = ZLB_EXIT_PREFLIGHT;
			goto out;
		}
		pfdone[s] = 1;
	}
	if (strcmp(pf[0].target.op, pf[1].target.op))
		FAIL_USAGE("A measures '%s' and B '%s' (their checkouts resolve the operator "
			   "differently); name it with --op-file or --test-node", pf[0].target.op,
			   pf[1].target.op);

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0) {
		fprintf(stderr, "zlb ab: cannot find zlb's own binary (/proc/self/exe): %s\n",
			strerror(errno));
		rc = ZLB_EXIT_IO;
		goto out;
	}
	exe[n] = '\0';
	/* A closed pipe on our stdout must not kill the rounds. */
	signal(SIGPIPE, SIG_IGN);

	memset(&plan, 0, sizeof(plan));
	plan.spec = &spec;
	plan.exe = exe;
	plan.envp = environ;
	plan.runs_dir = runs_dir;
	plan.op = pf[0].target.op;
	plan.checkout[0] = pf[0].target.dir;
	plan.checkout[1] = pf[1].target.dir;
	plan.run_args = &run_args;
	plan.isolate_tuner_cache = isolate;
	plan.color = term_color_wanted(STDOUT_FILENO, cfg.color);
	plan.color_setting = cfg.color;
	plan.warn_color = term_color_wanted(STDERR_FILENO, cfg.color);
	stream_reporter_init(&term, stdout, stderr);
	plan.rep = &term.r;
	/* ab_execute reports what the parts it calls fail with; no second copy */
	set_error_routine(error_quiet);
	rc = ab_execute(&plan);
out:
	for (int s = 0; s < 2; s++) {
		if (pfdone[s])
			preflight_release(&pf[s]);
		if (sparsed[s])
			run_config_release(&scfg[s]);
		strvec_clear(&side_env[s]);
	}
	if (parsed)
		run_config_release(&cfg);
	opt_values_release(&raw);
	strvec_clear(&pos);
	strvec_clear(&given);
	strvec_clear(&kept);
	strvec_clear(&check);
	strvec_clear(&run_args);
	ab_spec_release(&spec);
	return rc;
}
