#include "providers/flaggems_scan.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "lib/paths.h"
#include "lib/strbuf.h"
#include "providers/flaggems.h"

/*
 * Lexical state carried from line to line: bracket depth of the statement
 * being read and an open triple-quoted string, so that a decorator or a
 * pytestmark spread over several lines is read as one statement and a
 * "def test_" inside a docstring is not taken for a function.
 */
struct lex {
	int depth;
	char triple;  /* '"' or '\'' inside a triple-quoted string, else 0 */
};

static void lex_line(struct lex *lx, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (lx->triple) {
			if (c == lx->triple && i + 2 < len && s[i + 1] == c && s[i + 2] == c) {
				lx->triple = 0;
				i += 2;
			} else if (c == '\\') {
				i++;
			}
			continue;
		}
		if (c == '#')
			return;
		if (c == '"' || c == '\'') {
			if (i + 2 < len && s[i + 1] == c && s[i + 2] == c) {
				lx->triple = c;
				i += 2;
				continue;
			}
			/* A one-line string: skip it whole. */
			for (i++; i < len && s[i] != c; i++)
				if (s[i] == '\\')
					i++;
			continue;
		}
		if (c == '(' || c == '[' || c == '{')
			lx->depth++;
		else if ((c == ')' || c == ']' || c == '}') && lx->depth > 0)
			lx->depth--;
	}
}

/* Index of the last byte of the string literal starting at s[i]. */
static size_t string_end(const char *s, size_t i, size_t len)
{
	char q = s[i];

	for (i++; i < len && s[i] != q; i++)
		if (s[i] == '\\')
			i++;
	return i;
}

/* Index just past the bracket closing the one at s[open], or len. */
static size_t matching_paren(const char *s, size_t open, size_t len)
{
	int depth = 0;

	for (size_t i = open; i < len; i++) {
		if (s[i] == '"' || s[i] == '\'') {
			i = string_end(s, i, len);
		} else if (strchr("([{", s[i])) {
			depth++;
		} else if (strchr(")]}", s[i]) && --depth == 0) {
			return i + 1;
		}
	}
	return len;
}

/* Length of the first argument of args: up to a comma outside brackets and strings. */
static size_t first_arg_len(const char *args)
{
	size_t n = strlen(args), i;
	int depth = 0;

	for (i = 0; i < n; i++) {
		if (args[i] == '"' || args[i] == '\'') {
			i = string_end(args, i, n);
		} else if (strchr("([{", args[i])) {
			depth++;
		} else if (strchr(")]}", args[i])) {
			depth--;
		} else if (args[i] == ',' && depth <= 0) {
			break;
		}
	}
	return i < n ? i : n;
}

/* The first string literal in s (prefixes r/f/b allowed), or NULL. */
static char *first_string(const char *s)
{
	for (const char *p = s; *p; p++) {
		if (*p != '"' && *p != '\'')
			continue;
		char q = *p;
		const char *e = p + 1;
		while (*e && *e != q) {
			if (*e == '\\' && e[1])
				e++;
			e++;
		}
		return *e ? xstrndup(p + 1, (size_t)(e - p - 1)) : NULL;
	}
	return NULL;
}

/* The string given as reason=..., else the first string argument. */
static char *mark_reason(const char *args)
{
	for (const char *p = args; (p = strstr(p, "reason")); p++) {
		const char *q = p + 6;
		if (p > args && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))
			continue;
		while (*q == ' ')
			q++;
		if (*q == '=')
			return first_string(q + 1);
	}
	return first_string(args);
}

/* Collapse runs of whitespace (the statement may span lines) into one space. */
static void squeeze(struct strbuf *sb, const char *s, size_t len)
{
	int space = 0;

	for (size_t i = 0; i < len; i++) {
		if (isspace((unsigned char)s[i])) {
			space = sb->len > 0;
			continue;
		}
		if (space)
			strbuf_addch(sb, ' ');
		space = 0;
		strbuf_addch(sb, s[i]);
	}
}

