/*
 * Reading one measurement of results.jsonl (docs/protocol.md section 3)
 * into what a round of stats_compare holds: the fields beyond its samples,
 * each checked and defaulted to "not measured". Apart from compare_rows.c,
 * which reads rows and pairs them.
 */
#include "compare/compare_int.h"

#include <math.h>

#include "compare/stats_compare.h"
#include "lib/clock_reasons.h"
#include "lib/jsonfile.h"
#include "lib/strbuf.h"

/*
 * What the measurement says of its own placement drift: placement_sd over
 * 1 + placement_probes graphs (docs/protocol.md section 3). Anything else
 * (absent, null, negative, no probe) leaves the set without one.
 */
void compare_meas_placement(const json_t *meas, struct stats_sample_set *set)
{
	const json_t *sd = json_object_get(meas, "placement_sd");
	const json_t *probes = json_object_get(meas, "placement_probes");

	set->place_sd = 0;
	set->place_df = 0;
	if (json_is_number(sd) && json_number_value(sd) >= 0 && isfinite(json_number_value(sd)) &&
	    json_is_integer(probes) && json_integer_value(probes) > 0) {
		set->place_sd = json_number_value(sd);
		set->place_df = (size_t)json_integer_value(probes);
	}
}

/*
 * The probes' draws by index (placement_probe_draws, docs/protocol.md
 * section 3), NAN where one was left out (null); NULL with *n 0 when
 * absent (files older than the field) or anything but numbers and nulls,
 * which leaves the comparison to the spreads. A draw is a log ratio of two
 * block medians: beyond +-ln 100 it is no placement.
 */
double *compare_meas_draws(const json_t *meas, size_t *n)
{
	const json_t *a = json_object_get(meas, "placement_probe_draws");
	size_t i, len = json_is_array(a) ? json_array_size(a) : 0;
	double *d;
	json_t *v;

	*n = 0;
	if (!len)
		return NULL;
	d = xmalloc(len * sizeof(*d));
	json_array_foreach(a, i, v) {
		if (json_is_null(v)) {
			d[i] = NAN;
		} else if (json_is_number(v) && fabs(json_number_value(v)) < log(100.0)) {
			d[i] = json_number_value(v);
		} else {
			free(d);
			return NULL;
		}
	}
	*n = len;
	return d;
}

/*
 * The NVML clocks event reasons its kept samples ran under (the record's
 * clock_reasons, names as clock_reasons_text writes them): a name zlb does
 * not know, or anything but a string, counts for nothing.
 */
unsigned long long compare_meas_clock_reasons(const json_t *meas)
{
	const json_t *names = json_object_get(meas, "clock_reasons"), *v;
	unsigned long long bits = 0;
	size_t i;

	if (!json_is_array(names))
		return 0;
	json_array_foreach(names, i, v)
		if (json_is_string(v))
			bits |= clock_reason_bit(json_string_value(v));
	return bits;
}

/*
 * The measurement's effective clock (effective_mhz), or 0: not read, or
 * its two spin readings (effective_mhz_reads, before and after the
 * sampling) more than a step of the clock table apart. Then the clock
 * moved while the row sampled, and their mean is no clock its samples ran
 * at: on an H100 a power-capped 4096^3 addmm read 1557 MHz before and 1955
 * after, and a 1024^3 one 1956 and 2071 (above NVML's 1980), while 219 of
 * 240 rows of the same matrix read within a step. Such a round is left to
 * NVML's steady clock and its wander, which are read all through it.
 */
double compare_meas_effective_mhz(const json_t *meas)
{
	double mhz = json_num(meas, "effective_mhz", 0), lo = INFINITY, hi = 0;
	const json_t *reads = json_object_get(meas, "effective_mhz_reads"), *v;
	size_t i;

	if (!(mhz > 0) || !isfinite(mhz))
		return 0;
	json_array_foreach(reads, i, v) {
		double r = json_is_number(v) ? json_number_value(v) : NAN;

		if (r > 0 && isfinite(r)) {
			lo = fmin(lo, r);
			hi = fmax(hi, r);
		}
	}
	return hi > lo + STATS_CLOCK_STEP_MHZ ? 0 : mhz;
}

/*
 * How far the measurement's clock wandered (stats_clock_wander): its steady
 * clock and its probes' (placement_probe_mhz, docs/protocol.md section 3;
 * nulls and anything but numbers skipped). 0 without a steady clock.
 */
double compare_meas_clock_wander(const json_t *meas, double steady_mhz)
{
	const json_t *a = json_object_get(meas, "placement_probe_mhz");
	double mhz[32];
	size_t i, n = 0;
	json_t *v;

	if (json_is_array(a))
		json_array_foreach(a, i, v) {
			if (n < sizeof(mhz) / sizeof(mhz[0]) && json_is_number(v))
				mhz[n++] = json_number_value(v);
		}
	return stats_clock_wander(steady_mhz, mhz, n);
}

/*
 * The measurement's clock elasticity (clock_elasticity, its _se and
 * _pairs; docs/protocol.md section 3): elasticity_n 0 unless all three are
 * finite numbers, s within [-1, 2] (anything further is no kernel's
 * response to its clock: a fit gone wrong) and se not negative.
 */
void compare_meas_elasticity(const json_t *meas, double *s_out, double *se_out, size_t *n_out)
{
	const json_t *n = json_object_get(meas, "clock_elasticity_pairs");
	double s = json_num(meas, "clock_elasticity", NAN);
	double se = json_num(meas, "clock_elasticity_se", NAN);

	*s_out = *se_out = NAN;
	*n_out = 0;
	if (!json_is_integer(n) || json_integer_value(n) < 3 || !isfinite(s) || !isfinite(se) ||
	    s < -1 || s > 2 || se < 0)
		return;
	*s_out = s;
	*se_out = se;
	*n_out = (size_t)json_integer_value(n);
}
