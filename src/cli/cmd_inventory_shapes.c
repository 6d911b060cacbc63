/*
 * zlb inventory --build-shapes / --migrate-shapes / --check-shapes: suite
 * shape sets (ops/shapes_single.yaml, ops/shapes_multi.yaml) against the
 * inventory in the ops folder (run/shape_assets.h does the work).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch/inventory.h"
#include "cli/cmd_inventory.h"
#include "cli/commands.h"
#include "lib/gitinfo.h"
#include "lib/paths.h"
#include "run/shape_assets.h"

const char *inventory_shapes_mode(const struct opt_def *defs, const struct opt_values *v)
{
	if (opt_get(defs, v, "build-shapes"))
		return "build";
	if (opt_get(defs, v, "migrate-shapes"))
		return "migrate";
	if (opt_get(defs, v, "check-shapes"))
		return "check";
	return NULL;
}

static void print_list(const char *what, const struct strvec *v, size_t max)
{
	for (size_t i = 0; i < v->nr && i < max; i++)
		printf("  %s: %s\n", what, v->v[i]);
	if (v->nr > max)
		printf("  ... and %zu more %s\n", v->nr - max, what);
}

static void print_report(const char *file, const struct shape_assets_report *r,
			 const char *unmatched_file)
{
	printf("shapes: %s: %zu key(s) (%zu op_name, %zu class); %zu moved; %zu unmatched%s%s\n",
	       file, r->keys, r->op_keys, r->class_keys, r->moved.nr, r->unmatched.nr,
	       r->unmatched.nr && unmatched_file ? " -> " : "",
	       r->unmatched.nr && unmatched_file ? unmatched_file : "");
	printf("shapes: %zu operator(s) looked up: %zu fall through to FlagGems' "
	       "DEFAULT_SHAPES, %zu measure their own hard-coded shapes, %zu cannot be told "
	       "(the static scan did not follow their class chain up to Benchmark)\n", r->ops,
	       r->fallthrough.nr, r->own.nr, r->unknown.nr);
	if (r->pinned.nr)
		printf("shapes: %zu pinned entr%s kept from the file rebuilt\n", r->pinned.nr,
		       r->pinned.nr == 1 ? "y" : "ies");
	print_list("pinned", &r->pinned, 50);
	print_list("moved", &r->moved, 50);
	print_list("unmatched", &r->unmatched, 50);
	print_list("falls through", &r->fallthrough, 50);
}

/* The operators the shape file is for; --build-shapes takes the main checkout's only. */
static size_t shape_targets(const struct inventory *inv, int build, struct shape_target *t)
{
	size_t n = 0;

	for (size_t i = 0; i < inv->nr; i++) {
		const struct inventory_row *row = &inv->rows[i];
		/* core_shapes.yaml is the main checkout's: build for its operators. */
		if (build && strcmp(row->repo, "main"))
			continue;
		t[n++] = (struct shape_target){ row->repo, row->op, row->op_name, row->bench_class,
						row->hardcodes };
	}
	return n;
}

/* The head comment of a built shape file: where it came from and how to build it again. */
static char *build_header(const char *out, const char *kind, int single, const char *checkout,
			  const char *commit, size_t n, const char *ops_dir)
{
	return xstrfmt(
		"%s: %s, built from %s/benchmark/core_shapes.yaml (FlagGems%s%.12s)\n"
		"for the %zu operators of %s/inventory_main.csv: %s.\n"
		"Keys are op_names and Benchmark class names (FlagGems looks up the op_name,\n"
		"then each class of the benchmark's chain): the class keys keep the BLAS and\n"
		"other families off the 1-D DEFAULT_SHAPES.\n"
		"Rebuild (after upstream changes):\n"
		"  zlb inventory --flaggems-dir FLAGGEMS --out %s\n"
		"  zlb inventory --flaggems-dir FLAGGEMS --out %s --build-shapes %s --shapes-out %s\n"
		"Check: zlb inventory --out %s --check-shapes %s",
		path_basename(out), single ? "one representative shape per operator"
					   : "every core shape per operator",
		path_basename(checkout), commit ? " " : "", commit ? commit : "", n, ops_dir,
		single ? "the middle shape of each core_shapes list, plus an op_name key for "
			 "every operator core_shapes reaches through a class"
		       : "each core_shapes key that names an op_name or class of the inventory",
		ops_dir, ops_dir, kind, out, ops_dir, out);
}

