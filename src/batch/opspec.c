#include "batch/opspec.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "lib/paths.h"
#include "lib/safefile.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"

const char *const opspec_repos[] = { "main", "vllm", NULL };

static int valid_op(const char *op)
{
	if (!*op)
		return 0;
	for (const char *p = op; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_')
			return 0;
	return strlen(op) <= 120;
}

/* "stem" or "folder/stem": the forms `zlb run --op-file` accepts. */
static int valid_file(const char *f)
{
	const char *slash = strchr(f, '/');

	if (!*f || *f == '/' || *f == '-' || strlen(f) > 120)
		return 0;
	if (slash && (!slash[1] || strchr(slash + 1, '/')))
		return 0;
	for (const char *p = f; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-' && *p != '/')
			return 0;
	return 1;
}

int opspec_parse(struct op_spec *s, const char *text)
{
	const char *colon = strchr(text, ':'), *rest = text, *at;
	char *repo;

	memset(s, 0, sizeof(*s));
	if (colon) {
		repo = xstrndup(text, (size_t)(colon - text));
		rest = colon + 1;
	} else {
		repo = xstrdup("main");
	}
	{
		int known = 0;
		for (const char *const *r = opspec_repos; *r; r++)
			known |= !strcmp(*r, repo);
		if (!known) {
			int r = error("'%s': unknown repository '%s' (use main: or vllm:, "
				      "or no prefix for main)", text, repo);
			free(repo);
			return r;
		}
	}
	at = strchr(rest, '@');
	s->repo = repo;
	s->op = at ? xstrndup(rest, (size_t)(at - rest)) : xstrdup(rest);
	s->file = at ? xstrdup(at + 1) : NULL;
	if (!valid_op(s->op) || (s->file && !valid_file(s->file))) {
		int r = error("'%s' is not an operator spec: write [repo:]op[@file], op being "
			      "the test function name without 'test_' (letters, digits, '_') "
			      "and file a benchmark file stem (benchmark/test_<file>.py, or "
			      "folder/stem)", text);
		opspec_release(s);
		return r;
	}
	{
		struct strbuf sb = STRBUF_INIT;
		if (strcmp(s->repo, "main"))
			strbuf_addf(&sb, "%s:", s->repo);
		strbuf_addstr(&sb, s->op);
		if (s->file)
			strbuf_addf(&sb, "@%s", s->file);
		s->spec = strbuf_detach(&sb, NULL);
	}
	s->key = s->file ? xstrfmt("%s@%s", s->op, s->file) : xstrdup(s->op);
	for (char *p = s->key; *p; p++)
		if (*p == '/')
			*p = '+';
	/*
	 * Each part passed its own check, but the directory name joins them:
	 * op (120) + '@' + file (120) can pass the 200 bytes a name may take.
	 */
	if (!name_is_safe(s->key)) {
		int r = error("'%s': operator and file together make a directory name of "
			      "%zu bytes, more than the %d a batch directory entry may take; "
			      "shorten the file (or leave it out when only one file defines "
			      "the operator)", text, strlen(s->key), NAME_MAX_BYTES);
		opspec_release(s);
		return r;
	}
	return 0;
}

void opspec_release(struct op_spec *s)
{
	free(s->spec);
	free(s->repo);
	free(s->op);
	free(s->file);
	free(s->key);
	memset(s, 0, sizeof(*s));
}

int opspec_read_file(const char *path, struct strvec *out)
{
	struct strbuf sb = STRBUF_INIT;
	char *p, *line;
	size_t lineno = 0;

	switch (read_user_file(path, "the ops file", 16 << 20, &sb)) {
	case 0:
		break;
	case 1:
		strbuf_release(&sb);
		return error("the ops file '%s' does not exist", path);
	default:
		strbuf_release(&sb);
		return -1;
	}
	for (p = sb.buf; p && *p; ) {
		char *nl = strchr(p, '\n'), *hash, *end;
		line = p;
		p = nl ? nl + 1 : NULL;
		if (nl)
			*nl = '\0';
		lineno++;
		if ((hash = strchr(line, '#')))
			*hash = '\0';
		while (isspace((unsigned char)*line))
			line++;
		end = line + strlen(line);
		while (end > line && isspace((unsigned char)end[-1]))
			*--end = '\0';
		if (!*line)
			continue;
		for (char *q = line; *q; q++)
			if (isspace((unsigned char)*q)) {
				int r = error("%s:%zu: one operator per line, got '%s'", path,
					      lineno, line);
				strbuf_release(&sb);
				return r;
			}
		strvec_push(out, line);
	}
	strbuf_release(&sb);
	return 0;
}
