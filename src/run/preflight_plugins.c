/* The extra plugins check of a run's preflight: modules pytest's -p will import. */
#include "run/preflight_int.h"

#include <stdlib.h>
#include <string.h>

#include "lib/error.h"
#include "lib/proc.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"

#define PLUGIN_PROBE_TIMEOUT_MS 60000

/*
 * Finds each module named in argv as pytest will (the checkout, where it
 * runs, first on the path), without importing the module itself.
 */
static const char plugin_probe[] =
	"import importlib.util as u, sys\n"
	"sys.path.insert(0, '')\n"
	"for n in sys.argv[1:]:\n"
	"    try:\n"
	"        ok = u.find_spec(n) is not None\n"
	"    except Exception:\n"
	"        ok = False\n"
	"    if not ok:\n"
	"        print('ZLB_MISSING ' + n)\n"
	"print('ZLB_PLUGINS_DONE')\n";

int preflight_check_plugins(struct preflight *pf, const struct run_config *cfg,
			    char *const *envp)
{
	struct strvec argv = STRVEC_INIT, env = STRVEC_INIT, missing = STRVEC_INIT;
	struct strbuf out = STRBUF_INIT, list = STRBUF_INIT;
	int rc, ret = 0;

	strvec_pushl(&argv, pf->plan.python, "-c", plugin_probe, NULL);
	/* The option table took module names only. */
	for (size_t i = 0; i < cfg->extra_plugins.nr; i++)
		strvec_push(&argv, cfg->extra_plugins.v[i]);
	if (argv.nr == 3) {
		strvec_clear(&argv);
		return 0;
	}
	run_plan_child_env(&pf->plan, envp, &env);
	rc = run_capture(argv.v, env.v, pf->plan.target.dir, PLUGIN_PROBE_TIMEOUT_MS, &out);
	if (rc != 0 || !strstr(out.buf, "ZLB_PLUGINS_DONE")) {
		strbuf_rtrim(&out);
		error("%s could not look for the extra plugins (exit %d)%s%s", pf->plan.python, rc,
		      out.len ? ": " : "", out.len > 300 ? out.buf + out.len - 300 : out.buf);
		ret = preflight_fail(pf, "plugins", "check that '%s -c pass' works", pf->plan.python);
		goto out;
	}
	for (const char *p = out.buf; (p = strstr(p, "ZLB_MISSING ")); ) {
		size_t n;

		p += strlen("ZLB_MISSING ");
		n = strcspn(p, "\r\n");
		strvec_pushf(&missing, "%.*s", (int)n, p);
		p += n;
	}
	if (missing.nr) {
		for (size_t i = 0; i < missing.nr; i++)
			strbuf_addf(&list, "%s'%s'", i ? ", " : "", missing.v[i]);
		error("extra plugin%s %s cannot be found by %s (from %s)", missing.nr > 1 ? "s" : "",
		      list.buf, pf->plan.python, pf->plan.target.dir);
		ret = preflight_fail(pf, "plugins", "install the module for that interpreter, put "
				     "it on PYTHONPATH, or drop it from --extra-plugins "
				     "(ZL_EXTRA_PLUGINS)");
	}
out:
	strvec_clear(&argv);
	strvec_clear(&env);
	strvec_clear(&missing);
	strbuf_release(&out);
	strbuf_release(&list);
	return ret;
}
