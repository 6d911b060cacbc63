/*
 * zlb ab over several shape sets (ab.h, ab_execute_sets): one whole A/B per
 * shape file, then one table of them all; what zlb ab says goes to the
 * terminal and, ANSI-free, to ab.log.
 */
#include "ab/ab.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/ansi.h"
#include "lib/csvfile.h"
#include "lib/jsonfile.h"
#include "lib/paths.h"
#include "lib/proc.h"
#include "lib/term.h"
#include "rundir/exit_codes.h"
#include "rundir/identity.h"
#include "rundir/rundir.h"

#define AB_SETS_SCHEMA_VERSION 1
#define AB_SETS_FILE "ab_sets.json"
#define AB_SETS_LOG "ab.log"
#define AB_SETS_CSV "compare_sets.csv"

/* A reporter that passes everything on and keeps the lasting lines, ANSI-free, in a file. */
struct log_reporter {
	struct reporter r;
	struct reporter *next;
	int fd;
};

static void log_say(struct reporter *self, enum report_kind kind, const char *text)
{
	struct log_reporter *lr = (struct log_reporter *)self;

	if (lr->next)
		lr->next->say(lr->next, kind, text);
	if (lr->fd >= 0 && kind != REPORT_LIVE && *text) {
		struct strbuf sb = STRBUF_INIT;
		strbuf_addstr(&sb, text);
		strbuf_ansi_strip(&sb);
		/* A log that cannot be written loses lines, never the A/B. */
		for (size_t off = 0; off < sb.len && lr->fd >= 0;) {
			ssize_t w = write(lr->fd, sb.buf + off, sb.len - off);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				lr->fd = -1;
			else
				off += (size_t)w;
		}
		strbuf_release(&sb);
	}
}

/*
 * The directory name of a set: its file's name without .yaml/.yml, kept to
 * [A-Za-z0-9._-] (anything else becomes '_'), never starting with '.'; a
 * name taken already gets -2, -3, ...
 */
static char *set_name(const char *file, const struct strvec *taken)
{
	const char *base = path_basename(file);
	size_t n = strlen(base);
	struct strbuf sb = STRBUF_INIT;
	char *name;

	if (n > 5 && !strcmp(base + n - 5, ".yaml"))
		n -= 5;
	else if (n > 4 && !strcmp(base + n - 4, ".yml"))
		n -= 4;
	for (size_t i = 0; i < n && i < 80; i++) {
		char c = base[i];
		strbuf_addch(&sb, isalnum((unsigned char)c) || c == '-' || c == '_' ||
			     (c == '.' && i) ? c : '_');
	}
	if (!sb.len)
		strbuf_addstr(&sb, "set");
	name = xstrdup(sb.buf);
	for (int k = 2; strvec_find(taken, name) >= 0; k++) {
		free(name);
		name = xstrfmt("%s-%d", sb.buf, k);
	}
	strbuf_release(&sb);
	return name;
}

/* "1.2345" (4 decimals of ms under 1, 3 above), or "-" for none. */
static char *ms_text(const json_t *v)
{
	double x = json_number_value(v);

	if (!json_is_number(v) || !isfinite(x))
		return xstrdup("-");
	return xstrfmt(x < 1 ? "%.4f" : "%.3f", x);
}

/*
 * The paired rows of one set's compare.json into the combined table (and
 * csv), the verdict counts into entry. Returns how many rows.
 */
static size_t take_rows(const char *name, const char *set_dir, json_t *entry,
			struct strvec *table, struct strbuf *csv)
{
	char *path = path_join(set_dir, "compare.json");
	json_t *cj = NULL, *rows, *row;
	size_t i, n = 0;

