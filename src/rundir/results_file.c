#include "rundir/results_file.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/error.h"
#include "lib/jsonfile.h"
#include "lib/safefile.h"
#include "lib/strbuf.h"
#include "rundir/markers.h"
#include "rundir/replay_fallbacks.h"

int results_row_get(const json_t *obj, struct results_row *r)
{
	const char *kind = json_str(obj, "kind");
	const json_t *m;

	memset(r, 0, sizeof(*r));
	r->obj = obj;
	r->op = json_str(obj, "op");
	if ((kind && strcmp(kind, "row")) || !r->op)
		return 1;
	r->op_name = json_str(obj, "op_name") ? json_str(obj, "op_name") : "";
	r->dtype = json_str(obj, "dtype") ? json_str(obj, "dtype") : "";
	r->shape = json_str(obj, "shape_detail") ? json_str(obj, "shape_detail") : "N/A";
	r->status = json_str(obj, "status");
	r->nodeid = json_str(obj, "nodeid");
	r->latency_base_ms = json_num(obj, "latency_base_ms", NAN);
	r->latency_ms = json_num(obj, "latency_ms", NAN);
	r->speedup = json_num(obj, "speedup", NAN);
	m = json_object_get(obj, "torch");
	r->torch = json_is_object(m) ? m : NULL;
	m = json_object_get(obj, "gems");
	r->gems = json_is_object(m) ? m : NULL;
	return 0;
}

void results_meas_markers(const json_t *meas, struct strvec *out)
{
	size_t i;
	json_t *m;

	if (!json_is_object(meas))
		return;
	json_array_foreach(json_object_get(meas, "markers"), i, m)
		strvec_push_unique(out, json_string_value(m));
	if (json_is_object(json_object_get(meas, "fallback")))
		strvec_push_unique(out, MARKER_DIRECT);
}

size_t results_meas_replay_fallbacks(const json_t *meas, struct strvec *out)
{
	const json_t *a = json_is_object(meas) ? json_object_get(meas, "replay_fallbacks") : NULL;
	size_t i;
	json_t *e;

	if (!json_is_array(a))
		return 0;
	json_array_foreach((json_t *)a, i, e) {
		char *point = replay_fallback_point(json_str(e, "reason"), json_str(e, "kernel"));

		strvec_push_unique(out, point);
		free(point);
	}
	return json_array_size(a);
}

int results_meas_taken(const struct results_row *r, const json_t *meas, const double **x,
		       size_t *n)
{
	const json_t *v = json_object_get(meas, "samples_ms");
	json_int_t k;

	if (!r->taken || !json_is_integer(v))
		return 0;
	k = -json_integer_value(v);
	if (k < 1 || (size_t)k > r->taken->narr)
		return 0;
	*x = r->taken->v + r->taken->start[k - 1];
	*n = r->taken->len[k - 1];
	return 1;
}

/* ---- cutting samples_ms out of a line ------------------------------------ */

