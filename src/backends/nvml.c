/*
 * NVML through dlopen (see nvml.h).
 *
 * Only libc and libdl: this file is also part of libzlbtimer.so, which is
 * loaded into a Python process and must not bring zlb's error machinery.
 */
#include "backends/nvml.h"
#include "backends/dlload.h"
#include "lib/errbuf.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* NVML's types, as far as zlb needs them (ABI-compatible with nvml.h). */
typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;

enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_UNINITIALIZED = 1,
	NVML_ERROR_INVALID_ARGUMENT = 2,
	NVML_ERROR_NOT_SUPPORTED = 3,
	NVML_ERROR_NO_PERMISSION = 4,
	NVML_ERROR_ALREADY_INITIALIZED = 5,
	NVML_ERROR_NOT_FOUND = 6,
	NVML_ERROR_INSUFFICIENT_SIZE = 7,
	NVML_ERROR_INSUFFICIENT_POWER = 8,
	NVML_ERROR_DRIVER_NOT_LOADED = 9,
	NVML_ERROR_TIMEOUT = 10,
	NVML_ERROR_IRQ_ISSUE = 11,
	NVML_ERROR_LIBRARY_NOT_FOUND = 12,
	NVML_ERROR_FUNCTION_NOT_FOUND = 13,
	NVML_ERROR_CORRUPTED_INFOROM = 14,
	NVML_ERROR_GPU_IS_LOST = 15,
	NVML_ERROR_RESET_REQUIRED = 16,
	NVML_ERROR_OPERATING_SYSTEM = 17,
	NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
	NVML_ERROR_IN_USE = 19,
	NVML_ERROR_UNKNOWN = 999,
};

/* nvmlClockType_t */
enum { NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };
/* nvmlTemperatureSensors_t */
enum { NVML_TEMPERATURE_GPU = 0 };

/*
 * The process list's element. Its size depends on the driver, not on the
 * entry point's version: nvmlProcessInfo_v1_t (pid, usedGpuMemory) is 16
 * bytes and is what the unversioned call fills; _v2 and _v3 fill
 * nvmlProcessInfo_v2_t (+ gpuInstanceId, computeInstanceId), 24 bytes --
 * except R535-era drivers, whose _v3 wrote a 32-byte element (+
 * usedGpuCcProtectedMemory) without a version bump, and the odd driver
 * seen writing 16-byte ones through _v3. Only pid (offset 0) and the
 * element size matter here; see proc_stride().
 */
#define PROC_SLOT 32            /* the largest element any driver writes */
#define PROC_FILL 0xa5          /* what an unwritten byte holds */

typedef nvmlReturn_t (*procs_fn)(nvmlDevice_t dev, unsigned *count, void *infos);

struct nvml_api {
	nvmlReturn_t (*init)(void);
	const char *(*error_string)(nvmlReturn_t rc);                   /* optional */
	nvmlReturn_t (*by_uuid)(const char *uuid, nvmlDevice_t *dev);
	nvmlReturn_t (*by_pci)(const char *bus_id, nvmlDevice_t *dev);
	nvmlReturn_t (*clock)(nvmlDevice_t dev, int type, unsigned *mhz);
	nvmlReturn_t (*max_clock)(nvmlDevice_t dev, int type, unsigned *mhz);       /* optional */
	nvmlReturn_t (*app_clock)(nvmlDevice_t dev, int type, unsigned *mhz);       /* optional */
	nvmlReturn_t (*default_app_clock)(nvmlDevice_t dev, int type, unsigned *mhz); /* optional */
	nvmlReturn_t (*event_reasons)(nvmlDevice_t dev, unsigned long long *bits);    /* optional */
	nvmlReturn_t (*throttle_reasons)(nvmlDevice_t dev, unsigned long long *bits); /* optional */
	nvmlReturn_t (*temperature)(nvmlDevice_t dev, int sensor, unsigned *c);     /* optional */
	nvmlReturn_t (*power)(nvmlDevice_t dev, unsigned *mw);                      /* optional */
	procs_fn procs_v3;      /* optional, each */
	procs_fn procs_v2;
	procs_fn procs_v1;
};


#define SYM(member, req, ...) \
	{ offsetof(struct nvml_api, member), req, { __VA_ARGS__ } }

