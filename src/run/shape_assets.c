/*
 * Suite shape sets: build, migrate, check (shape_assets.h). The YAML is
 * read with shape_file_load (merge keys followed as PyYAML does) and
 * written with libyaml's emitter from a new document whose nodes are copied
 * from the old one, so anchors and merges survive a migration.
 */
#include "run/shape_assets.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

#include "lib/paths.h"
#include "lib/strbuf.h"
#include "run/shapefile.h"

void shape_assets_report_init(struct shape_assets_report *r)
{
	memset(r, 0, sizeof(*r));
	strvec_init(&r->moved);
	strvec_init(&r->unmatched);
	strvec_init(&r->fallthrough);
	strvec_init(&r->own);
	strvec_init(&r->unknown);
	strvec_init(&r->pinned);
}

void shape_assets_report_release(struct shape_assets_report *r)
{
	strvec_clear(&r->moved);
	strvec_clear(&r->unmatched);
	strvec_clear(&r->fallthrough);
	strvec_clear(&r->own);
	strvec_clear(&r->unknown);
	strvec_clear(&r->pinned);
	memset(r, 0, sizeof(*r));
}

char *shape_assets_unmatched_path(const char *out)
{
	size_t n = strlen(out);

	if (n > 5 && !strcmp(out + n - 5, ".yaml"))
		n -= 5;
	else if (n > 4 && !strcmp(out + n - 4, ".yml"))
		n -= 4;
	return xstrfmt("%.*s.unmatched.yaml", (int)n, out);
}

/* ---- what the targets name ------------------------------------------------------ */

struct names {
	struct strvec op_names, classes;
};

/* The chain of t as a vector, cut after its hard-coding class (the plugin's rule). */
static void chain_of(const struct shape_target *t, struct strvec *out)
{
	if (!t->chain || !*t->chain)
		return;
	strvec_split(out, t->chain, ">");
	if (t->hardcodes && *t->hardcodes) {
		int at = strvec_find(out, t->hardcodes);
		while (at >= 0 && out->nr > (size_t)at + 1)
			strvec_pop(out);
	}
}

static void names_init(struct names *nm, const struct shape_target *t, size_t n)
{
	strvec_init(&nm->op_names);
	strvec_init(&nm->classes);
	for (size_t i = 0; i < n; i++) {
		struct strvec chain = STRVEC_INIT;

		if (t[i].op_name && *t[i].op_name && strvec_find(&nm->op_names, t[i].op_name) < 0)
			strvec_push(&nm->op_names, t[i].op_name);
		if (t[i].chain && *t[i].chain)
			strvec_split(&chain, t[i].chain, ">");
		for (size_t c = 0; c < chain.nr; c++)
			if (strvec_find(&nm->classes, chain.v[c]) < 0)
				strvec_push(&nm->classes, chain.v[c]);
		strvec_clear(&chain);
	}
}

static void names_release(struct names *nm)
{
	strvec_clear(&nm->op_names);
	strvec_clear(&nm->classes);
}

/* 1 op_name, 2 class, 0 neither. */
static int kind_of(const struct names *nm, const char *key)
{
	if (strvec_find(&nm->op_names, key) >= 0)
		return 1;
	if (strvec_find(&nm->classes, key) >= 0)
		return 2;
	return 0;
}

/* ---- YAML: copy nodes into a new document, emit it ----------------------------- */

struct copier {
	yaml_document_t *src, *dst;
	int *map;            /* src node id -> dst node id (0: not copied yet) */
	size_t nmap;
};

static void copier_init(struct copier *c, yaml_document_t *src, yaml_document_t *dst)
{
	c->src = src;
	c->dst = dst;
	c->nmap = (size_t)(src->nodes.top - src->nodes.start) + 1;
	c->map = xcalloc(c->nmap, sizeof(*c->map));
}

