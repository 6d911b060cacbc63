/*
 * libzlbtimer: replay a captured CUDA graph and time it (see zlbtimer.h).
 *
 * One file, over 700 lines, on purpose: the library is loaded with ctypes
 * into the measured process, and keeping its batching, clock gate, noise
 * rule and report in one translation unit keeps every helper static, so
 * the .so exports the zlbt_* API and nothing else (stats.c and the driver
 * loader are its only other parts), and the measured loop, its batching
 * and the stopping rule read in one place, in the order they run.
 *
 * With several placements a batch replays each graph's share in one block,
 * opened by an untimed replay of that graph, and stores the samples where
 * round-robin would have put them (block_placement, round_robin_slot).
 *
 * Each sample is one replay bracketed by an event pair on the caller's
 * stream. Synchronising after every replay would leave the GPU idle while
 * the CPU collects, so replays are issued in batches of up to RING event
 * pairs and collected after one wait on the batch's last event. The batch
 * size is chosen from what has been measured so far so that the stopping
 * rule is met without overshooting it: the sample count is the smallest
 * that satisfies min_samples and min_time_ms (jitter aside).
 *
 * A noise target cannot be planned for that exactly: the noise is known
 * only after sorting what was measured. The noise falls roughly as
 * 1/sqrt(n), so after each check the next one is scheduled half-way to the
 * sample count that would meet the target if that held, and batches run
 * up to it without sorting anything in between.
 *
 * With a cold L2, each replay (warm-up included) is preceded, on the same
 * stream, by a memset over a buffer the size of the device's L2: it runs
 * after the previous end event and before the next start event, so it is
 * ordered before the replay but never inside the timed interval.
 *
 * With clock checks, each batch gets the lower of two SM clock reads, one
 * while it runs and one just after it; see judge_clocks() for how batches
 * that ran slow are dropped, and clock_wander() for when the clock, not
 * the sample count, bounds the median (ZLBT_STOP_CLOCK).
 */
#include "timer/zlbtimer.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/cuda_driver.h"
#include "backends/nvml.h"
#include "lib/errbuf.h"
#include "lib/stats_dist.h"
#include "timer/stats.h"

/* Event pairs per batch: enough to keep the GPU busy between waits. */
#define RING 64

#define DEFAULT_MIN_SAMPLES 10
#define DEFAULT_MAX_SAMPLES 10000
#define DEFAULT_MAX_WALL_MS 10000.0
#define DEFAULT_CLOCK_FLOOR 0.97

/*
 * The fewest samples between two noise checks: each check sorts every
 * sample kept, so checking after every replay would cost more CPU than
 * the replays near the target cost GPU.
 */
#define NOISE_MIN_STEP 8
/*
 * The SM clock table's step: an H200 read 1935, 1950, 1965 and 1980 MHz.
 * Two readings a step apart say nothing moved (zlb compare's
 * STATS_CLOCK_STEP_MHZ is the same fact).
 */
#define CLOCK_STEP_MHZ 15.0
/* ZLBT_STOP_CLOCK: the noise is at most this fraction of the clock's wander. */
#define CLOCK_STOP_FRACTION 0.25

/* The sizes of the version 1 structs: callers may pass larger, never smaller. */
#define REQUEST_V1_SIZE (offsetof(struct zlbt_request, reserved) + sizeof(uint32_t))
#define RESULT_V1_SIZE (offsetof(struct zlbt_result, wall_ms) + sizeof(double))

_Static_assert(REQUEST_V1_SIZE == 56, "struct zlbt_request v1 layout changed");
_Static_assert(RESULT_V1_SIZE == 80, "struct zlbt_result v1 layout changed");
_Static_assert(offsetof(struct zlbt_request, placement_execs) == 80,
	       "struct zlbt_request v2 layout changed");
_Static_assert(offsetof(struct zlbt_result, placements) == 120,
	       "struct zlbt_result v2 layout changed");
_Static_assert(offsetof(struct zlbt_request, duty) == 96, "struct zlbt_request v3 layout changed");
_Static_assert(offsetof(struct zlbt_request, stop_when_capped) == 104,
	       "struct zlbt_request v4 layout changed");
_Static_assert(sizeof(struct zlbt_request) == 112, "struct zlbt_request v5 layout changed");
_Static_assert(offsetof(struct zlbt_result, centre_ms) == 136,
	       "struct zlbt_result v3 layout changed");
_Static_assert(offsetof(struct zlbt_result, clock_reasons) == 152,
	       "struct zlbt_result v4 layout changed");
_Static_assert(sizeof(struct zlbt_result) == 168, "struct zlbt_result v5 layout changed");
/* A batch is whole rounds of placements, and a batch is at most RING. */
_Static_assert(ZLBT_MAX_PLACEMENTS <= RING, "a round must fit in one batch");
_Static_assert(sizeof(struct zlbt_graph_info) == 24, "struct zlbt_graph_info layout changed");

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

ZLBT_API int zlbt_abi_version(void)
{
	return ZLBT_ABI_VERSION;
}

/* The driver, or a status with err set: ENODEV for "no device here". */
static int driver(const struct cuda_driver **d, char *err, size_t errlen)
{
	int rc = cuda_driver_load(d, err, errlen);

	if (rc > 0)
		return ZLBT_ENODEV;
	if (rc < 0)
		return ZLBT_EDRIVER;
	return ZLBT_OK;
}

ZLBT_API int zlbt_open(char *err, size_t errlen)
{
	const struct cuda_driver *d;
	int rc, n = 0;
	CUresult crc;

	rc = driver(&d, err, errlen);
	if (rc)
		return rc;
	crc = d->cuDeviceGetCount(&n);
	if (crc) {
		cuda_call_failed(d, "cuDeviceGetCount", crc, err, errlen);
		return ZLBT_EDRIVER;
	}
	if (n < 1) {
		errbuf_printf(err, errlen, "no CUDA device: the driver sees none");
		return ZLBT_ENODEV;
	}
	return ZLBT_OK;
}

/*
 * Copy src over dst after their leading struct_size, no further than
 * dst's struct_size: a version 1 caller's struct ends where version 1
 * ended, and what lies beyond it is not ours.
 */
static void put_sized(void *dst, const void *src, size_t src_size)
{
	uint32_t size;

	memcpy(&size, dst, sizeof(size));
	memcpy((char *)dst + sizeof(size), (const char *)src + sizeof(size),
	       (size < src_size ? size : src_size) - sizeof(size));
}

static void put_result(struct zlbt_result *res, const struct zlbt_result *r)
{
	put_sized(res, r, sizeof(*r));
}

static void fill_result(struct zlbt_result *r, const struct stats_summary *s)
{
	r->n = (uint32_t)s->n;
	r->median_ms = s->median;
	r->mean_ms = s->mean;
	r->min_ms = s->min;
	r->max_ms = s->max;
	r->q1_ms = s->q1;
	r->q3_ms = s->q3;
	r->stdrel = s->stdrel;
	r->total_gpu_ms = s->sum;
	r->wall_ms = 0;
	r->noise = s->noise;
	r->placements = 1;
	r->placement_spread = 0;
	r->centre_ms = s->median;
	r->placement_noise = 0;
}

ZLBT_API int zlbt_summarize(const double *samples_ms, uint32_t n,
			    struct zlbt_result *res)
{
	struct zlbt_result r = { 0 };
	struct stats_summary s;

