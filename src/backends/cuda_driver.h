/*
 * The CUDA driver API, reached through dlopen.
 *
 * Nothing from the CUDA toolkit is needed at build time: the few types and
 * entry points zlb uses are declared here, and the library is opened at run
 * time from $ZLB_LIBCUDA (tests point it at a fake driver) or else from
 * libcuda.so.1 / libcuda.so. Where the driver exports a versioned entry
 * point (cuDeviceTotalMem_v2, cuEventDestroy_v2, ...) that one is used, as
 * cuda.h would select it.
 *
 *     const struct cuda_driver *cu;
 *     char err[256];
 *
 *     if (cuda_driver_load(&cu, err, sizeof(err)))
 *         ... err says why ...
 *     cu->cuCtxGetCurrent(&ctx);
 *
 * This file is compiled both into zlb and into libzlbtimer.so, so it uses
 * libc and libdl only and reports errors as sentences written into a
 * caller-provided buffer (truncated to fit, always NUL-terminated when
 * errlen > 0; err may be NULL when errlen is 0).
 */
#ifndef ZLB_CUDA_DRIVER_H
#define ZLB_CUDA_DRIVER_H

#include <stddef.h>
#include <stdint.h>

/* The driver's types, as far as zlb needs them (ABI-compatible with cuda.h). */
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr; /* CUdeviceptr_v2 */
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUgraphNode_st *CUgraphNode;
typedef int CUgraphNodeType;
typedef struct { char bytes[16]; } CUuuid;

/* The few values zlb names. */
enum {
	CUDA_SUCCESS = 0,
	CUDA_ERROR_INVALID_VALUE = 1,
	CUDA_ERROR_OUT_OF_MEMORY = 2,
	CUDA_ERROR_NOT_INITIALIZED = 3,
	CUDA_ERROR_NO_DEVICE = 100,
	CUDA_ERROR_INVALID_DEVICE = 101,
	CUDA_ERROR_INVALID_CONTEXT = 201,
	CUDA_ERROR_INVALID_HANDLE = 400,
	CUDA_ERROR_NOT_READY = 600,
	CUDA_ERROR_LAUNCH_FAILED = 719,
	CUDA_ERROR_UNKNOWN = 999,
};

enum {
	CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
	CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
	CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
	CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
};

/* CUgraphNodeType: what cuGraphNodeGetType reports. */
enum {
	CU_GRAPH_NODE_TYPE_KERNEL = 0,
	CU_GRAPH_NODE_TYPE_MEMCPY = 1,
	CU_GRAPH_NODE_TYPE_MEMSET = 2,
	CU_GRAPH_NODE_TYPE_HOST = 3,
	CU_GRAPH_NODE_TYPE_GRAPH = 4,
	CU_GRAPH_NODE_TYPE_EMPTY = 5,
	CU_GRAPH_NODE_TYPE_WAIT_EVENT = 6,
	CU_GRAPH_NODE_TYPE_EVENT_RECORD = 7,
	CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL = 8,
	CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT = 9,
	CU_GRAPH_NODE_TYPE_MEM_ALLOC = 10,
	CU_GRAPH_NODE_TYPE_MEM_FREE = 11,
	CU_GRAPH_NODE_TYPE_BATCH_MEM_OP = 12,
	CU_GRAPH_NODE_TYPE_CONDITIONAL = 13,
};

enum {
	CU_EVENT_DEFAULT = 0,
	CU_EVENT_BLOCKING_SYNC = 1,
	CU_EVENT_DISABLE_TIMING = 2,
};

/*
 * The entry points, named after the unversioned driver functions. Members
 * marked "optional" are NULL when the driver lacks them; the others are
 * always set once cuda_driver_load() has succeeded.
 */
struct cuda_driver {
	CUresult (*cuInit)(unsigned int flags);
	CUresult (*cuDriverGetVersion)(int *version);
	CUresult (*cuGetErrorName)(CUresult rc, const char **name);     /* optional */
	CUresult (*cuGetErrorString)(CUresult rc, const char **text);   /* optional */

	CUresult (*cuDeviceGetCount)(int *count);
	CUresult (*cuDeviceGet)(CUdevice *dev, int ordinal);
	CUresult (*cuDeviceGetName)(char *name, int len, CUdevice dev);
	CUresult (*cuDeviceGetAttribute)(int *value, int attrib, CUdevice dev);
	/* cuDeviceTotalMem_v2; optional. */
	CUresult (*cuDeviceTotalMem)(size_t *bytes, CUdevice dev);
	/* cuDeviceGetUuid_v2, else cuDeviceGetUuid; optional. */
	CUresult (*cuDeviceGetUuid)(CUuuid *uuid, CUdevice dev);
	/*
	 * "0000:3B:00.0" (domain:bus:device.function, hex), the key NVML
	 * finds the same board by; optional.
	 */
	CUresult (*cuDeviceGetPCIBusId)(char *bus_id, int len, CUdevice dev);

	CUresult (*cuCtxGetCurrent)(CUcontext *ctx);
	/* The device of the current context; optional. */
	CUresult (*cuCtxGetDevice)(CUdevice *dev);

