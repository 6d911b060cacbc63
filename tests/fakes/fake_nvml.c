/*
 * libfakenvml.so: a deterministic stand-in for libnvidia-ml.so.1, so that
 * clock checks, throttle reasons and the process list can be tested
 * without a GPU. Point $ZLB_LIBNVML at it.
 *
 * The model (it matches fake_libcuda.c's devices; change both together):
 *
 *   Devices   FAKE_NVML_DEVICES devices (default: FAKE_CUDA_DEVICES, else
 *             1). Device i has uuid GPU-facec0da-0000-4000-8000-0000000000ii
 *             (as the fake driver's cuDeviceGetUuid) and PCI bus id
 *             00000000:XX:00.0 with XX = i (the fake driver gives
 *             "0000:XX:00.0"; both forms, and bus:device.function, are
 *             accepted, as NVML accepts them). Anything else, by uuid or
 *             bus id, is NVML_ERROR_NOT_FOUND. Every call but
 *             nvmlErrorString needs nvmlInit_v2 first
 *             (NVML_ERROR_UNINITIALIZED).
 *   Clocks    FAKE_NVML_SM_CLOCKS="1980,1980,1500,1980": successive reads
 *             of the SM clock (nvmlDeviceGetClockInfo, NVML_CLOCK_SM, any
 *             device) return these in turn, the last one repeated for
 *             ever (default "1980"); the graphics clock reads the value
 *             the next SM read would give, without using it up.
 *             FAKE_NVML_MEM_CLOCK (default 3201), FAKE_NVML_MAX_CLOCK (SM
 *             maximum, default 1980; the memory maximum is the memory
 *             clock). FAKE_NVML_APP_CLOCK / FAKE_NVML_DEFAULT_APP_CLOCK:
 *             the SM application clock target and its default (default
 *             1980 each; 0 makes the call NVML_ERROR_NOT_SUPPORTED).
 *   Reasons   FAKE_NVML_REASONS: the clocks event reason bits, in hex
 *             ("0x5" or "5"; default 0), from both
 *             nvmlDeviceGetCurrentClocksEventReasons and the older
 *             nvmlDeviceGetCurrentClocksThrottleReasons. A list
 *             ("0,0x4,0") is successive reads, the last one repeated for
 *             ever, as the SM clocks are.
 *   Sensors   FAKE_NVML_TEMP (C, default 35), FAKE_NVML_POWER_MW (default
 *             90000).
 *   Processes FAKE_NVML_PIDS="1234,5678": the compute processes of every
 *             device (default none; at most 64). Each gets usedGpuMemory
 *             pid MiB and instance ids 0xFFFFFFFF (no MIG). The _v2 entry
 *             point writes 24-byte elements and the unversioned one 16-byte
 *             elements, as nvml.h declares; _v3 writes
 *             FAKE_NVML_PROC_STRIDE-byte ones (default 24; 32 is what R535
 *             drivers wrote, 16 what one odd driver did).
 *             FAKE_NVML_NO_PERMISSION=1: all three answer
 *             NVML_ERROR_NO_PERMISSION.
 *   Old driver FAKE_NVML_OLD=1: nvmlDeviceGetCurrentClocksEventReasons and
 *             nvmlDeviceGetComputeRunningProcesses_v3 answer
 *             NVML_ERROR_FUNCTION_NOT_FOUND, as a library newer than the
 *             driver under it does.
 *
 * The FAKE_NVML_* variables are read when used, so a test can change them
 * between calls. fake_nvml_reset() starts the SM clock sequence and the
 * counters over; fake_nvml_sm_clock_reads() and fake_nvml_handle_lookups()
 * tell how often the code under test asked.
 *
 * The fake is not thread-safe: zlb calls it from one thread.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define FAKE_API __attribute__((visibility("default")))

typedef int nvmlReturn_t;

enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_UNINITIALIZED = 1,
	NVML_ERROR_INVALID_ARGUMENT = 2,
	NVML_ERROR_NOT_SUPPORTED = 3,
	NVML_ERROR_NO_PERMISSION = 4,
	NVML_ERROR_NOT_FOUND = 6,
	NVML_ERROR_INSUFFICIENT_SIZE = 7,
	NVML_ERROR_FUNCTION_NOT_FOUND = 13,
	NVML_ERROR_UNKNOWN = 999,
};

enum { NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };

#define MAX_DEVICES 64
#define MAX_PIDS 64

struct nvmlDevice_st {
	int index;
};
typedef struct nvmlDevice_st *nvmlDevice_t;

static struct nvmlDevice_st devices[MAX_DEVICES];
static int initialized;
static unsigned long sm_reads;
static unsigned long reason_reads;
static unsigned long lookups;

static long env_long(const char *name, long dflt)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return dflt;
	v = strtol(s, &end, 10);
	return *end ? dflt : v;
}

static int device_count(void)
{
	long n = env_long("FAKE_NVML_DEVICES", env_long("FAKE_CUDA_DEVICES", 1));

	return n < 0 ? 0 : n > MAX_DEVICES ? MAX_DEVICES : (int)n;
}

static int bad_device(nvmlDevice_t dev)
{
	return !dev || dev < devices || dev >= devices + device_count();
}

/* The i-th number of a comma-separated list, the last one past its end. */
static long list_at(const char *s, unsigned long i, long dflt)
{
	long v = dflt;
	char *end;

	if (!s || !*s)
		return dflt;
	for (unsigned long k = 0;; k++) {
		v = strtol(s, &end, 10);
		if (end == s)
			return dflt;
		if (k == i || *end != ',')
			return v;
		s = end + 1;
	}
}

