/*
 * FlagGems' --dtypes choices, read statically (flaggems_dtypes.h). Like the
 * rest of providers/, the read follows FlagGems' own style rather than
 * parsing Python: find the option, take its choices expression up to the
 * comma or parenthesis that ends it, and pick out the dtype names in it.
 */
#include "providers/flaggems_dtypes.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "lib/paths.h"

const char *const flaggems_default_dtypes[] = {
	"float16", "float32", "bfloat16", "int16", "int32", "bool", "complex64", NULL,
};

/* torch's aliases (torch/__init__.py): the attribute and the dtype it is. */
static const struct { const char *alias, *name; } aliases[] = {
	{ "half", "float16" }, { "float", "float32" }, { "double", "float64" },
	{ "cfloat", "complex64" }, { "cdouble", "complex128" }, { "chalf", "complex32" },
	{ "short", "int16" }, { "int", "int32" }, { "long", "int64" },
	{ NULL, NULL },
};

/* Attributes of torch that are not dtypes but look like a name. */
static const char *const not_dtypes[] = {
	"cuda", "device", "dtype", "tensor", "Tensor", "ops", "nn", "testing", NULL,
};

static int dtype_like(const char *s)
{
	if (!islower((unsigned char)*s))
		return 0;
	for (; *s; s++)
		if (!islower((unsigned char)*s) && !isdigit((unsigned char)*s) && *s != '_')
			return 0;
	return 1;
}

const char *flaggems_torch_dtype_name(const char *attr)
{
	for (size_t i = 0; aliases[i].alias; i++)
		if (!strcmp(aliases[i].alias, attr))
			return aliases[i].name;
	for (size_t i = 0; not_dtypes[i]; i++)
		if (!strcmp(not_dtypes[i], attr))
			return NULL;
	return dtype_like(attr) ? attr : NULL;
}

static int ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* The end of the string literal starting at p (at its quote): past the closing quote. */
static const char *skip_string(const char *p)
{
	char q = *p++;

	while (*p && *p != q) {
		if (*p == '\\' && p[1])
			p++;
		p++;
	}
	return *p ? p + 1 : p;
}

/*
 * The expression starting at p: up to the closing bracket at depth 0, or
 * with commas also the ',' at depth 0 (brackets and strings nested inside
 * are skipped over). Returns its end.
 */
static const char *expression_end(const char *p, int commas)
{
	int depth = 0;

	while (*p) {
		if (*p == '"' || *p == '\'') {
			p = skip_string(p);
			continue;
		}
		if (*p == '#') {
			while (*p && *p != '\n')
				p++;
			continue;
		}
		if (strchr("([{", *p))
			depth++;
		else if (strchr(")]}", *p)) {
			if (!depth)
				return p;
			depth--;
		} else if (*p == ',' && !depth && commas)
			return p;
		p++;
	}
	return p;
}

static void add_once(struct strvec *out, const char *name)
{
	if (name && strvec_find(out, name) < 0)
		strvec_push(out, name);
}

/* Every torch.<name> in text[0..len) that names a dtype, into out. */
static void torch_names(const char *text, size_t len, struct strvec *out)
{
	const char *end = text + len;

	for (const char *p = text; p + 6 < end; p++) {
		char name[64];
		size_t n = 0;

		if (strncmp(p, "torch.", 6) || (p > text && (ident_char(p[-1]) || p[-1] == '.')))
			continue;
		p += 6;
		while (p < end && ident_char(*p) && n + 1 < sizeof(name))
			name[n++] = *p++;
		name[n] = '\0';
		/* torch.float16 is a dtype; torch.cuda.x is not one. */
		if (n && (p >= end || *p != '.'))
			add_once(out, flaggems_torch_dtype_name(name));
	}
}

/* The list assigned to `name = [ ... ]` at the start of a line of consts; its torch names. */
static void consts_list(const char *consts, const char *name, struct strvec *out)
{
	size_t n = strlen(name);

	for (const char *line = consts; line && *line; line = strchr(line, '\n'),
	     line = line ? line + 1 : NULL) {
		const char *p = line, *start, *stop;

		if (strncmp(p, name, n) || ident_char(p[n]))
			continue;
		p += n;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p != '=' || p[1] == '=')
			continue;
		p++;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p != '[')
			continue;
		start = p + 1;
		stop = expression_end(start, 0);
		torch_names(start, (size_t)(stop - start), out);
		return;
	}
}

/* The names in the choices expression text[0..len): literals, torch.x, consts lists. */
static void names_in(const char *text, size_t len, const char *consts, struct strvec *out)
{
	const char *end = text + len;

	for (const char *p = text; p < end;) {
		if (*p == '"' || *p == '\'') {
			const char *q = skip_string(p);
			if (q - p >= 3 && q <= end) {
				char *lit = xstrndup(p + 1, (size_t)(q - p - 2));
				if (dtype_like(lit))
					add_once(out, lit);
				free(lit);
			}
			p = q;
			continue;
		}
		if (!ident_char(*p) || (p > text && (ident_char(p[-1]) || p[-1] == '.'))) {
			p++;
			continue;
		}
		/* An identifier (dotted): torch.x, consts.X or X. */
		{
			const char *s = p;
			char *word;
			const char *last;

			while (p < end && (ident_char(*p) || *p == '.'))
				p++;
			word = xstrndup(s, (size_t)(p - s));
			last = strrchr(word, '.') ? strrchr(word, '.') + 1 : word;
			if (!strncmp(word, "torch.", 6) && !strchr(word + 6, '.'))
				add_once(out, flaggems_torch_dtype_name(word + 6));
			else if (consts && isupper((unsigned char)*last) &&
				 (last == word || !strncmp(word, "consts.", 7)))
				consts_list(consts, last, out);
			free(word);
		}
	}
}

int flaggems_dtype_choices(const char *dir, struct strvec *out, struct strbuf *why)
{
	char *conftest = path_join(dir, "benchmark/conftest.py");
	char *consts_path = path_join(dir, "benchmark/consts.py");
	struct strbuf text = STRBUF_INIT, consts = STRBUF_INIT;
	const char *opt, *p, *end;
	int ret = 1;

	if (strbuf_read_file(&text, conftest, 4 << 20) < 0) {
		strbuf_addf(why, "%s cannot be read", conftest);
		goto out;
	}
	opt = strstr(text.buf, "\"--dtypes\"");
	if (!opt)
		opt = strstr(text.buf, "'--dtypes'");
	p = opt ? strstr(opt, "choices") : NULL;
	/* The choices must belong to this addoption call, not the next one. */
	if (p) {
		const char *next = strstr(opt + 1, "addoption");
		if (next && next < p)
			p = NULL;
	}
	if (!p) {
		strbuf_addf(why, "%s gives --dtypes no choices= (or zlb cannot find them)",
			    conftest);
		goto out;
	}
	p += 7;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p != '=') {
		strbuf_addf(why, "%s: --dtypes choices are not a keyword argument", conftest);
		goto out;
	}
	p++;
	end = expression_end(p, 1);
	if (strbuf_read_file(&consts, consts_path, 4 << 20) < 0)
		strbuf_reset(&consts);
	names_in(p, (size_t)(end - p), consts.len ? consts.buf : NULL, out);
	if (!out->nr) {
		strbuf_addf(why, "%s: no dtype name found in --dtypes choices", conftest);
		goto out;
	}
	ret = 0;
out:
	strbuf_release(&text);
	strbuf_release(&consts);
	free(conftest);
	free(consts_path);
	return ret;
}
