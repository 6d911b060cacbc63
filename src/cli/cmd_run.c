/*
 * zlb run: measure one FlagGems operator end to end.
 */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "backends/backend.h"
#include "cli/commands.h"
#include "cli/usage.h"
#include "run/preflight.h"
#include "run/run_config.h"
#include "run/runner.h"
#include "lib/term.h"

extern char **environ;

static const struct cmd_exit run_exits[] = {
	{ "0", "every selected benchmark ran and passed" },
	{ "1", "pytest reported failed tests" },
	{ "2", "bad command line or option value (nothing started)" },
	{ "3", "a preflight check failed (PREFLIGHT_FAILED check=<name>; nothing started)" },
	{ "5", "pytest collected no test" },
	{ "6", "pytest itself failed (usage or internal error)" },
	{ "7", "zlb could not write its run directory" },
	{ "130", "interrupted (Ctrl-C / SIGTERM); the run directory keeps what was written" },
	{ "128+N", "pytest was killed by signal N (e.g. 139: SIGSEGV)" },
	{ NULL, NULL },
};

static char *backends_note(void)
{
	char *names = backend_names_help(), *text = xstrfmt("backends: %s\n", names);

	free(names);
	return text;
}

const struct cmd_doc run_doc = {
	.name = "run",
	.summary = "measure one FlagGems operator into runs/<op>_<time>/",
	.synopsis = "[OP] [options]\n--test-node PATH/benchmark/test_x.py::test_op [options]",
	.about =
		"Measure one FlagGems operator (torch vs gems) into runs/<op>_<YYYYmmdd-HHMMSS>/:\n"
		"run.log (the whole output, ANSI-free), run_identity.json, shapes.yaml,\n"
		"results.jsonl, events.jsonl, autotune_records/, ir/ and ttgir/. The terminal\n"
		"shows zlb's header, the result tables, markers, failures and the summary;\n"
		"-v adds pytest's own output, -q leaves only the result line and errors.\n"
		"Every option also reads the environment variable named below as its default.\n",
	.opts = run_option_defs,
	.extra = backends_note,
	.exits = run_exits,
	.positional = CMD_ARG_NONE,
};

int cmd_run(int argc, char **argv)
{
	struct run_config cfg;
	struct opt_values raw = { 0 };
	struct preflight pf;
	struct run_outcome out;
	int rc, color;

	/* Library errors are reported once, here, with the command's name. */
	set_error_routine(error_quiet);
	rc = run_config_parse(&cfg, argc, argv, environ, &raw);
	if (rc) {
		rc = rc == 1 ? cli_help("run", &run_doc) : rc == 2 ? cli_version() :
		     usage_error("run", "%s", last_error());
		opt_values_release(&raw);
		run_config_release(&cfg);
		return rc;
	}
	opt_values_release(&raw);
	if (cfg.print_engine_env) {
		struct strvec env = STRVEC_INIT;
		run_config_engine_env(&cfg, &env);
		for (size_t i = 0; i < env.nr; i++)
			printf("%s\n", env.v[i]);
		strvec_clear(&env);
		run_config_release(&cfg);
		return ZLB_EXIT_OK;
	}
	rc = preflight_run(&pf, &cfg, environ);
	if (rc) {
		color = term_color_wanted(2, cfg.color);
		struct strbuf sb = STRBUF_INIT;

		preflight_failure_text(&pf, NULL, color, &sb);
		fputs(sb.buf, stderr);
		strbuf_release(&sb);
		preflight_release(&pf);
		run_config_release(&cfg);
		return ZLB_EXIT_PREFLIGHT;
	}

	rc = runner_run(&cfg, &pf.plan, environ, argv, STDOUT_FILENO, &out);
	if (rc)
		fprintf(stderr, "zlb run: %s\n", last_error());
	rc = out.exit_code;
	run_outcome_release(&out);
	preflight_release(&pf);
	run_config_release(&cfg);
	return rc;
}
