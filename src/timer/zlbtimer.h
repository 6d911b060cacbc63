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

/*
 * Version 5 adds zlbt_graph_repeat and zlbt_graph_repeat_release; the
 * structs are version 4's, so a version 4 caller drives it unchanged.
 * Version 6 adds clock_reasons to struct zlbt_result (its version 5).
 * Version 7 adds duty to struct zlbt_request (its version 4).
 * Version 8 changes what duty does, not the structs: each batch below duty
 * 1 runs its own warm-up replays first, and they count as busy time.
 * Version 9 fills struct zlbt_result's clock_max_mhz (version 5's reserved
 * field before).
 * Version 10 adds stop_when_capped to struct zlbt_request (its version 5)
 * and ZLBT_STOP_CAPPED.
 */
#define ZLBT_ABI_VERSION 10

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
 *   noise_target      0: off
 *   l2_mode           ZLBT_L2_HOT
 *   clock_check       ZLBT_CLOCK_OFF
 *   clock_floor       0.97
 * min_samples > max_samples, a negative or non-finite time, graph_exec 0,
 * a negative or non-finite noise_target, an l2_mode or clock_check not
 * named below, a clock_floor outside (0, 1] or struct_size smaller than
 * version 1's struct give ZLBT_EINVAL. A version 1 struct (struct_size 56)
 * is accepted: the version 2 fields it lacks read as 0; so is a version 2
 * struct (struct_size 80), whose missing version 3 fields mean one
 * placement. placements above ZLBT_MAX_PLACEMENTS, or placements > 1 with
 * a NULL placement_execs or a 0 in it, give ZLBT_EINVAL.
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
	uint32_t warmup_replays;    /* untimed replays before the first sample
				     * (before every batch below duty 1) */
	uint32_t reserved;
	/* --- version 2 --- */
	/*
	 * Once min_samples and min_time_ms hold, keep sampling until the
	 * relative noise of the centre (result.noise) is at most this, or
	 * max_samples / max_wall_ms. 0: off (the version 1 rule).
	 * Event times are quantised, which puts a floor under the noise of
	 * short replays (on an H200 a 3.5 us replay stayed near 0.9% over
	 * 10000 samples): for tight targets make a replay last tens of us.
	 */
	double noise_target;
	/*
	 * ZLBT_L2_COLD: before each sample, outside its event pair, overwrite a
	 * buffer the size of the device's L2 (read from the device) so the
	 * replay starts with a cold cache. ZLBT_L2_HOT (0): no flush.
	 * Warm-up replays are flushed too. Only the first of the
	 * calls_per_replay calls in a replay starts cold (the others find
	 * what it left in L2), so capture K = 1 call per graph in cold mode.
	 */
	uint32_t l2_mode;
	/*
	 * ZLBT_CLOCK_CHECK: read the SM clock (NVML) around each batch of
	 * samples; samples of a batch whose clock sat below clock_floor x the
	 * measurement's steady clock (the median of the batch clocks) are
	 * discarded and counted, and do not count towards the stopping rule.
	 * Without NVML (or a way to name the device to it) nothing is read
	 * and nothing is discarded: clock_mhz is 0, and that is not an error.
	 */
	uint32_t clock_check;
	double clock_floor;         /* 0: 0.97 */
	/* --- version 3 --- */
	/*
	 * Memory placement. Where a small, L2-resident kernel's buffers land
	 * moves its time by a few tenths of a percent (on an H200 a 5 us
	 * softmax: 0.2% standard deviation between captures of the same call,
	 * each on its own memory), and a process measures only the placements
	 * it happens to get: that, not the timer, is what makes two fresh
	 * processes disagree. The caller may therefore capture the same work
	 * several times, each graph on memory of its own, and pass them all:
	 * graph_exec is placement 0, placement_execs points to an array of
	 * the placements - 1 others (uint64_t CUgraphExec each). Samples are
	 * then laid out round-robin over the placements -- sample i is of
	 * placement i % placements -- though each batch replays them in
	 * blocks, each block after one untimed replay of its graph (graphs
	 * alternated every replay read L2-sized kernels up to 8% slow on an
	 * H200), and every count the rule uses (min_samples,
	 * max_samples, the batches, the dropped batches) is whole rounds, so
	 * each placement weighs the same in the centre. min_samples is rounded
	 * up and max_samples down to a multiple of placements; warmup_replays
	 * is per placement. 0 or 1: graph_exec alone (version 2).
	 */
	uint64_t placement_execs;   /* const uint64_t *, as an integer */
	uint32_t placements;
	uint32_t reserved3;
	/* --- version 4 --- */
	/*
	 * The fraction of the sampling's wall time the GPU may replay, in
	 * (0, 1): each batch is then one round of placements, and after it
	 * the host sleeps (1 / duty - 1) times the batch's GPU time, so the
	 * board's average power drops. On a 700 W H100 an fp16 addmm of
	 * 4096^3 replayed back to back ran under the SW power cap at
	 * 1440-1455 MHz (231-235 us per call); at duty 0.5 it drew 520-530 W
	 * at 1980 MHz (202-205 us), and at 0.33 and 0.2 the same. 0 or 1:
	 * back to back. The sleeps count towards max_wall_ms.
	 *
	 * Below 1 each batch first runs warmup_replays (at least one) untimed
	 * replays of every placement and waits for them, and the sleep counts
	 * them as busy (version 8): a batch queued straight after a pause read
	 * its clock at 1500-1515 MHz while its replays ran at 1980 MHz's
	 * speed (H100, 4096^3 addmm at 202 us), which made the measurement's
	 * clock a figure of the pause, not of the kernel; one read after a
	 * warm-up, as a placement probe's is, read 1965-1980 MHz.
	 */
	double duty;
	/* --- version 5 (ABI 10) --- */
	/*
	 * Nonzero: stop once min_samples are kept (min_time_ms and the noise
	 * target aside) if the power cap held them -- NVML_REASON_SW_POWER_CAP
	 * or NVML_REASON_HW_POWER_BRAKE on a kept batch, or, with clock checks
	 * and no reason named at all, a steady clock below clock_floor x the
	 * board's top -- with stop_reason ZLBT_STOP_CAPPED. For a caller that
	 * samples such a graph again at a duty below 1 and keeps only what
	 * the first sampling says of the cap: at the cap the noise target is
	 * out of reach, and an H100's 4096^3 addmm spent its whole 2 s wall
	 * limit on samples thrown away.
	 */
	uint32_t stop_when_capped;
	uint32_t reserved5;
};