static void add_note(struct strbuf *sb, const char *text)
{
	if (sb->len)
		strbuf_addstr(sb, "; ");
	strbuf_addstr(sb, text);
}

/*
 * Every pytest.mark.skip / skipif in a statement (a decorator, or the
 * module's pytestmark), appended to skip and skipif. `mark.skip` alone is
 * accepted too, for `from pytest import mark`.
 */
static void read_marks(const char *stmt, struct strbuf *skip, struct strbuf *skipif)
{
	size_t len = strlen(stmt);

	for (const char *p = stmt; (p = strstr(p, "mark.skip")); p++) {
		const char *e = p + 9;
		int cond = starts_with(e, "if");

		if (p > stmt && p[-1] != '.' && p[-1] != '@' && p[-1] != ' ' &&
		    p[-1] != '[' && p[-1] != '(' && p[-1] != ',')
			continue;
		if (cond)
			e += 2;
		if (isalnum((unsigned char)*e) || *e == '_')
			continue;
		while (*e == ' ')
			e++;
		char *args = NULL;
		if (*e == '(') {
			size_t open = (size_t)(e - stmt);
			size_t close = matching_paren(stmt, open, len);
			args = xstrndup(e + 1, close > open + 1 ? close - open - 2 : 0);
		}
		char *reason = args ? mark_reason(args) : NULL;
		if (!cond) {
			add_note(skip, reason && *reason ? reason : "(no reason)");
		} else {
			struct strbuf note = STRBUF_INIT, cnd = STRBUF_INIT;
			/* The condition: the first argument, unless reason= comes first. */
			if (args && !starts_with(args + strspn(args, " \n\t"), "reason"))
				squeeze(&cnd, args, first_arg_len(args));
			strbuf_addf(&note, "skipif: %s", reason && *reason ? reason : "(no reason)");
			if (cnd.len)
				strbuf_addf(&note, " [if %s]", cnd.buf);
			add_note(skipif, note.buf);
			strbuf_release(&note);
			strbuf_release(&cnd);
		}
		free(reason);
		free(args);
	}
}

/* pytest.importorskip("mod") anywhere at module level: conditional on mod. */
static void read_importorskip(const char *stmt, struct strbuf *skipif)
{
	const char *p = strstr(stmt, "importorskip(");
	if (!p)
		return;
	char *mod = first_string(p);
	char *note = xstrfmt("importorskip: %s", mod ? mod : "?");
	add_note(skipif, note);
	free(note);
	free(mod);
}

struct file_state {
	const char *dir, *rel_path;
	char *op_file;
	const char *text;
	struct strbuf file_skip, file_skipif;  /* module-wide marks */
	struct strvec decorators;
	struct strvec seen;                    /* test names already recorded */
	size_t first;                          /* index in out of this file's first test */
};

static void record_test(struct file_state *fs, struct flaggems_scan *out,
			const char *stmt, unsigned line)
{
	const char *name = stmt + (starts_with(stmt, "async ") ? 10 : 4);
	const char *e = name + 5;
	struct strbuf skip = STRBUF_INIT, skipif = STRBUF_INIT;
	struct flaggems_target t = { 0 };
	struct scanned_test *st;

	while (isalnum((unsigned char)*e) || *e == '_')
		e++;
	if (e == name + 5)
		return;  /* "def test_(" names no operator */
	char *test = xstrndup(name, (size_t)(e - name));
	if (strvec_find(&fs->seen, test) >= 0) {
		/* Python keeps the last definition; so does pytest. One row is enough. */
		warning("%s:%u redefines %s; one entry is kept", fs->rel_path, line, test);
		free(test);
		return;
	}
	strvec_push(&fs->seen, test);
	for (size_t i = 0; i < fs->decorators.nr; i++)
		read_marks(fs->decorators.v[i], &skip, &skipif);
	if (out->nr == out->alloc) {
		out->alloc = out->alloc ? 2 * out->alloc : 64;
		out->v = xrealloc(out->v, out->alloc * sizeof(*out->v));
	}
	st = &out->v[out->nr++];
	memset(st, 0, sizeof(*st));
	st->rel_path = xstrdup(fs->rel_path);
	st->op_file = xstrdup(fs->op_file);
	st->test = test;
	st->op = xstrdup(test + 5);
	st->line = line;
	st->skip = skip.len ? strbuf_detach(&skip, NULL) : NULL;
	st->skipif = skipif.len ? strbuf_detach(&skipif, NULL) : NULL;
	strbuf_release(&skip);
	strbuf_release(&skipif);

	t.dir = (char *)fs->dir;
	t.op = st->op;
	flaggems_scan_benchmark(&t, fs->text);
	if (t.op_name)
		st->op_name = t.op_name;
	if (t.chain.nr) {
		struct strbuf sb = STRBUF_INIT;
		for (size_t i = 0; i < t.chain.nr; i++)
			strbuf_addf(&sb, "%s%s", i ? ">" : "", t.chain.v[i]);
		st->chain = strbuf_detach(&sb, NULL);
	}
	strvec_clear(&t.chain);
	st->hardcodes = t.hardcoding_class;
}

