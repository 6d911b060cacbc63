/*
 * The CUDA driver API through dlopen (see cuda_driver.h).
 *
 * Only libc and libdl: this file is also part of libzlbtimer.so, which is
 * loaded into a Python process and must not bring zlb's error machinery.
 */
#include "backends/cuda_driver.h"
#include "backends/dlload.h"
#include "lib/errbuf.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * One entry point to resolve: the first of names[] the library exports
 * wins, so versioned names go first (cuda.h maps the plain name to the
 * newest version the same way; the plain symbol may be an older ABI).
 */

#define SYM(member, req, ...) \
	{ offsetof(struct cuda_driver, member), req, { __VA_ARGS__ } }

static const struct dl_sym syms[] = {
	SYM(cuInit, 1, "cuInit"),
	SYM(cuDriverGetVersion, 1, "cuDriverGetVersion"),
	SYM(cuGetErrorName, 0, "cuGetErrorName"),
	SYM(cuGetErrorString, 0, "cuGetErrorString"),
	SYM(cuDeviceGetCount, 1, "cuDeviceGetCount"),
	SYM(cuDeviceGet, 1, "cuDeviceGet"),
	SYM(cuDeviceGetName, 1, "cuDeviceGetName"),
	SYM(cuDeviceGetAttribute, 1, "cuDeviceGetAttribute"),
	/* The unversioned cuDeviceTotalMem takes an unsigned int *: never use it. */
	SYM(cuDeviceTotalMem, 0, "cuDeviceTotalMem_v2"),
	SYM(cuDeviceGetUuid, 0, "cuDeviceGetUuid_v2", "cuDeviceGetUuid"),
	SYM(cuDeviceGetPCIBusId, 0, "cuDeviceGetPCIBusId"),
	SYM(cuCtxGetCurrent, 1, "cuCtxGetCurrent"),
	SYM(cuCtxGetDevice, 0, "cuCtxGetDevice"),
	SYM(cuStreamSynchronize, 1, "cuStreamSynchronize"),
	SYM(cuStreamCreate, 0, "cuStreamCreate"),
	SYM(cuStreamDestroy, 0, "cuStreamDestroy_v2", "cuStreamDestroy"),
	SYM(cuEventCreate, 1, "cuEventCreate"),
	SYM(cuEventRecord, 1, "cuEventRecord"),
	SYM(cuEventSynchronize, 1, "cuEventSynchronize"),
	SYM(cuEventElapsedTime, 1, "cuEventElapsedTime_v2", "cuEventElapsedTime"),
	SYM(cuEventDestroy, 1, "cuEventDestroy_v2", "cuEventDestroy"),
	SYM(cuGraphLaunch, 1, "cuGraphLaunch"),
	SYM(cuGraphGetNodes, 0, "cuGraphGetNodes"),
	SYM(cuGraphNodeGetType, 0, "cuGraphNodeGetType"),
	SYM(cuGraphCreate, 0, "cuGraphCreate"),
	SYM(cuGraphAddChildGraphNode, 0, "cuGraphAddChildGraphNode"),
	SYM(cuGraphInstantiateWithFlags, 0, "cuGraphInstantiateWithFlags"),
	SYM(cuGraphInstantiate, 0, "cuGraphInstantiate_v2", "cuGraphInstantiate"),
	SYM(cuGraphExecDestroy, 0, "cuGraphExecDestroy"),
	SYM(cuGraphDestroy, 0, "cuGraphDestroy"),
	SYM(cuMemAlloc, 0, "cuMemAlloc_v2"),
	SYM(cuMemFree, 0, "cuMemFree_v2"),
	SYM(cuMemsetD8Async, 0, "cuMemsetD8Async"),
};

/* The loader's one answer, kept for later calls. */
static struct cuda_driver drv;
static int loaded;
static int load_rc;
static char load_err[512];
static char load_path[512];

const char *cuda_strerror(const struct cuda_driver *d, CUresult rc,
			  char *buf, size_t len)
{
	const char *name = NULL, *text = NULL;

	if (!buf || !len)
		return buf;
	if (d && d->cuGetErrorName && d->cuGetErrorName(rc, &name))
		name = NULL;
	if (d && d->cuGetErrorString && d->cuGetErrorString(rc, &text))
		text = NULL;
	if (name && text)
		snprintf(buf, len, "%s (%s)", name, text);
	else if (name)
		snprintf(buf, len, "%s", name);
	else
		snprintf(buf, len, "CUDA error %d", rc);
	return buf;
}

void cuda_call_failed(const struct cuda_driver *d, const char *call,
		      CUresult rc, char *err, size_t errlen)
{
	char why[256];

	errbuf_printf(err, errlen, "%s failed: %s", call,
	    cuda_strerror(d, rc, why, sizeof(why)));
}

