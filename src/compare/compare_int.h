/*
 * What the files of struct compare share (compare.c: runs and the
 * analysis; compare_caliber.c: identities and the caliber check;
 * compare_rows.c: reading and pairing rows). Private to src/compare/.
 */
#ifndef ZLB_COMPARE_INT_H
#define ZLB_COMPARE_INT_H

#include <stdint.h>

#include "compare/compare.h"
#include "compare/compare_report.h"
#include "compare/stats_compare.h"
#include "lib/strvec.h"
#include "lib/texttable.h"

/* "gems", "torch": the kinds' names in files and messages. */
extern const char *const compare_kind_name[COMPARE_KINDS];
/* The operator of a run: its identity's op, else its directory's name. */
const char *compare_run_op(const struct compare_run *r);
/* XXH3 of a row key: the row map's hash and the seed of the row's bootstrap. */
uint64_t compare_key_hash(const char *key);
/*
 * One measurement's fields beyond its samples (compare_meas.c, where each
 * says what it accepts): placement_sd and its probes into set; the probes'
 * draws by index (NULL, *n 0: none); the NVML clocks event reasons as
 * bits; the effective clock (0: not read, or moved while it sampled); the
 * wander of its clock readings around steady_mhz; the clock elasticity
 * (*n 0: not read).
 */
void compare_meas_placement(const json_t *meas, struct stats_sample_set *set);
double *compare_meas_draws(const json_t *meas, size_t *n);
unsigned long long compare_meas_clock_reasons(const json_t *meas);
double compare_meas_effective_mhz(const json_t *meas);
double compare_meas_clock_wander(const json_t *meas, double steady_mhz);
void compare_meas_elasticity(const json_t *meas, double *s, double *se, size_t *n);
/* The row of key once step 3 read it, or NULL (compare_rows.c). */
struct compare_row *compare_find_row(struct compare *c, const char *key);
/* The verdict a row's kind k shows: SAME, FASTER, ..., EXCLUDED (compare_report.c). */
const char *compare_verdict_text(const struct compare_row *row, int k);

/*
 * A row's rounds, both sides, for kind k ran at steady SM clocks that differ
 * by more than COMPARE_CLOCK_SPREAD of the lowest: 1 with *lo and *hi (MHz);
 * 0 when they agree or some round has no clock. On an H200 a 4096^3 addmm
 * under the power cap ran at 1305-1357 MHz in four processes and its time
 * followed the clock (254.4 to 250.1 us): a difference that is the
 * machine's unless one build draws less power.
 */
#define COMPARE_CLOCK_SPREAD 0.005
int compare_row_clocks(const struct compare_row *row, int k, double *lo, double *hi);
/*
 * The same for the rounds' effective clocks (stats_sample_set.effective_mhz):
 * 1 when every round has one and they spread past a step of the clock table
 * (STATS_CLOCK_STEP_MHZ), what the interval is widened beyond.
 */
int compare_row_effective_clocks(const struct compare_row *row, int k, double *lo, double *hi);

/*
 * What limited side s's clock on a row's kind k, as the notes name it:
 * "power cap" (NVML's SW power cap or power brake), "thermal", "hw
 * slowdown", or NULL when none of these was seen. A 700 W H100 ran every
 * fp16 addmm of 2048^3 and up under the SW power cap at 1155-1710 MHz, a
 * different clock in every process: such a row's single rounds disagree
 * by what the power controller chose, not by what the build did.
 */
const char *compare_row_clock_limit(const struct compare_row *row, int k, int s);

/* What stands in a verdict's place on a row excluded from verdicts. */
#define COMPARE_EXCLUDED "EXCLUDED"

/*
 * A gems verdict whose torch control moved the same way: torch's kernels do
 * not change with the Triton build under test, so the machine (its clocks,
 * a warm worker's allocator, a neighbour) may have moved the row instead.
 */
int compare_row_control_moved_too(const struct compare_row *row);

/*
 * What the note "needs N rounds" says on an UNSURE gems row: the rounds a
 * side its noise asks for (stats_cmp.rounds_needed), or 0 where no note is
 * due: the row is not UNSURE, nothing was computed, or it already has that
 * many rounds a side (then its ratio sits near the band, and the ratio
 * says more than a count). Above COMPARE_ROUNDS_SHOWN the note says only
 * "more": such a row moves with where its buffers land or with its clock,
 * which rounds average too slowly to be the remedy.
 */
#define COMPARE_ROUNDS_SHOWN 100
size_t compare_row_rounds_needed(const struct compare_row *row);

/*
 * The legend of what the report's rows show: one line for each flag or
 * note that occurs on a paired row (compare_legend.c).
 */
void compare_render_legend(const struct compare *c, struct strbuf *sb);

/*
 * The view's paired rows as the report's table (op, dtype, shape, gems A
 * and B, B/A, interval, q, verdict, torch B/A and verdict, notes), for
 * the terminal (compare_report.c) or Markdown (compare_md.c); t is
 * initialised here. Returns the rows in it.
 */
size_t compare_build_table(const struct compare *c, const struct compare_view *v,
			   struct texttable *t);

#endif