static const struct dl_sym syms[] = {
	SYM(init, 1, "nvmlInit_v2"),
	SYM(error_string, 0, "nvmlErrorString"),
	SYM(by_uuid, 1, "nvmlDeviceGetHandleByUUID"),
	/* The unversioned one misses devices NVML cannot fully attach to. */
	SYM(by_pci, 1, "nvmlDeviceGetHandleByPciBusId_v2",
	    "nvmlDeviceGetHandleByPciBusId"),
	SYM(clock, 1, "nvmlDeviceGetClockInfo"),
	SYM(max_clock, 0, "nvmlDeviceGetMaxClockInfo"),
	SYM(app_clock, 0, "nvmlDeviceGetApplicationsClock"),
	SYM(default_app_clock, 0, "nvmlDeviceGetDefaultApplicationsClock"),
	SYM(event_reasons, 0, "nvmlDeviceGetCurrentClocksEventReasons"),
	SYM(throttle_reasons, 0, "nvmlDeviceGetCurrentClocksThrottleReasons"),
	SYM(temperature, 0, "nvmlDeviceGetTemperature"),
	SYM(power, 0, "nvmlDeviceGetPowerUsage"),
	SYM(procs_v3, 0, "nvmlDeviceGetComputeRunningProcesses_v3"),
	SYM(procs_v2, 0, "nvmlDeviceGetComputeRunningProcesses_v2"),
	SYM(procs_v1, 0, "nvmlDeviceGetComputeRunningProcesses"),
};

/* The loader's one answer, kept for later calls. */
static struct nvml_api api;
static int loaded;
static int load_rc;
static char load_err[512];
static char load_path[512];

static const struct {
	nvmlReturn_t rc;
	const char *name;
} names[] = {
	{ NVML_SUCCESS, "NVML_SUCCESS" },
	{ NVML_ERROR_UNINITIALIZED, "NVML_ERROR_UNINITIALIZED" },
	{ NVML_ERROR_INVALID_ARGUMENT, "NVML_ERROR_INVALID_ARGUMENT" },
	{ NVML_ERROR_NOT_SUPPORTED, "NVML_ERROR_NOT_SUPPORTED" },
	{ NVML_ERROR_NO_PERMISSION, "NVML_ERROR_NO_PERMISSION" },
	{ NVML_ERROR_ALREADY_INITIALIZED, "NVML_ERROR_ALREADY_INITIALIZED" },
	{ NVML_ERROR_NOT_FOUND, "NVML_ERROR_NOT_FOUND" },
	{ NVML_ERROR_INSUFFICIENT_SIZE, "NVML_ERROR_INSUFFICIENT_SIZE" },
	{ NVML_ERROR_INSUFFICIENT_POWER, "NVML_ERROR_INSUFFICIENT_POWER" },
	{ NVML_ERROR_DRIVER_NOT_LOADED, "NVML_ERROR_DRIVER_NOT_LOADED" },
	{ NVML_ERROR_TIMEOUT, "NVML_ERROR_TIMEOUT" },
	{ NVML_ERROR_IRQ_ISSUE, "NVML_ERROR_IRQ_ISSUE" },
	{ NVML_ERROR_LIBRARY_NOT_FOUND, "NVML_ERROR_LIBRARY_NOT_FOUND" },
	{ NVML_ERROR_FUNCTION_NOT_FOUND, "NVML_ERROR_FUNCTION_NOT_FOUND" },
	{ NVML_ERROR_CORRUPTED_INFOROM, "NVML_ERROR_CORRUPTED_INFOROM" },
	{ NVML_ERROR_GPU_IS_LOST, "NVML_ERROR_GPU_IS_LOST" },
	{ NVML_ERROR_RESET_REQUIRED, "NVML_ERROR_RESET_REQUIRED" },
	{ NVML_ERROR_OPERATING_SYSTEM, "NVML_ERROR_OPERATING_SYSTEM" },
	{ NVML_ERROR_LIB_RM_VERSION_MISMATCH, "NVML_ERROR_LIB_RM_VERSION_MISMATCH" },
	{ NVML_ERROR_IN_USE, "NVML_ERROR_IN_USE" },
	{ NVML_ERROR_UNKNOWN, "NVML_ERROR_UNKNOWN" },
};