static unsigned list_len(const char *s, long *out, unsigned cap)
{
	unsigned n = 0;
	char *end;

	while (s && *s && n < cap) {
		long v = strtol(s, &end, 10);

		if (end == s)
			break;
		out[n++] = v;
		if (*end != ',')
			break;
		s = end + 1;
	}
	return n;
}

/* ---- introspection for tests ------------------------------------------ */

FAKE_API void fake_nvml_reset(void)
{
	sm_reads = 0;
	reason_reads = 0;
	lookups = 0;
}

FAKE_API unsigned long fake_nvml_sm_clock_reads(void)
{
	return sm_reads;
}

FAKE_API unsigned long fake_nvml_handle_lookups(void)
{
	return lookups;
}

/* ---- init and errors ----------------------------------------------------- */

FAKE_API nvmlReturn_t nvmlInit_v2(void)
{
	for (int i = 0; i < MAX_DEVICES; i++)
		devices[i].index = i;
	initialized = 1;
	return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlShutdown(void)
{
	if (!initialized)
		return NVML_ERROR_UNINITIALIZED;
	initialized = 0;
	return NVML_SUCCESS;
}

FAKE_API const char *nvmlErrorString(nvmlReturn_t rc)
{
	switch (rc) {
	case NVML_SUCCESS: return "Success";
	case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
	case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
	case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
	case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
	case NVML_ERROR_NOT_FOUND: return "Not Found";
	case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
	case NVML_ERROR_FUNCTION_NOT_FOUND: return "Function Not Found";
	}
	return "Unknown Error";
}

/* ---- handles ------------------------------------------------------------- */

FAKE_API nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *dev)
{
	char want[48];

	if (!initialized)
		return NVML_ERROR_UNINITIALIZED;
	if (!uuid || !dev)
		return NVML_ERROR_INVALID_ARGUMENT;
	lookups++;
	for (int i = 0; i < device_count(); i++) {
		snprintf(want, sizeof(want),
			 "GPU-facec0da-0000-4000-8000-0000000000%02x", i);
		if (!strcasecmp(uuid, want)) {
			*dev = &devices[i];
			return NVML_SUCCESS;
		}
	}
	return NVML_ERROR_NOT_FOUND;
}

