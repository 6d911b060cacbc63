/* The shapes check of a run's preflight: which shapes it measures, and that they exist. */
#include "run/preflight_int.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/error.h"
#include "lib/paths.h"
#include "lib/strbuf.h"
#include "providers/builtin_shapes.h"
#include "run/shapefile.h"

static void chain_text(const struct flaggems_target *t, struct strbuf *sb)
{
	for (size_t i = 0; i < t->chain.nr; i++)
		strbuf_addf(sb, "%s%s", i ? " -> " : "", t->chain.v[i]);
}

/* The shape mode: as given, else derived from what was given. */
static const char *shape_mode_of(const struct preflight *pf, const struct run_config *cfg)
{
	if (cfg->shape_mode)
		return cfg->shape_mode;
	if (cfg->shape_file)
		return "file";
	if (cfg->test_node)
		return "upstream";
	return pf->plan.builtin ? "inline" : "upstream";
}

/* Load the user's shape file (file mode): a regular file that parses. */
static int load_shape_file(struct preflight *pf, const struct run_config *cfg)
{
	char *abs = path_absolute(cfg->shape_file);
	int r = 0;

	if (is_dir(abs)) {
		error("shape file '%s' is a directory", abs);
		r = preflight_fail(pf, "shape_file", "pass the YAML file itself");
	} else if (!is_file(abs)) {
		error(access(abs, F_OK) ? "shape file '%s' does not exist"
					: "shape file '%s' is not a regular file", abs);
		r = preflight_fail(pf, "shape_file", "check the path given by --shapes (SHAPE_FILE)");
	} else if (shape_file_load(&pf->plan.shapes, abs, NULL)) {
		r = preflight_fail(pf, "shape_file", "fix the YAML: a mapping of op or class "
			 "names to {shapes: [[...], ...]}");
	}
	free(abs);
	return r;
}

/*
 * The shape file has no key for the operator nor for its class chain:
 * a note when zlb cannot know the chain, else a refusal (FlagGems would
 * fall back to DEFAULT_SHAPES, with its 2**30-element tensor).
 */
static int no_shape_key(struct preflight *pf, const char *lookup_name, const char *chain)
{
	const struct flaggems_target *t = &pf->plan.target;
	struct strvec keys = STRVEC_INIT;
	struct strbuf wrong = STRBUF_INIT;

	if (!t->chain.nr) {
		/* The chain is unknown: FlagGems might still find a class key. */
		strvec_pushf(&pf->plan.notes, "warning: shape file has no '%s' key and "
			     "zlb could not read the benchmark's class chain; FlagGems "
			     "may fall back to a class key or to DEFAULT_SHAPES",
			     lookup_name);
		return 0;
	}
	shape_file_keys(&pf->plan.shapes, &keys);
	for (size_t i = 0; i < keys.nr; i++)
		if (ends_with(keys.v[i], "Benchmark"))
			strbuf_addf(&wrong, "%s'%s'", wrong.len ? ", " : "", keys.v[i]);
	if (wrong.len)
		error("shape file %s has no '%s' key, and its class key(s) %s are not "
		      "in %s's class chain (%s), so none applies; FlagGems would "
		      "fall back to DEFAULT_SHAPES (which include a 2**30-element tensor)",
		      pf->plan.shapes.path, lookup_name, wrong.buf, lookup_name, chain);
	else
		error("shape file %s has neither '%s' nor any class of its chain (%s); "
		      "FlagGems would fall back to DEFAULT_SHAPES (which include a "
		      "2**30-element tensor)", pf->plan.shapes.path, lookup_name, chain);
	strvec_clear(&keys);
	strbuf_release(&wrong);
	return preflight_fail(pf, "shape_file", "add a '%s:' entry with 'shapes: [[...]]'", lookup_name);
}