/* "NVML_ERROR_NOT_FOUND (Not Found)", or "NVML error <rc>". */
static const char *strerror_nvml(nvmlReturn_t rc, char *buf, size_t len)
{
	const char *name = NULL, *text = NULL;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].rc == rc)
			name = names[i].name;
	if (api.error_string)
		text = api.error_string(rc);
	if (name && text && *text)
		snprintf(buf, len, "%s (%s)", name, text);
	else if (name)
		snprintf(buf, len, "%s", name);
	else
		snprintf(buf, len, "NVML error %d", rc);
	return buf;
}

static void *open_nvml(char *err, size_t errlen)
{
	static const char *const sonames[] = { "libnvidia-ml.so.1", "libnvidia-ml.so", NULL };

	return dl_open_library("NVML", "ZLB_LIBNVML", sonames, load_path, sizeof(load_path),
			       err, errlen);
}

static int resolve(void *h, char *err, size_t errlen)
{
	return dl_resolve(h, "NVML library", load_path, syms, sizeof(syms) / sizeof(syms[0]),
			  &api, err, errlen);
}

static int load(char *err, size_t errlen)
{
	char why[256];
	nvmlReturn_t rc;
	void *h;

	h = open_nvml(err, errlen);
	if (!h)
		return 1;
	/* Never closed: handles given out stay valid until exit. */
	if (resolve(h, err, errlen))
		return -1;
	rc = api.init();
	/* The library without a driver under it: a machine with no GPU. */
	if (rc == NVML_ERROR_DRIVER_NOT_LOADED ||
	    rc == NVML_ERROR_LIBRARY_NOT_FOUND) {
		errbuf_printf(err, errlen, "no NVML: nvmlInit_v2 reports %s",
		    strerror_nvml(rc, why, sizeof(why)));
		return 1;
	}
	if (rc) {
		errbuf_printf(err, errlen, "nvmlInit_v2 failed: %s",
		    strerror_nvml(rc, why, sizeof(why)));
		return -1;
	}
	return 0;
}

int nvml_load(char *err, size_t errlen)
{
	if (!loaded) {
		load_err[0] = '\0';
		load_rc = load(load_err, sizeof(load_err));
		loaded = 1;
	}
	if (load_rc)
		errbuf_printf(err, errlen, "%s", load_err);
	else
		errbuf_clear(err, errlen);
	return load_rc;
}

/* ---- one snapshot ------------------------------------------------------- */

/* A reading NVML will not give stays 0 ("unknown"). */
static unsigned clock_of(nvmlReturn_t (*fn)(nvmlDevice_t, int, unsigned *),
			 nvmlDevice_t dev, int type)
{
	unsigned mhz = 0;

	if (!fn || fn(dev, type, &mhz))
		return 0;
	return mhz;
}

static void read_reasons(nvmlDevice_t dev, struct nvml_state *st)
{
	unsigned long long bits = 0;
	nvmlReturn_t rc = NVML_ERROR_FUNCTION_NOT_FOUND;

	/*
	 * The same bits under two names: "throttle" became "event" in NVML
	 * 12.2 and the old name is deprecated, so the new one goes first. A
	 * library can export a symbol its driver does not implement and say
	 * so at the call, hence the fallback on FUNCTION_NOT_FOUND too.
	 */
	if (api.event_reasons)
		rc = api.event_reasons(dev, &bits);
	if (rc == NVML_ERROR_FUNCTION_NOT_FOUND && api.throttle_reasons)
		rc = api.throttle_reasons(dev, &bits);
	if (rc == NVML_SUCCESS) {
		st->reasons_known = 1;
		st->reasons = bits;
	}
}

/*
 * The element size the driver used, from where it stopped writing into a
 * buffer of PROC_SLOT-byte slots filled with PROC_FILL. n elements of
 * stride s end at n * s, and each possible element ends in a field whose
 * last byte cannot be PROC_FILL (the high byte of a byte count, or an
 * instance id that is small or 0xFFFFFFFF), so the written extent lies in
 * (n * s - 8, n * s] for exactly one of 16, 24, 32. dflt if none fits.
 */