FAKE_API nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *bus_id,
						       nvmlDevice_t *dev)
{
	unsigned dom = 0, bus = 0, slot = 0, fn = 0;
	int used = -1;

	if (!initialized)
		return NVML_ERROR_UNINITIALIZED;
	if (!bus_id || !dev)
		return NVML_ERROR_INVALID_ARGUMENT;
	lookups++;
	/* domain:bus:device.function, or bus:device.function */
	if (sscanf(bus_id, "%x:%x:%x.%x%n", &dom, &bus, &slot, &fn, &used) != 4 ||
	    bus_id[used]) {
		used = -1;
		dom = 0;
		if (sscanf(bus_id, "%x:%x.%x%n", &bus, &slot, &fn, &used) != 3 ||
		    bus_id[used])
			return NVML_ERROR_INVALID_ARGUMENT;
	}
	if (dom || slot || fn || bus >= (unsigned)device_count())
		return NVML_ERROR_NOT_FOUND;
	*dev = &devices[bus];
	return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char *bus_id,
						    nvmlDevice_t *dev)
{
	return nvmlDeviceGetHandleByPciBusId_v2(bus_id, dev);
}

/* ---- clocks -------------------------------------------------------------- */

static nvmlReturn_t check(nvmlDevice_t dev, const void *out)
{
	if (!initialized)
		return NVML_ERROR_UNINITIALIZED;
	if (bad_device(dev) || !out)
		return NVML_ERROR_INVALID_ARGUMENT;
	return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t dev, int type,
					     unsigned *mhz)
{
	const char *seq = getenv("FAKE_NVML_SM_CLOCKS");
	nvmlReturn_t rc = check(dev, mhz);

	if (rc)
		return rc;
	switch (type) {
	case NVML_CLOCK_SM:
		*mhz = (unsigned)list_at(seq, sm_reads++, 1980);
		return NVML_SUCCESS;
	case NVML_CLOCK_GRAPHICS:
		*mhz = (unsigned)list_at(seq, sm_reads, 1980);
		return NVML_SUCCESS;
	case NVML_CLOCK_MEM:
		*mhz = (unsigned)env_long("FAKE_NVML_MEM_CLOCK", 3201);
		return NVML_SUCCESS;
	}
	return NVML_ERROR_INVALID_ARGUMENT;
}

FAKE_API nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t dev, int type,
						unsigned *mhz)
{
	nvmlReturn_t rc = check(dev, mhz);

	if (rc)
		return rc;
	switch (type) {
	case NVML_CLOCK_SM:
	case NVML_CLOCK_GRAPHICS:
		*mhz = (unsigned)env_long("FAKE_NVML_MAX_CLOCK", 1980);
		return NVML_SUCCESS;
	case NVML_CLOCK_MEM:
		*mhz = (unsigned)env_long("FAKE_NVML_MEM_CLOCK", 3201);
		return NVML_SUCCESS;
	}
	return NVML_ERROR_INVALID_ARGUMENT;
}

static nvmlReturn_t app_clock(const char *env, nvmlDevice_t dev, int type,
			      unsigned *mhz)
{
	nvmlReturn_t rc = check(dev, mhz);
	long v;

	if (rc)
		return rc;
	switch (type) {
	case NVML_CLOCK_SM:
	case NVML_CLOCK_GRAPHICS:
		v = env_long(env, 1980);
		if (!v)
			return NVML_ERROR_NOT_SUPPORTED;
		*mhz = (unsigned)v;
		return NVML_SUCCESS;
	case NVML_CLOCK_MEM:
		*mhz = (unsigned)env_long("FAKE_NVML_MEM_CLOCK", 3201);
		return NVML_SUCCESS;
	}
	return NVML_ERROR_INVALID_ARGUMENT;
}

FAKE_API nvmlReturn_t nvmlDeviceGetApplicationsClock(nvmlDevice_t dev, int type,
						     unsigned *mhz)
{
	return app_clock("FAKE_NVML_APP_CLOCK", dev, type, mhz);
}