static void *open_driver(char *err, size_t errlen)
{
	static const char *const sonames[] = { "libcuda.so.1", "libcuda.so", NULL };

	return dl_open_library("CUDA driver", "ZLB_LIBCUDA", sonames, load_path, sizeof(load_path),
			       err, errlen);
}

static int resolve(void *h, char *err, size_t errlen)
{
	if (dl_resolve(h, "CUDA driver", load_path, syms, sizeof(syms) / sizeof(syms[0]),
		       &drv, err, errlen))
		return -1;
	drv.path = load_path;
	return 0;
}

static int load(char *err, size_t errlen)
{
	char why[256];
	void *h;
	CUresult rc;

	h = open_driver(err, errlen);
	if (!h)
		return 1;
	/*
	 * The handle is never closed: the driver keeps process-wide state
	 * (contexts torch created) that must outlive any one caller.
	 */
	if (resolve(h, err, errlen))
		return -1;
	rc = drv.cuInit(0);
	if (rc == CUDA_ERROR_NO_DEVICE) {
		errbuf_printf(err, errlen, "no CUDA device: cuInit reports %s",
		    cuda_strerror(&drv, rc, why, sizeof(why)));
		return 1;
	}
	if (rc) {
		cuda_call_failed(&drv, "cuInit", rc, err, errlen);
		return -1;
	}
	return 0;
}

int cuda_driver_load(const struct cuda_driver **out, char *err, size_t errlen)
{
	if (!loaded) {
		load_err[0] = '\0';
		load_rc = load(load_err, sizeof(load_err));
		loaded = 1;
	}
	if (out)
		*out = load_rc ? NULL : &drv;
	if (load_rc)
		errbuf_printf(err, errlen, "%s", load_err);
	else
		errbuf_clear(err, errlen);
	return load_rc;
}

void cuda_format_uuid(const unsigned char b[16], char *buf, size_t len)
{
	snprintf(buf, len,
		 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
		 b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

/* An attribute the driver will not give is reported as 0 ("unknown"). */
static int attr(const struct cuda_driver *d, int which, CUdevice dev)
{
	int v = 0;

	if (d->cuDeviceGetAttribute(&v, which, dev))
		return 0;
	return v;
}

static int describe(const struct cuda_driver *d, int ordinal,
		    struct cuda_device_info *info, char *err, size_t errlen)
{
	CUdevice dev;
	CUresult rc;

	memset(info, 0, sizeof(*info));
	info->index = ordinal;
	rc = d->cuDeviceGet(&dev, ordinal);
	if (rc) {
		cuda_call_failed(d, "cuDeviceGet", rc, err, errlen);
		return -1;
	}
	rc = d->cuDeviceGetName(info->name, (int)sizeof(info->name), dev);
	if (rc) {
		cuda_call_failed(d, "cuDeviceGetName", rc, err, errlen);
		return -1;
	}
	info->name[sizeof(info->name) - 1] = '\0';
	/* Identity extras: missing ones stay empty rather than fail the list. */
	if (d->cuDeviceGetUuid) {
		CUuuid u;

		if (!d->cuDeviceGetUuid(&u, dev))
			cuda_format_uuid((const unsigned char *)u.bytes,
					 info->uuid, sizeof(info->uuid));
	}
	if (d->cuDeviceTotalMem) {
		size_t bytes = 0;

		if (!d->cuDeviceTotalMem(&bytes, dev))
			info->total_mem = bytes;
	}
	info->cc_major = attr(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
	info->cc_minor = attr(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
	info->l2_bytes = (uint64_t)attr(d, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev);
	info->sm_count = attr(d, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
	return 0;
}

int cuda_list_devices(struct cuda_device_info **out, int *count,
		      int *driver_version, char *err, size_t errlen)
{
	const struct cuda_driver *d;
	struct cuda_device_info *v;
	int n = 0, rc;
	CUresult crc;

	*out = NULL;
	*count = 0;
	if (driver_version)
		*driver_version = 0;
	rc = cuda_driver_load(&d, err, errlen);
	if (rc)
		return rc;
	if (driver_version && d->cuDriverGetVersion(driver_version))
		*driver_version = 0;
	crc = d->cuDeviceGetCount(&n);
	if (crc) {
		cuda_call_failed(d, "cuDeviceGetCount", crc, err, errlen);
		return -1;
	}
	if (n <= 0) {
		errbuf_printf(err, errlen, "no CUDA device: the driver sees none");
		return 1;
	}
	v = calloc((size_t)n, sizeof(*v));
	if (!v) {
		errbuf_printf(err, errlen, "out of memory listing %d CUDA devices", n);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		if (describe(d, i, &v[i], err, errlen)) {
			free(v);
			return -1;
		}
	}
	*out = v;
	*count = n;
	return 0;
}