	CUresult (*cuStreamSynchronize)(CUstream stream);
	CUresult (*cuStreamCreate)(CUstream *stream, unsigned int flags); /* optional */
	/* cuStreamDestroy_v2, else cuStreamDestroy; optional. */
	CUresult (*cuStreamDestroy)(CUstream stream);

	CUresult (*cuEventCreate)(CUevent *ev, unsigned int flags);
	CUresult (*cuEventRecord)(CUevent ev, CUstream stream);
	CUresult (*cuEventSynchronize)(CUevent ev);
	/* cuEventElapsedTime_v2, else cuEventElapsedTime. */
	CUresult (*cuEventElapsedTime)(float *ms, CUevent start, CUevent end);
	/* cuEventDestroy_v2, else cuEventDestroy. */
	CUresult (*cuEventDestroy)(CUevent ev);

	CUresult (*cuGraphLaunch)(CUgraphExec exec, CUstream stream);
	CUresult (*cuGraphGetNodes)(CUgraph graph, CUgraphNode *nodes,
				    size_t *count);                   /* optional */
	CUresult (*cuGraphNodeGetType)(CUgraphNode node,
				       CUgraphNodeType *type);        /* optional */
	/* Building a graph of child graphs (zlbt_graph_repeat); optional. */
	CUresult (*cuGraphCreate)(CUgraph *graph, unsigned int flags);
	CUresult (*cuGraphAddChildGraphNode)(CUgraphNode *node, CUgraph graph,
					     const CUgraphNode *deps, size_t ndeps,
					     CUgraph child);
	/* CUDA 11.4 and later; optional. */
	CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec *exec, CUgraph graph,
						unsigned long long flags);
	/*
	 * cuGraphInstantiate_v2, else cuGraphInstantiate: the five-argument
	 * form, all that drivers before 11.4 have (cuda.h 12 maps the plain
	 * name to cuGraphInstantiateWithFlags; the exported symbol kept this
	 * ABI); optional.
	 */
	CUresult (*cuGraphInstantiate)(CUgraphExec *exec, CUgraph graph,
				       CUgraphNode *error_node, char *log,
				       size_t log_size);
	CUresult (*cuGraphExecDestroy)(CUgraphExec exec);           /* optional */
	CUresult (*cuGraphDestroy)(CUgraph graph);                  /* optional */

	/* cuMemAlloc_v2 / cuMemFree_v2 / cuMemsetD8Async; optional. */
	CUresult (*cuMemAlloc)(CUdeviceptr *ptr, size_t bytes);
	CUresult (*cuMemFree)(CUdeviceptr ptr);
	CUresult (*cuMemsetD8Async)(CUdeviceptr ptr, unsigned char value,
				    size_t count, CUstream stream);

	/* What was opened: $ZLB_LIBCUDA or the soname that loaded. */
	const char *path;
};

/*
 * Open the driver, resolve its entry points and call cuInit(0). The first
 * call does the work; later calls return the same answer (and sentence),
 * as the driver itself would: a failed cuInit is not retried.
 *
 * Returns 0 with *out set; 1 when there is no driver library or cuInit
 * reports CUDA_ERROR_NO_DEVICE ("no device": not a fault of zlb's); -1 on
 * any other failure (a missing entry point, another cuInit error).
 */
int cuda_driver_load(const struct cuda_driver **out, char *err, size_t errlen);

/*
 * Describe a driver error as "CUDA_ERROR_NAME (text)", falling back to
 * "CUDA error <rc>" where the driver cannot name it. d may be NULL.
 * Returns buf.
 */
const char *cuda_strerror(const struct cuda_driver *d, CUresult rc,
			  char *buf, size_t len);

/*
 * Write "<call> failed: CUDA_ERROR_NAME (text)" into err. For callers that
 * report a failed driver call in one sentence.
 */
void cuda_call_failed(const struct cuda_driver *d, const char *call,
		      CUresult rc, char *err, size_t errlen);

struct cuda_device_info {
	int index;            /* ordinal as this process sees it */
	char name[256];       /* e.g. "NVIDIA H200" */
	char uuid[48];        /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", or "" */
	uint64_t total_mem;   /* bytes, 0 if unknown */
	int cc_major;         /* compute capability, 0 if unknown */
	int cc_minor;
	uint64_t l2_bytes;    /* L2 cache size, 0 if unknown */
	int sm_count;         /* multiprocessors, 0 if unknown */
};

/*
 * The devices the driver shows this process (CUDA_VISIBLE_DEVICES applies,
 * as the driver applies it). On success *out is a malloc'ed array of
 * *count entries that the caller frees, and *driver_version is the
 * driver's CUDA version as cuDriverGetVersion reports it (13000 for 13.0;
 * 0 if unknown). Returns 0; 1 when there is no driver or no device
 * (*out NULL, *count 0); -1 on any other failure. err says why.
 */
int cuda_list_devices(struct cuda_device_info **out, int *count,
		      int *driver_version, char *err, size_t errlen);

/* Format 16 uuid bytes like nvidia-smi: "GPU-" + 8-4-4-4-12 hex digits. */
void cuda_format_uuid(const unsigned char bytes[16], char *buf, size_t len);

#endif