#define ZLBT_MAX_PLACEMENTS 64

enum zlbt_l2_mode { ZLBT_L2_HOT = 0, ZLBT_L2_COLD = 1 };
enum zlbt_clock_check { ZLBT_CLOCK_OFF = 0, ZLBT_CLOCK_CHECK = 1 };

enum zlbt_stop {
	ZLBT_STOP_RULE = 1,         /* min_samples and min_time_ms (noise target off) */
	ZLBT_STOP_NOISE = 2,        /* the noise target was met */
	ZLBT_STOP_MAX_SAMPLES = 3,  /* max_samples reached first */
	ZLBT_STOP_WALL = 4,         /* max_wall_ms reached first */
	/*
 * The median's noise is at most a quarter of how far the SM clock
	 * wanders (more than a step of the clock table: the kept batches' sd,
	 * or a robust sd over every batch, dropped ones included), so
	 * more samples cannot make the centre surer than its clock: at a
	 * power cap the noise target is out of reach, and every such run used
	 * to sample to max_wall_ms. Needs clock checks.
	 */
	ZLBT_STOP_CLOCK = 5,
	ZLBT_STOP_CAPPED = 6,       /* stop_when_capped, and the power cap held */
};

/*
 * The caller sets struct_size (at least this version 1 size); the library
 * writes the other fields and never more than struct_size bytes.
 */