/* The copy of src node id in dst (a node shared in src is shared in dst). */
static int copy_node(struct copier *c, int id)
{
	yaml_node_t *n = yaml_document_get_node(c->src, id);
	int to = 0;

	if (!n || id <= 0 || (size_t)id >= c->nmap)
		return 0;
	if (c->map[id])
		return c->map[id];
	switch (n->type) {
	case YAML_SCALAR_NODE:
		to = yaml_document_add_scalar(c->dst, n->tag, n->data.scalar.value,
					      (int)n->data.scalar.length, n->data.scalar.style);
		c->map[id] = to;
		break;
	case YAML_SEQUENCE_NODE:
		to = yaml_document_add_sequence(c->dst, n->tag, n->data.sequence.style);
		c->map[id] = to;
		for (yaml_node_item_t *i = n->data.sequence.items.start;
		     i < n->data.sequence.items.top; i++)
			yaml_document_append_sequence_item(c->dst, to, copy_node(c, *i));
		break;
	case YAML_MAPPING_NODE:
		to = yaml_document_add_mapping(c->dst, n->tag, n->data.mapping.style);
		c->map[id] = to;
		for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
		     p < n->data.mapping.pairs.top; p++) {
			int k = copy_node(c, p->key), v = copy_node(c, p->value);
			yaml_document_append_mapping_pair(c->dst, to, k, v);
		}
		break;
	default:
		break;
	}
	return to;
}

static int add_key(yaml_document_t *d, const char *key)
{
	return yaml_document_add_scalar(d, NULL, (yaml_char_t *)key, -1, YAML_PLAIN_SCALAR_STYLE);
}

static int write_handler(void *data, unsigned char *buffer, size_t size)
{
	strbuf_add(data, buffer, size);
	return 1;
}

/*
 * Emit doc (consumed: yaml_emitter_dump deletes it) after header as '#'
 * lines into path. Returns 0 or -1 with error().
 */
static int emit(yaml_document_t *doc, const char *header, const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	yaml_emitter_t em;
	const char *line = header;
	int ok, r;

	while (line && *line) {
		size_t n = strcspn(line, "\n");
		strbuf_addstr(&sb, "# ");
		strbuf_add(&sb, line, n);
		strbuf_addch(&sb, '\n');
		line += n + (line[n] == '\n');
	}
	if (!yaml_emitter_initialize(&em)) {
		yaml_document_delete(doc);
		strbuf_release(&sb);
		return error("cannot start the YAML writer for %s", path);
	}
	yaml_emitter_set_output(&em, write_handler, &sb);
	yaml_emitter_set_unicode(&em, 1);
	yaml_emitter_set_width(&em, 100);
	ok = yaml_emitter_open(&em) && yaml_emitter_dump(&em, doc) && yaml_emitter_close(&em);
	yaml_emitter_delete(&em);
	if (!ok) {
		strbuf_release(&sb);
		return error("cannot write YAML for %s: %s", path,
			     em.problem ? em.problem : "the emitter failed");
	}
	r = write_file_atomic(path, sb.buf, sb.len);
	if (r)
		r = error("cannot write %s: %s", path, last_error());
	strbuf_release(&sb);
	return r;
}

static void new_doc(yaml_document_t *d)
{
	/* Fails on allocation only, which xmalloc treats as the end too. */
	if (!yaml_document_initialize(d, NULL, NULL, NULL, 1, 1))
		BUG("out of memory starting a YAML document");
	yaml_document_add_mapping(d, NULL, YAML_BLOCK_MAPPING_STYLE);
}

