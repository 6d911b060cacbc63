/*
 * Reading a benchmark test's Python source without running it
 * (flaggems_scan_benchmark, providers/flaggems.h): its op_name, the class
 * chain FlagGems' set_shapes will walk, and the class that hard-codes its
 * shapes. Text in, names out: no file is listed or resolved here but
 * benchmark/base.py, which the chain reaches.
 */
#include "providers/flaggems.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "lib/paths.h"

/* The body of module-level `def test_<op>(`: up to the next top-level statement. */
static char *function_body(const char *text, const char *op)
{
	char *needle = xstrfmt("def test_%s(", op);
	const char *p = text, *end;

	while ((p = strstr(p, needle)) && !(p == text || p[-1] == '\n'))
		p++;
	free(needle);
	if (!p)
		return NULL;
	end = strchr(p, '\n');
	while (end && end[1] && (end[1] == ' ' || end[1] == '\t' || end[1] == '\n' ||
				 end[1] == ')' || end[1] == '#'))
		end = strchr(end + 1, '\n');
	return end ? xstrndup(p, (size_t)(end - p)) : xstrdup(p);
}

/* Value of name="..." (or '...') in text, or NULL. */
static char *keyword_string(const char *text, const char *name)
{
	char *needle = xstrfmt("%s=", name);
	const char *p = text;
	char *res = NULL;

	while ((p = strstr(p, needle))) {
		if (p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) {
			p++;
			continue;
		}
		const char *q = p + strlen(needle);
		if (*q == '"' || *q == '\'') {
			const char *e = strchr(q + 1, *q);
			if (e)
				res = xstrndup(q + 1, (size_t)(e - q - 1));
		}
		break;
	}
	free(needle);
	return res;
}

/* Is the name at s (within text) the one a `<word> ` before it defines? */
static int defined_by(const char *text, const char *s, const char *word)
{
	size_t n = strlen(word);

	return (size_t)(s - text) > n && s[-1] == ' ' && !strncmp(s - n - 1, word, n);
}

/*
 * The first "<Name>Benchmark...(" constructor called in a function body:
 * not a name that `class` or `def` defines (the body's own
 * `def test_fooBenchmark(` is no call).
 */
static char *benchmark_class_called(const char *body)
{
	for (const char *p = body; (p = strstr(p, "Benchmark")); p++) {
		const char *s = p, *e = p;
		while (s > body && (isalnum((unsigned char)s[-1]) || s[-1] == '_'))
			s--;
		while (isalnum((unsigned char)*e) || *e == '_')
			e++;
		if (*e == '(' && !defined_by(body, s, "class") && !defined_by(body, s, "def"))
			return xstrndup(s, (size_t)(e - s));
	}
	return NULL;
}

/* Does name occur in text as a whole identifier (not inside shapes_4d)? */
static int has_identifier(const char *text, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = text; (p = strstr(p, name)); p++) {
		int before = p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_');
		int after = isalnum((unsigned char)p[n]) || p[n] == '_';
		if (!before && !after)
			return 1;
	}
	return 0;
}

/*
 * A copy of Python source with its comments and string literals blanked,
 * so that a word in them is not taken for a name the code uses (as the
 * plugin's co_names would not): "# Typical 3D CNN shapes" above a
 * hard-coded list read as code that reads shapes. Lines stay where they
 * were; f-strings are kept, their braces hold code.
 */
static char *python_code_only(const char *text)
{
	char *out = xstrdup(text);
	char *p = out;

	while (*p) {
		if (*p == '#') {
			while (*p && *p != '\n')
				*p++ = ' ';
			continue;
		}
		if (*p != '\'' && *p != '"') {
			p++;
			continue;
		}
		int fstring = 0;
		for (char *k = p; k > out && isalpha((unsigned char)k[-1]); k--)
			fstring |= k[-1] == 'f' || k[-1] == 'F';
		char q = *p;
		size_t ql = p[1] == q && p[2] == q ? 3 : 1;
		char *e = p + ql;
		while (*e) {
			if (*e == '\\' && e[1]) {
				e += 2;
				continue;
			}
			if (ql == 3 ? e[0] == q && e[1] == q && e[2] == q : *e == q || *e == '\n')
				break;
			e++;
		}
		if (*e && *e != '\n')
			e += ql;
		if (!fstring)
			for (char *k = p; k < e; k++)
				if (*k != '\n')
					*k = ' ';
		p = e;
	}
	return out;
}

/*
 * Does a class body ignore the shape file? It does when it overrides
 * set_shapes, or overrides get_input_iter with a body that never reads
 * shapes (it iterates its own list) nor hands over to super() or another
 * get_input_iter: the zlbench.shapes plugin's rule, which reads the names
 * the method's code uses (a local list named shapes_4d reads no shapes).
 * Overriding get_input_iter is otherwise ordinary: most classes build
 * their inputs there from self.shapes.
 */
