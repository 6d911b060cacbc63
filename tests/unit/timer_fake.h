/*
 * The fixture shared by the test_timer_* binaries that run the timer
 * engine against the fake CUDA driver (tests/fakes/fake_libcuda.c) and
 * the fake NVML (tests/fakes/fake_nvml.c), whose paths the build passes
 * in as ZLB_FAKECUDA and ZLB_FAKENVML.
 *
 * Every tests/unit/test_*.c is a cmocka binary of its own, so this header
 * defines rather than declares: everything is static, one copy per test
 * file, and what a file does not use is marked unused instead of warned
 * about. Include it in place of the usual cmocka preamble; it brings the
 * headers cmocka needs, <cmocka.h>, <dlfcn.h>, <math.h> and
 * "timer/zlbtimer.h".
 *
 * What it provides:
 *
 *   assert_near(a, b, eps)  |a - b| <= eps for doubles, which cmocka 1.1
 *                           cannot compare.
 *
 *   fake_cuda               the fake driver's dlopen handle. The same path
 *                           gives the same handle the timer's loader gets,
 *                           so the introspection below sees the model the
 *                           timer drives.
 *   fake_reset, fake_launches, fake_live_events
 *                           fake_cuda_reset(), fake_cuda_launch_count(),
 *                           fake_cuda_live_events(), from the fake driver.
 *   nvml_reset, nvml_reads, nvml_lookups
 *                           fake_nvml_reset(), fake_nvml_sm_clock_reads(),
 *                           fake_nvml_handle_lookups(), from the fake NVML;
 *                           NULL unless fake_nvml_open() loaded them.
 *
 *   fake_unset_knobs()      unsets every FAKE_CUDA_* / FAKE_NVML_* knob
 *                           these tests set (FAKE_KNOBS).
 *   fake_cuda_open()        unsets the knobs, points $ZLB_LIBCUDA at the
 *                           fake driver, opens it and looks up its
 *                           introspection: 0, or -1 if any is missing.
 *   fake_nvml_open()        the same for $ZLB_LIBNVML and the fake NVML.
 *
 *   fake_setup              group setup: fake_cuda_open().
 *   fake_fresh              per-test setup: a clean model in each fake
 *                           that is loaded.
 *   fake_tidy               per-test teardown: unsets the knobs, so that no
 *                           test leaves one set for the next, and fails the
 *                           test if an event the timer made is still alive
 *                           (fake_events_leaked()).
 *   T(fn)                   fn as a cmocka test with fake_fresh/fake_tidy.
 *
 *   request(ns, calls)      a zeroed zlbt_request of this version for the
 *                           fake graph whose replay takes ns nanoseconds,
 *                           calls_per_replay calls; clock_check is
 *                           TIMER_FAKE_CLOCK_CHECK (define it before the
 *                           #include to change it; ZLBT_CLOCK_OFF, the
 *                           zeroed value, by default).
 *   result_init(r)          a zeroed zlbt_result of this version.
 *
 *   lcg, model_replay_ms(ns, ppm)
 *                           the fake's jitter, replayed: set lcg to the
 *                           seed ($FAKE_CUDA_SEED), then each call gives
 *                           the milliseconds of the next replay of an ns
 *                           graph with +-ppm noise, as the fake's event
 *                           timer reports them (a float).
 *
 * Why a teardown returns -1 instead of asserting: cmocka ignores asserts
 * (assert_*, fail_msg) in a setup or teardown function; only a non-zero
 * return fails the test. So a teardown's check prints what went wrong with
 * print_error() and returns -1.
 */
#ifndef ZLB_TESTS_TIMER_FAKE_H
#define ZLB_TESTS_TIMER_FAKE_H

#include <dlfcn.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "timer/zlbtimer.h"

#define TIMER_FAKE_UNUSED __attribute__((unused))

/* cmocka 1.1 compares floats only; these are doubles. */
#define assert_near(a, b, eps) do { \
	double a_ = (a), b_ = (b); \
	if (!(fabs(a_ - b_) <= (eps))) \
		fail_msg("%s = %.17g, expected %.17g (+-%g)", #a, a_, b_, \
			 (double)(eps)); \
} while (0)

static void *fake_cuda TIMER_FAKE_UNUSED;
static void (*fake_reset)(void) TIMER_FAKE_UNUSED;
static unsigned long long (*fake_launches)(void) TIMER_FAKE_UNUSED;
static long (*fake_live_events)(void) TIMER_FAKE_UNUSED;
static void (*nvml_reset)(void) TIMER_FAKE_UNUSED;
static unsigned long (*nvml_reads)(void) TIMER_FAKE_UNUSED;
static unsigned long (*nvml_lookups)(void) TIMER_FAKE_UNUSED;

