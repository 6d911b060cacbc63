/*
 * zlb ab, the parts without processes: the two sides, the switch in the
 * FlagGems source, the IR of round 1. The rounds themselves are in ab_run.c.
 */
#include "ab/ab.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ir/ir_layout.h"
#include "lib/paths.h"
#include "run/run_config.h"

/* ---- the sides ---------------------------------------------------------------- */

void ab_spec_init(struct ab_spec *s)
{
	memset(s, 0, sizeof(*s));
	s->side[0].name = "A";
	s->side[1].name = "B";
	s->rounds = AB_DEFAULT_ROUNDS;
	s->threshold = -1;
	strvec_init(&s->shape_sets);
}

void ab_spec_release(struct ab_spec *s)
{
	for (int i = 0; i < 2; i++) {
		struct ab_side *side = &s->side[i];
		for (size_t k = 0; k < side->nr; k++) {
			free(side->set[k].key);
			free(side->set[k].value);
		}
		free(side->set);
		free(side->python);
		free(side->flaggems_dir);
	}
	free(s->axis);
	strvec_clear(&s->shape_sets);
	ab_spec_init(s);
}

char *ab_expand_vendor(const char *text, const char *vendor, const char *backend)
{
	static const char ph[] = AB_VENDOR_PLACEHOLDER;
	struct strbuf sb = STRBUF_INIT;
	const char *p = text, *at;

	if (!strstr(text, ph))
		return xstrdup(text);
	if (!vendor) {
		error("%s: %s stands for the backend's FlagTree vendor, whose spelling zlb does "
		      "not know for %s; write the switch's name out", text, ph, backend);
		return NULL;
	}
	while ((at = strstr(p, ph))) {
		strbuf_add(&sb, p, (size_t)(at - p));
		p = at + strlen(ph);
		if (!*vendor && *p == '_')
			p++;          /* FLAGTREE_<VENDOR>_X -> FLAGTREE_X */
		else
			strbuf_addstr(&sb, vendor);
	}
	strbuf_addstr(&sb, p);
	return strbuf_detach(&sb, NULL);
}

const struct ab_setting *ab_side_find(const struct ab_side *side, const char *key)
{
	for (size_t k = 0; k < side->nr; k++)
		if (!strcmp(side->set[k].key, key))
			return &side->set[k];
	return NULL;
}

static int env_name_ok(const char *name)
{
	if (!(isalpha((unsigned char)*name) || *name == '_'))
		return 0;
	for (const char *p = name; *p; p++)
		if (!(isalnum((unsigned char)*p) || *p == '_'))
			return 0;
	return 1;
}

/*
 * A variable the sides may not set differently: zlb's own (a run option's
 * environment default, or the protocol's ZLB_*). Returns 0, or -1 with
 * error() saying what to do instead.
 */
static int check_not_ours(const char *name, const char *given_as)
{
	if (!strcmp(name, "FLAGGEMS_DIR"))
		return error("%s: FLAGGEMS_DIR is zlb run's --flaggems-dir; give each side its "
			     "checkout with --a-flaggems-dir / --b-flaggems-dir", given_as);
	if (!strcmp(name, "ZLB_PYTHON"))
		return error("%s: ZLB_PYTHON is zlb run's --python; give each side its "
			     "interpreter with --a-python / --b-python", given_as);
	if (!strcmp(name, "REPLAY_FROM"))
		return error("%s: zlb ab decides which rounds record and which replay "
			     "(A's round 1 records, every other run replays it)", given_as);
	for (const struct opt_def *d = run_option_defs; d->name; d++)
		if (d->env && !strcmp(d->env, name))
			return error("%s: %s is zlb run's --%s, part of the caliber both sides "
				     "must share; give --%s to zlb ab (it applies to every round)",
				     given_as, name, d->name, d->name);
	if (starts_with(name, "ZLB_"))
		return error("%s: %s is zlb's own variable, not a switch to compare",
			     given_as, name);
	return 0;
}

static int add_setting(struct ab_side *side, const char *key, const char *value,
		       const char *given_as)
{
	const struct ab_setting *old = ab_side_find(side, key);

	if (!*key || !env_name_ok(key))
		return error("%s: '%s' is not an environment variable name (letters, digits "
			     "and '_', not starting with a digit)", given_as, key);
	if (old)
		return error("%s: side %s already sets %s%s%s", given_as, side->name, key,
			     old->value ? "=" : "", old->value ? old->value : "");
	if (check_not_ours(key, given_as))
		return -1;
	if (side->nr == side->alloc) {
		side->alloc = side->alloc ? 2 * side->alloc : 4;
		side->set = xrealloc(side->set, side->alloc * sizeof(*side->set));
	}
	side->set[side->nr].key = xstrdup(key);
	side->set[side->nr].value = value ? xstrdup(value) : NULL;
	side->nr++;
	return 0;
}

