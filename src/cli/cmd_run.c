/*
 * zlb run: measure one FlagGems operator end to end.
 */
#include <signal.h>
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

static const char usage_head[] =
	"usage: zlb run [OP] [options]\n"
	"       zlb run --test-node PATH/benchmark/test_x.py::test_op [options]\n"
	"\n"
	"Measure one FlagGems operator (torch vs gems) into runs/<op>_<YYYYmmdd-HHMMSS>/:\n"
	"run.log (ANSI-free), run_identity.json, shapes.yaml, results.jsonl, events.jsonl.\n"
	"Every option also reads the environment variable named below as its default.\n"
	"\n"
	"options:\n";

static const char usage_tail[] =
	"\n"
	"exit codes:\n"
	"  0    every selected benchmark ran and passed\n"
	"  1    pytest reported failed tests\n"
	"  2    bad command line or option value (nothing started)\n"
	"  3    a preflight check failed (PREFLIGHT_FAILED check=<name>; nothing started)\n"
	"  5    pytest collected no test\n"
	"  6    pytest itself failed (usage or internal error)\n"
	"  7    zlb could not write its run directory\n"
	"  130  interrupted (Ctrl-C / SIGTERM); the run directory keeps what was written\n"
	"  128+N  pytest was killed by signal N (e.g. 139: SIGSEGV)\n";

static void usage(FILE *out)
{
	char *backends = backend_names_help();

	fputs(usage_head, out);
	options_usage(out, run_option_defs);
	fprintf(out, "\nbackends: %s\n", backends);
	fputs(usage_tail, out);
	free(backends);
}

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
		if (rc > 0)
			usage(stdout);
		else
			fprintf(stderr, "zlb run: %s\n       (zlb run --help lists the options)\n",
				last_error());
		opt_values_release(&raw);
		run_config_release(&cfg);
		return rc > 0 ? ZLB_EXIT_OK : ZLB_EXIT_USAGE;
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
	/* A closed pipe on our stdout must not kill the run (and its children). */
	signal(SIGPIPE, SIG_IGN);

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

	rc = runner_run(&cfg, &pf.plan, environ, argc, argv, STDOUT_FILENO, &out);
	if (rc)
		fprintf(stderr, "zlb run: %s\n", last_error());
	rc = out.exit_code;
	run_outcome_release(&out);
	preflight_release(&pf);
	run_config_release(&cfg);
	return rc;
}
