#include "batch/dismiss.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/safefile.h"
#include "lib/strbuf.h"

#define DISMISS_LIMIT (4u << 20)

static int is_ident(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return 0;
	return 1;
}

/* "stem" or "folder/stem", as --op-file and opspec.h take it; never a way out of benchmark/. */
static int is_op_file(const char *s)
{
	const char *slash = strchr(s, '/');

	if (!*s || *s == '.' || *s == '/')
		return 0;
	if (slash && (strchr(slash + 1, '/') || slash[1] == '.' || !slash[1]))
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("_-/", *s))
			return 0;
	return 1;
}

int dismiss_parse_spec(const char *spec, char **repo, char **op, char **op_file)
{
	const char *colon = strchr(spec, ':'), *at, *name = spec;
	char *r, *o, *f = NULL;

	*repo = *op = *op_file = NULL;
	if (colon) {
		r = xstrndup(spec, (size_t)(colon - spec));
		if (strcmp(r, "main") && strcmp(r, "vllm")) {
			int ret = error("unknown repository '%s' in '%s': write main: or vllm: "
					"before the operator, or nothing for main", r, spec);
			free(r);
			return ret;
		}
		name = colon + 1;
	} else {
		r = xstrdup("main");
	}
	at = strchr(name, '@');
	o = at ? xstrndup(name, (size_t)(at - name)) : xstrdup(name);
	if (at)
		f = xstrdup(at + 1);
	if (!is_ident(o) || (f && !is_op_file(f))) {
		int ret;
		if (!is_ident(o))
			ret = error("'%s' is not an operator name (letters, digits and '_': "
				    "the test function without 'test_')", o);
		else
			ret = error("'%s' is not a benchmark file stem: write the file "
				    "without 'test_' and '.py', e.g. op@stem or op@folder/stem", f);
		free(r);
		free(o);
		free(f);
		return ret;
	}
	if (starts_with(o, "test_"))
		warning("'%s' starts with 'test_': operators are named without it", o);
	*repo = r;
	*op = o;
	*op_file = f;
	return 0;
}

static void entry_release(struct dismiss_entry *e)
{
	free(e->repo);
	free(e->op);
	free(e->op_file);
	free(e->reason);
}

static int same_spec(const struct dismiss_entry *a, const struct dismiss_entry *b)
{
	return !strcmp(a->repo, b->repo) && !strcmp(a->op, b->op) &&
	       !strcmp(a->op_file ? a->op_file : "", b->op_file ? b->op_file : "");
}

/* One non-comment line; 0 added or skipped as duplicate, -1 refused. */
static int parse_line(struct dismiss_list *dl, const char *what, unsigned lineno,
		      const char *line)
{
	const char *p = line, *spec_end;
	struct dismiss_entry e = { 0 };
	struct strbuf reason = STRBUF_INIT;
	char *spec;

	while (*p && !isspace((unsigned char)*p))
		p++;
	spec_end = p;
	spec = xstrndup(line, (size_t)(spec_end - line));
	while (isspace((unsigned char)*p))
		p++;
	if (*p == '#')
		p++;
	strbuf_addstr(&reason, p);
	strbuf_trim(&reason);
	if (dismiss_parse_spec(spec, &e.repo, &e.op, &e.op_file)) {
		char *why = xstrdup(last_error());
		error("%s:%u: %s", what, lineno, why);
		free(why);
		goto fail;
	}
	if (!reason.len) {
		error("%s:%u: '%s' has no reason; write why it is dismissed after it on "
		      "the same line, e.g. '%s  fails on H20: issue #123'",
		      what, lineno, spec, spec);
		goto fail;
	}
	e.reason = strbuf_detach(&reason, NULL);
	e.line = lineno;
	for (size_t i = 0; i < dl->nr; i++) {
		if (same_spec(&dl->v[i], &e)) {
			warning("%s:%u: '%s' is already dismissed on line %u; this line "
				"is ignored", what, lineno, spec, dl->v[i].line);
			entry_release(&e);
			free(spec);
			return 0;
		}
	}
	if (dl->nr == dl->alloc) {
		dl->alloc = dl->alloc ? 2 * dl->alloc : 16;
		dl->v = xrealloc(dl->v, dl->alloc * sizeof(*dl->v));
	}
	dl->v[dl->nr++] = e;
	free(spec);
	return 0;
fail:
	entry_release(&e);
	strbuf_release(&reason);
	free(spec);
	return -1;
}

int dismiss_parse(const char *text, const char *what, struct dismiss_list *dl)
{
	unsigned lineno = 0;

	if (!dl->path)
		dl->path = xstrdup(what);
	for (const char *p = text; *p; ) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		struct strbuf line = STRBUF_INIT;
		int r = 0;

		lineno++;
		strbuf_add(&line, p, len);
		strbuf_trim(&line);
		if (starts_with(line.buf, "#!zlb-dismiss")) {
			const char *v = line.buf + strlen("#!zlb-dismiss");
			if (atoi(v) != DISMISS_FORMAT_VERSION)
				r = error("%s:%u: dismiss list format '%s' is not known to this "
					  "zlb (it reads format %d); update zlb or remove the line",
					  what, lineno, line.buf, DISMISS_FORMAT_VERSION);
		} else if (line.len && line.buf[0] != '#') {
			r = parse_line(dl, what, lineno, line.buf);
		}
		strbuf_release(&line);
		if (r)
			return -1;
		p += len + (nl ? 1 : 0);
	}
	return 0;
}

int dismiss_load(const char *path, struct dismiss_list *dl)
{
	struct strbuf sb = STRBUF_INIT;
	int r;

	r = read_user_file(path, "the dismiss list", DISMISS_LIMIT, &sb);
	if (r) {
		strbuf_release(&sb);
		if (r == 1) {
			error("cannot read dismiss list %s: no such file", path);
			errno = ENOENT;
		}
		return -1;
	}
	if (memchr(sb.buf, '\0', sb.len)) {
		strbuf_release(&sb);
		return error("%s is not a text file; a dismiss list holds one "
			     "'[repo:]op  reason' per line", path);
	}
	free(dl->path);
	dl->path = xstrdup(path);
	r = dismiss_parse(sb.buf, path, dl);
	strbuf_release(&sb);
	return r;
}

const struct dismiss_entry *dismiss_match(struct dismiss_list *dl, const char *repo,
					  const char *op, const char *op_file)
{
	for (size_t i = 0; i < dl->nr; i++) {
		struct dismiss_entry *e = &dl->v[i];
		if (strcmp(e->repo, repo) || strcmp(e->op, op))
			continue;
		if (e->op_file && strcmp(e->op_file, op_file ? op_file : ""))
			continue;
		e->used = 1;
		return e;
	}
	return NULL;
}

void dismiss_release(struct dismiss_list *dl)
{
	for (size_t i = 0; i < dl->nr; i++)
		entry_release(&dl->v[i]);
	free(dl->v);
	free(dl->path);
	memset(dl, 0, sizeof(*dl));
}