	if (!res || res->struct_size < RESULT_V1_SIZE)
		return ZLBT_EINVAL;
	put_result(res, &r);
	if (!samples_ms || !n || stats_summarize(samples_ms, n, &s))
		return ZLBT_EINVAL;
	fill_result(&r, &s);
	put_result(res, &r);
	return ZLBT_OK;
}

/*
 * Placements: checked, and the sample counts made whole rounds (min up,
 * max down), so that every placement weighs the same in what is kept.
 */
static int settle_placements(struct zlbt_request *q, char *err, size_t errlen)
{
	const uint64_t *more = (const uint64_t *)(uintptr_t)q->placement_execs;
	uint32_t p;

	if (q->placements <= 1) {
		q->placements = 1;
		return ZLBT_OK;
	}
	p = q->placements;
	if (p > ZLBT_MAX_PLACEMENTS) {
		errbuf_printf(err, errlen, "placements %u exceeds ZLBT_MAX_PLACEMENTS (%d)",
		    p, ZLBT_MAX_PLACEMENTS);
		return ZLBT_EINVAL;
	}
	if (!more) {
		errbuf_printf(err, errlen, "placements is %u but placement_execs is NULL: "
		    "pass the %u other instantiated graphs", p, p - 1);
		return ZLBT_EINVAL;
	}
	for (uint32_t i = 0; i < p - 1; i++) {
		if (!more[i]) {
			errbuf_printf(err, errlen, "placement_execs[%u] is 0: pass an "
			    "instantiated CUDA graph", i);
			return ZLBT_EINVAL;
		}
	}
	if (q->max_samples < p) {
		errbuf_printf(err, errlen, "max_samples %u is less than one round of %u "
		    "placements", q->max_samples, p);
		return ZLBT_EINVAL;
	}
	q->max_samples -= q->max_samples % p;
	if (q->min_samples % p)
		q->min_samples += p - q->min_samples % p;
	if (q->min_samples > q->max_samples)
		q->min_samples = q->max_samples;
	return ZLBT_OK;
}

/* The request with defaults applied, checked. */
static int settle_request(const struct zlbt_request *in, struct zlbt_request *q,
			  char *err, size_t errlen)
{
	if (!in) {
		errbuf_printf(err, errlen, "no request");
		return ZLBT_EINVAL;
	}
	if (in->struct_size < REQUEST_V1_SIZE) {
		errbuf_printf(err, errlen,
		    "request struct_size %u is smaller than version 1's %zu",
		    in->struct_size, (size_t)REQUEST_V1_SIZE);
		return ZLBT_EINVAL;
	}
	/*
	 * A newer caller's extra fields are not ours to read, and an older
	 * caller's struct ends early: what it lacks reads as 0, "off".
	 */
	memset(q, 0, sizeof(*q));
	memcpy(q, in, in->struct_size < sizeof(*q) ? in->struct_size : sizeof(*q));

	if (!q->graph_exec) {
		errbuf_printf(err, errlen, "graph_exec is 0: pass the instantiated CUDA graph");
		return ZLBT_EINVAL;
	}
	if (!q->calls_per_replay)
		q->calls_per_replay = 1;
	if (!q->max_samples)
		q->max_samples = DEFAULT_MAX_SAMPLES;
	if (!q->min_samples)
		q->min_samples = in->max_samples && in->max_samples < DEFAULT_MIN_SAMPLES ?
				 in->max_samples : DEFAULT_MIN_SAMPLES;
	if (q->min_samples > q->max_samples) {
		errbuf_printf(err, errlen, "min_samples %u exceeds max_samples %u",
		    q->min_samples, q->max_samples);
		return ZLBT_EINVAL;
	}
	if (!isfinite(q->min_time_ms) || q->min_time_ms < 0) {
		errbuf_printf(err, errlen, "min_time_ms %g is not a time", q->min_time_ms);
		return ZLBT_EINVAL;
	}
	if (!isfinite(q->max_wall_ms) || q->max_wall_ms < 0) {
		errbuf_printf(err, errlen, "max_wall_ms %g is not a time", q->max_wall_ms);
		return ZLBT_EINVAL;
	}
	if (q->max_wall_ms == 0)
		q->max_wall_ms = DEFAULT_MAX_WALL_MS;
	if (!isfinite(q->noise_target) || q->noise_target < 0) {
		errbuf_printf(err, errlen, "noise_target %g is not a fraction", q->noise_target);
		return ZLBT_EINVAL;
	}
	if (q->l2_mode != ZLBT_L2_HOT && q->l2_mode != ZLBT_L2_COLD) {
		errbuf_printf(err, errlen, "l2_mode %u is neither ZLBT_L2_HOT nor ZLBT_L2_COLD",
		    q->l2_mode);
		return ZLBT_EINVAL;
	}
	if (q->clock_check != ZLBT_CLOCK_OFF && q->clock_check != ZLBT_CLOCK_CHECK) {
		errbuf_printf(err, errlen, "clock_check %u is neither ZLBT_CLOCK_OFF nor "
		    "ZLBT_CLOCK_CHECK", q->clock_check);
		return ZLBT_EINVAL;
	}
	if (q->clock_floor == 0)
		q->clock_floor = DEFAULT_CLOCK_FLOOR;
	if (settle_placements(q, err, errlen))
		return ZLBT_EINVAL;
	if (!isfinite(q->duty) || q->duty < 0 || q->duty > 1) {
		errbuf_printf(err, errlen, "duty %g is not a fraction in [0, 1]", q->duty);
		return ZLBT_EINVAL;
	}
	if (q->duty == 0)
		q->duty = 1;
	if (!isfinite(q->clock_floor) || q->clock_floor < 0 || q->clock_floor > 1) {
		errbuf_printf(err, errlen, "clock_floor %g is not a fraction in (0, 1]",
		    q->clock_floor);
		return ZLBT_EINVAL;
	}
	return ZLBT_OK;
}

/* The replays of one batch, which share a clock reading. */
struct batch_rec {
	size_t first;           /* index of its first replay in run.replay_ms */
	uint32_t count;
	unsigned clock;         /* MHz, the lower of its reads; 0: none */
	int dropped;            /* ran below the clock floor */
	double gpu_ms;          /* sum of its replays */
	uint32_t untimed;       /* replays it ran untimed (warm-ups, block starts) */
	unsigned long long reasons; /* clocks event reasons while it ran */
};

/* Everything one timing run owns, released in one place. */
struct run {
	const struct cuda_driver *d;
	CUstream stream;
	CUgraphExec exec[ZLBT_MAX_PLACEMENTS];  /* replayed in blocks, stored round-robin */
	uint32_t placements;    /* entries of exec; batches are whole rounds */
	uint32_t calls;         /* workload calls per replay */
	uint32_t batch_warmups; /* untimed replays before each batch (duty < 1) */
	CUevent start[RING];
	CUevent end[RING];
	int nr_events;          /* pairs created */

	double *replay_ms;      /* every timed replay, in the order taken */
	size_t taken, alloc;
	double all_gpu_ms;      /* their sum: what a replay costs, for planning */
	struct batch_rec *batches;
	size_t nr_batches, batches_alloc;
	size_t kept;            /* replays in batches not dropped */
	double kept_gpu_ms;
	size_t discarded;       /* replays in dropped batches */

	/* Noise target: the next kept count at which to sort and check. */
	size_t check_at;
	double *sorted;         /* scratch for the checks */
	size_t sorted_alloc;
	double *kept_copy;      /* the kept samples in order, for the checks */
	size_t kept_copy_alloc;

