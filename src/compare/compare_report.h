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
 *                 fallback, gems: <cmp> | null, torch: <cmp> | null } ] }
 *   <cmp> = { a_ms, b_ms, ratio, ci_low, ci_high, p, q, p_mwu, test, df,
 *             rounds_a, rounds_b, samples_a, samples_b, spread_a, spread_b,
 *             drift_floor_a, drift_floor_b, placement_sd_a, placement_sd_b,
 *             verdict, why }
 * Latencies in ms; ratio = B/A (> 1: B slower); ci_* bound the ratio; test
 * is student, welch, welch+floor, mwu+floor or none (then why says why);
 * df is null for a z test or no test; spread_* = sd of ln(round centre)
 * (null with one round); drift_floor_* the drift a single-round side
 * assumed, sqrt(--drift-floor^2 + placement_sd_*^2) (else null);
 * placement_sd_* what that round measured of where its buffers land (its
 * placement probes, or its placements' spread / sqrt(placements)), null
 * when it measured none; any other number that does not
 * exist is null. q is the Benjamini-Hochberg adjusted p-value (gems rows
 * and torch rows are separate families).
 */
#ifndef ZLB_COMPARE_REPORT_H
#define ZLB_COMPARE_REPORT_H

#include <jansson.h>

#include "compare/compare.h"
#include "lib/strbuf.h"

/* The sides, their runs and builds (before the caliber check). */
void compare_render_header(const struct compare *c, struct strbuf *sb, int color);
/* "!!! [caliber] ..." lines; allowed adds the line saying it goes on anyway. */
void compare_render_caliber(const struct compare *c, struct strbuf *sb, int color, int allowed);
/* The table, the unpaired rows, notes and the closing summary. */
void compare_render_report(const struct compare *c, struct strbuf *sb, int color);
/*
 * After compare_analyse: the exit status the rows give (ZLB_EXIT_OK,
 * ZLB_EXIT_NO_DATA when no row is SUCCESS on both sides, ZLB_EXIT_REGRESSION
 * when a gems row is SLOWER beyond the threshold), with its "result: ..."
 * line appended to sb (newline included). zlb compare and zlb ab end alike.
 */
int compare_render_result(const struct compare *c, struct strbuf *sb, int color);

json_t *compare_to_json(const struct compare *c, int caliber_allowed, int exit_code);
int compare_write_csv(const struct compare *c, const char *path);

/* "+2.13%" for a ratio of 1.0213. */
void compare_format_change(struct strbuf *sb, double ratio);

#endif
