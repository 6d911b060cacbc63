/*
 * The legend under the report's table: a line for each flag and note that
 * occurs on a paired row (markers, ctl too, clocks, limits, duty), and the
 * replay fallbacks' points. Apart from compare_report.c, which lays out
 * the table around it.
 */
#include "compare/compare_int.h"

#include <math.h>
#include <string.h>

#define FALLBACK_POINTS_SHOWN 12

/* Where a row's fallback was found (compare.h's fallback_from), in words. */
static const char *fallback_from_text(const char *from)
{
	if (!strcmp(from, "gems"))
		return "its gems measurement";
	if (!strcmp(from, "torch"))
		return "its torch measurement";
	if (!strcmp(from, "test"))
		return "its test, outside a measurement";
	if (!strcmp(from, "run"))
		return "no test: the whole run";
	return from;
}

/*
 * The legend of !A:replay-fallback(r): then one line per side, point
 * (reason and kernel) and where it was found, with the paired rows it
 * touched, in the order first met.
 */
static void render_fallback_legend(const struct compare *c, struct strbuf *sb)
{
	struct strvec keys = STRVEC_INIT;
	size_t *count = NULL, alloc = 0;

	for (size_t i = 0; i < c->nr_rows; i++) {
		const struct compare_row *row = &c->rows[i];

		if (!row->paired)
			continue;
		for (int s = 0; s < 2; s++)
			for (size_t j = 0; j < row->side[s].fallbacks.nr; j++) {
				char *k = xstrfmt("%c%c%s%c%s", s ? 'B' : 'A', 0x1f,
						  row->side[s].fallbacks.v[j], 0x1f,
						  row->side[s].fallback_from.v[j]);
				int at = strvec_find(&keys, k);

				if (at < 0) {
					strvec_push(&keys, k);
					at = (int)keys.nr - 1;
					if (keys.nr > alloc) {
						alloc = alloc ? 2 * alloc : 8;
						count = xrealloc(count, alloc * sizeof(*count));
					}
					count[at] = 0;
				}
				count[at]++;
				free(k);
			}
	}
	strbuf_addstr(sb, "!A:replay-fallback(r) / !B:replay-fallback(r)  "
		      "AUTOTUNE_REPLAY_FALLBACK: the side did not run the recorded config "
		      "(reason r); each point, its rows and where it was found:\n");
	for (size_t i = 0; i < keys.nr && i < FALLBACK_POINTS_SHOWN; i++) {
		struct strvec f = STRVEC_INIT;
		const char *colon;

		strvec_split(&f, keys.v[i], "\x1f");
		if (f.nr == 3 && (colon = strchr(f.v[1], ':')))
			strbuf_addf(sb, "  %s %.*s %s: %zu row%s (%s)\n", f.v[0],
				    (int)(colon - f.v[1]), f.v[1], colon + 1, count[i],
				    PLURAL(count[i]), fallback_from_text(f.v[2]));
		strvec_clear(&f);
	}
	if (keys.nr > FALLBACK_POINTS_SHOWN)
		strbuf_addf(sb, "  ... and %zu more (replay_fallbacks_a/_b in %s)\n",
			    keys.nr - FALLBACK_POINTS_SHOWN, COMPARE_JSON);
	strvec_clear(&keys);
	free(count);
}