	/* Cold L2: the buffer overwritten before each replay. */
	CUdeviceptr flush;
	size_t flush_bytes;
	unsigned char flush_value;

	/* Clock checks: batch clocks counted by MHz, for their median. */
	int clocks;
	char bus_id[64];
	unsigned *clock_hist;
	size_t hist_len;        /* 1 + the highest clock seen */
	size_t nr_clocks;       /* batches with a clock */
	double steady;          /* median of the batch clocks; 0: none */
	unsigned clock_min;     /* lowest read; 0: none */
	int reasons_known;      /* 1: NVML told a batch's clocks event reasons */
	unsigned clock_max;     /* zlbt_result.clock_max_mhz */
};

static void run_release(struct run *r)
{
	for (int i = 0; i < r->nr_events; i++) {
		r->d->cuEventDestroy(r->start[i]);
		r->d->cuEventDestroy(r->end[i]);
	}
	r->nr_events = 0;
	if (r->flush) {
		/*
		 * Flushes may still be queued if a replay failed; let the
		 * stream drain (or report its error, which is not news) first.
		 */
		r->d->cuStreamSynchronize(r->stream);
		r->d->cuMemFree(r->flush);
		r->flush = 0;
	}
	free(r->replay_ms);
	free(r->batches);
	free(r->sorted);
	free(r->kept_copy);
	r->kept_copy = NULL;
	free(r->clock_hist);
	r->replay_ms = r->sorted = NULL;
	r->batches = NULL;
	r->clock_hist = NULL;
}

static int make_events(struct run *r, int pairs, char *err, size_t errlen)
{
	CUresult rc;

	while (r->nr_events < pairs) {
		int i = r->nr_events;

		rc = r->d->cuEventCreate(&r->start[i], CU_EVENT_DEFAULT);
		if (rc) {
			cuda_call_failed(r->d, "cuEventCreate", rc, err, errlen);
			return ZLBT_EDRIVER;
		}
		rc = r->d->cuEventCreate(&r->end[i], CU_EVENT_DEFAULT);
		if (rc) {
			r->d->cuEventDestroy(r->start[i]);
			cuda_call_failed(r->d, "cuEventCreate", rc, err, errlen);
			return ZLBT_EDRIVER;
		}
		r->nr_events++;
	}
	return ZLBT_OK;
}

/* The flush buffer: as large as the L2 of the context's device. */
static int setup_flush(struct run *r, char *err, size_t errlen)
{
	const struct cuda_driver *d = r->d;
	CUdevice dev;
	CUresult rc;
	int l2 = 0;

	if (!d->cuCtxGetDevice || !d->cuMemAlloc || !d->cuMemFree ||
	    !d->cuMemsetD8Async) {
		errbuf_printf(err, errlen, "a cold L2 needs cuCtxGetDevice, cuMemAlloc_v2, "
		    "cuMemFree_v2 and cuMemsetD8Async; the CUDA driver %s lacks "
		    "one (driver too old?)", d->path);
		return ZLBT_EDRIVER;
	}
	rc = d->cuCtxGetDevice(&dev);
	if (rc) {
		cuda_call_failed(d, "cuCtxGetDevice", rc, err, errlen);
		return ZLBT_EDRIVER;
	}
	rc = d->cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev);
	if (rc) {
		cuda_call_failed(d, "cuDeviceGetAttribute(L2_CACHE_SIZE)", rc,
				 err, errlen);
		return ZLBT_EDRIVER;
	}
	if (l2 <= 0) {
		errbuf_printf(err, errlen, "the device reports an L2 cache of %d bytes: "
		    "nothing to flush", l2);
		return ZLBT_EDRIVER;
	}
	rc = d->cuMemAlloc(&r->flush, (size_t)l2);
	if (rc) {
		char why[256];

		r->flush = 0;
		errbuf_printf(err, errlen, "cuMemAlloc of the %d-byte L2 flush buffer "
		    "failed: %s", l2, cuda_strerror(d, rc, why, sizeof(why)));
		return ZLBT_EDRIVER;
	}
	r->flush_bytes = (size_t)l2;
	return ZLBT_OK;
}

/*
 * The context's device as NVML knows it. Clock checks are best effort:
 * without NVML, or without a way to name the device to it, they read
 * nothing and the measurement goes on unchecked.
 */
static void setup_clocks(struct run *r)
{
	const struct cuda_driver *d = r->d;
	CUdevice dev;

	if (!d->cuCtxGetDevice || !d->cuDeviceGetPCIBusId)
		return;
	if (d->cuCtxGetDevice(&dev) ||
	    d->cuDeviceGetPCIBusId(r->bus_id, (int)sizeof(r->bus_id), dev))
		return;
	r->bus_id[sizeof(r->bus_id) - 1] = '\0';
	if (nvml_load(NULL, 0))
		return;
	r->clocks = 1;
	if (nvml_sm_top_by_pci(r->bus_id, &r->clock_max))
		r->clock_max = 0;
}

static unsigned read_clock(struct run *r)
{
	unsigned mhz = 0;

	if (nvml_sm_clock_by_pci(r->bus_id, &mhz))
		return 0;
	if (!r->clock_min || mhz < r->clock_min)
		r->clock_min = mhz;
	return mhz;
}

/*
 * Why the clock is where it is, read with each of a batch's two clock
 * reads. The idle bit is dropped: the read at a batch's end finds the GPU
 * done, and one queued behind a slow host can find it between replays.
 */
static unsigned long long read_reasons(struct run *r)
{
	unsigned long long bits = 0;

	if (nvml_reasons_by_pci(r->bus_id, &bits))
		return 0;
	r->reasons_known = 1;
	return bits & ~NVML_REASON_GPU_IDLE;
}

/* The reasons of the batches whose samples were kept. */
static unsigned long long kept_reasons(const struct run *r)
{
	unsigned long long bits = 0;

	for (size_t i = 0; i < r->nr_batches; i++)
		if (!r->batches[i].dropped)
			bits |= r->batches[i].reasons;
	return bits;
}

static int flush_l2(struct run *r, char *err, size_t errlen)
{
	CUresult rc;

	/*
	 * A different byte each time, so that no layer can find the buffer
	 * already holding what is written and skip the write.
	 */
	rc = r->d->cuMemsetD8Async(r->flush, r->flush_value++, r->flush_bytes,
				   r->stream);
	if (rc) {
		cuda_call_failed(r->d, "cuMemsetD8Async", rc, err, errlen);
		return ZLBT_EDRIVER;
	}
	return ZLBT_OK;
}

static int launch(struct run *r, uint32_t placement, char *err, size_t errlen)
{
	CUresult rc = r->d->cuGraphLaunch(r->exec[placement], r->stream);

	if (rc) {
		cuda_call_failed(r->d, "cuGraphLaunch", rc, err, errlen);
		return ZLBT_EDRIVER;
	}
	return ZLBT_OK;
}

static int grow(void **p, size_t *alloc, size_t need, size_t elem,
		char *err, size_t errlen)
{
	size_t want = *alloc ? *alloc : 64;
	void *q;

	if (need <= *alloc)
		return ZLBT_OK;
	while (want < need)
		want *= 2;
	q = realloc(*p, want * elem);
	if (!q) {
		errbuf_printf(err, errlen, "out of memory for %zu samples", want);
		return ZLBT_EINVAL;
	}
	*p = q;
	*alloc = want;
	return ZLBT_OK;
}