struct zlbt_result {
	uint32_t struct_size;       /* sizeof(struct zlbt_result) */
	uint32_t n;                 /* samples kept (per-call values) */
	double median_ms;           /* all times are per workload call */
	double mean_ms;
	double min_ms;
	double max_ms;
	double q1_ms;               /* quartiles, linear interpolation */
	double q3_ms;
	double stdrel;              /* sample standard deviation / mean */
	double total_gpu_ms;        /* sum of the timed replays */
	double wall_ms;             /* wall time spent sampling */
	/* --- version 2 --- */
	/*
	 * Relative noise of the centre: half the width of the distribution-free
	 * 95% confidence interval of the median (order statistics), divided by
	 * the median. What the stopping rule's noise_target is compared with.
	 * With several placements, the noise of the centre given them:
	 * sqrt(sum of (noise_i m_i)^2) / sum of m_i over the placements'
	 * own medians m_i and their noises noise_i. The distance between
	 * placements is fixed once they are captured (placement_spread);
	 * sampling longer only narrows each one's median. What that distance
	 * adds is placement_noise (version 4).
	 */
	double noise;
	uint32_t stop_reason;       /* enum zlbt_stop */
	uint32_t discarded;         /* samples dropped for a low SM clock (not in n) */
	double clock_mhz;           /* steady SM clock of the kept samples (0: not read) */
	double clock_min_mhz;       /* lowest SM clock read during sampling */
	uint64_t l2_flush_bytes;    /* bytes written per flush (0: hot) */
	/* --- version 3 --- */
	uint32_t placements;        /* graphs sampled, in blocks (1: one) */
	uint32_t reserved3;
	/*
	 * (highest - lowest) / median of the placements' own medians: how much
	 * memory placement moved this measurement. 0 with one placement.
	 */
	double placement_spread;
	/* --- version 4 --- */
	/*
	 * The value to report. With one placement, median_ms. With several,
	 * the mean of the placements' own medians: every placement weighs the
	 * same, and this is the centre whose sampling noise `noise` describes.
	 * The pooled median_ms of a mixture of placements jumps between their
	 * clusters with the luck of the draw; the mean moves smoothly.
	 */
	double centre_ms;
	/*
	 * Relative noise of centre_ms counting where the placements landed:
	 * half the width of the 95% Student t interval of the mean of the
	 * placements' medians (t quantile with placements - 1 degrees of
	 * freedom, their sample standard deviation / sqrt(placements)), over
	 * centre_ms. Each placement is one draw of the memory lottery that a
	 * fresh process would draw again, so this, not `noise`, says how far a
	 * repeat of the measurement may land. Sampling longer does not shrink
	 * it; only more placements would. 0 with one placement: nothing to
	 * judge it from.
	 */
	double placement_noise;
	/* --- version 5 --- */
	/*
	 * What held the SM clock down while the samples were taken: the NVML
	 * clocks event reason bits (nvml.h's NVML_REASON_*) read while each
	 * batch ran, OR-ed, less NVML_REASON_GPU_IDLE (the GPU idles between
	 * batches while the host reads their events). On a 700 W H100 every
	 * fp16 GEMM of 2048^3 and up ran under NVML_REASON_SW_POWER_CAP at
	 * 1155-1710 MHz, a different clock in every process, where every
	 * other kernel ran at 1980: the time follows the power controller.
	 * Valid only with clock_reasons_known (0: no NVML, or it would not
	 * say).
	 */
	uint64_t clock_reasons;
	uint32_t clock_reasons_known;
	/*
	 * Version 9 (the struct is version 5's): the highest SM clock the
	 * board allows, in MHz -- NVML's maximum, or the application clock
	 * target where one is set below it (nvml.h, nvml_sm_top_by_pci) -- so
	 * that a caller can tell a clock held down from a clock at its top. 0
	 * when NVML could not say or the application clocks were set by a
	 * user (-ac); a -lgc lock that holds the clock shows as the reason
	 * NVML_REASON_APP_CLOCKS_SETTING. On a 700 W H100 a 4096^3
	 * addmm ran at 1665 MHz with no reason bit read at any batch's start
	 * or end, where its other processes read the power cap's.
	 */
	uint32_t clock_max_mhz;
};

