/*
 * zlb inventory: every benchmark test function of the FlagGems checkouts
 * (main: flag_gems, vllm: flaggems_vllm) as CSV tables under an ops folder,
 * checked against pytest's own collection (src/batch/inventory_build.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd_inventory.h"
#include "cli/commands.h"
#include "cli/usage.h"
#include "batch/dismiss.h"
#include "batch/inventory.h"
#include "batch/inventory_build.h"
#include "lib/options.h"
#include "lib/paths.h"
#include "lib/proc.h"
#include "providers/flaggems.h"

extern char **environ;

static const char *const shape_kinds[] = { "single", "multi", NULL };

static const struct opt_def defs[] = {
	{ "flaggems-dir", NULL, "FLAGGEMS_DIR", NULL, OPT_STRING, NULL, 0, 0, "DIR",
	  "checkout of the main repository (package flag_gems); found as zlb run "
	  "finds it when not given" },
	{ "vllm-dir", NULL, "FLAGGEMS_VLLM_DIR", NULL, OPT_STRING, NULL, 0, 0, "DIR",
	  "checkout of the vllm repository (package flaggems_vllm); without it only "
	  "main is inventoried and an existing inventory_vllm.csv is kept" },
	{ "out", NULL, NULL, "ops", OPT_STRING, NULL, 0, 0, "DIR",
	  "folder for inventory_main.csv, inventory_vllm.csv and inventory.json" },
	{ "dismiss", NULL, NULL, NULL, OPT_STRING, NULL, 0, 0, "FILE",
	  "dismiss list to check and count (default: OUT/dismiss.txt when it exists)" },
	{ "python", NULL, "ZLB_PYTHON", "python3", OPT_STRING, NULL, 0, 0, "PROG",
	  "interpreter whose pytest collects the suite (as zlb run uses)" },
	{ "no-verify", NULL, NULL, NULL, OPT_BOOL, NULL, 0, 0, NULL,
	  "static scan only: do not run pytest --collect-only (rows say unverified)" },
	{ "collect-timeout", NULL, NULL, "900", OPT_INT, NULL, 1, 86400, "SEC",
	  "give up on pytest's collection of one checkout after SEC seconds" },
	{ "build-shapes", NULL, NULL, NULL, OPT_CHOICE, shape_kinds, 0, 0, "KIND",
	  "instead of inventorying: build a suite shape set from the checkout's "
	  "benchmark/core_shapes.yaml for the inventory in OUT (single: one shape per "
	  "operator; multi: every core shape) into --shapes-out" },
	{ "migrate-shapes", NULL, NULL, NULL, OPT_STRING, NULL, 0, 0, "FILE",
	  "instead of inventorying: refresh FILE's keys against the inventory in OUT and "
	  "its class chains into --shapes-out; keys matching nothing go to "
	  "<shapes-out>.unmatched.yaml; what moved is printed" },
	{ "shapes-out", NULL, NULL, NULL, OPT_STRING, NULL, 0, 0, "FILE",
	  "where --build-shapes / --migrate-shapes write (may be the input itself)" },
	{ "check-shapes", NULL, NULL, NULL, OPT_STRING, NULL, 0, 0, "FILE",
	  "instead of inventorying: exit 1 unless every key of FILE names an op_name or "
	  "class of the inventory in OUT and no operator falls through to DEFAULT_SHAPES" },
	{ NULL },
};

static const struct cmd_exit inventory_exits[] = {
	{ "0", "inventory written (collection may be unverified: the summary says so); a "
	       "shape set built, migrated, or checked clean" },
	{ "1", "--check-shapes: a key matches nothing or an operator falls through" },
	{ "2", "bad command line or option value" },
	{ "3", "a checkout or the dismiss list is wrong (PREFLIGHT_FAILED check=<name>)" },
	{ "7", "the inventory files could not be written" },
	{ NULL, NULL },
};

const struct cmd_doc inventory_doc = {
	.name = "inventory",
	.summary = "list every benchmark function of the FlagGems checkouts into ops/",
	.synopsis = "[options]",
	.about =
		"List every benchmark test function (benchmark/test_*.py, module-level def\n"
		"test_*) of the FlagGems checkouts with its op, op_file, skip marks and the\n"
		"op_name/class its Benchmark uses, then run `pytest --collect-only` once per\n"
		"checkout to mark each one collected=yes|no (unverified when pytest cannot\n"
		"collect, e.g. without torch, or with --no-verify). Writes, atomically:\n"
		"  OUT/inventory_main.csv, OUT/inventory_vllm.csv   one row per function\n"
		"  OUT/inventory.json                               schema_version, checkouts,\n"
		"                                                   commits and counts\n"
		"`zlb batch --all` takes every collected function without an unconditional\n"
		"skip mark that the dismiss list does not name.\n"
		"\n"
		"Dismiss list: one `[repo:]op[@op_file]  reason` per line; '#' starts a\n"
		"comment line; every entry needs a reason.\n",
	.opts = defs,
	.exits = inventory_exits,
	.positional = CMD_ARG_NONE,
};

/* Where the interpreter imports flag_gems from (its __init__.py), or NULL. */
static char *importable_flag_gems(const char *python)
{
	static const char script[] =
		"import importlib.util as u\n"
		"try:\n"
		"    s = u.find_spec('flag_gems')\n"
		"except Exception:\n"
		"    s = None\n"
		"print('ZLB_ORIGIN ' + (s.origin or '' if s else ''))\n";
	char *argv[] = { (char *)python, "-c", (char *)script, NULL };
	struct strbuf out = STRBUF_INIT;
	char *res = NULL;
	const char *p;

	if (run_capture(argv, environ, NULL, 60000, &out) == 0 &&
	    (p = strstr(out.buf, "ZLB_ORIGIN "))) {
		p += strlen("ZLB_ORIGIN ");
		size_t n = strcspn(p, "\n");
		if (n)
			res = xstrndup(p, n);
	}
	strbuf_release(&out);
	return res;
}