void compare_render_legend(const struct compare *c, struct strbuf *sb)
{
	int marker_seen[8] = { 0 }, ctl_seen = 0, clock_seen = 0, eff_seen = 0, limit_seen = 0,
	    duty_seen = 0, need_seen = 0, s_seen = 0;
	double lo, hi;

	for (size_t i = 0; i < c->nr_rows; i++)
		for (int s = 0; s < 2; s++)
			for (int m = 0; compare_flagged_markers[m]; m++)
				if (c->rows[i].paired &&
				    strvec_find(&c->rows[i].side[s].markers, compare_flagged_markers[m]) >= 0)
					marker_seen[m] = 1;
	for (size_t i = 0; i < c->nr_rows && !ctl_seen; i++)
		ctl_seen = compare_row_control_moved_too(&c->rows[i]);
	for (size_t i = 0; i < c->nr_rows && !clock_seen; i++)
		clock_seen = c->rows[i].paired && c->rows[i].has[COMPARE_GEMS] &&
			     compare_row_clocks(&c->rows[i], COMPARE_GEMS, &lo, &hi);
	for (size_t i = 0; i < c->nr_rows && !eff_seen; i++)
		eff_seen = c->rows[i].paired && c->rows[i].has[COMPARE_GEMS] &&
			   compare_row_effective_clocks(&c->rows[i], COMPARE_GEMS, &lo, &hi);
	for (size_t i = 0; i < c->nr_rows && !s_seen; i++)
		s_seen = c->rows[i].paired && c->rows[i].has[COMPARE_GEMS] && eff_seen &&
			 isfinite(c->rows[i].res[COMPARE_GEMS].elasticity);
	for (size_t i = 0; i < c->nr_rows && !limit_seen; i++)
		limit_seen = c->rows[i].paired && c->rows[i].has[COMPARE_GEMS] &&
			     (compare_row_clock_limit(&c->rows[i], COMPARE_GEMS, 0) ||
			      compare_row_clock_limit(&c->rows[i], COMPARE_GEMS, 1));
	for (size_t i = 0; i < c->nr_rows && !need_seen; i++)
		need_seen = compare_row_rounds_needed(&c->rows[i]) > 0;
	for (size_t i = 0; i < c->nr_rows && !duty_seen; i++)
		duty_seen = c->rows[i].paired && c->rows[i].has[COMPARE_GEMS] &&
			    (c->rows[i].side[0].duty[COMPARE_GEMS] < 1 ||
			     c->rows[i].side[1].duty[COMPARE_GEMS] < 1);
	if (marker_seen[0] || marker_seen[1] || marker_seen[2] || marker_seen[3] ||
	    marker_seen[4] || ctl_seen || clock_seen || eff_seen || limit_seen || duty_seen ||
	    need_seen)
		strbuf_addch(sb, '\n');
	if (marker_seen[0])
		strbuf_addstr(sb, "!A:direct / !B:direct  BENCHMARK_DIRECT_NO_CUDAGRAPH: the row fell "
			      "back to direct (eager) timing on that side, another caliber than graph "
			      "replay\n");
	if (marker_seen[1])
		strbuf_addstr(sb, "!A:memcpy / !B:memcpy  GRAPH_MEMCPY_NODES: the captured graph holds "
			      "copy-engine nodes, timed differently from the eager copy\n");
	if (marker_seen[2])
		render_fallback_legend(c, sb);
	if (marker_seen[3])
		strbuf_addstr(sb, "!A:K / !B:K  CALLS_PER_REPLAY_DIFFERS: the sides captured "
			      "different numbers of calls per graph replay; for ~1 us kernels that "
			      "alone moves the per-call time (an H200's 64k add: 1.195 us at "
			      "K=2048, 1.313 us at K=4096)\n");
	if (marker_seen[4])
		strbuf_addstr(sb, "!A:no-kernels / !B:no-kernels  GRAPH_NO_KERNELS: the measured "
			      "graph holds no kernel node (a view such as torch.conj captures "
			      "nothing, a plain copy only copy-engine nodes): it measured no kernel, "
			      "so the row is " COMPARE_EXCLUDED " from verdicts and from the FDR family\n");
	if (ctl_seen)
		strbuf_addstr(sb, "ctl too  the torch control moved the same way on this row: "
			      "torch's kernels do not change with the Triton build, so the machine "
			      "may have moved the row, not the build\n");
	if (need_seen)
		strbuf_addf(sb, "needs N rounds  with the noise this comparison measured of the "
			    "row (process drift, placement, clock wander), N rounds a side would "
			    "give an interval %.0f%% of the band wide each way, and an unchanged row "
			    "would read SAME about 9 times in 10 (compare.json: rounds_needed; a "
			    "plan, not a verdict: the noise was estimated from few rounds, and the "
			    "sides' clocks are left out). Over %d: the row moves with "
			    "where its buffers land or with its clock, which rounds average too "
			    "slowly; --placements N measures the mean over placements (another "
			    "caliber), and fixed clocks (nvidia-smi -lgc) remove the clock's part\n",
			    100 * STATS_PLAN_HALF_WIDTH, COMPARE_ROUNDS_SHOWN);
	if (clock_seen)
		strbuf_addf(sb, "clock LO-HI MHz  the row's rounds ran at steady SM clocks more than "
			    "%.1f%% apart (power or temperature limits); its interval also covers "
			    "the change the sides' clocks alone would make of a compute-bound kernel "
			    "(compare.json: clock_shift), so a machine that ran cooler for one side "
			    "gives no verdict; fixed clocks (nvidia-smi -lgc) separate the two\n",
			    100 * COMPARE_CLOCK_SPREAD);
	if (eff_seen)
		strbuf_addf(sb, "eff LO-HI MHz  the SM clock the row's kernels really ran at (a spin "
			    "graph read before and after its sampling; compare.json: effective_mhz_a, "
			    "_b) differed by more than a step of the clock table (%.0f MHz) between "
			    "rounds where NVML's clock need not show it (an H100 at a steady 1980 MHz "
			    "ran at levels 0.75%% apart for seconds at a time); the interval covers "
			    "what that difference beyond a step (or beyond --threshold, if smaller) "
			    "makes of a compute-bound kernel (clock_shift)\n", STATS_CLOCK_STEP_MHZ);
	if (s_seen)
		strbuf_addstr(sb, "eff ... s S  every round of the row read how far its time follows "
			      "the SM clock (--clock-elasticity; compare.json: elasticity): the "
			      "interval is moved by S times the sides' effective clock difference "
			      "(clock_correction) instead of covering it, and widened by a part of it "
			      "for what S is not sure of\n");
	if (limit_seen)
		strbuf_addstr(sb, "power cap / thermal / hw slowdown A,B  NVML said that limit held "
			      "the SM clock down while that side's samples ran (compare.json: "
			      "clock_reasons_a, _b): the kernel's time is the clock the power or "
			      "thermal controller settled on, which differs from process to process "
			      "(a 700 W H100 ran its fp16 addmm of 2048^3 at 1470-1710 MHz in four), "
			      "so one round rarely gives a verdict; several rounds a side, or clocks "
			      "fixed below the limit (nvidia-smi -lgc), do\n");
	if (duty_seen)
		strbuf_addstr(sb, "duty F A,B  the power cap held that side's samples, so the "
			      "measurement was sampled again replaying only F of the time "
			      "(--power-duty; compare.json: power_duty_a, _b), at the clock the board "
			      "allows below its cap; on one side only, the sides ran at other duties: "
			      "a build that draws less power may have stayed under the cap\n");
}
