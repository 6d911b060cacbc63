#include "run/preflight.h"
#include "rundir/autotune_records.h"
#include "rundir/preflight_report.h"
#include "rundir/rundir.h"

#include <ctype.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <jansson.h>

#include "lib/jsonfile.h"
#include "providers/flaggems_dtypes.h"
#include "lib/paths.h"
#include "run/plugin_plan.h"
#include "run/preflight_int.h"
#include "lib/proc.h"
#include "lib/term.h"

#define PROBE_TIMEOUT_MS 60000

int preflight_fail(struct preflight *pf, const char *check, const char *fix_fmt, ...)
{
	va_list ap;

	pf->failed_check = check;
	strbuf_reset(&pf->why);
	strbuf_addstr(&pf->why, last_error());
	va_start(ap, fix_fmt);
	strbuf_vaddf(&pf->fix, fix_fmt, ap);
	va_end(ap);
	return -1;
}

static void preflight_init(struct preflight *pf)
{
	memset(pf, 0, sizeof(*pf));
	run_plan_init(&pf->plan);
	strbuf_init(&pf->why, 0);
	strbuf_init(&pf->fix, 0);
}

/* Where zlb's own pieces live: build tree or install prefix. */
static void locate_own_files(struct preflight *pf, char *const *envp)
{
	char *exe = self_exe_dir();
	const char *env_dir = getenv("ZLB_PYTHON_DIR");
	const char *env_lib = getenv("ZLB_TIMER_LIB");

	if (env_dir && *env_dir)
		pf->plan.python_dir = path_absolute(env_dir);
	if (env_lib && *env_lib)
		pf->plan.timer_lib = path_absolute(env_lib);
	if (!exe)
		return;
	const char *const py_cands[] = { "../python", "../share/zlbench/python", NULL };
	for (int i = 0; py_cands[i] && !pf->plan.python_dir; i++) {
		char *d = path_join(exe, py_cands[i]);
		char *init = path_join(d, "zlbench/__init__.py");
		if (is_file(init))
			pf->plan.python_dir = path_absolute(d);
		free(init);
		free(d);
	}
	const char *const lib_cands[] = { "libzlbtimer.so", "../lib/zlbench/libzlbtimer.so", NULL };
	for (int i = 0; lib_cands[i] && !pf->plan.timer_lib; i++) {
		char *l = path_join(exe, lib_cands[i]);
		if (is_file(l))
			pf->plan.timer_lib = path_absolute(l);
		free(l);
	}
	free(exe);
}

static const char probe_script[] =
	"import json, sys, importlib.util as u\n"
	"def spec(n):\n"
	"    try:\n"
	"        s = u.find_spec(n)\n"
	"        return s.origin if s else None\n"
	"    except Exception:\n"
	"        return None\n"
	"out = {'python': sys.version.split()[0], 'executable': sys.executable}\n"
	"try:\n"
	"    import pytest\n"
	"    out['pytest'] = pytest.__version__\n"
	"except Exception as e:\n"
	"    out['pytest'] = None\n"
	"    out['pytest_error'] = '%s: %s' % (type(e).__name__, e)\n"
	"out['zlbench'] = spec('zlbench')\n"
	"for n in ('flag_gems', 'flaggems_vllm'):\n"
	"    out[n] = spec(n)\n"
	"print('ZLB_PROBE ' + json.dumps(out))\n";

/*
 * What identifies the interpreter file: a replaced file has another inode,
 * one rewritten in place another size, mtime or ctime (ctime cannot be set
 * back by touch or cp -p). stat follows symbolic links: the file that is run.
 */
