#include "lib/jsonfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/parallel.h"
#include "lib/paths.h"
#include "lib/safefile.h"
#include "lib/strbuf.h"

int json_write_file(const char *path, const json_t *obj)
{
	char *text = json_dumps(obj, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
	int r;

	if (!text)
		return error("cannot serialise JSON for '%s'", path);
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, text);
	strbuf_addch(&sb, '\n');
	free(text);
	r = write_file_atomic(path, sb.buf, sb.len);
	strbuf_release(&sb);
	return r;
}

/* The largest JSON file zlb reads whole (a batch.json of thousands of operators is ~1 MB). */
#define JSON_FILE_LIMIT (256u << 20)

int json_read_file(const char *path, json_t **out)
{
	struct strbuf sb = STRBUF_INIT;
	json_error_t err;
	int r;

	*out = NULL;
	r = read_regular(path, JSON_FILE_LIMIT, &sb);
	if (r) {
		strbuf_release(&sb);
		return r;
	}
	*out = json_loadb(sb.buf, sb.len, 0, &err);
	strbuf_release(&sb);
	if (!*out)
		return error("'%s' is not valid JSON: %s (line %d)", path, err.text, err.line);
	if (!json_is_object(*out)) {
		json_decref(*out);
		*out = NULL;
		return error("'%s' does not hold a JSON object", path);
	}
	return 0;
}

int jsonl_each(const char *path, jsonl_fn fn, void *ctx, size_t *skipped)
{
	FILE *f;
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	ssize_t n;
	int fd, ret = 0;

	if (skipped)
		*skipped = 0;
	ret = open_regular(path, &fd);
	if (ret)
		return ret;
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return error_errno("cannot read '%s'", path);
	}
	while ((n = getline(&line, &cap, f)) >= 0) {
		json_error_t err;
		json_t *obj;

		lineno++;
		while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (!n)
			continue;
		obj = json_loadb(line, (size_t)n, 0, &err);
		if (!obj || !json_is_object(obj)) {
			if (skipped)
				(*skipped)++;
			json_decref(obj);
			continue;
		}
		ret = fn(ctx, obj, lineno);
		json_decref(obj);
		if (ret)
			break;
	}
	/* A read that failed (a directory, an I/O error) is not an empty file. */
	if (!ret && ferror(f)) {
		int e = errno;

		free(line);
		fclose(f);
		errno = e;
		return error_errno("cannot read '%s'", path);
	}
	free(line);
	fclose(f);
	return ret < 0 ? -1 : 0;
}

int jsonl_append(const char *path, const json_t *obj)
{
	char *text = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
	int fd, r = 0;
	struct strbuf sb = STRBUF_INIT;

	if (!text)
		return error("cannot serialise a JSON line for '%s'", path);
	strbuf_addstr(&sb, text);
	strbuf_addch(&sb, '\n');
	free(text);
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0 || write(fd, sb.buf, sb.len) != (ssize_t)sb.len)
		r = error_errno("cannot append to '%s'", path);
	if (fd >= 0)
		close(fd);
	strbuf_release(&sb);
	return r;
}

const char *json_str(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

double json_num(const json_t *obj, const char *key, double dflt)
{
	json_t *v = json_object_get(obj, key);
	return json_is_number(v) ? json_number_value(v) : dflt;
}

json_t *json_strvec(const struct strvec *sv)
{
	json_t *a = json_array();

	for (size_t i = 0; i < sv->nr; i++)
		json_array_append_new(a, json_string(sv->v[i]));
	return a;
}

/* ---- json_dumps_parallel ------------------------------------------------ */

/* Fewer items than this are dumped in one piece: a thread costs more. */
#define DUMP_PARALLEL_MIN 512

struct dump_items {
	const json_t *array;
	size_t flags;
	size_t indent;		/* spaces a line of an item gains: two levels */
	struct strbuf *out;	/* one per item */
	int failed;		/* an item did not dump (set atomically by any thread) */
};

/*
 * Item i as it appears two levels deep: its own dump, every line after the
 * first indented by two levels. JSON text has no raw newline inside a
 * string, so each '\n' is a line break of the layout.
 */
static void dump_item(void *ctx, size_t i)
{
	struct dump_items *d = ctx;
	char *text = json_dumps(json_array_get(d->array, i), d->flags | JSON_ENCODE_ANY);

	if (!text) {
		__atomic_store_n(&d->failed, 1, __ATOMIC_RELAXED);
		return;
	}
	for (const char *p = text, *nl; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		if (!nl) {
			strbuf_addstr(&d->out[i], p);
			break;
		}
		strbuf_add(&d->out[i], p, (size_t)(nl - p) + 1);
		strbuf_addf(&d->out[i], "%*s", (int)d->indent, "");
	}
	free(text);
}

char *json_dumps_parallel(const json_t *j, size_t flags)
{
	size_t width = flags & JSON_MAX_INDENT, n;
	const char *last_key = NULL;
	const json_t *array = NULL;
	json_t *head;
	char *head_text, *key_text;
	struct dump_items d;
	struct strbuf sb = STRBUF_INIT;

	if (json_is_object(j) && width && !(flags & (JSON_SORT_KEYS | JSON_EMBED | JSON_COMPACT))) {
		for (void *it = json_object_iter((json_t *)j); it;
		     it = json_object_iter_next((json_t *)j, it)) {
			last_key = json_object_iter_key(it);
			array = json_object_iter_value(it);
		}
	}
	if (!json_is_array(array) || (n = json_array_size(array)) < DUMP_PARALLEL_MIN)
		return json_dumps(j, flags);

	/* j without its last member, then that member's key */
	head = json_object();
	for (void *it = json_object_iter((json_t *)j); it; it = json_object_iter_next((json_t *)j, it))
		if (strcmp(json_object_iter_key(it), last_key))
			json_object_set(head, json_object_iter_key(it), json_object_iter_value(it));
	head_text = json_dumps(head, flags);
	json_decref(head);
	{
		json_t *k = json_string(last_key);
		key_text = k ? json_dumps(k, flags | JSON_ENCODE_ANY) : NULL;
		json_decref(k);
	}
	d.array = array;
	d.flags = flags;
	d.indent = 2 * width;
	d.failed = 0;
	d.out = xcalloc(n, sizeof(*d.out));
	for (size_t i = 0; i < n; i++)
		strbuf_init(&d.out[i], 0);
	if (head_text && key_text)
		parallel_for(n, DUMP_PARALLEL_MIN / 2, dump_item, &d);

	if (head_text && key_text && !d.failed) {
		size_t hl = strlen(head_text);

		/* "{...\n}" less its "\n}"; "{}" less its "}" */
		if (hl > 2 && !strcmp(head_text + hl - 2, "\n}")) {
			strbuf_add(&sb, head_text, hl - 2);
			strbuf_addch(&sb, ',');
		} else {
			strbuf_addch(&sb, '{');
		}
		strbuf_addf(&sb, "\n%*s%s: [", (int)width, "", key_text);
		for (size_t i = 0; i < n; i++) {
			strbuf_addf(&sb, "\n%*s", (int)(2 * width), "");
			strbuf_add(&sb, d.out[i].buf, d.out[i].len);
			if (i + 1 < n)
				strbuf_addch(&sb, ',');
		}
		strbuf_addf(&sb, "\n%*s]\n}", (int)width, "");
	}
	for (size_t i = 0; i < n; i++)
		strbuf_release(&d.out[i]);
	free(d.out);
	free(head_text);
	free(key_text);
	if (!sb.len)
		return NULL;
	return strbuf_detach(&sb, NULL);
}