static const char *scalar_of(yaml_document_t *doc, int id)
{
	yaml_node_t *n = yaml_document_get_node(doc, id);
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* ---- looking the targets up in a finished file ------------------------------------ */

static void look_up_targets(const struct shape_file *sf, const struct shape_target *t,
			    size_t n, struct shape_assets_report *rep)
{
	struct strvec seen = STRVEC_INIT;

	for (size_t i = 0; i < n; i++) {
		struct strvec chain = STRVEC_INIT;
		struct shape_lookup lk;
		char *who = xstrfmt("%s:%s", t[i].repo, t[i].op);
		int has_name = t[i].op_name && *t[i].op_name;
		const char *end = t[i].chain ? strrchr(t[i].chain, '>') : NULL;
		/* A chain the static scan followed up to Benchmark: FlagGems' whole lookup. */
		int complete = t[i].chain && !strcmp(end ? end + 1 : t[i].chain, "Benchmark");

		if (strvec_find(&seen, who) >= 0) {
			free(who);
			continue;
		}
		strvec_push(&seen, who);
		rep->ops++;
		chain_of(&t[i], &chain);
		shape_file_lookup(sf, has_name ? t[i].op_name : "",
				  chain.nr ? (const char *const *)chain.v : NULL, &lk);
		if (lk.key && lk.problem)
			strvec_pushf(&rep->unmatched, "%s: %s", lk.key, lk.problem);
		else if (lk.key)
			;
		else if (t[i].hardcodes && *t[i].hardcodes)
			strvec_pushf(&rep->own, "%s (%s)", who, t[i].hardcodes);
		else if (!complete)
			strvec_pushf(&rep->unknown, "%s (op_name %s, chain %s: the static scan did "
				     "not follow it up to Benchmark)", who, has_name ? t[i].op_name : "?",
				     t[i].chain && *t[i].chain ? t[i].chain : "?");
		else
			strvec_pushf(&rep->fallthrough, "%s (op_name %s, chain %s)", who,
				     has_name ? t[i].op_name : "?",
				     t[i].chain && *t[i].chain ? t[i].chain : "?");
		free(lk.problem);
		strvec_clear(&chain);
		free(who);
	}
	strvec_clear(&seen);
}

static void count_keys(const struct shape_file *sf, const struct names *nm,
		       struct shape_assets_report *rep)
{
	struct strvec keys = STRVEC_INIT;

	shape_file_keys(sf, &keys);
	rep->keys = keys.nr;
	for (size_t i = 0; i < keys.nr; i++) {
		int k = kind_of(nm, keys.v[i]);
		if (k == 1)
			rep->op_keys++;
		else if (k == 2)
			rep->class_keys++;
	}
	strvec_clear(&keys);
}

/* Read back what was written and look every target up in it. */
static int verify_written(const char *path, const struct names *nm, const struct shape_target *t,
			  size_t n, struct shape_assets_report *rep)
{
	struct shape_file sf;

	if (shape_file_load(&sf, path, NULL))
		return error("%s was written but does not read back: %s", path, last_error());
	count_keys(&sf, nm, rep);
	look_up_targets(&sf, t, n, rep);
	shape_file_release(&sf);
	return 0;
}

int shape_assets_check(const char *file, const struct shape_target *t, size_t n,
		       struct shape_assets_report *rep)
{
	struct shape_file sf;
	struct strvec keys = STRVEC_INIT;
	struct names nm;

	if (shape_file_load(&sf, file, NULL))
		return -1;
	names_init(&nm, t, n);
	shape_file_keys(&sf, &keys);
	for (size_t i = 0; i < keys.nr; i++)
		if (!kind_of(&nm, keys.v[i]))
			strvec_pushf(&rep->unmatched, "%s: names no op_name or Benchmark class of "
				     "the inventory", keys.v[i]);
	count_keys(&sf, &nm, rep);
	look_up_targets(&sf, t, n, rep);
	strvec_clear(&keys);
	names_release(&nm);
	shape_file_release(&sf);
	return 0;
}

/* ---- migrate ------------------------------------------------------------------ */

/* The target whose op is key and whose op_name is another, or NULL. */
static const struct shape_target *renamed_op(const struct shape_target *t, size_t n,
					     const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(t[i].op, key) && t[i].op_name && *t[i].op_name &&
		    strcmp(t[i].op_name, key))
			return &t[i];
	return NULL;
}

