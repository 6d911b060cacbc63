/*
 * libzlbtimer: replay a captured CUDA graph and time it (see zlbtimer.h).
 *
 * Each sample is one replay bracketed by an event pair on the caller's
 * stream. Synchronising after every replay would leave the GPU idle while
 * the CPU collects, so replays are issued in batches of up to RING event
 * pairs and collected after one wait on the batch's last event. The batch
 * size is chosen from what has been measured so far so that the stopping
 * rule is met without overshooting it: the sample count is the smallest
 * that satisfies min_samples and min_time_ms (jitter aside).
 */
#include "timer/zlbtimer.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/cuda_driver.h"
#include "timer/stats.h"

/* Event pairs per batch: enough to keep the GPU busy between waits. */
#define RING 64

#define DEFAULT_MIN_SAMPLES 10
#define DEFAULT_MAX_SAMPLES 10000
#define DEFAULT_MAX_WALL_MS 10000.0

/* The sizes of the version 1 structs: callers may pass larger, never smaller. */
#define REQUEST_V1_SIZE (offsetof(struct zlbt_request, reserved) + sizeof(uint32_t))
#define RESULT_V1_SIZE (offsetof(struct zlbt_result, wall_ms) + sizeof(double))

_Static_assert(REQUEST_V1_SIZE == 56, "struct zlbt_request v1 layout changed");
_Static_assert(RESULT_V1_SIZE == 80, "struct zlbt_result v1 layout changed");

static void say(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void say(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

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
		say(err, errlen, "no CUDA device: the driver sees none");
		return ZLBT_ENODEV;
	}
	return ZLBT_OK;
}