static int hardcodes_shapes(const char *cls)
{
	const char *m = strstr(cls, "def get_input_iter(");
	const char *end, *body;
	int reads;

	if (strstr(cls, "def set_shapes("))
		return 1;
	if (!m)
		return 0;
	/* The method ends at the next line indented no deeper than its def. */
	end = strstr(m, "\n    def ");
	char *whole = end ? xstrndup(m, (size_t)(end - m)) : xstrdup(m);
	char *method = python_code_only(whole);
	body = strchr(method, '\n') ? strchr(method, '\n') : "";
	reads = has_identifier(body, "shapes") || has_identifier(body, "super") ||
		has_identifier(body, "get_input_iter");
	free(method);
	free(whole);
	return !reads;
}

/* Bases of `class <name>(...)` in text, as bare class names. 0 if found. */
static int class_bases(const char *text, const char *name, struct strvec *bases,
		       int *overrides_shapes)
{
	char *needle = xstrfmt("class %s(", name);
	const char *p = text;
	int found = -1;

	while ((p = strstr(p, needle)) && !(p == text || p[-1] == '\n'))
		p++;
	if (p) {
		const char *q = p + strlen(needle), *close = strchr(q, ')');
		struct strvec raw = STRVEC_INIT;
		char *inside = close ? xstrndup(q, (size_t)(close - q)) : xstrdup("");
		strvec_split(&raw, inside, ", \n\t");
		for (size_t i = 0; i < raw.nr; i++) {
			const char *dot = strrchr(raw.v[i], '.');
			const char *bare = dot ? dot + 1 : raw.v[i];
			if (*bare && !strchr(bare, '='))
				strvec_push(bases, bare);
		}
		strvec_clear(&raw);
		free(inside);
		/* Does the class body define set_shapes or get_input_iter itself? */
		const char *body = close ? strchr(close, '\n') : NULL, *stop = body;
		while (stop && stop[1] && (stop[1] == ' ' || stop[1] == '\t' || stop[1] == '\n'))
			stop = strchr(stop + 1, '\n');
		if (body) {
			char *cls = stop ? xstrndup(body, (size_t)(stop - body)) : xstrdup(body);
			*overrides_shapes = hardcodes_shapes(cls);
			free(cls);
		}
		found = 0;
	}
	free(needle);
	return found;
}

void flaggems_scan_benchmark(struct flaggems_target *t, const char *text)
{
	char *body = function_body(text, t->op);
	char *cls, *base_py, *bp;
	struct strbuf base_text = STRBUF_INIT;

	if (!body)
		return;
	t->op_name = keyword_string(body, "op_name");
	if (t->op_name && strstr(body, "is_backward=True") && !strstr(t->op_name, "_backward")) {
		char *b = xstrfmt("%s_backward", t->op_name);
		free(t->op_name);
		t->op_name = b;
	}
	cls = benchmark_class_called(body);
	free(body);
	if (!cls)
		return;
	base_py = path_join(t->dir, "benchmark/base.py");
	if (strbuf_read_file(&base_text, base_py, FLAGGEMS_SOURCE_LIMIT))
		strbuf_reset(&base_text);
	free(base_py);
	bp = strrchr(cls, '.') ? strrchr(cls, '.') + 1 : cls;
	/*
	 * Depth-first, left to right over the bases, each class once: Python's
	 * MRO for the single inheritance FlagGems mostly uses, and close to it
	 * for mixins (ParallelAddmvBenchmark(ParallelBenchmarkMixin,
	 * AddmvBenchmark) reaches AddmvBenchmark's keys). A class found in
	 * neither the module nor base.py ends that branch; the chain is then
	 * incomplete (it does not end in Benchmark).
	 */
	{
		struct strvec todo = STRVEC_INIT;

		strvec_push(&todo, bp);
		while (todo.nr && t->chain.nr < 16) {
			struct strvec bases = STRVEC_INIT;
			char *cur = xstrdup(todo.v[todo.nr - 1]);
			int hard = 0;

			strvec_pop(&todo);
			if (strvec_find(&t->chain, cur) >= 0 || !strcmp(cur, "object")) {
				free(cur);
				continue;
			}
			strvec_push(&t->chain, cur);
			if (!class_bases(text, cur, &bases, &hard) ||
			    !class_bases(base_text.buf, cur, &bases, &hard)) {
				if (hard && !t->hardcoding_class && strcmp(cur, "Benchmark"))
					t->hardcoding_class = xstrdup(cur);
				/* Pushed in reverse: the first base is taken next. */
				for (size_t i = bases.nr; i-- > 0;)
					strvec_push(&todo, bases.v[i]);
			}
			strvec_clear(&bases);
			free(cur);
		}
		strvec_clear(&todo);
	}
	strbuf_release(&base_text);
	free(cls);
}