int inventory_shapes(const struct opt_def *defs, const struct opt_values *v,
		     const char *ops_dir, const char *checkout)
{
	const char *mode = inventory_shapes_mode(defs, v);
	const char *out = opt_get(defs, v, "shapes-out");
	struct inventory inv = INVENTORY_INIT;
	struct shape_target *t;
	struct shape_assets_report rep;
	char *unmatched = NULL, *header = NULL, *commit = NULL;
	int rc = ZLB_EXIT_OK, r = 0, build = !strcmp(mode, "build");

	if (!!opt_get(defs, v, "build-shapes") + !!opt_get(defs, v, "migrate-shapes") +
	    !!opt_get(defs, v, "check-shapes") > 1) {
		fprintf(stderr, "zlb inventory: --build-shapes, --migrate-shapes and --check-shapes "
			"are one job each; give one\n");
		return ZLB_EXIT_USAGE;
	}
	if (!strcmp(mode, "check") ? out != NULL : !out) {
		fprintf(stderr, "zlb inventory: %s\n", !strcmp(mode, "check") ?
			"--check-shapes writes nothing: drop --shapes-out" :
			"--build-shapes and --migrate-shapes need --shapes-out FILE");
		return ZLB_EXIT_USAGE;
	}
	if (inventory_load(ops_dir, &inv)) {
		fprintf(stderr, "zlb inventory: %s\n       (zlb inventory --out %s writes it "
			"first)\n", last_error(), ops_dir);
		return ZLB_EXIT_PREFLIGHT;
	}
	t = xcalloc(inv.nr ? inv.nr : 1, sizeof(*t));
	size_t n = shape_targets(&inv, build, t);
	shape_assets_report_init(&rep);
	if (build) {
		const char *kind = opt_get(defs, v, "build-shapes");
		int single = !strcmp(kind, "single");
		char *core = path_join(checkout, "benchmark/core_shapes.yaml");

		if (strcmp(kind, "single") && strcmp(kind, "multi")) {
			fprintf(stderr, "zlb inventory: --build-shapes %s: give single or multi\n", kind);
			rc = ZLB_EXIT_USAGE;
		} else {
			commit = git_head_commit(checkout);
			header = build_header(out, kind, single, checkout, commit, n, ops_dir);
			unmatched = shape_assets_unmatched_path(out);
			r = shape_assets_build(core, t, n, single, out, unmatched, header, &rep);
		}
		free(core);
	} else if (!strcmp(mode, "migrate")) {
		const char *in = opt_get(defs, v, "migrate-shapes");
		unmatched = shape_assets_unmatched_path(out);
		header = xstrfmt("%s: migrated from %s against %s/inventory_*.csv\n"
				 "(zlb inventory --out %s --migrate-shapes %s --shapes-out %s);\n"
				 "keys that matched nothing went to %s.",
				 path_basename(out), in, ops_dir, ops_dir, in, out,
				 path_basename(unmatched));
		r = shape_assets_migrate(in, t, n, out, unmatched, header, &rep);
	} else {
		r = shape_assets_check(opt_get(defs, v, "check-shapes"), t, n, &rep);
	}
	if (!rc && r) {
		fprintf(stderr, "zlb inventory: %s\n", last_error());
		rc = ZLB_EXIT_PREFLIGHT;
	} else if (!rc) {
		print_report(out ? out : opt_get(defs, v, "check-shapes"), &rep,
			     rep.unmatched.nr ? unmatched : NULL);
		if (!strcmp(mode, "check") && (rep.unmatched.nr || rep.fallthrough.nr)) {
			printf("shapes: check failed: %zu key(s) match nothing, %zu operator(s) fall "
			       "through\n", rep.unmatched.nr, rep.fallthrough.nr);
			rc = 1;
		}
	}
	shape_assets_report_release(&rep);
	inventory_release(&inv);
	free(t);
	free(unmatched);
	free(header);
	free(commit);
	return rc;
}