int ab_spec_add_axis(struct ab_spec *s, const char *text)
{
	char *given = xstrfmt("--axis %s", text);
	const char *eq = strchr(text, '='), *comma;
	char *name = NULL, *va = NULL;
	int r = -1;

	if (s->axis) {
		error("%s: one --axis per A/B (already %s); more variables go with "
		      "--a-env/--b-env", given, s->axis);
		goto out;
	}
	if (!eq || eq == text) {
		error("%s: expected NAME=VALUE_A,VALUE_B (e.g. --axis "
		      "FLAGGEMS_MXFP4_FOLDSCALE=0,1)", given);
		goto out;
	}
	comma = strchr(eq + 1, ',');
	if (!comma) {
		error("%s: two values are needed, A's and B's, separated by a comma "
		      "(NAME=VALUE_A,VALUE_B)", given);
		goto out;
	}
	if (strchr(comma + 1, ',')) {
		error("%s: more than one comma, so A's and B's values are ambiguous; a value "
		      "holding a comma goes through --a-env NAME=... --b-env NAME=...", given);
		goto out;
	}
	name = xstrndup(text, (size_t)(eq - text));
	va = xstrndup(eq + 1, (size_t)(comma - eq - 1));
	if (!strcmp(va, comma + 1)) {
		error("%s: A and B get the same value '%s'; nothing would differ", given, va);
		goto out;
	}
	if (add_setting(&s->side[0], name, va, given) ||
	    add_setting(&s->side[1], name, comma + 1, given))
		goto out;
	s->axis = xstrdup(text);
	r = 0;
out:
	free(given);
	free(name);
	free(va);
	return r;
}

int ab_spec_add_env(struct ab_spec *s, int side, const char *text)
{
	char *given = xstrfmt("--%s-env %s", side ? "b" : "a", text);
	const char *eq = strchr(text, '=');
	char *key;
	int r;

	if (!eq) {
		r = error("%s: expected NAME=VALUE", given);
		free(given);
		return r;
	}
	key = xstrndup(text, (size_t)(eq - text));
	r = add_setting(&s->side[side], key, eq + 1, given);
	free(key);
	free(given);
	return r;
}

static int set_once(char **slot, const char *value, const char *flag)
{
	if (*slot)
		return error("%s given twice ('%s' and '%s')", flag, *slot, value);
	if (!*value)
		return error("%s needs a value", flag);
	*slot = xstrdup(value);
	return 0;
}

int ab_spec_set_python(struct ab_spec *s, int side, const char *python)
{
	return set_once(&s->side[side].python, python, side ? "--b-python" : "--a-python");
}

int ab_spec_set_flaggems_dir(struct ab_spec *s, int side, const char *dir)
{
	return set_once(&s->side[side].flaggems_dir, dir,
			side ? "--b-flaggems-dir" : "--a-flaggems-dir");
}

static int str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

int ab_spec_finish(struct ab_spec *s)
{
	int differ = 0;

	if (s->rounds < 1 || s->rounds > AB_MAX_ROUNDS)
		return error("--rounds %d: a side needs 1 to %d rounds (3 is a good default; "
			     "5 finds a lone 2%% change reliably)", s->rounds, AB_MAX_ROUNDS);
	/* A variable named on one side only is removed on the other. */
	for (int i = 0; i < 2; i++) {
		struct ab_side *me = &s->side[i], *other = &s->side[1 - i];
		for (size_t k = 0; k < me->nr; k++)
			if (!ab_side_find(other, me->set[k].key) &&
			    add_setting(other, me->set[k].key, NULL, "--a-env/--b-env"))
				return -1;
	}
	for (size_t k = 0; k < s->side[0].nr; k++) {
		const struct ab_setting *b = ab_side_find(&s->side[1], s->side[0].set[k].key);
		if (!str_eq(s->side[0].set[k].value, b->value))
			differ = 1;
	}
	if (!str_eq(s->side[0].python, s->side[1].python) ||
	    !str_eq(s->side[0].flaggems_dir, s->side[1].flaggems_dir))
		differ = 1;
	if (!differ && !s->side[0].nr && !s->side[0].python && !s->side[0].flaggems_dir &&
	    !s->side[1].python && !s->side[1].flaggems_dir)
		return error("nothing tells A from B: give --axis NAME=VALUE_A,VALUE_B, "
			     "--a-env/--b-env NAME=VALUE, --a-python/--b-python or "
			     "--a-flaggems-dir/--b-flaggems-dir");
	if (!differ)
		return error("A and B are set up identically (every variable, interpreter and "
			     "checkout the same): both sides would run the same code");
	return 0;
}