int shape_assets_migrate(const char *in, const struct shape_target *t, size_t n,
			 const char *out, const char *unmatched_out,
			 const char *header_comment, struct shape_assets_report *rep)
{
	struct shape_file sf;
	struct names nm;
	struct strvec written = STRVEC_INIT;
	yaml_document_t dst, rest;
	struct copier c, cr;
	yaml_node_t *root;
	size_t nrest = 0;
	int ret = -1;

	if (shape_file_load(&sf, in, NULL))
		return -1;
	names_init(&nm, t, n);
	new_doc(&dst);
	new_doc(&rest);
	copier_init(&c, &sf.doc, &dst);
	copier_init(&cr, &sf.doc, &rest);
	root = yaml_document_get_root_node(&sf.doc);
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
	     p < root->data.mapping.pairs.top; p++) {
		const char *key = scalar_of(&sf.doc, p->key);
		const char *bare;
		const struct shape_target *mv = NULL;
		char *to = NULL, *why = NULL;

		if (!key)
			continue;
		if (!strcmp(key, "<<")) {
			/* A top-level merge: keep it as it is (its anchor comes along). */
			yaml_document_append_mapping_pair(&dst, 1, copy_node(&c, p->key),
							  copy_node(&c, p->value));
			continue;
		}
		bare = starts_with(key, "test_") ? key + 5 : key;
		if (kind_of(&nm, key)) {
			to = xstrdup(key);
		} else if (kind_of(&nm, bare) == 1) {
			to = xstrdup(bare);
			why = xstrfmt("%s -> %s (the old harness's test name)", key, bare);
		} else if ((mv = renamed_op(t, n, bare))) {
			to = xstrdup(mv->op_name);
			why = xstrfmt("%s -> %s (test_%s's Benchmark has op_name %s)", key, to,
				      mv->op, mv->op_name);
		}
		if (to && strvec_find(&written, to) >= 0) {
			strvec_pushf(&rep->unmatched, "%s: would become %s, which the file "
				     "already has (that entry is kept)", key, to);
			free(to);
			free(why);
			to = why = NULL;
		} else if (!to) {
			strvec_pushf(&rep->unmatched, "%s: names no op_name, operator or "
				     "Benchmark class of the inventory", key);
		}
		if (!to) {
			yaml_document_append_mapping_pair(&rest, 1, add_key(&rest, key),
							  copy_node(&cr, p->value));
			nrest++;
			continue;
		}
		if (why)
			strvec_push(&rep->moved, why);
		strvec_push(&written, to);
		yaml_document_append_mapping_pair(&dst, 1, add_key(&dst, to),
						  copy_node(&c, p->value));
		free(to);
		free(why);
	}
	free(c.map);
	free(cr.map);
	c.map = cr.map = NULL;
	if (emit(&dst, header_comment, out)) {
		yaml_document_delete(&rest);
		goto out;
	}
	if (nrest) {
		if (emit(&rest, "keys of the migrated shape file that match nothing in the "
			 "inventory (zlb inventory --migrate-shapes); review them, then move them "
			 "back under the right op_name or class", unmatched_out))
			goto out;
	} else {
		yaml_document_delete(&rest);
		if (unlink(unmatched_out) && access(unmatched_out, F_OK) == 0)
			warning("could not remove the stale %s", unmatched_out);
	}
	ret = verify_written(out, &nm, t, n, rep);
out:
	strvec_clear(&written);
	names_release(&nm);
	shape_file_release(&sf);
	return ret;
}

/* ---- build -------------------------------------------------------------------- */

/*
 * The shapes and shape_desc of core entry v, merges resolved (a built file
 * reads plainly): one shape (the middle of the list) when single, all of
 * them otherwise.
 */
static int entry_copy(struct copier *c, const struct shape_file *sf, int v, int single)
{
	yaml_node_t *entry = yaml_document_get_node(c->src, v), *shapes, *desc;
	yaml_document_t *d = c->dst;
	int map, seq;
	size_t count;

	shapes = shape_file_map_get(sf, entry, "shapes");
	desc = shape_file_map_get(sf, entry, "shape_desc");
	if (!shapes || shapes->type != YAML_SEQUENCE_NODE)
		return 0;
	count = (size_t)(shapes->data.sequence.items.top - shapes->data.sequence.items.start);
	if (!count)
		return 0;
	map = yaml_document_add_mapping(d, NULL, YAML_BLOCK_MAPPING_STYLE);
	seq = yaml_document_add_sequence(d, NULL, YAML_BLOCK_SEQUENCE_STYLE);
	for (size_t i = single ? (count - 1) / 2 : 0; i < (single ? (count - 1) / 2 + 1 : count);
	     i++)
		yaml_document_append_sequence_item(d, seq,
			copy_node(c, shapes->data.sequence.items.start[i]));
	yaml_document_append_mapping_pair(d, map, add_key(d, "shapes"), seq);
	if (desc && desc->type == YAML_SCALAR_NODE)
		yaml_document_append_mapping_pair(d, map, add_key(d, "shape_desc"),
			yaml_document_add_scalar(d, NULL, desc->data.scalar.value,
						 (int)desc->data.scalar.length,
						 YAML_DOUBLE_QUOTED_SCALAR_STYLE));
	return map;
}