enum block { BLOCK_NONE, BLOCK_DEF, BLOCK_OTHER };

/* A complete top-level statement (decorator, def, assignment, ...). */
static void top_statement(struct file_state *fs, struct flaggems_scan *out,
			  const char *stmt, unsigned line, enum block *block)
{
	if (stmt[0] == '@') {
		strvec_push(&fs->decorators, stmt);
		return;
	}
	if (starts_with(stmt, "def test_") || starts_with(stmt, "async def test_")) {
		record_test(fs, out, stmt, line);
		*block = BLOCK_DEF;
	} else if (starts_with(stmt, "def ") || starts_with(stmt, "async def ") ||
		   starts_with(stmt, "class ")) {
		*block = BLOCK_DEF;
	} else if (starts_with(stmt, "pytestmark")) {
		read_marks(stmt, &fs->file_skip, &fs->file_skipif);
		*block = BLOCK_NONE;
	} else if (starts_with(stmt, "pytest.skip(")) {
		/* Only allow_module_level=True makes this legal at module level. */
		char *reason = mark_reason(stmt + 11);
		add_note(&fs->file_skip, reason && *reason ? reason : "(no reason)");
		free(reason);
		*block = BLOCK_NONE;
	} else {
		read_importorskip(stmt, &fs->file_skipif);
		*block = BLOCK_OTHER;  /* if / try / with / assignment ... */
	}
	strvec_clear(&fs->decorators);
}

/* An indented line under a top-level if/try/with: a module skip there is conditional. */
static void guarded_line(struct file_state *fs, const char *line)
{
	if (strstr(line, "pytest.skip(")) {
		char *reason = mark_reason(strstr(line, "pytest.skip(") + 11);
		char *note = xstrfmt("module skip: %s", reason && *reason ? reason : "(no reason)");
		add_note(&fs->file_skipif, note);
		free(note);
		free(reason);
	}
	read_importorskip(line, &fs->file_skipif);
}

static char *join_notes(const char *a, const char *b)
{
	if (!a || !*a)
		return b && *b ? xstrdup(b) : NULL;
	if (!b || !*b)
		return xstrdup(a);
	return xstrfmt("%s; %s", a, b);
}

char *flaggems_op_file_of(const char *rel_path)
{
	const char *rel = rel_path, *base;
	size_t skip;

	skip_prefix(rel_path, "benchmark/", &rel);
	base = path_basename(rel);
	skip = starts_with(base, "test_") ? 5 : 0;
	size_t stem = strlen(base) - skip - (ends_with(base, ".py") ? 3 : 0);
	return xstrfmt("%.*s%.*s", (int)(base - rel), rel, (int)stem, base + skip);
}