void ab_side_env(const struct ab_side *side, char *const *base, struct strvec *out)
{
	for (char *const *e = base; e && *e; e++)
		strvec_push(out, *e);
	for (size_t k = 0; k < side->nr; k++) {
		if (side->set[k].value)
			env_set(out, side->set[k].key, side->set[k].value);
		else
			env_unset(out, side->set[k].key);
	}
}

void ab_axis_describe(const struct ab_spec *s, struct strbuf *out)
{
	const struct ab_side *a = &s->side[0], *b = &s->side[1];
	size_t start = out->len;

	for (size_t k = 0; k < a->nr; k++) {
		const struct ab_setting *sa = &a->set[k], *sb = ab_side_find(b, sa->key);
		if (!sb || str_eq(sa->value, sb->value))
			continue;
		strbuf_addf(out, "%s%s=%s,%s", out->len > start ? ";" : "", sa->key,
			    sa->value ? sa->value : "(unset)", sb->value ? sb->value : "(unset)");
	}
	if (!str_eq(a->python, b->python))
		strbuf_addf(out, "%spython=%s,%s", out->len > start ? ";" : "",
			    a->python ? a->python : "(shared)", b->python ? b->python : "(shared)");
	if (!str_eq(a->flaggems_dir, b->flaggems_dir))
		strbuf_addf(out, "%sflaggems-dir=%s,%s", out->len > start ? ";" : "",
			    a->flaggems_dir ? a->flaggems_dir : "(shared)",
			    b->flaggems_dir ? b->flaggems_dir : "(shared)");
}

/* ---- the switch in the FlagGems source ------------------------------------------ */

const char *ab_switch_exempt(const char *name)
{
	static const char *const prefixes[] = { "TRITON_", "FLAGTREE_", NULL };

	for (const char *const *p = prefixes; *p; p++)
		if (starts_with(name, *p))
			return *p;
	return NULL;
}

static int ident_char(int c)
{
	return isalnum(c) || c == '_';
}

int ab_text_has_identifier(const char *text, size_t len, const char *name)
{
	size_t n = strlen(name);
	const char *p = text, *end = text + len;

	if (!n)
		return 0;
	while ((size_t)(end - p) >= n) {
		const char *hit = memmem(p, (size_t)(end - p), name, n);
		if (!hit)
			return 0;
		if ((hit == text || !ident_char((unsigned char)hit[-1])) &&
		    (hit + n == end || !ident_char((unsigned char)hit[n])))
			return 1;
		p = hit + 1;
	}
	return 0;
}

#define SEARCH_MAX_DEPTH 32

static int search_dir(const char *root, const char *rel, int depth, const char *name,
		      struct ab_switch_hit *hit)
{
	char *dir = rel ? path_join(root, rel) : xstrdup(root);
	DIR *d;
	struct dirent *e;
	struct strvec names = STRVEC_INIT;
	int r = 0;

	if (depth > SEARCH_MAX_DEPTH) {
		free(dir);
		return 0;
	}
	d = opendir(dir);
	if (!d) {
		/* The root must be readable; an unreadable subfolder is skipped. */
		r = rel ? 0 : error_errno("cannot read '%s'", dir);
		free(dir);
		return r;
	}
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && strcmp(e->d_name, "__pycache__"))
			strvec_push(&names, e->d_name);
	closedir(d);
	/* Name order, so the file named as the first hit does not depend on the file system. */
	for (size_t i = 1; i < names.nr; i++)
		for (size_t j = i; j > 0 && strcmp(names.v[j - 1], names.v[j]) > 0; j--) {
			char *t = names.v[j];
			names.v[j] = names.v[j - 1];
			names.v[j - 1] = t;
		}
	for (size_t i = 0; i < names.nr && !r && !hit->found; i++) {
		char *path = path_join(dir, names.v[i]);
		char *sub = rel ? path_join(rel, names.v[i]) : xstrdup(names.v[i]);
		struct stat st;

		if (lstat(path, &st)) {
			/* vanished meanwhile */
		} else if (S_ISDIR(st.st_mode)) {
			r = search_dir(root, sub, depth + 1, name, hit);
		} else if (S_ISREG(st.st_mode) && ends_with(names.v[i], ".py")) {
			struct strbuf text = STRBUF_INIT;
			if (!strbuf_read_file(&text, path, 0)) {
				hit->files++;
				if (ab_text_has_identifier(text.buf, text.len, name)) {
					hit->found = 1;
					hit->where = xstrdup(sub);
				}
			}
			strbuf_release(&text);
		}
		free(path);
		free(sub);
	}
	strvec_clear(&names);
	free(dir);
	return r;
}

int ab_switch_search(const char *checkout, const char *name, struct ab_switch_hit *hit)
{
	char *src = path_join(checkout, "src");

	memset(hit, 0, sizeof(*hit));
	if (is_dir(src)) {
		hit->root = src;
	} else {
		free(src);
		hit->root = xstrdup(checkout);
	}
	return search_dir(hit->root, NULL, 0, name, hit);
}