	if (json_read_file(path, &cj)) {
		free(path);
		return 0;
	}
	free(path);
	if (json_object_get(json_object_get(cj, "summary"), "gems"))
		json_object_set(entry, "gems", json_object_get(json_object_get(cj, "summary"),
							       "gems"));
	rows = json_object_get(cj, "rows");
	json_array_foreach(rows, i, row) {
		const json_t *g = json_object_get(row, "gems");
		char *a, *b, *ratio, *ci;
		const char *fields[9];

		if (!json_is_true(json_object_get(row, "paired")) || !json_is_object(g))
			continue;
		a = ms_text(json_object_get(g, "a_ms"));
		b = ms_text(json_object_get(g, "b_ms"));
		ratio = json_is_number(json_object_get(g, "ratio")) ?
			xstrfmt("%.4f", json_number_value(json_object_get(g, "ratio"))) :
			xstrdup("-");
		ci = json_is_number(json_object_get(g, "ci_low")) ?
			xstrfmt("[%.4f, %.4f]", json_number_value(json_object_get(g, "ci_low")),
				json_number_value(json_object_get(g, "ci_high"))) : xstrdup("-");
		strvec_pushf(table, "%-24.24s %-16s %10s %10s %8s %18s %-8s %s", name,
			     json_str(row, "dtype") ? json_str(row, "dtype") : "?", a, b, ratio, ci,
			     json_str(g, "verdict") ? json_str(g, "verdict") : "?",
			     json_str(row, "shape_detail") ? json_str(row, "shape_detail") : "");
		fields[0] = name;
		fields[1] = json_str(row, "dtype") ? json_str(row, "dtype") : "";
		fields[2] = json_str(row, "shape_detail") ? json_str(row, "shape_detail") : "";
		fields[3] = a;
		fields[4] = b;
		fields[5] = ratio;
		fields[6] = ci;
		fields[7] = json_str(g, "verdict") ? json_str(g, "verdict") : "";
		fields[8] = set_dir;
		csv_add_row(csv, fields, 9);
		free(a);
		free(b);
		free(ratio);
		free(ci);
		n++;
	}
	json_object_set_new(entry, "paired", json_integer((json_int_t)n));
	json_decref(cj);
	return n;
}

/* The status a set's A/B ended with, from its ab.json. */
static json_t *set_status(const char *set_dir)
{
	char *path = path_join(set_dir, AB_FILE);
	json_t *j = NULL, *st;

	if (json_read_file(path, &j)) {
		free(path);
		return json_null();
	}
	free(path);
	st = json_str(j, "status") ? json_string(json_str(j, "status")) : json_null();
	json_decref(j);
	return st;
}

/* What every set's A/B shares: where the sets go, the log and what they add up to. */
struct sets_run {
	const struct ab_plan *p;
	const char *dir;
	struct log_reporter *lr;
	struct strvec names, table;
	struct strbuf csv;
	json_t *arr;
};

/* One whole A/B for shape set i, its entry appended to the sets' array; returns its exit code. */
static int run_one_set(struct sets_run *s, size_t i)
{
	const struct ab_plan *p = s->p;
	const struct strvec *sets = &p->spec->shape_sets;
	struct ab_plan sp = *p;
	struct strvec args = STRVEC_INIT;
	char *sn = set_name(sets->v[i], &s->names), *set_dir = path_join(s->dir, sn);
	json_t *entry = json_object();
	int rc;

	strvec_push(&s->names, sn);
	strvec_pushv(&args, (const char *const *)p->run_args->v);
	strvec_pushl(&args, "--shapes", sets->v[i], NULL);
	sp.run_args = &args;
	sp.runs_dir = s->dir;
	sp.dir_name = sn;
	sp.shape_set = sets->v[i];
	sp.rep = &s->lr->r;
	report(&s->lr->r, REPORT_OUT, "%s", "");
	report_colored(&s->lr->r, REPORT_OUT, p->color, TERM_BOLD, "##### set %zu/%zu %s "
		       "(%s) -> %s", i + 1, sets->nr, sn, sets->v[i], set_dir);
	rc = ab_execute(&sp);
	report_colored(&s->lr->r, REPORT_OUT, p->color, rc ? TERM_RED : TERM_GREEN,
		       "##### set %s: exit %d", sn, rc);
	json_object_set_new(entry, "name", json_string(sn));
	json_object_set_new(entry, "shape_file", json_string(sets->v[i]));
	json_object_set_new(entry, "dir", json_string(set_dir));
	json_object_set_new(entry, "exit_code", json_integer(rc));
	json_object_set_new(entry, "status", set_status(set_dir));
	json_object_set_new(entry, "paired", json_integer(0));
	json_object_set_new(entry, "gems", json_null());
	take_rows(sn, set_dir, entry, &s->table, &s->csv);
	json_array_append_new(s->arr, entry);
	strvec_clear(&args);
	free(set_dir);
	free(sn);
	return rc;
}

/*
 * The table of every set's paired rows, then the same rows as
 * compare_sets.csv; -1 when that file cannot be written.
 */