/* The value node id of key in the root of sf, or 0. */
static int root_value(const struct shape_file *sf, const char *key)
{
	yaml_node_t *root = yaml_document_get_root_node((yaml_document_t *)&sf->doc);

	for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
	     p < root->data.mapping.pairs.top; p++) {
		const char *k = scalar_of((yaml_document_t *)&sf->doc, p->key);
		if (k && !strcmp(k, key))
			return p->value;
	}
	return 0;
}

/*
 * The pinned entries of the file a build replaces: keys whose entry says
 * `pinned: REASON`. A file that is not there has none; one that does not
 * read is refused, so that a rebuild never drops what someone pinned.
 */
struct pins {
	struct shape_file sf;
	int loaded;
	struct strvec keys, reasons;
};

static int pins_load(struct pins *p, const char *out)
{
	struct strvec keys = STRVEC_INIT;

	memset(p, 0, sizeof(*p));
	strvec_init(&p->keys);
	strvec_init(&p->reasons);
	if (access(out, F_OK))
		return 0;
	if (shape_file_load(&p->sf, out, NULL)) {
		char *why = xstrdup(last_error());

		error("%s is to be rebuilt but does not read as a shape file (%s), so its "
		      "pinned entries cannot be kept: fix it, or move it away to build afresh",
		      out, why);
		free(why);
		return -1;
	}
	p->loaded = 1;
	shape_file_keys(&p->sf, &keys);
	for (size_t i = 0; i < keys.nr; i++) {
		yaml_node_t *entry = yaml_document_get_node(&p->sf.doc,
							    root_value(&p->sf, keys.v[i]));
		yaml_node_t *pin = entry && entry->type == YAML_MAPPING_NODE
			? shape_file_map_get(&p->sf, entry, "pinned") : NULL;
		if (pin && pin->type == YAML_SCALAR_NODE && pin->data.scalar.length) {
			strvec_push(&p->keys, keys.v[i]);
			strvec_push(&p->reasons, (const char *)pin->data.scalar.value);
		}
	}
	strvec_clear(&keys);
	return 0;
}

static void pins_release(struct pins *p)
{
	if (p->loaded)
		shape_file_release(&p->sf);
	strvec_clear(&p->keys);
	strvec_clear(&p->reasons);
}

