/*
 * results.jsonl and events.jsonl (rundir/results_file.c, rundir/run_tally.c):
 * the line walker in its three modes (whole lines, samples cut out, samples
 * taken by strtod), the event walker, and the tally of a run.
 */
#include "fuzz_util.h"

#include "rundir/results_file.h"
#include "rundir/run_tally.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_init();
	return 0;
}

static int on_row(void *ctx, const struct results_row *row, size_t lineno)
{
	size_t *n = ctx;
	struct strvec markers = STRVEC_INIT;
	const double *x;
	size_t k;

	results_meas_markers(row->torch, &markers);
	results_meas_markers(row->gems, &markers);
	results_meas_replay_fallbacks(row->torch, &markers);
	results_meas_replay_fallbacks(row->gems, &markers);
	if (row->taken && results_meas_taken(row, row->gems, &x, &k) && k)
		*n += (size_t)(x[k - 1] == x[0]);
	strvec_clear(&markers);
	(*n)++;
	return 0;
}

static int on_event(void *ctx, const json_t *ev, size_t lineno)
{
	(*(size_t *)ctx)++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *dir = fuzz_dir();
	char *results = fuzz_put(dir, RESULTS_FILE, data, size);
	char *events = fuzz_put(dir, EVENTS_FILE, data, size);
	size_t n = 0, bad;
	struct run_tally t;

	results_each(results, RESULTS_QUIET_BAD_LINES, on_row, &n, &bad);
	results_each(results, RESULTS_SKIP_SAMPLES | RESULTS_QUIET_BAD_LINES, on_row, &n, &bad);
	results_each(results, RESULTS_TAKE_SAMPLES | RESULTS_QUIET_BAD_LINES, on_row, &n, &bad);
	results_events_each(events, "BENCHMARK_DIRECT_NO_CUDAGRAPH", on_event, &n, &bad);
	if (!run_tally_read(dir, &t))
		run_tally_release(&t);
	free(results);
	free(events);
	return 0;
}
