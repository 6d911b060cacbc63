/*
 * What the pages share (report_int.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/html.h"
#include "report/report_int.h"
#include "rundir/markers.h"

void report_page_head(struct strbuf *sb, const char *title, const char *subtitle,
		      const char *const *nav)
{
	html_begin(sb, title);
	strbuf_addstr(sb, "<header>\n<h1>");
	html_escape(sb, title);
	strbuf_addstr(sb, "</h1>\n");
	if (subtitle)
		html_p(sb, "sub", subtitle);
	if (nav && nav[0]) {
		strbuf_addstr(sb, "<nav>");
		for (size_t i = 0; nav[i]; i++) {
			const char *eq = strchr(nav[i], '=');
			if (!eq)
				continue;
			/* ids are the pages' own constants */
			strbuf_addf(sb, "<a href=\"#%.*s\">", (int)(eq - nav[i]), nav[i]);
			html_escape(sb, eq + 1);
			strbuf_addstr(sb, "</a>");
		}
		strbuf_addstr(sb, "</nav>\n");
	}
	strbuf_addstr(sb, "</header>\n");
}

void report_fmt_ms(struct strbuf *sb, double ms)
{
	if (!isfinite(ms))
		strbuf_addstr(sb, "-");
	else
		strbuf_addf(sb, "%.4g", ms);
}

void report_fmt_change(struct strbuf *sb, double ratio)
{
	if (!isfinite(ratio) || ratio <= 0)
		strbuf_addstr(sb, "-");
	else
		strbuf_addf(sb, "%+.2f%%", (ratio - 1) * 100);
}

static const struct {
	const char *marker, *flag;
} flags[] = {
	{ MARKER_DIRECT, "fallback" },		/* timed eagerly: capture was refused */
	{ MARKER_REPLAY_FALLBACK, "replay fallback" },
	{ MARKER_MEMCPY_NODES, "memcpy" },
	{ MARKER_MEMSET_NODES, "memset" },
	{ MARKER_NO_KERNELS, "empty graph" },
	{ MARKER_K_DIFFERS, "K differs" },
	{ MARKER_WALL_LIMIT, "wall limit" },
	{ MARKER_CAPTURE_FATAL, "capture fatal" },
};

const char *report_marker_flag(const char *marker)
{
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (!strcmp(marker, flags[i].marker))
			return flags[i].flag;
	return NULL;
}

void report_flags_of(const json_t *markers, struct strvec *out)
{
	size_t i;
	json_t *m;

	if (!json_is_array(markers))
		return;
	json_array_foreach(markers, i, m) {
		const char *f = json_is_string(m) ? report_marker_flag(json_string_value(m)) : NULL;
		if (f)
			strvec_push_unique(out, f);
	}
}

void report_short_shape(struct strbuf *sb, const char *shape)
{
	static const char open[] = "torch.Size(";

	while (*shape) {
		const char *p = strstr(shape, open), *close;

		if (!p) {
			strbuf_addstr(sb, shape);
			return;
		}
		strbuf_add(sb, shape, p - shape);
		p += strlen(open);
		close = strstr(p, "])");
		if (*p != '[' || !close) {
			/* not the form upstream prints: keep it as it is */
			strbuf_addstr(sb, open);
			shape = p;
			continue;
		}
		strbuf_add(sb, p, close + 1 - p);
		shape = close + 2;
	}
}

void report_join(struct strbuf *sb, const struct strvec *sv, const char *sep)
{
	for (size_t i = 0; i < sv->nr; i++) {
		if (i)
			strbuf_addstr(sb, sep);
		strbuf_addstr(sb, sv->v[i]);
	}
}

const char *report_verdict_class(const char *verdict)
{
	static const char *const known[] = { "FASTER", "SLOWER", "SAME", "UNSURE", "EXCLUDED",
					     NULL };

	for (size_t i = 0; known[i]; i++)
		if (verdict && !strcmp(verdict, known[i]))
			return known[i];
	return "UNSURE";
}

void report_card(struct strbuf *sb, const char *value, const char *what, const char *cls)
{
	strbuf_addstr(sb, "<div class=\"card\"><b");
	if (cls)
		strbuf_addf(sb, " style=\"color:var(--%s)\"", cls);
	strbuf_addch(sb, '>');
	html_escape(sb, value);
	strbuf_addstr(sb, "</b><span>");
	html_escape(sb, what);
	strbuf_addstr(sb, "</span></div>\n");
}

/* ---- identities ------------------------------------------------------------ */

/* Provenance that differs from run to run by nature: not a fact about the build. */
static const char *const per_run[] = {
	"command_line", "pytest_command", "run_dir", "started_at", "finished_at",
	"device_start", "device_end", "compile_cache_dir", "op_file", "op_name", "test_node",
	"graph_plan", NULL,
};

/* A value as one line of text. */
static void value_text(struct strbuf *sb, const json_t *v)
{
	if (json_is_string(v)) {
		strbuf_addstr(sb, json_string_value(v));
	} else if (json_is_array(v)) {
		size_t i;
		json_t *x;
		json_array_foreach(v, i, x) {
			if (i)
				strbuf_addch(sb, ' ');
			value_text(sb, x);
		}
	} else {
		char *t = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(10));
		strbuf_addstr(sb, t ? t : "?");
		free(t);
	}
	if (sb->len > 300) {
		strbuf_setlen(sb, 297);
		strbuf_addstr(sb, "...");
	}
}