void ab_switch_hit_release(struct ab_switch_hit *hit)
{
	free(hit->root);
	free(hit->where);
	memset(hit, 0, sizeof(*hit));
}

/* ---- the IR of round 1 -------------------------------------------------------- */

static int same_content(const char *tree_a, const char *tree_b, const char *rel, int *same)
{
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	char *pa = path_join(tree_a, rel), *pb = path_join(tree_b, rel);
	int r = 0;

	if (strbuf_read_file(&a, pa, 0))
		r = error_errno("cannot read '%s'", pa);
	else if (strbuf_read_file(&b, pb, 0))
		r = error_errno("cannot read '%s'", pb);
	else
		*same = a.len == b.len && !memcmp(a.buf, b.buf, a.len);
	strbuf_release(&a);
	strbuf_release(&b);
	free(pa);
	free(pb);
	return r;
}

static void note_first(struct strvec *all, const char *rel, const char *what)
{
	strvec_pushf(all, "%s (%s)", rel, what);
}

/* Up to AB_IR_FIRST of the differences, .ttgir files first (what a compiler engineer reads). */
static void pick_first(struct ab_ir_result *r, const struct strvec *all)
{
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < all->nr && r->first.nr < AB_IR_FIRST; i++)
			if ((strstr(all->v[i], ".ttgir (") != NULL) == !pass)
				strvec_push(&r->first, all->v[i]);
}

static int pair_files(const char *tree_a, const char *tree_b, struct ab_ir_result *r)
{
	struct strvec fa = STRVEC_INIT, fb = STRVEC_INIT, all = STRVEC_INIT;
	size_t i = 0, j = 0;
	int ret;

	ret = ir_tree_stage_files(tree_a, &fa);
	if (!ret)
		ret = ir_tree_stage_files(tree_b, &fb);
	while (!ret && (i < fa.nr || j < fb.nr)) {
		int c = i == fa.nr ? 1 : j == fb.nr ? -1 : strcmp(fa.v[i], fb.v[j]);
		if (c < 0) {
			r->only_a++;
			note_first(&all, fa.v[i++], "only in A");
		} else if (c > 0) {
			r->only_b++;
			note_first(&all, fb.v[j++], "only in B");
		} else {
			int same = 0;
			ret = same_content(tree_a, tree_b, fa.v[i], &same);
			if (!ret && same) {
				r->same++;
			} else if (!ret) {
				r->differing++;
				note_first(&all, fa.v[i], "differs");
			}
			i++;
			j++;
		}
	}
	pick_first(r, &all);
	strvec_clear(&fa);
	strvec_clear(&fb);
	strvec_clear(&all);
	return ret;
}

int ab_ir_compare(const char *run_a, const char *run_b, struct ab_ir_result *r)
{
	struct ir_view v[2];
	const char *runs[2] = { run_a, run_b };
	int ret = 0;

	memset(r, 0, sizeof(*r));
	strvec_init(&r->first);
	memset(v, 0, sizeof(v));
	for (int s = 0; s < 2 && !ret; s++) {
		ret = ir_view_open(runs[s], &v[s]);
		if (ret)
			break;
		r->side[s].has_ir = v[s].has_ir;
		if (!v[s].has_ir)
			snprintf(r->side[s].why, sizeof(r->side[s].why), "%s", v[s].why);
		else
			ret = ir_fingerprint_tree(v[s].tree, &r->side[s].fp);
	}
	if (!ret) {
		int ha = r->side[0].has_ir, hb = r->side[1].has_ir;
		if (!ha && !hb)
			r->verdict = AB_IR_NONE;
		else if (!ha || !hb)
			r->verdict = AB_IR_ONE_SIDE;
		else if (r->side[0].fp.hash == r->side[1].fp.hash &&
			 r->side[0].fp.files == r->side[1].fp.files)
			r->verdict = AB_IR_IDENTICAL;
		else
			r->verdict = AB_IR_DIFFER;
		if (ha && hb)
			ret = pair_files(v[0].tree, v[1].tree, r);
		/* A hash collision would be the only way here; the files decide. */
		if (!ret && r->verdict == AB_IR_IDENTICAL &&
		    (r->differing || r->only_a || r->only_b))
			r->verdict = AB_IR_DIFFER;
	}
	for (int s = 0; s < 2; s++)
		ir_view_close(&v[s]);
	return ret;
}

void ab_ir_result_release(struct ab_ir_result *r)
{
	strvec_clear(&r->first);
}

const char *ab_ir_verdict_name(enum ab_ir_verdict v)
{
	switch (v) {
	case AB_IR_DIFFER: return "differ";
	case AB_IR_IDENTICAL: return "identical";
	case AB_IR_NONE: return "none";
	case AB_IR_ONE_SIDE: return "one_side";
	}
	return "?";
}