/* The checkouts to scan; returns 0 or an exit code. */
static int find_checkouts(const struct opt_values *v, const char *python,
			  struct inventory_repo_info *infos, size_t *n)
{
	const char *main_opt = opt_get(defs, v, "flaggems-dir");
	const char *vllm_opt = opt_get(defs, v, "vllm-dir");
	struct strbuf looked = STRBUF_INIT;
	char *importable = NULL, *dir = NULL;
	const char *pkg;
	int r;

	if (!(main_opt && *main_opt) && python)
		importable = importable_flag_gems(python);
	r = flaggems_find_checkout(main_opt, importable, &looked, &dir);
	free(importable);
	if (r) {
		char *why = xstrfmt("%s (looked in: %s)", last_error(), looked.buf);
		strbuf_release(&looked);
		r = cli_preflight_failed("flaggems_dir", why, "set --flaggems-dir or FLAGGEMS_DIR "
				     "to a FlagGems checkout (the folder holding benchmark/ and src/)");
		free(why);
		return r;
	}
	strbuf_release(&looked);
	pkg = flaggems_package(dir);
	if (pkg && !strcmp(pkg, "flaggems_vllm")) {
		char *why = xstrfmt("%s holds the package flaggems_vllm, not flag_gems", dir);
		free(dir);
		r = cli_preflight_failed("flaggems_dir", why, "give this checkout as --vllm-dir "
				     "and the flag_gems checkout as --flaggems-dir");
		free(why);
		return r;
	}
	if (!pkg)
		warning("%s has no src/flag_gems/__init__.py; inventorying it as the main "
			"repository anyway", dir);
	infos[0].repo = "main";
	infos[0].checkout = dir;
	*n = 1;

	if (!vllm_opt || !*vllm_opt)
		return 0;
	struct strbuf looked2 = STRBUF_INIT;
	dir = NULL;
	r = flaggems_find_checkout(vllm_opt, NULL, &looked2, &dir);
	strbuf_release(&looked2);
	if (r)
		return cli_preflight_failed("vllm_dir", last_error(), "set --vllm-dir or "
					"FLAGGEMS_VLLM_DIR to a FlagGems-vllm checkout "
					"(the folder holding benchmark/ and src/flaggems_vllm/)");
	pkg = flaggems_package(dir);
	if (pkg && !strcmp(pkg, "flag_gems")) {
		char *why = xstrfmt("%s holds the package flag_gems, not flaggems_vllm", dir);
		free(dir);
		r = cli_preflight_failed("vllm_dir", why, "give the FlagGems-vllm checkout as "
				     "--vllm-dir (FLAGGEMS_VLLM_DIR)");
		free(why);
		return r;
	}
	if (!strcmp(dir, infos[0].checkout)) {
		char *why = xstrfmt("--vllm-dir and --flaggems-dir are the same folder %s", dir);
		free(dir);
		r = cli_preflight_failed("vllm_dir", why, "give each repository its own checkout");
		free(why);
		return r;
	}
	if (!pkg)
		warning("%s has no src/flaggems_vllm/__init__.py; inventorying it as the "
			"vllm repository anyway", dir);
	infos[1].repo = "vllm";
	infos[1].checkout = dir;
	*n = 2;
	return 0;
}