static char *file_identity(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return NULL;
	return xstrfmt("%ju:%ju:%jd:%jd:%jd", (uintmax_t)st.st_dev, (uintmax_t)st.st_ino,
		       (intmax_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec,
		       (intmax_t)st.st_size,
		       (intmax_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec);
}

/*
 * A process's start time in clock ticks since boot (/proc/<pid>/stat field
 * 22): with the pid it names one process, even after the pid is reused.
 */
static int process_start(pid_t pid, unsigned long long *ticks)
{
	char path[64], buf[1024], *rp;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/*
	 * The command name may hold spaces and parentheses: count from the last
	 * ')'. Fields after it are single words; the start time is the 20th.
	 */
	rp = strrchr(buf, ')');
	for (int field = 3; rp && field <= 22; field++) {
		rp = strchr(rp, ' ');
		if (rp)
			rp++;
	}
	if (!rp || !isdigit((unsigned char)*rp))
		return -1;
	*ticks = strtoull(rp, NULL, 10);
	return 0;
}

char *preflight_probed_value(const struct preflight *pf)
{
	unsigned long long start;

	if (!pf->plan.python || !pf->plan.python_identity || !pf->plan.python_facts ||
	    strpbrk(pf->plan.python, "\t\n") || strpbrk(pf->plan.python_facts, "\t\n") ||
	    process_start(getpid(), &start))
		return NULL;
	return xstrfmt("%s\t%s\t%ld:%llu\t%s", pf->plan.python, pf->plan.python_identity,
		       (long)getpid(), start, pf->plan.python_facts);
}

static const char *env_value(char *const *envp, const char *key)
{
	size_t n = strlen(key);

	for (; envp && *envp; envp++)
		if (!strncmp(*envp, key, n) && (*envp)[n] == '=')
			return *envp + n + 1;
	return NULL;
}

/*
 * The facts handed down in PREFLIGHT_PROBED_ENV, when the value vouches for
 * this interpreter to this process (preflight.h says when); else NULL, and
 * the caller probes. Never an error: a stale value only costs a probe.
 */
static json_t *handed_down_facts(const struct preflight *pf, char *const *envp)
{
	const char *v = env_value(envp, PREFLIGHT_PROBED_ENV);
	char *copy, *field[4], *p, *end;
	unsigned long long start, want_start;
	json_t *facts = NULL;
	long pid;
	int n = 0;

	if (!v || !*v)
		return NULL;
	/* path, identity, pid:start, facts: the facts are last and hold no tab. */
	copy = xstrdup(v);
	for (p = copy; n < 4 && p; n++) {
		field[n] = p;
		if ((p = strchr(p, '\t')))
			*p++ = '\0';
	}
	if (n != 4 || p || strcmp(field[0], pf->plan.python) || strcmp(field[1], pf->plan.python_identity))
		goto out;
	pid = strtol(field[2], &end, 10);
	if (end == field[2] || *end != ':' || pid != (long)getppid())
		goto out;
	want_start = strtoull(end + 1, &end, 10);
	if (*end || process_start((pid_t)pid, &start) || start != want_start)
		goto out;
	facts = json_loads(field[3], 0, NULL);
	if (facts && !json_is_object(facts)) {
		json_decref(facts);
		facts = NULL;
	}
out:
	free(copy);
	return facts;
}

/* Spawn the probe of the interpreter in envp and parse its answer. */
static int probe_python(struct preflight *pf, char *const *envp, json_t **facts)
{
	struct strvec env = STRVEC_INIT;
	struct strbuf out = STRBUF_INIT;
	json_error_t jerr;
	const char *line;
	int rc;

	run_plan_child_env(&pf->plan, envp, &env);
	char *argv[] = { pf->plan.python, "-c", (char *)probe_script, NULL };
	rc = run_capture(argv, env.v, NULL, PROBE_TIMEOUT_MS, &out);
	strvec_clear(&env);
	line = strstr(out.buf, "ZLB_PROBE ");
	if (rc != 0 || !line) {
		strbuf_rtrim(&out);
		error("%s could not be probed (exit %d)%s%s", pf->plan.python, rc,
		      out.len ? ": " : "", out.len > 300 ? out.buf + out.len - 300 : out.buf);
		strbuf_release(&out);
		return preflight_fail(pf, "python", "check that '%s -c pass' works", pf->plan.python);
	}
	*facts = json_loads(line + 10, JSON_DISABLE_EOF_CHECK, &jerr);
	strbuf_release(&out);
	if (!*facts || !json_is_object(*facts)) {
		error("the Python probe answered garbage: %s", *facts ? "not an object" : jerr.text);
		json_decref(*facts);
		*facts = NULL;
		return preflight_fail(pf, "python", "check the interpreter given by --python");
	}
	return 0;
}

/* trust: whether a value of PREFLIGHT_PROBED_ENV in envp may stand for the probe. */
static int check_python(struct preflight *pf, const struct run_config *cfg,
			char *const *envp, int trust, json_t **facts)
{
	pf->plan.python = find_program(cfg->python);
	if (!pf->plan.python) {
		error("Python interpreter '%s' was not found%s", cfg->python,
		      strchr(cfg->python, '/') ? "" : " on PATH");
		return preflight_fail(pf, "python", "point --python (ZLB_PYTHON) at the python that "
			    "has torch, triton and pytest");
	}
	if (!pf->plan.python_dir) {
		error("zlb's Python package (zlbench) was not found beside the zlb binary");
		return preflight_fail(pf, "python", "run zlb from its build tree (build/zlb) or an "
			    "install, or set ZLB_PYTHON_DIR to the folder holding zlbench/");
	}
	/* Before the probe: a file changed while it runs must not match later. */
	pf->plan.python_identity = file_identity(pf->plan.python);
	if (trust && pf->plan.python_identity && (*facts = handed_down_facts(pf, envp))) {
		pf->plan.python_check = "batch";
	} else {
		if (probe_python(pf, envp, facts))
			return -1;
		pf->plan.python_check = "probed";
	}
	pf->plan.python_facts = json_dumps(*facts, JSON_COMPACT);
	pf->plan.python_version = xstrdup(json_string_value(json_object_get(*facts, "python"))
				     ? json_string_value(json_object_get(*facts, "python")) : "?");
	if (!json_string_value(json_object_get(*facts, "pytest"))) {
		const char *e = json_string_value(json_object_get(*facts, "pytest_error"));
		error("%s cannot import pytest (%s)", pf->plan.python, e ? e : "unknown error");
		return preflight_fail(pf, "python", "install pytest for that interpreter, or choose "
			    "another with --python (ZLB_PYTHON)");
	}
	pf->plan.pytest_version = xstrdup(json_string_value(json_object_get(*facts, "pytest")));
	if (!json_string_value(json_object_get(*facts, "zlbench"))) {
		error("%s cannot import zlbench from %s", pf->plan.python, pf->plan.python_dir);
		return preflight_fail(pf, "python", "set ZLB_PYTHON_DIR to the folder holding zlbench/");
	}
	return 0;
}

static int check_checkout(struct preflight *pf, const struct run_config *cfg,
			  json_t *facts)
{
	struct strbuf looked = STRBUF_INIT;
	const char *importable = json_string_value(json_object_get(facts, "flag_gems"));
	char *dir = NULL;

	if (cfg->test_node && !cfg->flaggems_dir) {
		/* The node names its own checkout. */
		if (flaggems_resolve(&pf->plan.target, NULL, NULL, NULL, cfg->test_node))
			return preflight_fail(pf, "benchmark_file", "give a node like "
				    "/path/FlagGems/benchmark/test_softmax.py::test_softmax");
		pf->plan.looked = xstrfmt("the checkout of test node %s", cfg->test_node);
		return 0;
	}
	if (flaggems_find_checkout(cfg->flaggems_dir, importable, &looked, &dir)) {
		pf->plan.looked = strbuf_detach(&looked, NULL);
		error("%s (looked in: %s)", last_error(), pf->plan.looked);
		return preflight_fail(pf, "flaggems_dir", "set FLAGGEMS_DIR or --flaggems-dir to a "
			    "FlagGems checkout (the folder holding benchmark/ and src/)");
	}
	pf->plan.looked = strbuf_detach(&looked, NULL);
	if (flaggems_resolve(&pf->plan.target, dir, cfg->op, cfg->op_file, cfg->test_node)) {
		free(dir);
		return preflight_fail(pf, "benchmark_file", "name the operator as its test function "
			    "without 'test_' (zlb run softmax), add --op-file when "
			    "several files define it, or pass --test-node");
	}
	free(dir);
	return 0;
}

/*
 * DTYPES: each name must be one the checkout's --dtypes accepts (read from
 * its conftest), so a name this FlagGems does not know stops here with the
 * list, not in pytest's argument parser. A conftest zlb cannot read is
 * said, and upstream's names stand in.
 */
static int check_dtypes(struct preflight *pf, const struct run_config *cfg)
{
	struct strvec accepted = STRVEC_INIT;
	struct strbuf why = STRBUF_INIT, list = STRBUF_INIT;
	int ret = 0;

	if (!cfg->dtypes.nr)
		return 0;
	if (flaggems_dtype_choices(pf->plan.target.dir, &accepted, &why)) {
		strvec_pushf(&pf->plan.notes, "warning: the --dtypes names of this FlagGems could "
			     "not be read (%s): checked against upstream's", why.buf);
		strvec_pushv(&accepted, flaggems_default_dtypes);
	}
	for (size_t i = 0; i < accepted.nr; i++)
		strbuf_addf(&list, "%s%s", i ? ", " : "", accepted.v[i]);
	for (size_t i = 0; i < cfg->dtypes.nr && !ret; i++) {
		if (strvec_find(&accepted, cfg->dtypes.v[i]) >= 0)
			continue;
		error("DTYPES: '%s' is not a dtype FlagGems' --dtypes accepts in %s/benchmark/"
		      "conftest.py (it accepts: %s)", cfg->dtypes.v[i], pf->plan.target.dir,
		      list.buf);
		ret = preflight_fail(pf, "dtypes", "give --dtypes (DTYPES) names from that list, "
				     "or leave it unset for each operator's own dtypes");
	}
	strvec_clear(&accepted);
	strbuf_release(&why);
	strbuf_release(&list);
	return ret;
}

/*
 * What B replays must be a recording made under the same terms: a replay
 * run has no records (chained replays drift from A), another backend's
 * configs do not exist here, and USE_FLAGTUNE chooses the config space. A
 * recording without meta.json (made before it existed) replays with a
 * warning that those terms went unchecked.
 */
static int check_records(struct preflight *pf, const struct run_config *cfg)
{
	char *meta_path = xstrfmt("%s/autotune_records/meta.json", pf->plan.replay_from);
	char *records = NULL;
	json_t *meta = NULL;
	const char *backend;
	int rc, ret = -1;

	records = xstrfmt("%s/autotune_records/%s.json", pf->plan.replay_from, pf->plan.target.op);
	rc = json_read_file(meta_path, &meta);
	if (rc > 0 && is_file(records)) {
		/*
		 * A recording older than meta.json (the original tool wrote none):
		 * its records replay; what meta.json would have let us check is said.
		 */
		strvec_pushf(&pf->plan.notes, "warning: REPLAY_FROM %s has no "
			     "autotune_records/meta.json (a recording made before it existed): "
			     "its backend and USE_FLAGTUNE cannot be checked; replaying %s.json "
			     "as it is", pf->plan.replay_from, pf->plan.target.op);
		ret = 0;
		goto out;
	}
	if (rc) {
		if (rc > 0)
			error("REPLAY_FROM %s has no autotune_records/meta.json nor %s.json: it is "
			      "not a recording run (a replay run records nothing)",
			      pf->plan.replay_from, pf->plan.target.op);
		ret = preflight_fail(pf, "replay_dir", "point --replay-from at the run directory of "
			   "the recording side (A), never at a replay of it");
		goto out;
	}
	backend = json_str(meta, "backend");
	if (!backend || strcmp(backend, pf->plan.backend->name)) {
		error("REPLAY_FROM %s was recorded on backend '%s', this run is on '%s'",
		      pf->plan.replay_from, backend ? backend : "?", pf->plan.backend->name);
		ret = preflight_fail(pf, "replay_dir", "replay records of the same backend only");
		goto out;
	}
	if (json_is_boolean(json_object_get(meta, "use_flagtune")) &&
	    json_is_true(json_object_get(meta, "use_flagtune")) != !!cfg->use_flagtune) {
		error("REPLAY_FROM %s was recorded with USE_FLAGTUNE=%d, this run has %d: "
		      "the config spaces differ", pf->plan.replay_from,
		      json_is_true(json_object_get(meta, "use_flagtune")), cfg->use_flagtune);
		ret = preflight_fail(pf, "replay_dir", "set USE_FLAGTUNE (--use-flagtune) as the "
			   "recording side had it");
		goto out;
	}
	if (!is_file(records)) {
		error("REPLAY_FROM %s holds no records for %s (recorded op: %s)",
		      pf->plan.replay_from, pf->plan.target.op,
		      json_str(meta, "op") ? json_str(meta, "op") : "?");
		ret = preflight_fail(pf, "replay_dir", "replay the recording run of the same operator");
		goto out;
	}
	/* The plugin loads every record of the directory: each must be one it can read. */
	if (json_integer_value(json_object_get(meta, "schema_version")) != AUTOTUNE_SCHEMA_VERSION) {
		error("REPLAY_FROM %s: autotune_records/meta.json has schema_version %s; this zlb "
		      "reads %d", pf->plan.replay_from,
		      json_is_integer(json_object_get(meta, "schema_version")) ? "another" : "none",
		      AUTOTUNE_SCHEMA_VERSION);
		ret = preflight_fail(pf, "replay_dir", "record A again with this zlb");
		goto out;
	}
	if (autotune_records_check_dir(pf->plan.replay_from)) {
		ret = preflight_fail(pf, "replay_dir", "record A again (zlb run %s without "
				     "--replay-from) and replay that run", pf->plan.target.op);
		goto out;
	}
	ret = 0;
out:
	json_decref(meta);
	free(meta_path);
	free(records);
	return ret;
}

static int check_replay(struct preflight *pf, const struct run_config *cfg)
{
	char *abs;

	if (!cfg->replay_from)
		return 0;
	abs = path_absolute(cfg->replay_from);
	if (!is_dir(abs)) {
		error(is_file(abs) ? "REPLAY_FROM %s is a file, not a run directory"
				   : "REPLAY_FROM %s does not exist", abs);
		free(abs);
		return preflight_fail(pf, "replay_dir", "point --replay-from (REPLAY_FROM) at the run "
			    "directory of the recording side, e.g. runs/softmax_20260101-120000");
	}
	pf->plan.replay_from = abs;
	return check_records(pf, cfg);
}

static int check_device(struct preflight *pf, const struct run_config *cfg,
			char *const *envp)
{
	struct strbuf why = STRBUF_INIT;
	struct strvec env = STRVEC_INIT;
	int rc = pf->plan.backend->list_devices(&pf->plan.devices, &why);

	if (rc) {
		if (rc > 0)
			error("no %s device is visible: %s", pf->plan.backend->name, why.buf);
		strbuf_release(&why);
		return preflight_fail(pf, "device", "run on a machine with a %s device, check the "
			    "driver and the visibility variables, or pick another "
			    "--backend (ZL_BACKEND)", pf->plan.backend->name);
	}
	strbuf_release(&why);
	if (!pf->plan.devices.nr) {
		error("no %s device is visible", pf->plan.backend->name);
		return preflight_fail(pf, "device", "check the driver and %s",
			    pf->plan.backend->visibility_keys[0]);
	}
	if (cfg->device >= pf->plan.devices.nr) {
		error("device %d was asked for, but only %d %s device(s) are visible",
		      cfg->device, pf->plan.devices.nr, pf->plan.backend->name);
		return preflight_fail(pf, "device", "pick --device 0..%d (ZL_DEVICE)", pf->plan.devices.nr - 1);
	}
	strvec_pushv(&env, (const char *const *)envp);
	pf->plan.physical_device = backend_physical_device(pf->plan.backend, &env, cfg->device);
	strvec_clear(&env);
	if (!pf->plan.physical_device)
		return preflight_fail(pf, "device", "pick a device index among those %s leaves visible",
			    pf->plan.backend->visibility_keys[0]);
	return 0;
}

static int check_runs_dir(struct preflight *pf, const struct run_config *cfg)
{
	char *abs = path_absolute(cfg->run_dir ? cfg->run_dir : cfg->runs_dir);
	char *probe = abs;

	/* --run-dir names one directory: it must be new or empty. */
	if (cfg->run_dir && (is_dir(abs) ? !dir_is_empty(abs) : access(abs, F_OK) == 0)) {
		error("run directory %s already exists and is not empty", abs);
		free(abs);
		return preflight_fail(pf, "run_dir", "give --run-dir a path that does not exist yet "
			    "(or an empty directory)");
	}

	/* The nearest existing ancestor must be writable. */
	while (!is_dir(probe)) {
		char *up = path_dirname(probe);
		if (probe != abs)
			free(probe);
		probe = up;
	}
	if (access(probe, W_OK)) {
		error_errno("cannot create run directories under %s (%s is not writable)",
			    abs, probe);
		if (probe != abs)
			free(probe);
		free(abs);
		return preflight_fail(pf, cfg->run_dir ? "run_dir" : "runs_dir", cfg->run_dir ?
			    "choose a writable --run-dir" :
			    "choose a writable --runs-dir (ZLB_RUNS_DIR)");
	}
	if (probe != abs)
		free(probe);
	free(abs);
	return 0;
}

int preflight_run(struct preflight *pf, const struct run_config *cfg,
		  char *const *envp)
{
	json_t *facts = NULL;
	int ret = -1;

	preflight_init(pf);
	pf->plan.backend = backend_find(cfg->backend);
	if (!pf->plan.backend) {
		char *names = backend_names_help();
		error("unknown backend '%s'", cfg->backend);
		preflight_fail(pf, "backend", "use one of: %s", names);
		free(names);
		return -1;
	}
	pf->plan.timer = plan_timer(pf->plan.backend, cfg->timer);
	if (!pf->plan.timer)
		return preflight_fail(pf, "timer", "use --timer auto or direct");
	locate_own_files(pf, envp);
	for (size_t i = 0; i < cfg->notes.nr; i++)
		strvec_push(&pf->plan.notes, cfg->notes.v[i]);
	/* Only a driver replay needs libzlbtimer; the events timer is the plugin's own. */
	if (!strcmp(pf->plan.timer, "graph") && pf->plan.backend->graph_replay &&
	    !strcmp(pf->plan.backend->graph_replay, BACKEND_REPLAY_DRIVER) &&
	    !pf->plan.timer_lib) {
		error("libzlbtimer.so was not found beside the zlb binary");
		return preflight_fail(pf, "timer", "build it (make) or set ZLB_TIMER_LIB");
	}
	if (check_python(pf, cfg, envp, 1, &facts))
		goto out;
	if (check_checkout(pf, cfg, facts))
		goto out;
	if (check_dtypes(pf, cfg) || preflight_check_plugins(pf, cfg, envp))
		goto out;
	if (preflight_check_shapes(pf, cfg))
		goto out;
	if (check_replay(pf, cfg))
		goto out;
	if (check_device(pf, cfg, envp))
		goto out;
	if (preflight_check_backend(pf, cfg, envp))
		goto out;
	if (check_runs_dir(pf, cfg))
		goto out;
	ret = 0;
out:
	json_decref(facts);
	return ret;
}

int preflight_python(struct preflight *pf, const struct run_config *cfg,
		     char *const *envp)
{
	json_t *facts = NULL;
	int r;

	preflight_init(pf);
	locate_own_files(pf, envp);
	r = check_python(pf, cfg, envp, 0, &facts);
	json_decref(facts);
	return r;
}

int preflight_checkout(struct preflight *pf, const char *dir, char **found)
{
	struct strbuf looked = STRBUF_INIT;
	json_t *facts = pf->plan.python_facts ? json_loads(pf->plan.python_facts, 0, NULL) : NULL;
	const char *importable = json_string_value(json_object_get(facts, "flag_gems"));
	int r = flaggems_find_checkout(dir, importable, &looked, found);

	json_decref(facts);
	if (r) {
		error("%s (looked in: %s)", last_error(), looked.buf);
		strbuf_release(&looked);
		return preflight_fail(pf, "flaggems_dir", "set FLAGGEMS_DIR or --flaggems-dir to a "
				      "FlagGems checkout (the folder holding benchmark/ and src/)");
	}
	strbuf_release(&looked);
	return 0;
}

void preflight_failure_text(const struct preflight *pf, const char *side, int color,
			    struct strbuf *sb)
{
	preflight_report(sb, pf->failed_check, side, pf->why.buf, pf->fix.buf, color);
}

void preflight_release(struct preflight *pf)
{
	run_plan_release(&pf->plan);
	strbuf_release(&pf->why);
	strbuf_release(&pf->fix);
}
