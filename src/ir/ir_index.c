#include "ir/ir_index.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/safefile.h"

const char *const ir_index_columns[] = {
	"shape", "kernel", "variant", "dtype", "launches", "hash", "num_warps",
	"num_stages", "num_ctas", "constexprs", "specialization", "sweep_loser",
	"files", NULL,
};

void ir_tsv_escape(const char *s, struct strbuf *out)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '\\': strbuf_addstr(out, "\\\\"); break;
		case '\t': strbuf_addstr(out, "\\t"); break;
		case '\n': strbuf_addstr(out, "\\n"); break;
		case '\r': strbuf_addstr(out, "\\r"); break;
		default: strbuf_addch(out, *s); break;
		}
	}
}

void ir_tsv_unescape(const char *s, size_t len, struct strbuf *out)
{
	for (size_t i = 0; i < len; i++) {
		if (s[i] != '\\' || i + 1 == len) {
			strbuf_addch(out, s[i]);
			continue;
		}
		switch (s[++i]) {
		case 't': strbuf_addch(out, '\t'); break;
		case 'n': strbuf_addch(out, '\n'); break;
		case 'r': strbuf_addch(out, '\r'); break;
		default: strbuf_addch(out, s[i]); break;
		}
	}
}

/* Split one line on tabs into unescaped fields. */
static void split_fields(const char *line, struct strvec *fields)
{
	const char *p = line;

	for (;;) {
		const char *tab = strchr(p, '\t');
		size_t len = tab ? (size_t)(tab - p) : strlen(p);
		struct strbuf sb = STRBUF_INIT;

		ir_tsv_unescape(p, len, &sb);
		strvec_push(fields, sb.buf);
		strbuf_release(&sb);
		if (!tab)
			break;
		p = tab + 1;
	}
}

enum { C_SHAPE, C_KERNEL, C_VARIANT, C_DTYPE, C_LAUNCHES, C_HASH, C_LOSER, C_FILES, C_NR };

int ir_index_load(const char *path, struct ir_index *idx)
{
	static const char *const need[C_NR] = {
		"shape", "kernel", "variant", "dtype", "launches", "hash", "sweep_loser", "files",
	};
	int col[C_NR];
	FILE *f;
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	ssize_t n;
	int fd, ret = open_regular(path, &fd), have_header = 0;

	if (ret)
		return ret;
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return error_errno("cannot read '%s'", path);
	}
	while ((n = getline(&line, &cap, f)) >= 0) {
		struct strvec fields = STRVEC_INIT;

		lineno++;
		while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (!n)
			continue;
		split_fields(line, &fields);
		if (!have_header) {
			for (int c = 0; c < C_NR; c++) {
				col[c] = strvec_find(&fields, need[c]);
				if (col[c] < 0) {
					ret = error("'%s' is not a zlb IR index: no '%s' column",
						    path, need[c]);
					break;
				}
			}
			have_header = 1;
			strvec_clear(&fields);
			if (ret)
				break;
			continue;
		}
		if (idx->nr == idx->alloc) {
			idx->alloc = idx->alloc ? idx->alloc * 2 : 16;
			idx->e = xrealloc(idx->e, idx->alloc * sizeof(*idx->e));
		}
		struct ir_index_entry *e = &idx->e[idx->nr++];
		memset(e, 0, sizeof(*e));
		strvec_init(&e->files);
#define FIELD(c) ((size_t)col[c] < fields.nr ? fields.v[col[c]] : "-")
		e->shape = xstrdup(FIELD(C_SHAPE));
		e->kernel = xstrdup(FIELD(C_KERNEL));
		e->variant = xstrdup(FIELD(C_VARIANT));
		e->dtype = xstrdup(FIELD(C_DTYPE));
		e->hash = xstrdup(FIELD(C_HASH));
		e->launches = strtoll(FIELD(C_LAUNCHES), NULL, 10);
		/* "yes" (a sweep's loser) and "unlaunched": listed, no files kept */
		e->sweep_loser = strcmp(FIELD(C_LOSER), "no") != 0;
		if (strcmp(FIELD(C_FILES), "-"))
			strvec_split(&e->files, FIELD(C_FILES), ",");
#undef FIELD
		strvec_clear(&fields);
		/* Names from a file are data: each must stay inside the tree. */
		for (size_t i = 0; i < e->files.nr; i++) {
			if (rel_path_is_safe(e->files.v[i]))
				continue;
			ret = error("%s:%zu names the file '%s', which is not a path inside "
				    "its tree (absolute, or through '..'): this index was not "
				    "written by zlb or was edited; lay the run out again "
				    "(zlb ir layout RUN)", path, lineno, e->files.v[i]);
			break;
		}
		if (ret)
			break;
	}
	free(line);
	fclose(f);
	if (!ret && !have_header)
		ret = error("'%s' is empty: no header line", path);
	return ret;
}

void ir_index_release(struct ir_index *idx)
{
	for (size_t i = 0; i < idx->nr; i++) {
		struct ir_index_entry *e = &idx->e[i];
		free(e->shape);
		free(e->kernel);
		free(e->variant);
		free(e->dtype);
		free(e->hash);
		strvec_clear(&e->files);
	}
	free(idx->e);
	memset(idx, 0, sizeof(*idx));
}

const char *ir_index_file(const struct ir_index_entry *e, const char *stage)
{
	for (size_t i = 0; i < e->files.nr; i++) {
		const char *dot = strrchr(e->files.v[i], '.');
		const char *slash = strrchr(e->files.v[i], '/');
		if (dot && (!slash || dot > slash) && !strcmp(dot + 1, stage))
			return e->files.v[i];
	}
	return NULL;
}