static int is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Length of the JSON number at p (RFC 8259's grammar), 0 when there is none. */
static size_t number_len(const char *p, const char *end)
{
	const char *q = p;

	if (q < end && *q == '-')
		q++;
	if (q >= end || !is_digit(*q))
		return 0;
	if (*q == '0')
		q++;
	else
		while (q < end && is_digit(*q))
			q++;
	if (q < end && *q == '.') {
		if (++q >= end || !is_digit(*q))
			return 0;
		while (q < end && is_digit(*q))
			q++;
	}
	if (q < end && (*q == 'e' || *q == 'E')) {
		if (++q < end && (*q == '+' || *q == '-'))
			q++;
		if (q >= end || !is_digit(*q))
			return 0;
		while (q < end && is_digit(*q))
			q++;
	}
	return (size_t)(q - p);
}

/* End (past ']') of the array of numbers that opens at p, or NULL. */
static const char *number_array_end(const char *p, const char *end)
{
	p++;	/* '[' */
	while (p < end && is_ws(*p))
		p++;
	if (p < end && *p == ']')
		return p + 1;
	for (;;) {
		size_t n = number_len(p, end);

		if (!n)
			return NULL;
		p += n;
		while (p < end && is_ws(*p))
			p++;
		if (p >= end)
			return NULL;
		if (*p == ']')
			return p + 1;
		if (*p != ',')
			return NULL;
		p++;
		while (p < end && is_ws(*p))
			p++;
	}
}

/*
 * Replace every `"samples_ms": [numbers]` member of line[0..n) by
 * `"samples_ms": null`, in place; returns the new length. A match counts
 * only where the key cannot be inside a string: its opening quote is not
 * escaped and follows '{' or ',' (with blanks), and ':' then '[' follow it.
 * An array that is not a well-formed array of numbers is left alone.
 */
/*
 * Parse the numbers of the array at open (checked by number_array_end) into
 * t. 0, or -1 when one would not read as jansson reads it (an integer beyond
 * long long, a real beyond double: jansson refuses those lines, and the
 * array is then left for it to refuse).
 */
static int take_numbers(const char *open, const char *close, struct results_taken *t)
{
	const char *p = open + 1;
	size_t start = t->nv;

	for (;;) {
		size_t len;
		double v;

		while (p < close && (is_ws(*p) || *p == ','))
			p++;
		if (p >= close || *p == ']')
			break;
		len = number_len(p, close);
		if (memchr(p, '.', len) || memchr(p, 'e', len) || memchr(p, 'E', len)) {
			errno = 0;
			v = strtod(p, NULL);
			/* jansson refuses an overflowing real (its line is bad): so do we */
			if (errno == ERANGE && isinf(v)) {
				t->nv = start;
				return -1;
			}
		} else {
			/* jansson: an integer, as a double when read as a number */
			char *e;
			long long ll;

			errno = 0;
			ll = strtoll(p, &e, 10);
			if (errno == ERANGE) {
				t->nv = start;
				return -1;
			}
			v = (double)ll;
		}
		if (t->nv == t->capv) {
			t->capv = t->capv ? 2 * t->capv : 1024;
			t->v = xrealloc(t->v, t->capv * sizeof(*t->v));
		}
		t->v[t->nv++] = v;
		p += len;
	}
	if (t->narr == RESULTS_TAKEN_MAX) {
		t->nv = start;
		return -1;
	}
	t->start[t->narr] = start;
	t->len[t->narr] = t->nv - start;
	t->narr++;
	return 0;
}

static size_t drop_samples(char *line, size_t n, struct results_taken *t)
{
	static const char key[] = "\"samples_ms\"";
	const size_t klen = sizeof(key) - 1;
	char *p = line, *end = line + n, *hit;

	while ((hit = memmem(p, (size_t)(end - p), key, klen))) {
		char *q = hit, *open;
		const char *close;

		p = hit + klen;
		while (q > line && is_ws(q[-1]))
			q--;
		if (q == line || (q[-1] != '{' && q[-1] != ','))
			continue;
		q = hit + klen;
		while (q < end && is_ws(*q))
			q++;
		if (q >= end || *q != ':')
			continue;
		q++;
		while (q < end && is_ws(*q))
			q++;
		if (q >= end || *q != '[')
			continue;
		open = q;
		close = number_array_end(open, end);
		if (!close || close - open < 4)	/* "[]" and "[1]" stay: too short for null */
			continue;
		if (t) {
			/* "-K": the K-th array taken from this line (results_meas_taken) */
			char mark[4];

			if (take_numbers(open, close, t))
				continue;
			snprintf(mark, sizeof(mark), "-%zu", t->narr);
			memcpy(open, mark, strlen(mark));
			memmove(open + strlen(mark), close, (size_t)(end - close));
			end -= (close - open) - (ptrdiff_t)strlen(mark);
			p = open + strlen(mark);
			continue;
		}
		memcpy(open, "null", 4);
		memmove(open + 4, close, (size_t)(end - close));
		end -= (close - open) - 4;
		p = open + 4;
	}
	return (size_t)(end - line);
}

/* ---- the line walker -------------------------------------------------------- */

/* Read the whole file into a fresh buffer (NUL-terminated). 1: absent. */
static int slurp(const char *path, char **out, size_t *len)
{
	struct stat st;
	size_t cap, n = 0;
	char *buf;
	int fd, rc;

	*out = NULL;
	*len = 0;
	/* A FIFO or a link planted under the name is refused, not waited on or followed. */
	rc = open_regular(path, &fd);
	if (rc)
		return rc;
	if (fstat(fd, &st)) {
		close(fd);
		return error_errno("cannot read '%s'", path);
	}
	cap = (size_t)st.st_size + 1;	/* a file still growing is read to its end */
	buf = xmalloc(cap + 1);
	for (;;) {
		ssize_t r;

		if (n == cap) {
			cap *= 2;
			buf = xrealloc(buf, cap + 1);
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int saved = errno;
			free(buf);
			close(fd);
			errno = saved;
			return error_errno("cannot read '%s'", path);
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

typedef int (*line_fn)(void *ctx, json_t *obj, size_t lineno, const struct results_taken *t);

static int walk_lines(const char *path, const char *needle, unsigned flags, line_fn fn,
		      void *ctx, size_t *bad_lines)
{
	struct results_taken taken = { 0 };
	char *buf, *p, *end;
	size_t len, lineno = 0, bad = 0, nlen = needle ? strlen(needle) : 0;
	int rc = slurp(path, &buf, &len), ret = 0;

	if (bad_lines)
		*bad_lines = 0;
	if (rc)
		return rc;
	for (p = buf, end = buf + len; p < end && !ret; ) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *eol = nl ? nl : end;
		size_t n = (size_t)(eol - p);
		json_error_t err;
		json_t *obj;

		lineno++;
		if (n && p[n - 1] == '\r')
			n--;
		if (!n || (needle && !memmem(p, n, needle, nlen)))
			goto next;
		taken.nv = taken.narr = 0;
		if (flags & RESULTS_TAKE_SAMPLES)
			n = drop_samples(p, n, &taken);
		else if (flags & RESULTS_SKIP_SAMPLES)
			n = drop_samples(p, n, NULL);
		obj = json_loadb(p, n, 0, &err);
		if (!json_is_object(obj)) {
			if (!(flags & RESULTS_QUIET_BAD_LINES))
				warning("%s:%zu: not a JSON object (%s); line skipped", path, lineno,
					obj ? "another JSON value" : err.text);
			bad++;
		} else {
			ret = fn(ctx, obj, lineno, flags & RESULTS_TAKE_SAMPLES ? &taken : NULL);
		}
		json_decref(obj);
next:
		p = eol + 1;
	}
	free(taken.v);
	free(buf);
	if (bad_lines)
		*bad_lines = bad;
	return ret < 0 ? -1 : 0;
}

struct row_walk {
	results_row_fn fn;
	void *ctx;
};

static int row_line(void *vctx, json_t *obj, size_t lineno, const struct results_taken *t)
{
	struct row_walk *w = vctx;
	struct results_row row;

	if (results_row_get(obj, &row))
		return 0;
	row.taken = t;
	return w->fn(w->ctx, &row, lineno);
}

int results_each(const char *path, unsigned flags, results_row_fn fn, void *ctx,
		 size_t *bad_lines)
{
	struct row_walk w = { fn, ctx };

	return walk_lines(path, NULL, flags, row_line, &w, bad_lines);
}

struct event_walk {
	const char *name;
	results_event_fn fn;
	void *ctx;
};

static int event_line(void *vctx, json_t *obj, size_t lineno, const struct results_taken *t)
{
	struct event_walk *w = vctx;
	const char *ev = json_str(obj, "event");

	if (!ev || strcmp(ev, w->name))
		return 0;
	return w->fn(w->ctx, obj, lineno);
}

int results_events_each(const char *path, const char *name, results_event_fn fn, void *ctx,
			size_t *bad_lines)
{
	struct event_walk w = { name, fn, ctx };

	return walk_lines(path, name, 0, event_line, &w, bad_lines);
}