static void print_summary(const struct inventory_repo_info *info, const char *csv)
{
	printf("%s: %zu function%s in %zu file%s", info->repo, info->functions,
	       info->functions == 1 ? "" : "s", info->files, info->files == 1 ? "" : "s");
	if (info->commit)
		printf(" (%s @ %.12s)", info->package ? info->package : "?", info->commit);
	printf(", %zu skip-marked", info->skipped);
	if (info->verify && !strcmp(info->verify, "pytest")) {
		printf(", %zu collected, %zu not collected", info->collected, info->not_collected);
		if (info->collect_only)
			printf(" (+%zu found only by pytest)", info->collect_only);
		if (info->collect_errors)
			printf(", %zu file%s failed to import", info->collect_errors,
			       info->collect_errors == 1 ? "" : "s");
	} else {
		printf(", collection unverified: %s", info->verify ? info->verify : "?");
	}
	printf(", %zu dismissed -> %s\n", info->dismissed, csv);
}

/*
 * How many of each repo's functions the dismiss list takes out, and a
 * warning for each of its lines that matches nothing in a repo that was
 * built (a typo would otherwise dismiss nothing, silently).
 */
static void count_dismissed(const struct inventory *inv, const size_t *starts,
			    struct inventory_repo_info *infos, size_t nrepo,
			    struct dismiss_list *dl, const char *dpath)
{
	for (size_t i = 0; i < nrepo; i++)
		for (size_t r = starts[i]; r < starts[i + 1]; r++)
			infos[i].dismissed += dismiss_match(dl, inv->rows[r].repo, inv->rows[r].op,
							    inv->rows[r].op_file) != NULL;
	for (size_t i = 0; i < dl->nr; i++) {
		const struct dismiss_entry *e = &dl->v[i];
		int built = 0;
		for (size_t k = 0; k < nrepo; k++)
			built |= !strcmp(infos[k].repo, e->repo);
		if (!e->used && built)
			warning("%s:%u: %s%s%s%s%s matches no benchmark function", dpath, e->line,
				strcmp(e->repo, "main") ? e->repo : "",
				strcmp(e->repo, "main") ? ":" : "", e->op, e->op_file ? "@" : "",
				e->op_file ? e->op_file : "");
	}
}

/* ops/inventory_<repo>.csv for each repo, then inventory.json: 0 or ZLB_EXIT_IO. */
static int write_inventory(const char *out_dir, const struct inventory *inv,
			   const size_t *starts, const struct inventory_repo_info *infos,
			   size_t nrepo)
{
	if (mkdir_p(out_dir, 0777)) {
		fprintf(stderr, "zlb inventory: cannot create %s: %s\n", out_dir, last_error());
		return ZLB_EXIT_IO;
	}
	for (size_t i = 0; i < nrepo; i++)
		if (inventory_write_csv(out_dir, infos[i].repo, inv, starts[i],
					starts[i + 1] - starts[i])) {
			fprintf(stderr, "zlb inventory: %s\n", last_error());
			return ZLB_EXIT_IO;
		}
	if (inventory_write_meta(out_dir, infos, nrepo)) {
		fprintf(stderr, "zlb inventory: cannot write %s/inventory.json: %s\n", out_dir,
			last_error());
		return ZLB_EXIT_IO;
	}
	return 0;
}

/*
 * Each repo's operators into inv (starts[i] is where repo i's begin), each
 * verified by pytest --collect-only unless verify is 0 or there is no python.
 */
static int scan_repos(const struct opt_values *v, const char *python, int verify,
		      struct inventory *inv, struct inventory_repo_info *infos, size_t nrepo,
		      size_t *starts)
{
	for (size_t i = 0; i < nrepo; i++) {
		struct inventory_repo_info *info = &infos[i];
		starts[i] = inv->nr;
		if (inventory_scan(inv, info))
			return cli_preflight_failed(i ? "vllm_dir" : "flaggems_dir", last_error(),
						"point the option at the checkout root");
		if (!verify) {
			info->verify = xstrdup("not tried (--no-verify)");
		} else if (!python) {
			info->verify = xstrfmt("python '%s' was not found (--python, ZLB_PYTHON)",
					       opt_get(defs, v, "python"));
		} else {
			struct inventory_verify iv = {
				python, environ,
				1000 * atoi(opt_get(defs, v, "collect-timeout")),
			};
			fprintf(stderr, "%s: pytest --collect-only over %zu files in %s ...\n",
				info->repo, info->benchmark_files.nr, info->checkout);
			inventory_verify(inv, starts[i], &iv, info);
		}
		inventory_sort(inv, starts[i]);
	}
	return ZLB_EXIT_OK;
}