/* Write r into the caller's struct, no further than its struct_size. */
static void put_result(struct zlbt_result *res, const struct zlbt_result *r)
{
	uint32_t size = res->struct_size;

	memcpy((char *)res + sizeof(res->struct_size),
	       (const char *)r + sizeof(r->struct_size),
	       (size < sizeof(*r) ? size : sizeof(*r)) - sizeof(r->struct_size));
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

/* The request with defaults applied, checked. */
static int settle_request(const struct zlbt_request *in, struct zlbt_request *q,
			  char *err, size_t errlen)
{
	if (!in) {
		say(err, errlen, "no request");
		return ZLBT_EINVAL;
	}
	if (in->struct_size < REQUEST_V1_SIZE) {
		say(err, errlen,
		    "request struct_size %u is smaller than version 1's %zu",
		    in->struct_size, (size_t)REQUEST_V1_SIZE);
		return ZLBT_EINVAL;
	}
	/* A newer caller's extra fields are not ours to read. */
	memset(q, 0, sizeof(*q));
	memcpy(q, in, in->struct_size < sizeof(*q) ? in->struct_size : sizeof(*q));

	if (!q->graph_exec) {
		say(err, errlen, "graph_exec is 0: pass the instantiated CUDA graph");
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
		say(err, errlen, "min_samples %u exceeds max_samples %u",
		    q->min_samples, q->max_samples);
		return ZLBT_EINVAL;
	}
	if (!isfinite(q->min_time_ms) || q->min_time_ms < 0) {
		say(err, errlen, "min_time_ms %g is not a time", q->min_time_ms);
		return ZLBT_EINVAL;
	}
	if (!isfinite(q->max_wall_ms) || q->max_wall_ms < 0) {
		say(err, errlen, "max_wall_ms %g is not a time", q->max_wall_ms);
		return ZLBT_EINVAL;
	}
	if (q->max_wall_ms == 0)
		q->max_wall_ms = DEFAULT_MAX_WALL_MS;
	return ZLBT_OK;
}

/* Everything one timing run owns, released in one place. */
struct run {
	const struct cuda_driver *d;
	CUstream stream;
	CUgraphExec exec;
	CUevent start[RING];
	CUevent end[RING];
	int nr_events;          /* pairs created */
	double *samples;        /* per-call, in the order taken */
	size_t n, alloc;
	double gpu_ms;          /* sum of timed replays */
};

static void run_release(struct run *r)
{
	for (int i = 0; i < r->nr_events; i++) {
		r->d->cuEventDestroy(r->start[i]);
		r->d->cuEventDestroy(r->end[i]);
	}
	r->nr_events = 0;
	free(r->samples);
	r->samples = NULL;
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

static int launch(struct run *r, char *err, size_t errlen)
{
	CUresult rc = r->d->cuGraphLaunch(r->exec, r->stream);

	if (rc) {
		cuda_call_failed(r->d, "cuGraphLaunch", rc, err, errlen);
		return ZLBT_EDRIVER;
	}
	return ZLBT_OK;
}

/* Issue `count` bracketed replays, wait for them, append their samples. */
static int batch(struct run *r, int count, uint32_t calls,
		 char *err, size_t errlen)
{
	CUresult rc;
	int i;

	if (r->n + (size_t)count > r->alloc) {
		size_t want = r->alloc ? r->alloc * 2 : 256;
		double *p;

		while (want < r->n + (size_t)count)
			want *= 2;
		p = realloc(r->samples, want * sizeof(*p));
		if (!p) {
			say(err, errlen, "out of memory for %zu samples", want);
			return ZLBT_EINVAL;
		}
		r->samples = p;
		r->alloc = want;
	}
	for (i = 0; i < count; i++) {
		rc = r->d->cuEventRecord(r->start[i], r->stream);
		if (rc) {
			cuda_call_failed(r->d, "cuEventRecord", rc, err, errlen);
			return ZLBT_EDRIVER;
		}
		if (launch(r, err, errlen))
			return ZLBT_EDRIVER;
		rc = r->d->cuEventRecord(r->end[i], r->stream);
		if (rc) {
			cuda_call_failed(r->d, "cuEventRecord", rc, err, errlen);
			return ZLBT_EDRIVER;
		}
	}
	/* One stream: once the last event has completed, all of them have. */
	rc = r->d->cuEventSynchronize(r->end[count - 1]);
	if (rc) {
		cuda_call_failed(r->d, "cuEventSynchronize", rc, err, errlen);
		return ZLBT_EDRIVER;
	}
	for (i = 0; i < count; i++) {
		float ms = 0;

		rc = r->d->cuEventElapsedTime(&ms, r->start[i], r->end[i]);
		if (rc) {
			cuda_call_failed(r->d, "cuEventElapsedTime", rc, err, errlen);
			return ZLBT_EDRIVER;
		}
		r->gpu_ms += ms;
		r->samples[r->n++] = (double)ms / calls;
	}
	return ZLBT_OK;
}

/*
 * How many replays to issue next. The first batch is a single replay: it
 * tells what one replay costs, on the GPU and on the wall clock, before a
 * large batch is committed. Later batches take what min_samples and
 * min_time_ms still need (by the mean replay so far), no more than the
 * wall-clock budget has room for, and at least one.
 */
static int next_batch(const struct run *r, const struct zlbt_request *q,
		      double wall_ms)
{
	double want = 1;

	if (r->n) {
		double per_gpu = r->gpu_ms / (double)r->n;
		double per_wall = wall_ms / (double)r->n;

		want = q->min_samples > r->n ? (double)(q->min_samples - r->n) : 0;
		if (r->gpu_ms < q->min_time_ms) {
			double more = per_gpu > 0 ?
				      ceil((q->min_time_ms - r->gpu_ms) / per_gpu) : RING;
			if (more > want)
				want = more;
		}
		if (per_wall > 0 && want > (q->max_wall_ms - wall_ms) / per_wall)
			want = floor((q->max_wall_ms - wall_ms) / per_wall);
		if (want < 1)
			want = 1;
	}
	if (want > RING)
		want = RING;
	if (want > (double)(q->max_samples - r->n))
		want = (double)(q->max_samples - r->n);
	return (int)want;
}

static int sample(struct run *r, const struct zlbt_request *q,
		  double *wall_ms, char *err, size_t errlen)
{
	double t0 = now_ms();
	int rc;

	*wall_ms = 0;
	for (;;) {
		if (r->n >= q->min_samples && r->gpu_ms >= q->min_time_ms)
			return ZLBT_OK;
		if (r->n >= q->max_samples)
			return ZLBT_OK;
		if (r->n && *wall_ms >= q->max_wall_ms)
			break;
		rc = batch(r, next_batch(r, q, *wall_ms), q->calls_per_replay,
			   err, errlen);
		*wall_ms = now_ms() - t0;
		if (rc)
			return rc;
	}
	if (r->n >= q->min_samples)
		return ZLBT_OK;
	say(err, errlen,
	    "wall-clock limit of %g ms reached after %zu of %u replays",
	    q->max_wall_ms, r->n, q->min_samples);
	return ZLBT_ETIMEOUT;
}

ZLBT_API int zlbt_time_graph(const struct zlbt_request *req,
			     struct zlbt_result *res,
			     double *samples_ms, uint32_t samples_cap,
			     char *err, size_t errlen)
{
	struct zlbt_result out = { 0 };
	struct zlbt_request q;
	struct stats_summary s;
	struct run r = { 0 };
	CUcontext ctx = NULL;
	double wall = 0;
	CUresult crc;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if (!res || res->struct_size < RESULT_V1_SIZE) {
		say(err, errlen, "result struct_size is smaller than version 1's %zu",
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
		say(err, errlen, "no current CUDA context: capture the graph in "
		    "this thread with torch first");
		return ZLBT_EINVAL;
	}
	r.exec = (CUgraphExec)(uintptr_t)q.graph_exec;
	r.stream = (CUstream)(uintptr_t)q.stream;

	rc = make_events(&r, q.max_samples < RING ? (int)q.max_samples : RING,
			 err, errlen);
	for (uint32_t i = 0; !rc && i < q.warmup_replays; i++)
		rc = launch(&r, err, errlen);
	/* Sampling starts from an idle stream: its wall clock is its own. */
	if (!rc && q.warmup_replays) {
		crc = r.d->cuStreamSynchronize(r.stream);
		if (crc) {
			cuda_call_failed(r.d, "cuStreamSynchronize", crc, err, errlen);
			rc = ZLBT_EDRIVER;
		}
	}
	if (!rc)
		rc = sample(&r, &q, &wall, err, errlen);
	if ((rc == ZLBT_OK || rc == ZLBT_ETIMEOUT) && r.n) {
		if (stats_summarize(r.samples, r.n, &s)) {
			say(err, errlen, "a replay's elapsed time is not a number");
			rc = ZLBT_EDRIVER;
		} else {
			fill_result(&out, &s);
			out.total_gpu_ms = r.gpu_ms;
			out.wall_ms = wall;
			put_result(res, &out);
			if (samples_ms) {
				size_t k = r.n < samples_cap ? r.n : samples_cap;

				memcpy(samples_ms, r.samples, k * sizeof(*samples_ms));
			}
		}
	}
	run_release(&r);
	return rc;
}