static int report_all_sets(struct sets_run *s)
{
	static const char *const head[] = { "set", "dtype", "shape_detail", "a_gems_ms",
					    "b_gems_ms", "ratio", "ci95", "verdict", "ab_dir" };
	struct strbuf out = STRBUF_INIT;
	char *path;
	int ret = 0;

	report(&s->lr->r, REPORT_OUT, "%s", "");
	report_colored(&s->lr->r, REPORT_OUT, s->p->color, TERM_BOLD, "##### all sets: gems "
		       "B/A, paired rows of every set (%zu)", s->table.nr);
	report(&s->lr->r, REPORT_OUT, "%-24s %-16s %10s %10s %8s %18s %-8s %s", "set", "dtype",
	       "A ms", "B ms", "B/A", "95% CI", "verdict", "shape");
	for (size_t i = 0; i < s->table.nr; i++)
		report(&s->lr->r, REPORT_OUT, "%s", s->table.v[i]);
	csv_add_row(&out, head, 9);
	strbuf_add(&out, s->csv.buf, s->csv.len);
	path = path_join(s->dir, AB_SETS_CSV);
	if (write_file_atomic(path, out.buf, out.len)) {
		report(s->p->rep, REPORT_WARN, "zlb ab: %s", last_error());
		ret = -1;
	}
	free(path);
	strbuf_release(&out);
	return ret;
}

/* ab_sets.json's head, written before any set runs so the sets' array fills in place. */
static json_t *sets_json_start(const char *op, const char *dir, json_t *arr)
{
	json_t *j = json_object();

	json_object_set_new(j, "schema_version", json_integer(AB_SETS_SCHEMA_VERSION));
	json_object_set_new(j, "kind", json_string("zlb-ab-sets"));
	json_object_set_new(j, "op", json_string(op));
	json_object_set_new(j, "dir", json_string(dir));
	json_object_set_new(j, "started_at", identity_now());
	json_object_set(j, "sets", arr);
	return j;
}

/* ab_sets.json's end and the file itself; -1 when it cannot be written. */
static int sets_json_finish(const struct ab_plan *p, const char *dir, json_t *j,
			    int interrupted, int code)
{
	char *path = path_join(dir, AB_SETS_FILE);
	int ret = 0;

	json_object_set_new(j, "status", json_string(interrupted ? "interrupted" : "completed"));
	json_object_set_new(j, "exit_code", json_integer(code));
	json_object_set_new(j, "finished_at", identity_now());
	if (json_write_file(path, j)) {
		report(p->rep, REPORT_WARN, "zlb ab: %s", last_error());
		ret = -1;
	}
	free(path);
	return ret;
}

int ab_execute_sets(const struct ab_plan *p)
{
	const struct strvec *sets = &p->spec->shape_sets;
	struct log_reporter lr = { { log_say }, p->rep, -1 };
	struct sets_run s = { p, NULL, &lr, STRVEC_INIT, STRVEC_INIT, STRBUF_INIT, NULL };
	char *name = xstrfmt("ab_%s_sets", p->op), *dir = NULL, *log = NULL;
	json_t *j;
	int code = ZLB_EXIT_OK, interrupted = 0;

	if (rundir_claim(p->runs_dir, name, time(NULL), &dir)) {
		report(p->rep, REPORT_WARN, "zlb ab: %s", last_error());
		free(name);
		return ZLB_EXIT_IO;
	}
	free(name);
	s.dir = dir;
	s.arr = json_array();
	log = path_join(dir, AB_SETS_LOG);
	lr.fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (lr.fd < 0)
		report(p->rep, REPORT_WARN, "zlb ab: warning: cannot write %s; going on without "
		       "the log", log);
	report_colored(&lr.r, REPORT_OUT, p->color, TERM_BOLD, "zlb ab: %s over %zu shape "
		       "set%s, one A/B each -> %s", p->op, sets->nr, sets->nr == 1 ? "" : "s",
		       dir);
	j = sets_json_start(p->op, dir, s.arr);

	for (size_t i = 0; i < sets->nr && !interrupted; i++) {
		int rc = run_one_set(&s, i);

		if (rc == ZLB_EXIT_INTERRUPTED || interrupt_pending())
			interrupted = 1;
		if (rc && !code)
			code = rc;
	}
	if (interrupted)
		code = ZLB_EXIT_INTERRUPTED;

	if (report_all_sets(&s) && !code)
		code = ZLB_EXIT_IO;
	if (sets_json_finish(p, dir, j, interrupted, code) && !code)
		code = ZLB_EXIT_IO;
	report_colored(&lr.r, REPORT_OUT, p->color, code ? TERM_RED : TERM_GREEN,
		       "zlb ab: %zu set%s, exit %d; %s/%s, %s, %s", sets->nr,
		       sets->nr == 1 ? "" : "s", code, dir, AB_SETS_FILE, AB_SETS_CSV, AB_SETS_LOG);
	if (lr.fd >= 0)
		close(lr.fd);
	json_decref(j);
	json_decref(s.arr);
	strvec_clear(&s.names);
	strvec_clear(&s.table);
	strbuf_release(&s.csv);
	free(log);
	free(dir);
	return code;
}