/* One summary per repo written; a run without vLLM says so, and whether an earlier CSV stays. */
static void print_summaries(const char *out_dir, const struct inventory_repo_info *infos,
			    size_t nrepo)
{
	for (size_t i = 0; i < nrepo; i++) {
		char *name = inventory_csv_name(infos[i].repo);
		char *csv = path_join(out_dir, name);
		print_summary(&infos[i], csv);
		free(csv);
		free(name);
	}
	if (nrepo == 1) {
		char *csv = path_join(out_dir, "inventory_vllm.csv");
		printf("vllm: not inventoried (no --vllm-dir / FLAGGEMS_VLLM_DIR)%s%s\n",
		       is_file(csv) ? "; kept the earlier " : "", is_file(csv) ? csv : "");
		free(csv);
	}
}

int cmd_inventory(int argc, char **argv)
{
	struct opt_values v = { 0 };
	struct strvec pos = STRVEC_INIT;
	struct inventory inv = INVENTORY_INIT;
	struct inventory_repo_info infos[2] = { { 0 }, { 0 } };
	struct dismiss_list dl = DISMISS_LIST_INIT;
	size_t nrepo = 0, starts[3] = { 0 };
	char *python = NULL, *out_dir = NULL, *dpath = NULL;
	int want = 0, rc = ZLB_EXIT_OK, verify;

	strvec_init(&infos[0].benchmark_files);
	strvec_init(&infos[1].benchmark_files);
	set_error_routine(error_quiet);
	if (options_parse(defs, argc, argv, environ, &v, &pos, &want)) {
		rc = usage_error("inventory", "%s", last_error());
		goto out;
	}
	if (want != OPT_WANT_NOTHING) {
		rc = want == OPT_WANT_HELP ? cli_help("inventory", &inventory_doc) : cli_version();
		goto out;
	}
	if (pos.nr) {
		rc = usage_error("inventory", "unexpected argument '%s'; it takes options only",
				 pos.v[0]);
		goto out;
	}
	if (inventory_shapes_mode(defs, &v)) {
		char *checkout = NULL;

		out_dir = xstrdup(opt_get(defs, &v, "out"));
		if (!strcmp(inventory_shapes_mode(defs, &v), "build")) {
			python = find_program(opt_get(defs, &v, "python"));
			if ((rc = find_checkouts(&v, python, infos, &nrepo)))
				goto out;
			checkout = (char *)infos[0].checkout;
		}
		rc = inventory_shapes(defs, &v, out_dir, checkout);
		goto out;
	}
	verify = !opt_parse_bool(opt_get(defs, &v, "no-verify") ?
				 opt_get(defs, &v, "no-verify") : "0");
	python = find_program(opt_get(defs, &v, "python"));
	rc = find_checkouts(&v, python, infos, &nrepo);
	if (rc)
		goto out;
	out_dir = xstrdup(opt_get(defs, &v, "out"));

	/* The dismiss list is checked before the (slow) collection starts. */
	dpath = opt_get(defs, &v, "dismiss") ? xstrdup(opt_get(defs, &v, "dismiss"))
					     : path_join(out_dir, "dismiss.txt");
	if ((opt_get(defs, &v, "dismiss") || is_file(dpath)) && dismiss_load(dpath, &dl)) {
		rc = cli_preflight_failed("dismiss", last_error(), "correct the line named above "
				      "(format: `[repo:]op[@op_file]  reason`)");
		goto out;
	}

	if ((rc = scan_repos(&v, python, verify, &inv, infos, nrepo, starts)))
		goto out;
	starts[nrepo] = inv.nr;

	count_dismissed(&inv, starts, infos, nrepo, &dl, dpath);
	if ((rc = write_inventory(out_dir, &inv, starts, infos, nrepo)))
		goto out;
	print_summaries(out_dir, infos, nrepo);
out:
	for (size_t i = 0; i < 2; i++)
		inventory_repo_info_release(&infos[i]);
	inventory_release(&inv);
	dismiss_release(&dl);
	opt_values_release(&v);
	strvec_clear(&pos);
	free(python);
	free(out_dir);
	free(dpath);
	return rc;
}