static size_t proc_stride(const unsigned char *buf, unsigned n, size_t dflt)
{
	static const size_t strides[] = { 16, 24, 32 };
	size_t end = (size_t)n * PROC_SLOT;

	while (end && buf[end - 1] == PROC_FILL)
		end--;
	for (size_t i = 0; i < sizeof(strides) / sizeof(strides[0]); i++) {
		size_t full = (size_t)n * strides[i];

		if (end <= full && end + 8 > full)
			return strides[i];
	}
	return dflt;
}

/* One entry point's answer; FUNCTION_NOT_FOUND lets the caller try another. */
static nvmlReturn_t read_procs_with(procs_fn fn, size_t dflt_stride,
				    nvmlDevice_t dev, struct nvml_state *st)
{
	unsigned count = 0;
	nvmlReturn_t rc;

	rc = fn(dev, &count, NULL);
	if (rc == NVML_SUCCESS) {
		st->procs_known = 1;
		st->nprocs = 0;
		return rc;
	}
	/* Processes come and go between the calls: a few tries. */
	for (int tries = 0; rc == NVML_ERROR_INSUFFICIENT_SIZE && tries < 4; tries++) {
		unsigned cap = count + 8, n = cap;
		unsigned char *buf = malloc((size_t)cap * PROC_SLOT);
		size_t stride;

		if (!buf)
			return NVML_ERROR_UNKNOWN;
		memset(buf, PROC_FILL, (size_t)cap * PROC_SLOT);
		rc = fn(dev, &n, buf);
		if (rc == NVML_SUCCESS && n <= cap) {
			stride = proc_stride(buf, n, dflt_stride);
			st->procs_known = 1;
			st->nprocs = n;
			for (unsigned i = 0; i < n && i < NVML_STATE_PIDS; i++) {
				uint32_t pid;

				memcpy(&pid, buf + (size_t)i * stride, sizeof(pid));
				st->pids[i] = pid;
			}
		} else if (rc == NVML_ERROR_INSUFFICIENT_SIZE) {
			count = n > count ? n : count + 8;
		}
		free(buf);
	}
	return rc;
}

static void read_procs(nvmlDevice_t dev, struct nvml_state *st)
{
	const struct {
		procs_fn fn;
		size_t stride;
	} order[] = {
		{ api.procs_v3, 24 }, { api.procs_v2, 24 }, { api.procs_v1, 16 },
	};

	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		if (!order[i].fn)
			continue;
		if (read_procs_with(order[i].fn, order[i].stride, dev, st) !=
		    NVML_ERROR_FUNCTION_NOT_FOUND)
			return;
	}
}

/* See struct nvml_state for what each answer means and why. */
static int decide_locked(const struct nvml_state *st)
{
	if (st->sm_app_mhz && st->sm_default_app_mhz &&
	    st->sm_app_mhz != st->sm_default_app_mhz)
		return 1;
	if (st->reasons_known && (st->reasons & NVML_REASON_APP_CLOCKS_SETTING))
		return 1;
	if (st->reasons_known && (st->reasons & NVML_REASON_GPU_IDLE) &&
	    st->sm_clock_mhz && st->sm_max_mhz &&
	    st->sm_clock_mhz * 2 < st->sm_max_mhz)
		return 0;
	return -1;
}

static void snapshot(nvmlDevice_t dev, struct nvml_state *st)
{
	unsigned v;

	st->sm_clock_mhz = clock_of(api.clock, dev, NVML_CLOCK_SM);
	st->mem_clock_mhz = clock_of(api.clock, dev, NVML_CLOCK_MEM);
	st->sm_max_mhz = clock_of(api.max_clock, dev, NVML_CLOCK_SM);
	st->sm_app_mhz = clock_of(api.app_clock, dev, NVML_CLOCK_SM);
	st->sm_default_app_mhz = clock_of(api.default_app_clock, dev, NVML_CLOCK_SM);
	read_reasons(dev, st);
	if (api.temperature && !api.temperature(dev, NVML_TEMPERATURE_GPU, &v))
		st->temperature_c = v;
	if (api.power && !api.power(dev, &v))
		st->power_mw = v;
	read_procs(dev, st);
	st->clocks_locked = decide_locked(st);
	st->valid = 1;
}