/*
 * Where the i-th replay of a batch of count goes: placements are replayed
 * in blocks, count / placements consecutive replays each, and each replay
 * is stored where round-robin would have put it (slot i of a batch is
 * placement i % placements), which is what every reader of the samples
 * assumes. Why blocks: on an H200, graphs of the same work alternated
 * every replay read L2-sized kernels up to 8% slower than each graph
 * replayed alone (bench/placement_mechanism.py, issue 12).
 */
static uint32_t block_placement(const struct run *r, int count, int i)
{
	return r->placements > 1 ? (uint32_t)i / ((uint32_t)count / r->placements) : 0;
}

static size_t round_robin_slot(const struct run *r, int count, int i)
{
	uint32_t p = r->placements, per;

	if (p <= 1)
		return (size_t)i;
	per = (uint32_t)count / p;
	return (size_t)((uint32_t)i % per) * p + (uint32_t)i / per;
}

/*
 * `rounds` untimed replays of every placement (each flushed first with a
 * cold L2: they settle what is measured), then wait for them, so that the
 * timed replays start on a GPU that has just been busy and the wall clock
 * after is the sampling's own.
 */
static int warm_up(struct run *r, uint32_t rounds, char *err, size_t errlen)
{
	CUresult rc;

	for (uint32_t i = 0; i < rounds * r->placements; i++) {
		if (r->flush && flush_l2(r, err, errlen))
			return ZLBT_EDRIVER;
		if (launch(r, i % r->placements, err, errlen))
			return ZLBT_EDRIVER;
	}
	rc = r->d->cuStreamSynchronize(r->stream);
	if (rc) {
		cuda_call_failed(r->d, "cuStreamSynchronize", rc, err, errlen);
		return ZLBT_EDRIVER;
	}
	return ZLBT_OK;
}

/*
 * Issue `count` bracketed replays, wait for them, record them as a batch.
 * count is whole rounds of placements, replayed in blocks (above); with
 * several placements each block starts with one untimed replay of its
 * graph, so that no timed replay follows another graph's.
 */
static int batch(struct run *r, int count, char *err, size_t errlen)
{
	struct batch_rec *b;
	unsigned during = 0, after = 0;
	unsigned long long reasons = 0;
	double sum = 0;
	CUresult rc;
	int i;
	int per = r->placements > 1 ? count / (int)r->placements : 0;

	if (grow((void **)&r->replay_ms, &r->alloc, r->taken + (size_t)count,
		 sizeof(*r->replay_ms), err, errlen) ||
	    grow((void **)&r->batches, &r->batches_alloc, r->nr_batches + 1,
		 sizeof(*r->batches), err, errlen))
		return ZLBT_EINVAL;
	if (r->batch_warmups && warm_up(r, r->batch_warmups, err, errlen))
		return ZLBT_EDRIVER;
	for (i = 0; i < count; i++) {
		uint32_t k = block_placement(r, count, i);

		if (per && i % per == 0 && launch(r, k, err, errlen))
			return ZLBT_EDRIVER;
		if (r->flush && flush_l2(r, err, errlen))
			return ZLBT_EDRIVER;
		rc = r->d->cuEventRecord(r->start[i], r->stream);
		if (rc) {
			cuda_call_failed(r->d, "cuEventRecord", rc, err, errlen);
			return ZLBT_EDRIVER;
		}
		if (launch(r, k, err, errlen))
			return ZLBT_EDRIVER;
		rc = r->d->cuEventRecord(r->end[i], r->stream);
		if (rc) {
			cuda_call_failed(r->d, "cuEventRecord", rc, err, errlen);
			return ZLBT_EDRIVER;
		}
	}
	/*
	 * The first read once the batch is queued, while the GPU works on it:
	 * before queueing it would catch a GPU idling for the host. The
	 * second once it is done, before the clock has had time to fall.
	 */
	if (r->clocks) {
		during = read_clock(r);
		reasons = read_reasons(r);
	}
	/* One stream: once the last event has completed, all of them have. */
	rc = r->d->cuEventSynchronize(r->end[count - 1]);
	if (rc) {
		cuda_call_failed(r->d, "cuEventSynchronize", rc, err, errlen);
		return ZLBT_EDRIVER;
	}
	if (r->clocks) {
		after = read_clock(r);
		/*
		 * Again at the end: the cap's bit is the power of the moment,
		 * and a batch can start below the limit and end above it (on
		 * an H100 a 2048^3 addmm held at 1485 MHz read no bit at
		 * the batches' starts).
		 */
		reasons |= read_reasons(r);
	}
	for (i = 0; i < count; i++) {
		float ms = 0;

		rc = r->d->cuEventElapsedTime(&ms, r->start[i], r->end[i]);
		if (rc) {
			cuda_call_failed(r->d, "cuEventElapsedTime", rc, err, errlen);
			return ZLBT_EDRIVER;
		}
		r->replay_ms[r->taken + round_robin_slot(r, count, i)] = ms;
		sum += ms;
	}
	b = &r->batches[r->nr_batches++];
	b->first = r->taken;
	b->count = (uint32_t)count;
	b->clock = !during ? after : !after ? during : during < after ? during : after;
	b->dropped = 0;
	b->reasons = reasons;
	b->gpu_ms = sum;
	b->untimed = r->batch_warmups * r->placements + (per ? r->placements : 0);
	r->taken += (size_t)count;
	r->all_gpu_ms += sum;
	return ZLBT_OK;
}

/* The median of the batch clocks counted so far (average of the middle two). */
static double hist_median(const struct run *r)
{
	size_t lo = (r->nr_clocks - 1) / 2, hi = r->nr_clocks / 2, seen = 0;
	double a = -1, b = -1;

	for (size_t mhz = 0; mhz < r->hist_len && b < 0; mhz++) {
		seen += r->clock_hist[mhz];
		if (a < 0 && seen > lo)
			a = (double)mhz;
		if (b < 0 && seen > hi)
			b = (double)mhz;
	}
	return (a + b) / 2;
}

static void set_dropped(struct run *r, struct batch_rec *b, int dropped)
{
	if (b->dropped == dropped)
		return;
	b->dropped = dropped;
	if (dropped) {
		r->kept -= b->count;
		r->kept_gpu_ms -= b->gpu_ms;
		r->discarded += b->count;
	} else {
		r->kept += b->count;
		r->kept_gpu_ms += b->gpu_ms;
		r->discarded -= b->count;
	}
}

/*
 * Count the newest batch in, and drop batches that ran slow.
 *
 * The steady clock is the median of the batch clocks, and a batch below
 * floor x steady is dropped. The steady clock is only known once batches
 * have come in, and moves as they do: the first batches of a cold GPU may
 * run while it ramps up, and a clock that sags for good makes the lower
 * clock the one the measurement ran at. So after every batch, whenever
 * the median moves, every batch is judged again against it: batches are
 * dropped late, and a dropped batch comes back when the median falls to
 * its clock. Only whole batches are dropped, as a batch has one reading.
 * Nothing is lost by dropping: the replays stay in replay_ms, and kept,
 * kept_gpu_ms and discarded follow the marks, so the stopping rule, which
 * runs after this on every batch, always sees the samples that will be
 * returned -- a run never stops on samples it later drops.
 *
 * Clocks are whole MHz, so their median is kept cheap with a histogram:
 * a run of many batches does not sort their clocks after each one.
 */
