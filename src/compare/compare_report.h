/*
 * What zlb compare prints and writes: the terminal report (coloured when
 * wanted: FASTER green, SLOWER red, UNSURE yellow, caliber problems red),
 * compare.csv (one line per row, paired or not) and compare.json (the
 * whole comparison, schema_version 1).
 *
 * compare.json:
 *   { "schema_version": 1, "kind": "zlb-compare", "zlb_version", "created_at",
 *     "settings": { threshold, fdr, drift_floor, bootstrap, seed, confidence },
 *     "a" / "b": { "runs": [ { dir, status, op, identity } ], "rounds" },
 *     "caliber": { "ok", "allowed", "problems": [ { field, a, b, text } ] },
 *     "warnings": [ ... ], "notes": [ ... ],
 *     "summary": { paired, only_a, only_b, not_success, fallback_rows,
 *                  gems: {SLOWER, FASTER, SAME, UNSURE}, torch: {...},
 *                  regression, exit_code },
 *     "rows": [ { op, op_name, dtype, shape_detail, paired, unpaired_reason,
 *                 status_a, status_b, markers_a, markers_b, timers_a, timers_b,
 *                 fallback, replay_fallbacks_a, replay_fallbacks_b,
 *                 gems: <cmp> | null, torch: <cmp> | null } ] }
 *   replay_fallbacks_* = [ { reason, kernel, from } ]: the side's autotune
 *   replay points that fell back on this row (AUTOTUNE_REPLAY_FALLBACK),
 *   from "gems" / "torch" (that measurement's own replay_fallbacks), "test"
 *   (an event of the row's test outside its measurements) or "run" (an
 *   event of no test: every row); empty when none. compare.csv's
 *   replay_fallbacks_a / _b columns: "<reason>:<kernel>" joined by ";".
 *   <cmp> = { a_ms, b_ms, ratio, ci_low, ci_high, p, q, p_mwu, test, df,
 *             rounds_a, rounds_b, samples_a, samples_b, spread_a, spread_b,
 *             drift_floor_a, drift_floor_b, placement_sd_a, placement_sd_b,
 *             placement_model, verdict, why }
 * Latencies in ms; ratio = B/A (> 1: B slower); ci_* bound the ratio; test
 * is student, welch, welch+floor, mwu+floor or none (then why says why);
 * df is null for a z test or no test; spread_* = sd of ln(round centre)
 * (null with one round); drift_floor_* the drift a single-round side
 * assumed, sqrt(--drift-floor^2 + placement_sd_*^2) (else null);
 * placement_sd_* the row's placement part of that drift (stats_compare.h's
 * P as an sd), null when no round measured one; placement_model how P was
 * measured: "aligned" (every round's probe draws lined up by index),
 * "spread" (each round's own probe or placement spread), null (not
 * measured); any other number that does not
 * exist is null. q is the Benjamini-Hochberg adjusted p-value (gems rows
 * and torch rows are separate families).
 */
#ifndef ZLB_COMPARE_REPORT_H
#define ZLB_COMPARE_REPORT_H

#include <jansson.h>

#include "compare/compare.h"
#include "lib/junit.h"
#include "lib/strbuf.h"

/* What a report shows of the rows, and in what order (compare_view.c). */
enum compare_sort {
	COMPARE_SORT_NONE,	/* as paired: first seen, A's runs first */
	COMPARE_SORT_RATIO,	/* gems B/A, largest (slowest) first */
	COMPARE_SORT_Q,		/* gems q, smallest (most significant) first */
	COMPARE_SORT_NAME,	/* op, op_name, dtype, shape */
};

/* The words of --sort, in enum order from COMPARE_SORT_RATIO: ratio, q, name. */
extern const char *const compare_sort_names[];

struct compare_view {
	size_t width;		/* the terminal's columns for the table; 0: no limit */
	int only_changed;	/* only paired rows whose gems verdict is SLOWER or FASTER */
	enum compare_sort sort;
};

#define COMPARE_VIEW_INIT { 0, 0, COMPARE_SORT_NONE }

/*
 * The rows a report shows, as indices into c->rows (*idx, malloc'd): the
 * paired rows view keeps, in its order (rows without the sort's number
 * last, ties as paired), then, unless only_changed, the unpaired ones as
 * they came. With the default view, every row in c->rows's order. A NULL
 * view is the default one. Returns how many.
 */
size_t compare_view_rows(const struct compare *c, const struct compare_view *v, size_t **idx);

/* The sides, their runs and builds (before the caliber check). */
void compare_render_header(const struct compare *c, struct strbuf *sb, int color);
/*
 * "!!! [caliber] ..." lines and the warnings known after the caliber check;
 * allowed adds the line saying it goes on anyway. Diagnostics: the command
 * prints them on stderr.
 */
void compare_render_caliber(const struct compare *c, struct strbuf *sb, int color, int allowed);
/*
 * The table (the paired rows of the view, fitted to its width: the op and
 * shape columns cut, the notes wrapped), the unpaired rows, the legend of
 * the flags, notes and the closing summary line.
 */
void compare_render_report(const struct compare *c, const struct compare_view *v,
			   struct strbuf *sb, int color);
/* The warnings found by the analysis (diagnostics, for stderr). */
void compare_render_warnings(const struct compare *c, struct strbuf *sb, int color);
/*
 * After compare_analyse: the exit status the rows give (ZLB_EXIT_OK,
 * ZLB_EXIT_NO_DATA when no row is SUCCESS on both sides, ZLB_EXIT_REGRESSION
 * when a gems row is SLOWER beyond the threshold), with its "result: ..."
 * line appended to sb (newline included). zlb compare and zlb ab end alike.
 */
int compare_render_result(const struct compare *c, struct strbuf *sb, int color);

/*
 * compare.json's document (above); with a view (not NULL) its rows are the
 * view's (compare_view_rows) and "view" says which ({only_changed, sort}).
 */
json_t *compare_to_json(const struct compare *c, int caliber_allowed, int exit_code,
			const struct compare_view *v);
/* compare.csv's text: its header, then the view's rows (NULL: every row). */
void compare_csv(const struct compare *c, const struct compare_view *v, struct strbuf *out);
/* compare.csv (every row) at path, atomically. Returns 0 or error(). */
int compare_write_csv(const struct compare *c, const char *path);

/*
 * The comparison for a pull request (GitHub-flavoured Markdown): the
 * result, the verdict counts, caliber problems and warnings, the view's
 * paired rows as a table (names and shapes as code spans), what was not
 * compared, and the runs of each side. allowed: the calibers differ and
 * it was compared anyway. exit_code: what compare_render_result gave.
 */
void compare_markdown(const struct compare *c, const struct compare_view *v, int allowed,
		      int exit_code, struct strbuf *out);

/*
 * The comparison as a JUnit report (lib/junit.h): one test case per row,
 * classname zlb.compare.<op>, name "<op_name> <dtype> <shape>"; a gems row
 * SLOWER (beyond the threshold, after FDR) failed, with its change, interval
 * and q; EXCLUDED and unpaired rows skipped with the reason; SAME, FASTER and
 * UNSURE passed. A comparison stopped before its rows (stage not
 * COMPARE_DONE: calibers, nothing to pair) is one failed case saying why.
 */
void compare_junit(const struct compare *c, int stopped, const char *why,
		   struct junit_suite *suite);

/* "+2.13%" for a ratio of 1.0213. */
void compare_format_change(struct strbuf *sb, double ratio);

#endif