/*
 * The (flattened) keys of section over all identities, in first-seen order.
 * A key that is an object in any run stands for its members only: a run
 * where it is null or empty shows them as absent.
 */
static void collect_keys(const char *section, const struct report_idset *sides, int nsides,
			 struct strvec *keys)
{
	struct strvec objects = STRVEC_INIT;

	for (int pass = 0; pass < 2; pass++)
		for (int s = 0; s < nsides; s++)
			for (size_t r = 0; r < sides[s].n; r++) {
				const json_t *sec = json_object_get(sides[s].ids[r], section);
				const char *k;
				json_t *v;

				if (!json_is_object(sec))
					continue;
				json_object_foreach((json_t *)sec, k, v) {
					if (!strcmp(section, "provenance") && strlist_has(per_run, k))
						continue;
					if (!pass) {
						if (json_is_object(v))
							strvec_push_unique(&objects, k);
						continue;
					}
					if (json_is_object(v)) {
						const char *k2;
						json_t *v2;
						json_object_foreach(v, k2, v2) {
							struct strbuf t = STRBUF_INIT;
							strbuf_addf(&t, "%s.%s", k, k2);
							if (strvec_find(keys, t.buf) < 0)
								strvec_push(keys, t.buf);
							strbuf_release(&t);
						}
					} else if (strvec_find(&objects, k) < 0 &&
						   strvec_find(keys, k) < 0) {
						strvec_push(keys, k);
					}
				}
			}
	strvec_clear(&objects);
}

/* The value of a (possibly "a.b") key in sec, or NULL. */
static const json_t *lookup(const json_t *sec, const char *key)
{
	const json_t *v = json_object_get(sec, key);
	const char *dot;

	if (v || !(dot = strchr(key, '.')))
		return v;
	{
		char *head = xstrndup(key, dot - key);
		const json_t *o = json_object_get(sec, head);
		free(head);
		return json_is_object(o) ? json_object_get(o, dot + 1) : NULL;
	}
}

/* A side's distinct values of key, sorted, "(absent)" for runs without it. */
static void side_values(const struct report_idset *side, const char *section, const char *key,
			struct strvec *vals)
{
	for (size_t r = 0; r < side->n; r++) {
		const json_t *v = lookup(json_object_get(side->ids[r], section), key);
		struct strbuf t = STRBUF_INIT;

		if (v)
			value_text(&t, v);
		else
			strbuf_addstr(&t, side->ids[r] ? "(absent)" : "(no identity)");
		strvec_push_unique(vals, t.len ? t.buf : "(empty)");
		strbuf_release(&t);
	}
	strvec_sort(vals);
}

void report_identity_table(struct strbuf *sb, const char *section, const char *caption,
			   const struct report_idset *sides, int nsides, const char *const *names)
{
	struct strvec keys = STRVEC_INIT;
	const char *heads[4] = { "field", names[0], nsides > 1 ? names[1] : NULL, NULL };

	collect_keys(section, sides, nsides, &keys);
	html_table_begin(sb, "ident", caption, heads);
	for (size_t k = 0; k < keys.nr; k++) {
		struct strvec vals[2] = { STRVEC_INIT, STRVEC_INIT };
		struct strbuf cell = STRBUF_INIT, all[2] = { STRBUF_INIT, STRBUF_INIT };
		int differ;

		for (int s = 0; s < nsides; s++) {
			side_values(&sides[s], section, keys.v[k], &vals[s]);
			/* a run without the key does not make the sides differ: its values do */
			for (size_t i = 0; i < vals[s].nr; i++)
				if (strcmp(vals[s].v[i], "(absent)") &&
				    strcmp(vals[s].v[i], "(no identity)"))
					strbuf_addf(&all[s], "%s\n", vals[s].v[i]);
		}
		differ = nsides > 1 && strcmp(all[0].buf, all[1].buf);
		html_tr_begin(sb, differ ? "differs" : NULL);
		html_td_cls(sb, differ ? "diff" : NULL, keys.v[k]);
		for (int s = 0; s < nsides; s++) {
			strbuf_reset(&cell);
			for (size_t i = 0; i < vals[s].nr && i < 3; i++) {
				if (i)
					strbuf_addstr(&cell, "; ");
				strbuf_addstr(&cell, vals[s].v[i]);
			}
			if (vals[s].nr > 3)
				strbuf_addf(&cell, " (+%zu more)", vals[s].nr - 3);
			html_td_cls(sb, differ ? "wrap diff" : "wrap", cell.buf);
			strvec_clear(&vals[s]);
			strbuf_release(&all[s]);
		}
		html_tr_end(sb);
		strbuf_release(&cell);
	}
	if (!keys.nr) {
		html_tr_begin(sb, NULL);
		html_td(sb, "(no identity recorded)");
		html_tr_end(sb);
	}
	html_table_end(sb);
	strvec_clear(&keys);
}