static int judge_clocks(struct run *r, double floor_frac, char *err, size_t errlen)
{
	struct batch_rec *b = &r->batches[r->nr_batches - 1];
	double steady;

	r->kept += b->count;
	r->kept_gpu_ms += b->gpu_ms;
	if (!b->clock)
		return ZLBT_OK;
	if (b->clock >= r->hist_len) {
		size_t len = (size_t)b->clock + 1;
		unsigned *h = realloc(r->clock_hist, len * sizeof(*h));

		if (!h) {
			errbuf_printf(err, errlen, "out of memory for clock readings");
			return ZLBT_EINVAL;
		}
		memset(h + r->hist_len, 0, (len - r->hist_len) * sizeof(*h));
		r->clock_hist = h;
		r->hist_len = len;
	}
	r->clock_hist[b->clock]++;
	r->nr_clocks++;
	steady = hist_median(r);
	if (steady == r->steady) {
		set_dropped(r, b, b->clock < floor_frac * steady);
		return ZLBT_OK;
	}
	r->steady = steady;
	for (size_t i = 0; i < r->nr_batches; i++) {
		b = &r->batches[i];
		if (b->clock)
			set_dropped(r, b, b->clock < floor_frac * steady);
	}
	return ZLBT_OK;
}

/* A clock moved one step of the table towards the steady one: a step apart is no move. */
static double toward_steady(double c, double steady)
{
	if (fabs(c - steady) <= CLOCK_STEP_MHZ)
		return steady;
	return c + (c > steady ? -CLOCK_STEP_MHZ : CLOCK_STEP_MHZ);
}

/*
 * How far the kept batches' clocks wander around the steady clock: the sd
 * of ln of their clocks, each moved one step of the clock table towards
 * the steady one; 0 without clock checks or with fewer than two.
 */
static double kept_clock_wander(const struct run *r)
{
	double sum = 0, ss = 0, mean;
	size_t n = 0;

	if (!r->clocks || !(r->steady > 0))
		return 0;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < r->nr_batches; i++) {
			const struct batch_rec *b = &r->batches[i];
			double c = b->clock, x;

			if (b->dropped || !b->clock)
				continue;
			x = log(toward_steady(c, r->steady));
			if (!pass) {
				sum += x;
				n++;
			} else {
				mean = sum / (double)n;
				ss += (x - mean) * (x - mean);
			}
		}
		if (n < 2)
			return 0;
	}
	return sqrt(ss / (double)(n - 1));
}

/*
 * How far every batch's clock wanders, dropped ones included: the
 * interquartile range of ln of the clocks over 1.349 (an sd that a single
 * dip does not move), each clock moved one step of the table towards the
 * steady one, from the first batch at the steady clock on (the batches
 * before it are a cold GPU ramping up, which the warm-up mostly absorbs);
 * 0 with fewer than four readings.
 *
 * Why beside kept_clock_wander: the kept batches are those within the
 * floor of the steady clock by construction, so at a power cap, where the
 * clock hops between 1125 and 1515 MHz from batch to batch (an H100 at
 * 700 W on a 2048^3 addmm), half the batches are dropped and the kept
 * ones look steady: the median's noise then had to reach its target
 * through 200-500 dropped replays, 2 s of wall per measurement, while the
 * steady clock itself moved 6% between processes. The quartiles see the
 * wander once a quarter of the batches run off the steady clock.
 */
static double all_clock_wander(const struct run *r)
{
	double *x, iqr;
	size_t n = 0, from = 0;

	if (!r->clocks || !(r->steady > 0))
		return 0;
	while (from < r->nr_batches && (r->batches[from].dropped || !r->batches[from].clock))
		from++;
	if (r->nr_batches - from < 4)
		return 0;
	x = malloc((r->nr_batches - from) * sizeof(*x));
	if (!x)
		return 0; /* no evidence of wander: sampling goes on */
	for (size_t i = from; i < r->nr_batches; i++) {
		double c = r->batches[i].clock;

		if (c)
			x[n++] = log(toward_steady(c, r->steady));
	}
	iqr = 0;
	if (n >= 4) {
		stats_sort(x, n);
		iqr = stats_quantile_sorted(x, n, 0.75) - stats_quantile_sorted(x, n, 0.25);
	}
	free(x);
	return iqr / 1.349;
}

/* How far the clock wanders, by the larger of the two readings above. */
static double clock_wander(const struct run *r)
{
	return fmax(kept_clock_wander(r), all_clock_wander(r));
}

/* The kept replays, per call, in the order taken; at most cap of them. */
static size_t kept_samples(const struct run *r, double *out, size_t cap)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nr_batches && n < cap; i++) {
		const struct batch_rec *b = &r->batches[i];

		for (uint32_t j = 0; !b->dropped && j < b->count && n < cap; j++)
			out[n++] = r->replay_ms[b->first + j] / r->calls;
	}
	return n;
}

/*
 * The median of placement k's samples among per rounds of p (sample i is
 * placement i % p); its samples are left sorted in scratch.
 */
static double placement_median(const double *v, size_t per, uint32_t p, uint32_t k,
			       double *scratch)
{
	for (size_t i = 0; i < per; i++)
		scratch[i] = v[i * p + k];
	stats_sort(scratch, per);
	return per % 2 ? scratch[per / 2] : (scratch[per / 2 - 1] + scratch[per / 2]) / 2;
}

/*
 * The noise of the centre given the placements, from n kept samples in
 * the order taken (sample i is placement i % p; n is whole rounds).
 *
 * With one placement it is the noise of the median (stats.h). With
 * several, the samples are a mixture: each placement has a centre of its
 * own, and the distance between those centres (placement_spread) is fixed
 * once the graphs are captured -- sampling longer cannot shrink it, so a
 * noise target on the pooled median would sample to the wall-clock limit
 * for nothing. What sampling does shrink is the noise of each placement's
 * own median, and the centre is near the mean of those medians, whose
 * noise is sqrt(sum of (noise_i m_i)^2) / p over the mean of the m_i.
 * scratch holds n values; medians, when not NULL, gets the p medians m_i.
 */
static double placements_noise(const double *v, size_t n, uint32_t p, double *scratch,
			       double *medians)
{
	size_t per = n / p;
	double var = 0, sum = 0;
	int unknown = 0;

	if (p <= 1) {
		memcpy(scratch, v, n * sizeof(*v));
		stats_sort(scratch, n);
		return stats_median_noise_sorted(scratch, n);
	}
	for (uint32_t k = 0; k < p; k++) {
		double m = placement_median(v, per, p, k, scratch);
		double e = stats_median_noise_sorted(scratch, per);

		if (medians)
			medians[k] = m;
		unknown |= !isfinite(e);
		var += (e * m) * (e * m);
		sum += m;
	}
	return sum > 0 && !unknown ? sqrt(var) / sum : INFINITY;
}

/* The noise of the samples kept so far (placements_noise). */
static int kept_noise(struct run *r, double *noise, char *err, size_t errlen)
{
	size_t n;

	if (grow((void **)&r->sorted, &r->sorted_alloc, r->kept,
		 sizeof(*r->sorted), err, errlen) ||
	    grow((void **)&r->kept_copy, &r->kept_copy_alloc, r->kept,
		 sizeof(*r->kept_copy), err, errlen))
		return ZLBT_EINVAL;
	n = kept_samples(r, r->kept_copy, r->kept);
	*noise = placements_noise(r->kept_copy, n, r->placements, r->sorted, NULL);
	return ZLBT_OK;
}