void flaggems_scan_text(const char *dir, const char *rel_path, const char *text,
			struct flaggems_scan *out)
{
	struct file_state fs = { dir, rel_path, flaggems_op_file_of(rel_path), text,
				 STRBUF_INIT, STRBUF_INIT, STRVEC_INIT, STRVEC_INIT, out->nr };
	struct lex lx = { 0, 0 };
	struct strbuf stmt = STRBUF_INIT;
	unsigned lineno = 0, stmt_line = 0;
	enum block block = BLOCK_NONE;
	int in_stmt = 0;

	strvec_push(&out->files, rel_path);
	for (const char *p = text; *p; ) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		int was_string = lx.triple != 0;

		lineno++;
		if (in_stmt) {
			/* A continuation of a top-level statement. */
			strbuf_addch(&stmt, '\n');
			strbuf_add(&stmt, p, len);
			lex_line(&lx, p, len);
		} else if (was_string) {
			lex_line(&lx, p, len);
		} else if (len && !isspace((unsigned char)p[0]) && p[0] != '#') {
			in_stmt = 1;
			stmt_line = lineno;
			strbuf_reset(&stmt);
			strbuf_add(&stmt, p, len);
			lex_line(&lx, p, len);
		} else {
			if (block == BLOCK_OTHER && len) {
				char *line = xstrndup(p, len);
				guarded_line(&fs, line);
				free(line);
			}
			lex_line(&lx, p, len);
		}
		/* A statement ends with its line once brackets and strings are closed. */
		if (in_stmt && !lx.depth && !lx.triple) {
			in_stmt = 0;
			top_statement(&fs, out, stmt.buf, stmt_line, &block);
		}
		p += len + (nl ? 1 : 0);
	}
	if (in_stmt)
		top_statement(&fs, out, stmt.buf, stmt_line, &block);
	/* Module-wide marks apply to every test of the file, wherever they stand. */
	for (size_t i = fs.first; i < out->nr; i++) {
		struct scanned_test *st = &out->v[i];
		char *s = join_notes(fs.file_skip.buf, st->skip);
		char *c = join_notes(fs.file_skipif.buf, st->skipif);
		free(st->skip);
		free(st->skipif);
		st->skip = s;
		st->skipif = c;
	}
	strbuf_release(&stmt);
	strbuf_release(&fs.file_skip);
	strbuf_release(&fs.file_skipif);
	strvec_clear(&fs.decorators);
	strvec_clear(&fs.seen);
	free(fs.op_file);
}

int flaggems_scan_checkout(const char *dir, struct flaggems_scan *out)
{
	struct strvec files = STRVEC_INIT;
	char *bdir = path_join(dir, "benchmark");
	size_t prefix = strlen(dir);
	int ret = 0;

	if (!is_dir(bdir)) {
		ret = error("%s has no benchmark/ folder, so it is not a FlagGems checkout; "
			    "point the option at the folder holding benchmark/ and src/", dir);
		free(bdir);
		return ret;
	}
	free(bdir);
	flaggems_list_benchmark_files(dir, &files);
	while (prefix > 1 && dir[prefix - 1] == '/')
		prefix--;
	for (size_t i = 0; i < files.nr && !ret; i++) {
		struct strbuf sb = STRBUF_INIT;
		const char *rel = files.v[i] + prefix + (files.v[i][prefix] == '/');
		if (strbuf_read_file(&sb, files.v[i], FLAGGEMS_SOURCE_LIMIT))
			ret = error_errno("cannot read %s", files.v[i]);
		else
			flaggems_scan_text(dir, rel, sb.buf, out);
		strbuf_release(&sb);
	}
	strvec_clear(&files);
	return ret;
}

void flaggems_scan_release(struct flaggems_scan *s)
{
	for (size_t i = 0; i < s->nr; i++) {
		struct scanned_test *st = &s->v[i];
		free(st->rel_path);
		free(st->op_file);
		free(st->test);
		free(st->op);
		free(st->skip);
		free(st->skipif);
		free(st->op_name);
		free(st->chain);
		free(st->hardcodes);
	}
	free(s->v);
	strvec_clear(&s->files);
	memset(s, 0, sizeof(*s));
	strvec_init(&s->files);
}