static int state_by(const char *what, const char *key, int by_pci,
		    struct nvml_state *st, char *err, size_t errlen)
{
	char why[256];
	nvmlDevice_t dev = NULL;
	nvmlReturn_t rc;
	int lrc;

	if (st)
		memset(st, 0, sizeof(*st));
	if (!st || !key) {
		errbuf_printf(err, errlen, "no device %s to look up", what);
		return -1;
	}
	lrc = nvml_load(err, errlen);
	if (lrc)
		return lrc;
	rc = by_pci ? api.by_pci(key, &dev) : api.by_uuid(key, &dev);
	if (rc) {
		errbuf_printf(err, errlen, "NVML cannot find the device with %s %s: %s",
		    what, key, strerror_nvml(rc, why, sizeof(why)));
		return -1;
	}
	snapshot(dev, st);
	return 0;
}

int nvml_state_by_uuid(const char *uuid, struct nvml_state *st,
		       char *err, size_t errlen)
{
	return state_by("uuid", uuid, 0, st, err, errlen);
}

int nvml_state_by_pci(const char *pci_bus_id, struct nvml_state *st,
		      char *err, size_t errlen)
{
	return state_by("PCI bus id", pci_bus_id, 1, st, err, errlen);
}

/* ---- cheap clock reads --------------------------------------------------- */

/* Handles by bus id, failures included: a timing loop asks again and again. */
#define HANDLE_CACHE 8

static struct {
	char bus_id[32];
	nvmlDevice_t dev;       /* NULL: NVML does not know it */
} handles[HANDLE_CACHE];
static int nr_handles;

static nvmlDevice_t handle_by_pci(const char *bus_id)
{
	nvmlDevice_t dev = NULL;
	int i;

	for (i = 0; i < nr_handles; i++)
		if (!strcmp(handles[i].bus_id, bus_id))
			return handles[i].dev;
	if (api.by_pci(bus_id, &dev))
		dev = NULL;
	/* A bus id too long to keep is looked up every time: still right. */
	if (strlen(bus_id) < sizeof(handles[0].bus_id)) {
		i = nr_handles < HANDLE_CACHE ? nr_handles++ : HANDLE_CACHE - 1;
		snprintf(handles[i].bus_id, sizeof(handles[i].bus_id), "%s", bus_id);
		handles[i].dev = dev;
	}
	return dev;
}

/* The cached handle for a cheap read; NULL without NVML or the device. */
static nvmlDevice_t device_for_read(const char *bus_id)
{
	if (!bus_id || nvml_load(NULL, 0))
		return NULL;
	return handle_by_pci(bus_id);
}

int nvml_sm_clock_by_pci(const char *pci_bus_id, unsigned *mhz)
{
	nvmlDevice_t dev;
	unsigned v = 0;

	if (!mhz)
		return -1;
	*mhz = 0;
	dev = device_for_read(pci_bus_id);
	if (!dev || api.clock(dev, NVML_CLOCK_SM, &v) || !v)
		return -1;
	*mhz = v;
	return 0;
}

int nvml_reasons_by_pci(const char *pci_bus_id, unsigned long long *bits)
{
	struct nvml_state st = { 0 };
	nvmlDevice_t dev;

	if (!bits)
		return -1;
	*bits = 0;
	dev = device_for_read(pci_bus_id);
	if (!dev)
		return -1;
	read_reasons(dev, &st);
	if (!st.reasons_known)
		return -1;
	*bits = st.reasons;
	return 0;
}

int nvml_sm_top_by_pci(const char *pci_bus_id, unsigned *mhz)
{
	unsigned max, app, dflt;
	nvmlDevice_t dev;

	if (!mhz)
		return -1;
	*mhz = 0;
	dev = device_for_read(pci_bus_id);
	if (!dev)
		return -1;
	max = clock_of(api.max_clock, dev, NVML_CLOCK_SM);
	app = clock_of(api.app_clock, dev, NVML_CLOCK_SM);
	dflt = clock_of(api.default_app_clock, dev, NVML_CLOCK_SM);
	if (!max || (app && dflt && app != dflt))
		return -1;
	*mhz = app && app < max ? app : max;
	return 0;
}