/*
 * Where to check next after noise v missed target t at n samples: the
 * noise of a median falls as 1/sqrt(n), so n (v/t)^2 samples would meet
 * the target; go half-way there, so that a noisy estimate of the noise
 * does not send the run far past the point it needed. At least n/16 and
 * NOISE_MIN_STEP samples, so the sorting stays a small part of the work.
 */
static size_t next_check(size_t n, double v, double t)
{
	double step = ((double)n * (v / t) * (v / t) - (double)n) / 2;

	if (step < (double)n / 16)
		step = (double)n / 16;
	if (step < NOISE_MIN_STEP)
		step = NOISE_MIN_STEP;
	/* An infinite noise (a zero median) plans nothing: step on. */
	if (!isfinite(step) || step > 1e9)
		step = 1e9;
	return n + (size_t)ceil(step);
}

static int rule_met(const struct run *r, const struct zlbt_request *q)
{
	return r->kept >= q->min_samples && r->kept_gpu_ms >= q->min_time_ms;
}

/*
 * How many replays to issue next. The first batch is a single replay: it
 * tells what one replay costs, on the GPU and on the wall clock, before a
 * large batch is committed. Later batches take what min_samples and
 * min_time_ms still need (by the mean replay so far), or once those hold,
 * what is left to the next noise check; no more than the wall-clock budget
 * has room for, and at least one. Always whole rounds of placements (the
 * first batch is one round): max_samples is a whole number of them.
 */
static int next_batch(const struct run *r, const struct zlbt_request *q,
		      double wall_ms)
{
	double want = 1, p = (double)r->placements;

	if (r->taken) {
		double per_gpu = r->all_gpu_ms / (double)r->taken;
		double per_wall = wall_ms / (double)r->taken;

		want = q->min_samples > r->kept ? (double)(q->min_samples - r->kept) : 0;
		if (r->kept_gpu_ms < q->min_time_ms) {
			double more = per_gpu > 0 ?
				      ceil((q->min_time_ms - r->kept_gpu_ms) / per_gpu) : RING;
			if (more > want)
				want = more;
		}
		if (want < 1 && q->noise_target > 0 && r->check_at > r->kept)
			want = (double)(r->check_at - r->kept);
		if (per_wall > 0 && want > (q->max_wall_ms - wall_ms) / per_wall)
			want = floor((q->max_wall_ms - wall_ms) / per_wall);
		if (want < 1)
			want = 1;
	}
	if (q->duty < 1)
		want = 1;	/* one round, then the pause (idle_after) */
	want = ceil(want / p) * p;
	if (want > RING)
		want = floor(RING / p) * p;
	if (want > (double)(q->max_samples - r->kept))
		want = (double)(q->max_samples - r->kept);
	return (int)want;
}

/*
 * Below duty 1, leave the GPU idle after the last batch for (1 / duty - 1)
 * times its GPU time: the power controller caps an average, so a
 * compute-bound kernel that would run under the cap back to back runs at
 * the clock the board allows (zlbtimer.h, duty).
 */