/* What a captured (not instantiated) graph is made of. */
struct zlbt_graph_info {
	uint32_t struct_size;
	uint32_t nodes;
	uint32_t kernels;
	uint32_t memcpys;           /* copy-engine nodes: another caliber */
	uint32_t memsets;
	uint32_t others;            /* host, event, child graph, ... */
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
 * at least min_samples and min_time_ms of GPU time, then (if noise_target
 * is set) until the noise is at most noise_target; at most max_samples or
 * max_wall_ms of wall time. stop_reason says which ended it. Each sample is
 * one replay's elapsed time divided by calls_per_replay. Samples dropped
 * for a low clock do not count towards any of these: min_samples,
 * min_time_ms and max_samples count kept samples, and dropped ones are
 * made up for (max_wall_ms bounds that). Up to samples_cap per-call kept
 * samples are copied to samples_ms (may be NULL), in the order they were
 * taken. Returns a zlbt_status; err explains failures.
 *
 * The graph must have been captured in a CUDA context that is current in
 * the calling thread (ZLBT_EINVAL otherwise). total_gpu_ms is the sum of
 * the kept replays (not per call); wall_ms is the time spent sampling,
 * warm-up excluded. On ZLBT_ETIMEOUT res still describes the samples that
 * were taken (n < min_samples); on other errors res is zeroed.
 */
ZLBT_API int zlbt_time_graph(const struct zlbt_request *req,
			     struct zlbt_result *res,
			     double *samples_ms, uint32_t samples_cap,
			     char *err, size_t errlen);

/*
 * Count the nodes of a captured graph by type (cuGraphGetNodes and
 * cuGraphNodeGetType on torch's raw_cuda_graph()). A graph holding memcpy
 * nodes times the copy engine, which runs at a different speed than the
 * eager copy (on an H200 a 1 GiB copy: 2.7 TB/s captured, 4.2 TB/s eager).
 * The caller sets info->struct_size (at least this struct's size); the
 * library writes the rest, zeroed on failure. Returns ZLBT_OK, ZLBT_EINVAL
 * (graph 0, no info, struct_size too small), ZLBT_ENODEV or ZLBT_EDRIVER.
 */
ZLBT_API int zlbt_graph_info(uint64_t graph, struct zlbt_graph_info *info,
			     char *err, size_t errlen);

/*
 * A graph that runs a captured graph `copies` times in a row, instantiated.
 * Capturing K calls of a Python function costs K eager calls of host time
 * (130-400 us each under capture); capturing T = K / copies calls once and
 * repeating that graph costs T, and its kernels touch the same memory a
 * K-call capture's would (torch's caching allocator hands every call the
 * block the previous one freed).
 *
 * graph is a captured, not instantiated, CUgraph (torch's raw_cuda_graph()
 * of a CUDAGraph(keep_graph=True)). The new graph holds `copies` child-graph
 * nodes, each depending on the one before, so the copies run one after
 * another as the calls of one stream capture would, never side by side. The
 * driver clones the child into each node: graph may change or go after this
 * returns. The memory its kernels use does not come along: it is the
 * capturer's (the CUDAGraph's private pool), so keep that CUDAGraph alive,
 * and do not reset() it, until zlbt_graph_repeat_release. A child holding
 * memory allocation or free nodes is refused by the driver (ZLBT_EDRIVER).
 *
 * On ZLBT_OK *exec_out is the CUgraphExec to pass zlbt_time_graph (with
 * calls_per_replay copies x the calls captured) and *graph_out the CUgraph
 * it was instantiated from, to inspect with zlbt_graph_info (copies child
 * nodes, counted as others); release both with zlbt_graph_repeat_release.
 * Needs the CUDA context the graph was captured in current in the calling
 * thread (ZLBT_EINVAL otherwise). ZLBT_EINVAL also for graph 0, copies 0
 * or a NULL out pointer; ZLBT_ENODEV without a driver; ZLBT_EDRIVER where
 * the driver lacks an entry point this needs (before CUDA 10) or a call
 * fails, err naming it. On any failure what was built is destroyed and
 * both outs (where not NULL) are 0.
 */
ZLBT_API int zlbt_graph_repeat(uint64_t graph, uint32_t copies,
			       uint64_t *exec_out, uint64_t *graph_out,
			       char *err, size_t errlen);

/*
 * Destroy what zlbt_graph_repeat built: the exec, then the graph; a 0
 * handle is skipped, so both 0 is ZLBT_OK. Both are attempted even if the
 * first fails; ZLBT_EDRIVER names the first that failed. The captured
 * graph the repeat was built from is the caller's and is left alone.
 */
ZLBT_API int zlbt_graph_repeat_release(uint64_t exec, uint64_t graph,
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