int preflight_check_shapes(struct preflight *pf, const struct run_config *cfg)
{
	const struct flaggems_target *t = &pf->plan.target;
	const char *lookup_name = t->op_name ? t->op_name : t->op;
	const char *mode;
	struct strbuf chain = STRBUF_INIT;
	int r;

	pf->plan.builtin = builtin_shapes_find(t->op);
	pf->plan.shape_mode = mode = shape_mode_of(pf, cfg);
	if (!strcmp(mode, "file") && !cfg->shape_file) {
		error("shape mode 'file' needs a shape file");
		return preflight_fail(pf, "shape_file", "pass --shapes FILE (SHAPE_FILE)");
	}
	if (!strcmp(mode, "inline") && !pf->plan.builtin) {
		error("zlb has no built-in shapes for '%s'", t->op);
		return preflight_fail(pf, "shape_file", "pass --shapes FILE, or --shape-mode upstream "
			    "for FlagGems' own core_shapes.yaml");
	}
	if (!strcmp(mode, "upstream")) {
		if (cfg->shape_file) {
			error("shape mode 'upstream' ignores shape files, but %s was given",
			      cfg->shape_file);
			return preflight_fail(pf, "shape_file", "drop --shapes or use --shape-mode file");
		}
		if (!pf->plan.builtin || cfg->test_node || cfg->shape_mode)
			strvec_pushf(&pf->plan.notes, "shapes: FlagGems' own benchmark/core_shapes.yaml"
				     " (upstream mode)");
		else
			strvec_pushf(&pf->plan.notes, "shapes: upstream");
		return 0;
	}
	if (!strcmp(mode, "file")) {
		if ((r = load_shape_file(pf, cfg)))
			return r;
	} else if (shape_file_load(&pf->plan.shapes, "<built-in>", pf->plan.builtin->yaml)) {
		BUG("built-in shapes for %s do not parse", t->op);
	}

	/*
	 * A class that hard-codes its shapes only takes keys from its own part
	 * of the chain (the shapes plugin's rule): a base key such as
	 * core_shapes.yaml's 'Benchmark' holds another layout and would crash it.
	 */
	if (t->hardcoding_class) {
		int at = strvec_find(&t->chain, t->hardcoding_class);
		while (at >= 0 && t->chain.nr > (size_t)at + 1)
			strvec_pop((struct strvec *)&t->chain);
	}
	shape_file_lookup(&pf->plan.shapes, lookup_name,
			  (const char *const *)(t->chain.nr ? t->chain.v : NULL), &pf->plan.lookup);
	chain_text(t, &chain);
	if (pf->plan.lookup.problem) {
		error("shape file %s: %s", pf->plan.shapes.path, pf->plan.lookup.problem);
		strbuf_release(&chain);
		return preflight_fail(pf, "shape_file", "give '%s' a list of shapes, e.g. "
			    "'%s: {shapes: [[1024, 1024]]}'", pf->plan.lookup.key, pf->plan.lookup.key);
	}
	if (!pf->plan.lookup.key) {
		if (t->hardcoding_class) {
			strvec_pushf(&pf->plan.notes, "warning: %s hard-codes its shapes and the shape "
				     "file has no key for it (%s): its own shapes will be measured",
				     t->hardcoding_class, chain.buf);
			r = 0;
		} else {
			r = no_shape_key(pf, lookup_name, chain.buf);
		}
		strbuf_release(&chain);
		return r;
	}
	if (pf->plan.lookup.via_class)
		strvec_pushf(&pf->plan.notes, "shapes: no '%s' key; FlagGems will use the class "
			     "entry '%s' (%zu shapes) along %s", lookup_name, pf->plan.lookup.key,
			     pf->plan.lookup.count, chain.buf);
	else
		strvec_pushf(&pf->plan.notes, "shapes: %zu under '%s' (%s)", pf->plan.lookup.count,
			     pf->plan.lookup.key, !strcmp(mode, "inline") ? pf->plan.builtin->about
								     : pf->plan.shapes.path);
	if (t->hardcoding_class)
		strvec_pushf(&pf->plan.notes, "note: %s hard-codes its shapes; zlb's shape "
			     "plugin makes the file win", t->hardcoding_class);
	strbuf_release(&chain);
	return 0;
}
