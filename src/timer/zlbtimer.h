/*
 * libzlbtimer: replay a captured CUDA graph and time it on the GPU.
 *
 * The Python timing hook captures K calls of the workload into one CUDA
 * graph (torch knows its allocator), instantiates it, and passes the
 * executable graph and the stream as plain integers. This library replays
 * the graph through the CUDA driver API, one event pair per replay, and
 * returns per-call statistics and the raw per-call samples.
 *
 * The driver is reached only through dlopen("libcuda.so.1") (or the path in
 * $ZLB_LIBCUDA), so the library builds and loads on machines with no GPU and
 * answers ZLBT_ENODEV there.
 *
 * The structs are passed by pointer from ctypes; each starts with its own
 * size so that fields can be appended without breaking older callers.
 * All functions are safe to call from one thread at a time.
 */
#ifndef ZLBTIMER_H
#define ZLBTIMER_H

#include <stddef.h>
#include <stdint.h>

#define ZLBT_API __attribute__((visibility("default")))

#define ZLBT_ABI_VERSION 1

enum zlbt_status {
	ZLBT_OK = 0,
	ZLBT_ENODEV = 1,   /* no driver library or no device */
	ZLBT_EDRIVER = 2,  /* a driver call failed; err says which */
	ZLBT_EINVAL = 3,   /* bad arguments */
	ZLBT_ETIMEOUT = 4, /* wall-clock limit hit before min_samples */
};

/*
 * What to time. A field left 0 takes its default:
 *   calls_per_replay  1
 *   min_samples       10 (or max_samples, if that is set and smaller)
 *   max_samples       10000
 *   min_time_ms       0: no GPU-time floor, min_samples alone decides
 *   max_wall_ms       10000
 *   warmup_replays    0: none
 * min_samples > max_samples, a negative or non-finite time, graph_exec 0 or
 * struct_size smaller than this (version 1) struct give ZLBT_EINVAL.
 */
struct zlbt_request {
	uint32_t struct_size;       /* sizeof(struct zlbt_request) */
	uint32_t calls_per_replay;  /* K: workload calls captured in the graph */
	uint64_t graph_exec;        /* CUgraphExec */
	uint64_t stream;            /* CUstream (0: the legacy default stream) */
	uint32_t min_samples;       /* take at least this many replays */
	uint32_t max_samples;       /* and never more than this */
	double min_time_ms;         /* keep sampling until this much GPU time */
	double max_wall_ms;         /* give up (ZLBT_ETIMEOUT if < min_samples) */
	uint32_t warmup_replays;    /* untimed replays before the first sample */
	uint32_t reserved;
};

/*
 * The caller sets struct_size (at least this version 1 size); the library
 * writes the other fields and never more than struct_size bytes.
 */
struct zlbt_result {
	uint32_t struct_size;       /* sizeof(struct zlbt_result) */
	uint32_t n;                 /* samples taken (per-call values) */
	double median_ms;           /* all times are per workload call */
	double mean_ms;
	double min_ms;
	double max_ms;
	double q1_ms;               /* quartiles, linear interpolation */
	double q3_ms;
	double stdrel;              /* sample standard deviation / mean */
	double total_gpu_ms;        /* sum of the timed replays */
	double wall_ms;             /* wall time spent sampling */
};

/* ABI version of the loaded library (ZLBT_ABI_VERSION it was built with). */
ZLBT_API int zlbt_abi_version(void);

/*
 * Load the driver and check that a device exists. Idempotent.
 * Returns ZLBT_OK or ZLBT_ENODEV / ZLBT_EDRIVER with a sentence in err.
 */
ZLBT_API int zlbt_open(char *err, size_t errlen);

/*
 * Replay req->graph_exec on req->stream until the stopping rule holds:
 * at least min_samples and min_time_ms of GPU time, at most max_samples or
 * max_wall_ms of wall time. Each sample is one replay's elapsed time divided
 * by calls_per_replay. Up to samples_cap per-call samples are copied to
 * samples_ms (may be NULL), in the order they were taken. Returns a
 * zlbt_status; err explains failures.
 *
 * The graph must have been captured in a CUDA context that is current in
 * the calling thread (ZLBT_EINVAL otherwise). total_gpu_ms is the sum of
 * the timed replays (not per call); wall_ms is the time spent sampling,
 * warm-up excluded. On ZLBT_ETIMEOUT res still describes the samples that
 * were taken (n < min_samples); on other errors res is zeroed.
 */
ZLBT_API int zlbt_time_graph(const struct zlbt_request *req,
			     struct zlbt_result *res,
			     double *samples_ms, uint32_t samples_cap,
			     char *err, size_t errlen);

/*
 * Statistics over n per-call samples (copied and sorted internally).
 * Exposed so the Python side summarises direct-timer samples the same way.
 * total_gpu_ms is the sum of the samples and wall_ms is 0. Returns ZLBT_OK,
 * or ZLBT_EINVAL for n == 0, a NULL pointer, a non-finite sample or a
 * struct_size below the version 1 size.
 */
ZLBT_API int zlbt_summarize(const double *samples_ms, uint32_t n,
			    struct zlbt_result *res);

#endif