int shape_assets_build(const char *core_shapes, const struct shape_target *t, size_t n,
		       int single, const char *out, const char *unmatched_out,
		       const char *header_comment, struct shape_assets_report *rep)
{
	struct shape_file sf;
	struct names nm;
	struct strvec keys = STRVEC_INIT, op_keys = STRVEC_INIT, class_keys = STRVEC_INIT;
	struct strvec from = STRVEC_INIT;   /* for each op key: the core key it comes from */
	yaml_document_t dst, rest;
	struct copier c, cr, cp;
	struct pins pins;
	size_t nrest = 0;
	int ret;

	if (pins_load(&pins, out))
		return -1;
	if (shape_file_load(&sf, core_shapes, NULL)) {
		pins_release(&pins);
		return -1;
	}
	new_doc(&rest);
	copier_init(&cr, &sf.doc, &rest);
	names_init(&nm, t, n);
	shape_file_keys(&sf, &keys);
	for (size_t i = 0; i < keys.nr; i++) {
		int k = kind_of(&nm, keys.v[i]);
		if (!k) {
			strvec_pushf(&rep->unmatched, "%s: names no op_name or Benchmark class "
				     "of the inventory (left out)", keys.v[i]);
			yaml_document_append_mapping_pair(&rest, 1, add_key(&rest, keys.v[i]),
				copy_node(&cr, root_value(&sf, keys.v[i])));
			nrest++;
		} else if (k == 1 && strvec_find(&op_keys, keys.v[i]) < 0) {
			strvec_push(&op_keys, keys.v[i]);
			strvec_push(&from, keys.v[i]);
		} else if (k == 2 && strvec_find(&class_keys, keys.v[i]) < 0) {
			strvec_push(&class_keys, keys.v[i]);
		}
	}
	/* single: every operator gets its own key, from the class core_shapes reaches it by. */
	for (size_t i = 0; single && i < n; i++) {
		struct strvec chain = STRVEC_INIT;

		if (!t[i].op_name || !*t[i].op_name || strvec_find(&op_keys, t[i].op_name) >= 0 ||
		    strvec_find(&keys, t[i].op_name) >= 0)
			continue;
		chain_of(&t[i], &chain);
		for (size_t k = 0; k < chain.nr; k++) {
			if (strvec_find(&class_keys, chain.v[k]) < 0)
				continue;
			strvec_push(&op_keys, t[i].op_name);
			strvec_push(&from, chain.v[k]);
			break;
		}
		strvec_clear(&chain);
	}
	/* A pinned key core_shapes does not give is written too, where it names something. */
	for (size_t i = 0; i < pins.keys.nr; i++) {
		const char *key = pins.keys.v[i];
		int k = kind_of(&nm, key);

		if (k == 1 && strvec_find(&op_keys, key) < 0) {
			strvec_push(&op_keys, key);
			strvec_push(&from, key);
		} else if (k == 2 && strvec_find(&class_keys, key) < 0) {
			strvec_push(&class_keys, key);
		} else if (!k) {
			strvec_pushf(&rep->unmatched, "%s: pinned (%s), but names no op_name or "
				     "Benchmark class of the inventory (left out)", key,
				     pins.reasons.v[i]);
		}
	}
	/* Op keys sorted (each with the core key it comes from), then the classes. */
	for (size_t i = 1; i < op_keys.nr; i++)
		for (size_t j = i; j > 0 && strcmp(op_keys.v[j - 1], op_keys.v[j]) > 0; j--) {
			const char *a = op_keys.v[j], *b = from.v[j];
			op_keys.v[j] = op_keys.v[j - 1];
			from.v[j] = from.v[j - 1];
			op_keys.v[j - 1] = (char *)a;
			from.v[j - 1] = (char *)b;
		}
	new_doc(&dst);
	copier_init(&c, &sf.doc, &dst);
	if (pins.loaded)
		copier_init(&cp, &pins.sf.doc, &dst);
	for (int pass = 0; pass < 2; pass++) {
		const struct strvec *list = pass ? &class_keys : &op_keys;
		for (size_t i = 0; i < list->nr; i++) {
			int v, pin = strvec_find(&pins.keys, list->v[i]);

			/* Each key its own nodes: a built file reads without anchors. */
			memset(c.map, 0, c.nmap * sizeof(*c.map));
			if (pin >= 0) {
				memset(cp.map, 0, cp.nmap * sizeof(*cp.map));
				v = copy_node(&cp, root_value(&pins.sf, list->v[i]));
				strvec_pushf(&rep->pinned, "%s: %s", list->v[i],
					     pins.reasons.v[pin]);
			} else {
				v = entry_copy(&c, &sf, root_value(&sf, pass ? list->v[i]
									  : from.v[i]),
					       single);
			}
			if (!v) {
				strvec_pushf(&rep->unmatched, "%s: its core_shapes entry has no "
					     "shapes list (left out)", list->v[i]);
				continue;
			}
			yaml_document_append_mapping_pair(&dst, 1, add_key(&dst, list->v[i]), v);
		}
	}
	free(c.map);
	free(cr.map);
	if (pins.loaded)
		free(cp.map);
	ret = emit(&dst, header_comment, out);
	if (!ret && nrest && unmatched_out)
		ret = emit(&rest, "keys of core_shapes.yaml that name no op_name or Benchmark "
			   "class the inventory knows (a stale upstream key, a holder of YAML "
			   "anchors, or a class the static scan cannot place), left out of the "
			   "built file; move any that a benchmark does use back in", unmatched_out);
	else
		yaml_document_delete(&rest);
	if (!ret)
		ret = verify_written(out, &nm, t, n, rep);
	strvec_clear(&keys);
	strvec_clear(&op_keys);
	strvec_clear(&class_keys);
	strvec_clear(&from);
	names_release(&nm);
	shape_file_release(&sf);
	pins_release(&pins);
	return ret;
}