/* The knobs the fakes read that these tests set. */
#define FAKE_KNOBS \
	"FAKE_CUDA_DEVICES", "FAKE_CUDA_NO_CONTEXT", "FAKE_CUDA_NOISE_PPM", \
	"FAKE_CUDA_SEED", "FAKE_CUDA_LAUNCH_FAIL_AFTER", \
	"FAKE_CUDA_CONTEXT_DEVICE", "FAKE_CUDA_MEMALLOC_FAIL", \
	"FAKE_CUDA_KERNEL_NS", "FAKE_CUDA_GRAPH_CREATE_FAIL", \
	"FAKE_CUDA_CHILD_FAIL_AFTER", "FAKE_CUDA_INSTANTIATE_FAIL", \
	"FAKE_NVML_DEVICES", "FAKE_NVML_SM_CLOCKS", "FAKE_NVML_REASONS"

static TIMER_FAKE_UNUSED void fake_unset_knobs(void)
{
	static const char *const knobs[] = { FAKE_KNOBS };

	for (size_t i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++)
		unsetenv(knobs[i]);
}

static TIMER_FAKE_UNUSED int fake_cuda_open(void)
{
	fake_unset_knobs();
	setenv("ZLB_LIBCUDA", ZLB_FAKECUDA, 1);
	/* The same path gives the same handle the timer's loader gets. */
	fake_cuda = dlopen(ZLB_FAKECUDA, RTLD_NOW | RTLD_LOCAL);
	if (!fake_cuda)
		return -1;
	*(void **)&fake_reset = dlsym(fake_cuda, "fake_cuda_reset");
	*(void **)&fake_launches = dlsym(fake_cuda, "fake_cuda_launch_count");
	*(void **)&fake_live_events = dlsym(fake_cuda,
					    "fake_cuda_live_events");
	return fake_reset && fake_launches && fake_live_events ? 0 : -1;
}

static TIMER_FAKE_UNUSED int fake_nvml_open(void)
{
	void *n;

	setenv("ZLB_LIBNVML", ZLB_FAKENVML, 1);
	n = dlopen(ZLB_FAKENVML, RTLD_NOW | RTLD_LOCAL);
	if (!n)
		return -1;
	*(void **)&nvml_reset = dlsym(n, "fake_nvml_reset");
	*(void **)&nvml_reads = dlsym(n, "fake_nvml_sm_clock_reads");
	*(void **)&nvml_lookups = dlsym(n, "fake_nvml_handle_lookups");
	return nvml_reset && nvml_reads && nvml_lookups ? 0 : -1;
}

static TIMER_FAKE_UNUSED int fake_setup(void **state)
{
	return fake_cuda_open();
}

/* Each test starts from a clean model... */
static TIMER_FAKE_UNUSED int fake_fresh(void **state)
{
	fake_reset();
	if (nvml_reset)
		nvml_reset();
	return 0;
}

/*
 * Whatever happened, every event the timer made is gone: -1 (and why on
 * stderr) if not, for a teardown to return (cmocka ignores asserts in a
 * teardown; a non-zero return fails the test).
 */
static TIMER_FAKE_UNUSED int fake_events_leaked(void)
{
	if (fake_live_events()) {
		print_error("%ld events were not destroyed\n", fake_live_events());
		return -1;
	}
	return 0;
}

/* ...and leaves no knob set and no event alive. */
static TIMER_FAKE_UNUSED int fake_tidy(void **state)
{
	fake_unset_knobs();
	return fake_events_leaked();
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fake_fresh, fake_tidy)

#ifndef TIMER_FAKE_CLOCK_CHECK
#define TIMER_FAKE_CLOCK_CHECK ZLBT_CLOCK_OFF
#endif

static TIMER_FAKE_UNUSED struct zlbt_request request(uint64_t ns,
						     uint32_t calls)
{
	struct zlbt_request q;

	memset(&q, 0, sizeof(q));
	q.struct_size = sizeof(q);
	q.graph_exec = ns;
	q.calls_per_replay = calls;
	q.clock_check = TIMER_FAKE_CLOCK_CHECK;
	return q;
}

static TIMER_FAKE_UNUSED void result_init(struct zlbt_result *r)
{
	memset(r, 0, sizeof(*r));
	r->struct_size = sizeof(*r);
}

/* The fake's jitter, replayed here: the model is documented in the fake. */
static uint64_t lcg TIMER_FAKE_UNUSED;

static TIMER_FAKE_UNUSED double model_replay_ms(uint64_t ns, long ppm)
{
	double u, d;
	int64_t t;

	lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
	u = (double)(lcg >> 11) / 9007199254740992.0 * 2.0 - 1.0;
	d = (double)ns * (double)ppm / 1e6 * u;
	t = (int64_t)ns + (int64_t)(d < 0 ? d - 0.5 : d + 0.5);
	return (double)(float)((double)t / 1e6);
}

#endif
