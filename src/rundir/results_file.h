/*
 * Reading a run's results.jsonl and events.jsonl (docs/protocol.md §3-4)
 * the way every reader of rows needs them: the row's fields with the
 * protocol's defaults, the markers that weaken a measurement, and a line
 * walker fast enough for a batch of thousands of runs.
 *
 * Speed. A graph-timed row carries its raw samples (samples_ms, hundreds
 * of numbers per side): about 90% of the bytes of results.jsonl, and most
 * of jansson's work, since every number becomes an allocated json_t.
 * Readers that need only the statistics (summary) pass
 * RESULTS_SKIP_SAMPLES: each samples_ms array is cut out of the line's
 * text before parsing (it becomes null). The cut is made only where the
 * bytes are unambiguous (a key "samples_ms" outside any string, its array
 * holding no string and no nested array); otherwise the line is parsed
 * whole, so the result never depends on the shortcut.
 *
 * Bad lines. A line that is not a JSON object (a crash can cut the last
 * line short) is skipped with a warning() naming file:line, and counted.
 */
#ifndef ZLB_RESULTS_FILE_H
#define ZLB_RESULTS_FILE_H

#include <jansson.h>
#include <stddef.h>

#include "lib/strvec.h"

#define RESULTS_FILE "results.jsonl"
#define EVENTS_FILE "events.jsonl"

/* The samples_ms arrays RESULTS_TAKE_SAMPLES took out of one line. */
#define RESULTS_TAKEN_MAX 99
struct results_taken {
	double *v;		/* every taken value, array after array */
	size_t nv, capv;
	size_t start[RESULTS_TAKEN_MAX], len[RESULTS_TAKEN_MAX];
	size_t narr;
};

/* One results.jsonl row; strings point into obj. */
struct results_row {
	const json_t *obj;
	const char *op;
	const char *op_name;	/* "" when absent */
	const char *dtype;	/* "" when absent */
	const char *shape;	/* shape_detail; "N/A" when absent, as upstream prints it */
	const char *status;	/* NULL when absent */
	const char *nodeid;	/* NULL when absent */
	double latency_base_ms;	/* torch; NAN when null or absent */
	double latency_ms;	/* gems; NAN when null or absent */
	double speedup;		/* NAN when null or absent */
	const json_t *torch;	/* measurement objects; NULL when that side was not measured */
	const json_t *gems;
	const struct results_taken *taken;	/* with RESULTS_TAKE_SAMPLES, else NULL */
};

/*
 * Fill r from a parsed line. Returns 0 for a row, 1 for an object that is
 * not one (kind other than "row", or no op): readers skip those.
 */
int results_row_get(const json_t *obj, struct results_row *r);

/*
 * Push onto out (without duplicates) the markers of one measurement: its
 * markers array, and BENCHMARK_DIRECT_NO_CUDAGRAPH when it has a fallback
 * object (a graph-planned measurement that fell back to direct timing).
 * meas may be NULL.
 */
void results_meas_markers(const json_t *meas, struct strvec *out);

/*
 * Push onto out (without duplicates) "<reason>:<kernel>" for each entry of
 * meas's replay_fallbacks (docs/protocol.md §3: the autotune replay points
 * that fell back while the measurement ran); "?" stands for a reason or a
 * kernel that is not a string. Returns how many entries the field holds
 * (0 when absent: no fallback, or a file older than the field). meas may
 * be NULL.
 */
size_t results_meas_replay_fallbacks(const json_t *meas, struct strvec *out);

/*
 * The samples_ms of meas when RESULTS_TAKE_SAMPLES took them from the line:
 * 1 with *x (valid during the row callback) and *n, every one a number. 0
 * when meas holds its samples as JSON (or has none): read them from meas.
 */
int results_meas_taken(const struct results_row *r, const json_t *meas, const double **x,
		       size_t *n);

/* Drop samples_ms arrays before parsing (see above). */
#define RESULTS_SKIP_SAMPLES 0x1
/*
 * Read samples_ms arrays without jansson: each array cut as with
 * RESULTS_SKIP_SAMPLES is first parsed into the row's taken values (with
 * strtod, as jansson reads a real, and as a long long for an integer), and
 * left as a placeholder that results_meas_taken() resolves. Same values,
 * a fraction of the work: jansson allocates a json_t per number.
 */
#define RESULTS_TAKE_SAMPLES 0x4
/* Count bad lines in *bad_lines without a warning: the caller reports them. */
#define RESULTS_QUIET_BAD_LINES 0x2

/* Called for each row; a non-zero return stops the walk (negative: error). */
typedef int (*results_row_fn)(void *ctx, const struct results_row *row, size_t lineno);

/*
 * Walk the rows of the results.jsonl at path. Returns 0, 1 when the file
 * does not exist, -1 (error()) when it cannot be read or fn failed.
 * *bad_lines (may be NULL) gets the number of lines skipped.
 */
int results_each(const char *path, unsigned flags, results_row_fn fn, void *ctx,
		 size_t *bad_lines);

/* Called for each event object; a non-zero return stops the walk. */
typedef int (*results_event_fn)(void *ctx, const json_t *event, size_t lineno);

/*
 * Walk the events named name in the events.jsonl at path. Lines whose text
 * does not mention name are not parsed (nor checked), so a reader of one
 * rare event costs a memory scan. Returns as results_each().
 */
int results_events_each(const char *path, const char *name, results_event_fn fn, void *ctx,
			size_t *bad_lines);

#endif
