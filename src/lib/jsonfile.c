#include "lib/jsonfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