FAKE_API nvmlReturn_t nvmlDeviceGetDefaultApplicationsClock(nvmlDevice_t dev,
							    int type,
							    unsigned *mhz)
{
	return app_clock("FAKE_NVML_DEFAULT_APP_CLOCK", dev, type, mhz);
}

static nvmlReturn_t reasons(nvmlDevice_t dev, unsigned long long *bits)
{
	const char *s = getenv("FAKE_NVML_REASONS");
	nvmlReturn_t rc = check(dev, bits);
	unsigned long i = reason_reads++;

	if (rc)
		return rc;
	*bits = 0;
	/* the i-th entry of the list, else its last */
	while (s && *s) {
		char *end;
		unsigned long long v = strtoull(s, &end, 16);

		if (end == s)
			break;
		*bits = v;
		if (*end != ',' || !i--)
			break;
		s = end + 1;
	}
	return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t dev,
							     unsigned long long *bits)
{
	if (env_long("FAKE_NVML_OLD", 0))
		return NVML_ERROR_FUNCTION_NOT_FOUND;
	return reasons(dev, bits);
}

FAKE_API nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t dev,
								unsigned long long *bits)
{
	return reasons(dev, bits);
}

/* ---- sensors ------------------------------------------------------------- */

FAKE_API nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t dev, int sensor,
					       unsigned *c)
{
	nvmlReturn_t rc = check(dev, c);

	if (rc)
		return rc;
	if (sensor != 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	*c = (unsigned)env_long("FAKE_NVML_TEMP", 35);
	return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t dev, unsigned *mw)
{
	nvmlReturn_t rc = check(dev, mw);

	if (rc)
		return rc;
	*mw = (unsigned)env_long("FAKE_NVML_POWER_MW", 90000);
	return NVML_SUCCESS;
}

/* ---- processes ----------------------------------------------------------- */

/* The process list in elements of `stride` bytes (16, 24 or 32). */
static nvmlReturn_t procs(nvmlDevice_t dev, unsigned *count, void *infos,
			  size_t stride)
{
	long pids[MAX_PIDS];
	unsigned n;
	unsigned char *out = infos;

	if (!initialized)
		return NVML_ERROR_UNINITIALIZED;
	if (bad_device(dev) || !count || (!infos && *count))
		return NVML_ERROR_INVALID_ARGUMENT;
	if (env_long("FAKE_NVML_NO_PERMISSION", 0))
		return NVML_ERROR_NO_PERMISSION;
	n = list_len(getenv("FAKE_NVML_PIDS"), pids, MAX_PIDS);
	if (*count < n) {
		*count = n;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	for (unsigned i = 0; i < n; i++) {
		unsigned char *e = out + i * stride;
		uint32_t pid = (uint32_t)pids[i], none = 0xffffffffu;
		uint64_t mem = (uint64_t)pids[i] << 20, cc = 0;

		memset(e, 0, stride);
		memcpy(e, &pid, sizeof(pid));
		memcpy(e + 8, &mem, sizeof(mem));
		if (stride >= 24) {
			memcpy(e + 16, &none, sizeof(none));
			memcpy(e + 20, &none, sizeof(none));
		}
		if (stride >= 32)
			memcpy(e + 24, &cc, sizeof(cc));
	}
	*count = n;
	return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t dev,
							      unsigned *count,
							      void *infos)
{
	long stride = env_long("FAKE_NVML_PROC_STRIDE", 24);

	if (env_long("FAKE_NVML_OLD", 0))
		return NVML_ERROR_FUNCTION_NOT_FOUND;
	if (stride != 16 && stride != 24 && stride != 32)
		stride = 24;
	return procs(dev, count, infos, (size_t)stride);
}

FAKE_API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t dev,
							      unsigned *count,
							      void *infos)
{
	return procs(dev, count, infos, 24);
}

FAKE_API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t dev,
							   unsigned *count,
							   void *infos)
{
	return procs(dev, count, infos, 16);
}