static void idle_after(const struct run *r, const struct zlbt_request *q)
{
	const struct batch_rec *b = &r->batches[r->nr_batches - 1];
	/* its untimed replays kept the GPU as busy as its timed ones */
	double busy = b->gpu_ms * (1 + (double)b->untimed / (double)b->count);
	double ms = busy * (1 / q->duty - 1);
	struct timespec ts;

	if (!(q->duty < 1) || !(ms > 0))
		return;
	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (long)((ms - 1000.0 * (double)ts.tv_sec) * 1e6);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * What a caller reads as the power cap (zlbt_request's stop_when_capped):
 * its bits on a kept batch, or a steady clock below floor x the board's
 * top with NVML naming no reason (the cap's bit is the power of the
 * moment it is read, and can be missed at every read).
 */
static int power_capped(const struct run *r, double floor_frac)
{
	unsigned long long bits = kept_reasons(r);

	if (bits & (NVML_REASON_SW_POWER_CAP | NVML_REASON_HW_POWER_BRAKE))
		return 1;
	return r->reasons_known && !bits && r->clock_max && r->steady > 0 &&
	       r->steady < floor_frac * r->clock_max;
}

static int sample(struct run *r, const struct zlbt_request *q,
		  double *wall_ms, uint32_t *stop, char *err, size_t errlen)
{
	double t0 = now_ms(), noise;
	size_t min_n = (size_t)STATS_MEDIAN_CI_MIN_N * r->placements;
	int rc;

	*wall_ms = 0;
	for (;;) {
		/* About to end anyway: the target is checked whatever the plan. */
		int last = r->kept >= q->max_samples ||
			   (r->taken && *wall_ms >= q->max_wall_ms);

		if (q->stop_when_capped && r->kept >= q->min_samples &&
		    power_capped(r, q->clock_floor)) {
			*stop = ZLBT_STOP_CAPPED;
			return ZLBT_OK;
		}
		if (rule_met(r, q)) {
			if (q->noise_target <= 0) {
				*stop = ZLBT_STOP_RULE;
				return ZLBT_OK;
			}
			/*
			 * Below STATS_MEDIAN_CI_MIN_N samples per placement
			 * the noise means nothing.
			 */
			if (r->kept >= r->check_at && r->kept < min_n) {
				r->check_at = min_n;
			} else if (r->kept >= min_n &&
				   (r->kept >= r->check_at || last)) {
				if (kept_noise(r, &noise, err, errlen))
					return ZLBT_EINVAL;
				if (noise <= q->noise_target) {
					*stop = ZLBT_STOP_NOISE;
					return ZLBT_OK;
				}
				if (noise <= CLOCK_STOP_FRACTION * clock_wander(r)) {
					*stop = ZLBT_STOP_CLOCK;
					return ZLBT_OK;
				}
				r->check_at = next_check(r->kept, noise, q->noise_target);
			}
		}
		if (r->kept >= q->max_samples) {
			*stop = ZLBT_STOP_MAX_SAMPLES;
			return ZLBT_OK;
		}
		if (r->taken && *wall_ms >= q->max_wall_ms) {
			*stop = ZLBT_STOP_WALL;
			break;
		}
		rc = batch(r, next_batch(r, q, *wall_ms), err, errlen);
		if (!rc)
			idle_after(r, q);
		*wall_ms = now_ms() - t0;
		if (!rc)
			rc = judge_clocks(r, q->clock_floor, err, errlen);
		if (rc)
			return rc;
	}
	if (r->kept >= q->min_samples)
		return ZLBT_OK;
	if (r->discarded)
		errbuf_printf(err, errlen,
		    "wall-clock limit of %g ms reached after %zu of %u replays "
		    "(and %zu dropped for a low SM clock)",
		    q->max_wall_ms, r->kept, q->min_samples, r->discarded);
	else
		errbuf_printf(err, errlen,
		    "wall-clock limit of %g ms reached after %zu of %u replays",
		    q->max_wall_ms, r->kept, q->min_samples);
	return ZLBT_ETIMEOUT;
}

/*
 * What the p > 1 placements' own medians say: the centre (their mean),
 * their spread ((highest - lowest) / centre) and the placement noise (the
 * relative half-width of the 95% t interval of their mean; zlbtimer.h).
 */
static void describe_placements(const double *medians, uint32_t p, struct zlbt_result *out)
{
	double lo = INFINITY, hi = -INFINITY, sum = 0, ss = 0, mean;

	for (uint32_t k = 0; k < p; k++) {
		lo = medians[k] < lo ? medians[k] : lo;
		hi = medians[k] > hi ? medians[k] : hi;
		sum += medians[k];
	}
	mean = sum / p;
	for (uint32_t k = 0; k < p; k++)
		ss += (medians[k] - mean) * (medians[k] - mean);
	out->centre_ms = mean;
	if (!(mean > 0))
		return;
	out->placement_spread = (hi - lo) / mean;
	out->placement_noise = stats_t_ppf(0.975, p - 1) * sqrt(ss / (p - 1) / p) / mean;
}

/* Describe the kept samples in out; copy them out too. */
static int report(struct run *r, const struct zlbt_request *q, double wall,
		  uint32_t stop, struct zlbt_result *out,
		  double *samples_ms, uint32_t samples_cap,
		  char *err, size_t errlen)
{
	struct stats_summary s;
	double *v, gpu = 0;
	size_t n;

	/*
	 * A dropped batch that came back late can lift kept past
	 * max_samples; the newest replays beyond it are then left out.
	 */
	n = r->kept < q->max_samples ? r->kept : q->max_samples;
	v = malloc(n * sizeof(*v));
	if (!v) {
		errbuf_printf(err, errlen, "out of memory for %zu samples", n);
		return ZLBT_EINVAL;
	}
	n = kept_samples(r, v, n);
	/* Summed per replay, in order, as the v1 timer did: same bits. */
	for (size_t i = 0, left = n; i < r->nr_batches && left; i++) {
		const struct batch_rec *b = &r->batches[i];

		for (uint32_t j = 0; !b->dropped && j < b->count && left; j++, left--)
			gpu += r->replay_ms[b->first + j];
	}
	if (stats_summarize(v, n, &s)) {
		free(v);
		errbuf_printf(err, errlen, "a replay's elapsed time is not a number");
		return ZLBT_EDRIVER;
	}
	fill_result(out, &s);
	out->placements = r->placements;
	if (r->placements > 1) {
		double *scratch = malloc(n * sizeof(*scratch));
		double medians[ZLBT_MAX_PLACEMENTS];

		if (!scratch) {
			free(v);
			errbuf_printf(err, errlen, "out of memory for %zu samples", n);
			return ZLBT_EINVAL;
		}
		/* One pass sorts each placement once: its median and its noise. */
		if (n >= r->placements) {
			out->noise = placements_noise(v, n, r->placements, scratch, medians);
			describe_placements(medians, r->placements, out);
		}
		free(scratch);
	}
	out->total_gpu_ms = gpu;
	out->wall_ms = wall;
	out->stop_reason = stop;
	out->discarded = (uint32_t)r->discarded;
	out->clock_mhz = r->steady;
	out->clock_min_mhz = r->clock_min;
	out->clock_reasons = kept_reasons(r);
	out->clock_reasons_known = (uint32_t)r->reasons_known;
	out->clock_max_mhz = r->clock_max;
	out->l2_flush_bytes = r->flush_bytes;
	if (samples_ms)
		memcpy(samples_ms, v, (n < samples_cap ? n : samples_cap) *
		       sizeof(*samples_ms));
	free(v);
	return ZLBT_OK;
}

ZLBT_API int zlbt_time_graph(const struct zlbt_request *req,
			     struct zlbt_result *res,
			     double *samples_ms, uint32_t samples_cap,
			     char *err, size_t errlen)
{
	struct zlbt_result out = { 0 };
	struct zlbt_request q;
	struct run r = { 0 };
	CUcontext ctx = NULL;
	uint32_t stop = 0;
	double wall = 0;
	CUresult crc;
	int rc, rrc;

	errbuf_clear(err, errlen);
	if (!res || res->struct_size < RESULT_V1_SIZE) {
		errbuf_printf(err, errlen, "result struct_size is smaller than version 1's %zu",
		    (size_t)RESULT_V1_SIZE);
		return ZLBT_EINVAL;
	}
	put_result(res, &out);
	rc = settle_request(req, &q, err, errlen);
	if (rc)
		return rc;
	rc = driver(&r.d, err, errlen);
	if (rc)
		return rc;
	crc = r.d->cuCtxGetCurrent(&ctx);
	if (crc) {
		cuda_call_failed(r.d, "cuCtxGetCurrent", crc, err, errlen);
		return ZLBT_EDRIVER;
	}
	if (!ctx) {
		errbuf_printf(err, errlen, "no current CUDA context: capture the graph in "
		    "this thread with torch first");
		return ZLBT_EINVAL;
	}
	r.exec[0] = (CUgraphExec)(uintptr_t)q.graph_exec;
	r.placements = q.placements;
	for (uint32_t i = 1; i < q.placements; i++)
		r.exec[i] = (CUgraphExec)(uintptr_t)
			    ((const uint64_t *)(uintptr_t)q.placement_execs)[i - 1];
	r.stream = (CUstream)(uintptr_t)q.stream;
	r.calls = q.calls_per_replay;

	if (q.l2_mode == ZLBT_L2_COLD)
		rc = setup_flush(&r, err, errlen);
	if (!rc && q.clock_check == ZLBT_CLOCK_CHECK)
		setup_clocks(&r);
	if (!rc)
		rc = make_events(&r, q.max_samples < RING ? (int)q.max_samples : RING,
				 err, errlen);
	/*
	 * Below duty 1 every batch follows a pause, so each warms up itself
	 * (zlbtimer.h, duty); back to back, the first batch's warm-up is
	 * every batch's.
	 */
	if (q.duty < 1)
		r.batch_warmups = q.warmup_replays ? q.warmup_replays : 1;
	else if (!rc && q.warmup_replays)
		rc = warm_up(&r, q.warmup_replays, err, errlen);
	if (!rc)
		rc = sample(&r, &q, &wall, &stop, err, errlen);
	if ((rc == ZLBT_OK || rc == ZLBT_ETIMEOUT) && r.kept) {
		rrc = report(&r, &q, wall, stop, &out, samples_ms, samples_cap,
			     err, errlen);
		if (rrc)
			rc = rrc;
		else
			put_result(res, &out);
	}
	run_release(&r);
	return rc;
}

ZLBT_API int zlbt_graph_info(uint64_t graph, struct zlbt_graph_info *info,
			     char *err, size_t errlen)
{
	struct zlbt_graph_info out = { 0 };
	const struct cuda_driver *d;
	CUgraphNode *nodes = NULL;
	size_t count = 0, got;
	CUresult crc;
	int rc;

	errbuf_clear(err, errlen);
	/* The struct is new in version 2: all of it is the smallest size. */
	if (!info || info->struct_size < sizeof(out)) {
		errbuf_printf(err, errlen, "graph info struct_size is smaller than %zu",
		    sizeof(out));
		return ZLBT_EINVAL;
	}
	put_sized(info, &out, sizeof(out));
	if (!graph) {
		errbuf_printf(err, errlen, "graph is 0: pass the captured CUDA graph");
		return ZLBT_EINVAL;
	}
	rc = driver(&d, err, errlen);
	if (rc)
		return rc;
	if (!d->cuGraphGetNodes || !d->cuGraphNodeGetType) {
		errbuf_printf(err, errlen, "the CUDA driver %s lacks cuGraphGetNodes or "
		    "cuGraphNodeGetType (driver too old?)", d->path);
		return ZLBT_EDRIVER;
	}
	/* Two calls: how many, then which. */
	crc = d->cuGraphGetNodes((CUgraph)(uintptr_t)graph, NULL, &count);
	if (crc) {
		cuda_call_failed(d, "cuGraphGetNodes", crc, err, errlen);
		return ZLBT_EDRIVER;
	}
	if (count) {
		nodes = calloc(count, sizeof(*nodes));
		if (!nodes) {
			errbuf_printf(err, errlen, "out of memory for %zu graph nodes", count);
			return ZLBT_EINVAL;
		}
		got = count;
		crc = d->cuGraphGetNodes((CUgraph)(uintptr_t)graph, nodes, &got);
		if (crc) {
			free(nodes);
			cuda_call_failed(d, "cuGraphGetNodes", crc, err, errlen);
			return ZLBT_EDRIVER;
		}
		/* It says how many it wrote, never more than asked for. */
		count = got < count ? got : count;
	}
	for (size_t i = 0; i < count; i++) {
		CUgraphNodeType type;

		crc = d->cuGraphNodeGetType(nodes[i], &type);
		if (crc) {
			free(nodes);
			cuda_call_failed(d, "cuGraphNodeGetType", crc, err, errlen);
			return ZLBT_EDRIVER;
		}
		switch (type) {
		case CU_GRAPH_NODE_TYPE_KERNEL:
			out.kernels++;
			break;
		case CU_GRAPH_NODE_TYPE_MEMCPY:
			out.memcpys++;
			break;
		case CU_GRAPH_NODE_TYPE_MEMSET:
			out.memsets++;
			break;
		default:
			out.others++;
			break;
		}
	}
	free(nodes);
	out.nodes = (uint32_t)count;
	put_sized(info, &out, sizeof(out));
	return ZLBT_OK;
}

/* The entry points a repeat needs, or ZLBT_EDRIVER naming the first missing. */
static int repeat_entry_points(const struct cuda_driver *d, char *err, size_t errlen)
{
	const char *missing =
		!d->cuGraphCreate ? "cuGraphCreate" :
		!d->cuGraphAddChildGraphNode ? "cuGraphAddChildGraphNode" :
		!d->cuGraphInstantiateWithFlags && !d->cuGraphInstantiate ?
			"cuGraphInstantiateWithFlags and cuGraphInstantiate" :
		!d->cuGraphExecDestroy ? "cuGraphExecDestroy" :
		!d->cuGraphDestroy ? "cuGraphDestroy" : NULL;

	if (!missing)
		return ZLBT_OK;
	errbuf_printf(err, errlen, "the CUDA driver %s lacks %s (driver too old?)",
	    d->path, missing);
	return ZLBT_EDRIVER;
}

/* Instantiate g with flags 0; *call names the entry point for a failure. */
static CUresult instantiate(const struct cuda_driver *d, CUgraphExec *exec,
			    CUgraph g, const char **call)
{
	CUgraphNode error_node = NULL;
	char log[256] = "";

	if (d->cuGraphInstantiateWithFlags) {
		*call = "cuGraphInstantiateWithFlags";
		return d->cuGraphInstantiateWithFlags(exec, g, 0);
	}
	/* An old driver may write into both whatever it is given. */
	*call = "cuGraphInstantiate";
	return d->cuGraphInstantiate(exec, g, &error_node, log, sizeof(log));
}

ZLBT_API int zlbt_graph_repeat(uint64_t graph, uint32_t copies,
			       uint64_t *exec_out, uint64_t *graph_out,
			       char *err, size_t errlen)
{
	const struct cuda_driver *d;
	CUgraphNode prev = NULL, node;
	CUgraphExec exec = NULL;
	CUcontext ctx = NULL;
	CUgraph g = NULL;
	const char *call;
	char what[96];
	CUresult crc;
	int rc;

	errbuf_clear(err, errlen);
	/* Zeroed first: no stale handle for a caller that ignores the status. */
	if (exec_out)
		*exec_out = 0;
	if (graph_out)
		*graph_out = 0;
	if (!graph) {
		errbuf_printf(err, errlen, "graph is 0: pass the captured CUDA graph");
		return ZLBT_EINVAL;
	}
	if (!copies) {
		errbuf_printf(err, errlen, "copies is 0: a repeat needs at least one copy");
		return ZLBT_EINVAL;
	}
	if (!exec_out || !graph_out) {
		errbuf_printf(err, errlen, "exec_out and graph_out must both be given: "
		    "both are the caller's to release");
		return ZLBT_EINVAL;
	}
	rc = driver(&d, err, errlen);
	if (rc)
		return rc;
	rc = repeat_entry_points(d, err, errlen);
	if (rc)
		return rc;
	crc = d->cuCtxGetCurrent(&ctx);
	if (crc) {
		cuda_call_failed(d, "cuCtxGetCurrent", crc, err, errlen);
		return ZLBT_EDRIVER;
	}
	if (!ctx) {
		errbuf_printf(err, errlen, "no current CUDA context: capture the graph in "
		    "this thread with torch first");
		return ZLBT_EINVAL;
	}

	crc = d->cuGraphCreate(&g, 0);
	if (crc) {
		cuda_call_failed(d, "cuGraphCreate", crc, err, errlen);
		return ZLBT_EDRIVER;
	}
	for (uint32_t i = 0; i < copies; i++) {
		crc = d->cuGraphAddChildGraphNode(&node, g, prev ? &prev : NULL,
						  prev ? 1 : 0,
						  (CUgraph)(uintptr_t)graph);
		if (crc) {
			snprintf(what, sizeof(what), "cuGraphAddChildGraphNode "
				 "(copy %u of %u)", i + 1, copies);
			cuda_call_failed(d, what, crc, err, errlen);
			d->cuGraphDestroy(g);
			return ZLBT_EDRIVER;
		}
		prev = node;
	}
	crc = instantiate(d, &exec, g, &call);
	if (crc) {
		cuda_call_failed(d, call, crc, err, errlen);
		d->cuGraphDestroy(g);
		return ZLBT_EDRIVER;
	}
	*exec_out = (uint64_t)(uintptr_t)exec;
	*graph_out = (uint64_t)(uintptr_t)g;
	return ZLBT_OK;
}

ZLBT_API int zlbt_graph_repeat_release(uint64_t exec, uint64_t graph,
				       char *err, size_t errlen)
{
	const struct cuda_driver *d;
	CUresult crc;
	int rc;

	errbuf_clear(err, errlen);
	if (!exec && !graph)
		return ZLBT_OK;
	rc = driver(&d, err, errlen);
	if (rc)
		return rc;
	if (!d->cuGraphExecDestroy || !d->cuGraphDestroy) {
		errbuf_printf(err, errlen, "the CUDA driver %s lacks cuGraphExecDestroy or "
		    "cuGraphDestroy (driver too old?)", d->path);
		return ZLBT_EDRIVER;
	}
	if (exec) {
		crc = d->cuGraphExecDestroy((CUgraphExec)(uintptr_t)exec);
		if (crc) {
			cuda_call_failed(d, "cuGraphExecDestroy", crc, err, errlen);
			rc = ZLBT_EDRIVER;
		}
	}
	/* The exec does not need its graph: the graph goes even if it failed. */
	if (graph) {
		crc = d->cuGraphDestroy((CUgraph)(uintptr_t)graph);
		if (crc && !rc) {
			cuda_call_failed(d, "cuGraphDestroy", crc, err, errlen);
			rc = ZLBT_EDRIVER;
		}
	}
	return rc;
}
