/*
 * libfakecuda.so: a deterministic stand-in for libcuda.so.1, so that the
 * whole timing path (stub torch -> ctypes -> libzlbtimer -> "driver") runs
 * in CI without a GPU. Point $ZLB_LIBCUDA at it.
 *
 * The model (the Python stub torch relies on it; change both together):
 *
 *   Devices   FAKE_CUDA_DEVICES devices (default 1), no more than
 *             CUDA_VISIBLE_DEVICES lists when it is set. "0": cuInit returns
 *             CUDA_ERROR_NO_DEVICE (100). Each is "Fake H200 (zlbench test
 *             driver)", 141 GiB, compute capability 9.0, 60 MiB L2, 132 SMs;
 *             device i has uuid bytes fa ce c0 da 00 00 40 00 80 00 00 00
 *             00 00 00 i, i.e. GPU-facec0da-0000-4000-8000-0000000000ii.
 *             cuDriverGetVersion says 13000.
 *             cuDeviceGetPCIBusId gives "0000:XX:00.0" with XX the index in
 *             two upper-case hex digits (device 1: "0000:01:00.0"); the
 *             fake NVML (fake_nvml.c) places its devices on the same buses.
 *   Context   cuCtxGetCurrent gives a fixed non-NULL context when there are
 *             devices; FAKE_CUDA_NO_CONTEXT=1 makes it give NULL.
 *             cuCtxGetDevice gives FAKE_CUDA_CONTEXT_DEVICE (default 0).
 *   Graphs    A CUgraphExec's integer value is the nanoseconds of GPU work
 *             one replay takes. cuGraphLaunch advances a global fake GPU
 *             clock by that much (handle 0: CUDA_ERROR_INVALID_VALUE).
 *             FAKE_CUDA_NOISE_PPM=p adds uniform jitter of +-p ppm of the
 *             replay time from an LCG seeded by FAKE_CUDA_SEED (default 1).
 *             FAKE_CUDA_LAUNCH_FAIL_AFTER=N: the first N launches succeed,
 *             launch N+1 and every later one fail with
 *             CUDA_ERROR_LAUNCH_FAILED (719), as a broken context stays
 *             broken on a real GPU.
 *   Events    cuEventRecord stamps the event with the fake clock;
 *             cuEventElapsedTime gives (end - start) / 1e6 ms. Unrecorded
 *             events and events created with CU_EVENT_DISABLE_TIMING give
 *             CUDA_ERROR_INVALID_HANDLE, as the real driver does.
 *             Synchronisation returns at once: the fake GPU is never behind.
 *   Graph inspection: a CUgraph's integer value encodes how many nodes of
 *             each kind it has, 16 bits each:
 *                 bits  0-15  kernel nodes   (CU_GRAPH_NODE_TYPE_KERNEL, 0)
 *                 bits 16-31  memcpy nodes   (MEMCPY, 1)
 *                 bits 32-47  memset nodes   (MEMSET, 2)
 *                 bits 48-63  other nodes, their types cycling through
 *                             3 (host), 4 (child graph), ... 13 (conditional)
 *             e.g. 3 | 2 << 16 | 1 << 32 is 3 kernels, 2 memcpys, 1 memset.
 *             cuGraphGetNodes lists them in that order (kernels first) and
 *             follows the driver's two-call contract: nodes NULL gives the
 *             count; a short array gets the first *count nodes; a long one
 *             is NULL-padded and *count set to the number written. The
 *             value 0 is a NULL graph (CUDA_ERROR_INVALID_VALUE), so an
 *             empty graph cannot be expressed. Node handles are opaque
 *             values only cuGraphNodeGetType understands.
 *   Graph building (zlbt_graph_repeat): cuGraphCreate makes a graph of
 *             child-graph nodes only. Its handle is GRAPH_TAG (0xB1D0 in
 *             bits 48-63) | a serial number, so the node counts above
 *             cannot name a graph with 0xB1D0 other nodes; a tagged value
 *             that is no live built graph (one destroyed) is
 *             CUDA_ERROR_INVALID_VALUE everywhere. cuGraphGetNodes on a
 *             built graph lists its child nodes, type GRAPH (4), in the
 *             order they were added. cuGraphAddChildGraphNode clones the
 *             child as the driver does: it snapshots the child's replay
 *             time, and adds to built graphs only (a captured graph is a
 *             value here: CUDA_ERROR_INVALID_VALUE); each dependency must
 *             be a node of that graph. A graph replays in the sum of its
 *             nodes' times, whatever their dependencies: a kernel node
 *             takes FAKE_CUDA_KERNEL_NS (default 1000) ns, every other kind
 *             nothing, and a child node its child's time. So a repeat of
 *             `copies` copies of a captured graph of k kernels replays in
 *             copies x k x FAKE_CUDA_KERNEL_NS ns. cuGraphInstantiateWithFlags
 *             (and the five-argument cuGraphInstantiate_v2 and
 *             cuGraphInstantiate) gives that time as the exec, as the
 *             Graphs model above wants; a graph that takes no time has no
 *             such handle and gives CUDA_ERROR_INVALID_VALUE.
 *             cuGraphExecDestroy takes only an exec it instantiated and not
 *             yet destroyed, and cuGraphDestroy only a live built graph
 *             (never a captured one: those belong to torch), else
 *             CUDA_ERROR_INVALID_VALUE. Failures on demand:
 *             FAKE_CUDA_GRAPH_CREATE_FAIL=1 and FAKE_CUDA_INSTANTIATE_FAIL=1
 *             give CUDA_ERROR_OUT_OF_MEMORY; FAKE_CUDA_CHILD_FAIL_AFTER=N
 *             lets the first N child nodes be added and fails every later
 *             one the same way. fake_cuda_live_graphs / _live_execs count
 *             what was built or instantiated and not destroyed, and
 *             fake_cuda_graph_is_chain tells whether each node of a built
 *             graph depends on the one before alone.
 *             Built with FAKE_CUDA_GRAPH_BUILD=1 the fake is a CUDA 10
 *             driver, whose only instantiate is the five-argument
 *             cuGraphInstantiate; with 0 it exports none of these calls.
 *   Memory    cuMemAlloc_v2 hands out host memory (FAKE_CUDA_MEMALLOC_FAIL=1:
 *             CUDA_ERROR_OUT_OF_MEMORY instead) and tracks it; cuMemFree_v2
 *             of anything else is CUDA_ERROR_INVALID_VALUE. cuMemsetD8Async
 *             checks the range lies in one allocation and writes its first
 *             4 KiB at most (a 60 MiB L2 flush per sample would cost the
 *             tests seconds otherwise). Like work on the stream, a memset
 *             of N bytes advances the fake GPU clock by N / 2048 ns
 *             (about 2 TB/s: the 60 MiB L2 flush takes 30720 ns), so an
 *             event recorded after it sees the time it took.
 *             fake_cuda_memset_count / _bytes / _last_value and
 *             fake_cuda_live_allocs tell what the timer did.
 *
 * The FAKE_CUDA_* variables are read when used, so a test can change them
 * between calls; the launch count (for FAIL_AFTER), the memset counters and
 * the jitter LCG and the child-node count (for CHILD_FAIL_AFTER) start over
 * at load and at fake_cuda_reset() (allocations, built graphs and execs do
 * not: fake_cuda_live_* count what was never freed).
 *
 * The fake is not thread-safe: the timer calls it from one thread.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda_driver.h"

#define FAKE_API __attribute__((visibility("default")))

/* 2: every graph-building call; 1: a CUDA 10 driver's; 0: none. */
#ifndef FAKE_CUDA_GRAPH_BUILD
#define FAKE_CUDA_GRAPH_BUILD 2
#endif

/* Prototypes double as a check that the fake matches cuda_driver.h's types. */
#define CHECK(member, fn) \
	static __attribute__((unused)) __typeof__(((struct cuda_driver *)0)->member) \
		check_##fn = fn

struct CUevent_st {
	uint32_t magic;
	unsigned int flags;
	int recorded;
	uint64_t stamp_ns;
};

#define EVENT_MAGIC 0x45564e54u

static uint64_t clock_ns;
static uint64_t launches;
static long live_events;
static uint64_t lcg_state;
static int lcg_seeded;
static int ctx_storage;
static unsigned long long memsets;
static unsigned long long child_nodes_added;
static unsigned long long memset_bytes;
static int memset_last = -1;

/* Live allocations, so that frees and memsets can be checked. */
struct alloc {
	struct alloc *next;
	unsigned char *p;
	size_t bytes;
};
static struct alloc *allocs;
static long live_allocs;

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

/*
 * FAKE_CUDA_DEVICES devices, of which the driver shows as many as
 * CUDA_VISIBLE_DEVICES lists (as the real one does: a Slurm task given one
 * GPU of two sees one); an empty list hides them all.
 */
static int device_count(void)
{
	long n = env_long("FAKE_CUDA_DEVICES", 1);
	const char *visible = getenv("CUDA_VISIBLE_DEVICES");

	n = n < 0 ? 0 : n > 64 ? 64 : n;
	if (visible) {
		long listed = *visible ? 1 : 0;

		for (const char *c = visible; *c; c++)
			listed += *c == ',';
		if (listed < n)
			n = listed;
	}
	return (int)n;
}

/* A uniform value in [-1, 1) from a 64-bit LCG (Knuth's MMIX constants). */
static double jitter_unit(void)
{
	if (!lcg_seeded) {
		lcg_state = (uint64_t)env_long("FAKE_CUDA_SEED", 1);
		lcg_seeded = 1;
	}
	lcg_state = lcg_state * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(lcg_state >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

/* ---- introspection for tests ------------------------------------------ */

/* Start the model over: clock 0, no launches, LCG reseeded on next use. */
FAKE_API void fake_cuda_reset(void)
{
	clock_ns = 0;
	launches = 0;
	lcg_seeded = 0;
	memsets = 0;
	memset_bytes = 0;
	memset_last = -1;
	child_nodes_added = 0;
}

FAKE_API unsigned long long fake_cuda_memset_count(void)
{
	return memsets;
}

FAKE_API unsigned long long fake_cuda_memset_bytes(void)
{
	return memset_bytes;
}

/* The byte the last memset wrote; -1 if none since the reset. */
FAKE_API int fake_cuda_memset_last_value(void)
{
	return memset_last;
}

/* Allocations made and not yet freed. */
FAKE_API long fake_cuda_live_allocs(void)
{
	return live_allocs;
}

FAKE_API unsigned long long fake_cuda_launch_count(void)
{
	return launches;
}

/* Events created and not yet destroyed. */
FAKE_API long fake_cuda_live_events(void)
{
	return live_events;
}

FAKE_API unsigned long long fake_cuda_clock_ns(void)
{
	return clock_ns;
}

/* Let a stub "kernel" outside any graph take GPU time. */
FAKE_API void fake_cuda_advance_ns(unsigned long long ns)
{
	clock_ns += ns;
}

/* ---- errors ------------------------------------------------------------ */

static const struct {
	CUresult rc;
	const char *name;
	const char *text;
} errors[] = {
	{ 0, "CUDA_SUCCESS", "no error" },
	{ 1, "CUDA_ERROR_INVALID_VALUE", "invalid argument" },
	{ 2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory" },
	{ 3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error" },
	{ 100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected" },
	{ 101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal" },
	{ 201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context" },
	{ 400, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle" },
	{ 600, "CUDA_ERROR_NOT_READY", "device not ready" },
	{ 719, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure" },
	{ 999, "CUDA_ERROR_UNKNOWN", "unknown error" },
};

FAKE_API CUresult cuGetErrorName(CUresult rc, const char **name)
{
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++) {
		if (errors[i].rc == rc) {
			*name = errors[i].name;
			return CUDA_SUCCESS;
		}
	}
	*name = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}
CHECK(cuGetErrorName, cuGetErrorName);

FAKE_API CUresult cuGetErrorString(CUresult rc, const char **text)
{
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++) {
		if (errors[i].rc == rc) {
			*text = errors[i].text;
			return CUDA_SUCCESS;
		}
	}
	*text = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}
CHECK(cuGetErrorString, cuGetErrorString);

/* ---- init and devices -------------------------------------------------- */

FAKE_API CUresult cuInit(unsigned int flags)
{
	if (flags)
		return CUDA_ERROR_INVALID_VALUE;
	return device_count() ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE;
}
CHECK(cuInit, cuInit);

FAKE_API CUresult cuDriverGetVersion(int *version)
{
	if (!version)
		return CUDA_ERROR_INVALID_VALUE;
	*version = 13000;
	return CUDA_SUCCESS;
}
CHECK(cuDriverGetVersion, cuDriverGetVersion);

FAKE_API CUresult cuDeviceGetCount(int *count)
{
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	*count = device_count();
	return CUDA_SUCCESS;
}
CHECK(cuDeviceGetCount, cuDeviceGetCount);

FAKE_API CUresult cuDeviceGet(CUdevice *dev, int ordinal)
{
	if (!dev)
		return CUDA_ERROR_INVALID_VALUE;
	if (ordinal < 0 || ordinal >= device_count())
		return CUDA_ERROR_INVALID_DEVICE;
	*dev = ordinal;
	return CUDA_SUCCESS;
}
CHECK(cuDeviceGet, cuDeviceGet);

static int bad_device(CUdevice dev)
{
	return dev < 0 || dev >= device_count();
}

FAKE_API CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
	if (!name || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (bad_device(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	snprintf(name, (size_t)len, "Fake H200 (zlbench test driver)");
	return CUDA_SUCCESS;
}
CHECK(cuDeviceGetName, cuDeviceGetName);

FAKE_API CUresult cuDeviceGetAttribute(int *value, int attrib, CUdevice dev)
{
	if (!value)
		return CUDA_ERROR_INVALID_VALUE;
	if (bad_device(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	switch (attrib) {
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
		*value = 132;
		return CUDA_SUCCESS;
	case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE:
		*value = 60 << 20;
		return CUDA_SUCCESS;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
		*value = 9;
		return CUDA_SUCCESS;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
		*value = 0;
		return CUDA_SUCCESS;
	}
	return CUDA_ERROR_INVALID_VALUE;
}
CHECK(cuDeviceGetAttribute, cuDeviceGetAttribute);

FAKE_API CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
	if (!bytes)
		return CUDA_ERROR_INVALID_VALUE;
	if (bad_device(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	*bytes = (size_t)141 << 30;
	return CUDA_SUCCESS;
}
CHECK(cuDeviceTotalMem, cuDeviceTotalMem_v2);

FAKE_API CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
	static const unsigned char base[16] = {
		0xfa, 0xce, 0xc0, 0xda, 0x00, 0x00, 0x40, 0x00,
		0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	};

	if (!uuid)
		return CUDA_ERROR_INVALID_VALUE;
	if (bad_device(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	memcpy(uuid->bytes, base, sizeof(base));
	uuid->bytes[15] = (char)dev;
	return CUDA_SUCCESS;
}
CHECK(cuDeviceGetUuid, cuDeviceGetUuid_v2);

FAKE_API CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
	return cuDeviceGetUuid_v2(uuid, dev);
}

FAKE_API CUresult cuDeviceGetPCIBusId(char *bus_id, int len, CUdevice dev)
{
	if (!bus_id || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (bad_device(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	/* The driver's form: 4-digit domain, upper-case hex. */
	snprintf(bus_id, (size_t)len, "0000:%02X:00.0", (unsigned)dev);
	return CUDA_SUCCESS;
}
CHECK(cuDeviceGetPCIBusId, cuDeviceGetPCIBusId);

/* ---- contexts and streams ---------------------------------------------- */

FAKE_API CUresult cuCtxGetCurrent(CUcontext *ctx)
{
	if (!ctx)
		return CUDA_ERROR_INVALID_VALUE;
	if (!device_count() || env_long("FAKE_CUDA_NO_CONTEXT", 0))
		*ctx = NULL;
	else
		*ctx = (CUcontext)(void *)&ctx_storage;
	return CUDA_SUCCESS;
}
CHECK(cuCtxGetCurrent, cuCtxGetCurrent);

FAKE_API CUresult cuCtxGetDevice(CUdevice *dev)
{
	long d = env_long("FAKE_CUDA_CONTEXT_DEVICE", 0);

	if (!dev)
		return CUDA_ERROR_INVALID_VALUE;
	if (!device_count() || env_long("FAKE_CUDA_NO_CONTEXT", 0))
		return CUDA_ERROR_INVALID_CONTEXT;
	if (d < 0 || d >= device_count())
		return CUDA_ERROR_INVALID_DEVICE;
	*dev = (CUdevice)d;
	return CUDA_SUCCESS;
}
CHECK(cuCtxGetDevice, cuCtxGetDevice);

FAKE_API CUresult cuStreamSynchronize(CUstream stream)
{
	return CUDA_SUCCESS;
}
CHECK(cuStreamSynchronize, cuStreamSynchronize);

FAKE_API CUresult cuStreamCreate(CUstream *stream, unsigned int flags)
{
	if (!stream)
		return CUDA_ERROR_INVALID_VALUE;
	*stream = malloc(1);
	return *stream ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
CHECK(cuStreamCreate, cuStreamCreate);

FAKE_API CUresult cuStreamDestroy_v2(CUstream stream)
{
	if (!stream)
		return CUDA_ERROR_INVALID_HANDLE;
	free(stream);
	return CUDA_SUCCESS;
}
CHECK(cuStreamDestroy, cuStreamDestroy_v2);

FAKE_API CUresult cuStreamDestroy(CUstream stream)
{
	return cuStreamDestroy_v2(stream);
}

/* ---- events ------------------------------------------------------------ */

FAKE_API CUresult cuEventCreate(CUevent *ev, unsigned int flags)
{
	struct CUevent_st *e;

	if (!ev)
		return CUDA_ERROR_INVALID_VALUE;
	e = calloc(1, sizeof(*e));
	if (!e)
		return CUDA_ERROR_OUT_OF_MEMORY;
	e->magic = EVENT_MAGIC;
	e->flags = flags;
	*ev = e;
	live_events++;
	return CUDA_SUCCESS;
}
CHECK(cuEventCreate, cuEventCreate);

static int bad_event(CUevent ev)
{
	return !ev || ev->magic != EVENT_MAGIC;
}

FAKE_API CUresult cuEventRecord(CUevent ev, CUstream stream)
{
	if (bad_event(ev))
		return CUDA_ERROR_INVALID_HANDLE;
	ev->recorded = 1;
	ev->stamp_ns = clock_ns;
	return CUDA_SUCCESS;
}
CHECK(cuEventRecord, cuEventRecord);

FAKE_API CUresult cuEventSynchronize(CUevent ev)
{
	return bad_event(ev) ? CUDA_ERROR_INVALID_HANDLE : CUDA_SUCCESS;
}
CHECK(cuEventSynchronize, cuEventSynchronize);

FAKE_API CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end)
{
	if (!ms)
		return CUDA_ERROR_INVALID_VALUE;
	if (bad_event(start) || bad_event(end) || !start->recorded ||
	    !end->recorded || (start->flags & CU_EVENT_DISABLE_TIMING) ||
	    (end->flags & CU_EVENT_DISABLE_TIMING))
		return CUDA_ERROR_INVALID_HANDLE;
	/* Signed: the driver reports a negative time for reversed events. */
	*ms = (float)((double)(int64_t)(end->stamp_ns - start->stamp_ns) / 1e6);
	return CUDA_SUCCESS;
}
CHECK(cuEventElapsedTime, cuEventElapsedTime);

FAKE_API CUresult cuEventElapsedTime_v2(float *ms, CUevent start, CUevent end)
{
	return cuEventElapsedTime(ms, start, end);
}

FAKE_API CUresult cuEventDestroy_v2(CUevent ev)
{
	if (bad_event(ev))
		return CUDA_ERROR_INVALID_HANDLE;
	/* Scribble the magic so a use after destroy is caught, usually. */
	ev->magic = 0;
	free(ev);
	live_events--;
	return CUDA_SUCCESS;
}
CHECK(cuEventDestroy, cuEventDestroy_v2);

FAKE_API CUresult cuEventDestroy(CUevent ev)
{
	return cuEventDestroy_v2(ev);
}

/* ---- graphs ------------------------------------------------------------ */

/* The exec handles of the first LAUNCH_LOG launches since the last reset. */
#define LAUNCH_LOG 65536
static uint64_t launch_log[LAUNCH_LOG];

FAKE_API size_t fake_cuda_launch_log(uint64_t *out, size_t cap)
{
	size_t n = launches < LAUNCH_LOG ? (size_t)launches : LAUNCH_LOG;

	if (n > cap)
		n = cap;
	memcpy(out, launch_log, n * sizeof(*out));
	return n;
}

FAKE_API CUresult cuGraphLaunch(CUgraphExec exec, CUstream stream)
{
	uint64_t ns = (uint64_t)(uintptr_t)exec;
	long fail_after = env_long("FAKE_CUDA_LAUNCH_FAIL_AFTER", -1);
	long ppm = env_long("FAKE_CUDA_NOISE_PPM", 0);

	if (!ns)
		return CUDA_ERROR_INVALID_VALUE;
	if (fail_after >= 0 && launches >= (uint64_t)fail_after)
		return CUDA_ERROR_LAUNCH_FAILED;
	if (launches < LAUNCH_LOG)
		launch_log[launches] = (uint64_t)(uintptr_t)exec;
	launches++;
	if (ppm > 0) {
		double d = (double)ns * (double)ppm / 1e6 * jitter_unit();
		int64_t t = (int64_t)ns + (int64_t)(d < 0 ? d - 0.5 : d + 0.5);

		ns = t > 0 ? (uint64_t)t : 0;
	}
	clock_ns += ns;
	return CUDA_SUCCESS;
}
CHECK(cuGraphLaunch, cuGraphLaunch);

/* A graph's node counts by kind: kernels, memcpys, memsets, others. */
static void graph_counts(CUgraph graph, uint64_t n[4])
{
	uint64_t v = (uint64_t)(uintptr_t)graph;

	for (int i = 0; i < 4; i++)
		n[i] = (v >> (16 * i)) & 0xffff;
}

/*
 * A node handle: a tag bit, the serial of the built graph it belongs to
 * (0: a captured graph's), the node's index and its type. Never NULL,
 * never a pointer anyone could dereference.
 */
#define NODE_TAG (1ull << 62)
#define NODE_SERIAL_BITS 22

static CUgraphNode node_handle(uint64_t serial, uint64_t index, int type)
{
	serial &= (1ull << NODE_SERIAL_BITS) - 1;
	return (CUgraphNode)(uintptr_t)(NODE_TAG | serial << 40 | index << 8 |
					(uint64_t)type);
}

static int node_type(uint64_t index, const uint64_t n[4])
{
	if (index < n[0])
		return CU_GRAPH_NODE_TYPE_KERNEL;
	index -= n[0];
	if (index < n[1])
		return CU_GRAPH_NODE_TYPE_MEMCPY;
	index -= n[1];
	if (index < n[2])
		return CU_GRAPH_NODE_TYPE_MEMSET;
	index -= n[2];
	return CU_GRAPH_NODE_TYPE_HOST + (int)(index % 11);   /* 3 .. 13 */
}

/* A graph cuGraphCreate made: child-graph nodes, each its child's time. */
struct built_graph {
	struct built_graph *next;
	uint64_t serial;
	uint64_t *node_ns;      /* replay time of each node's (cloned) child */
	size_t nodes, alloc;
	uint64_t ns;            /* their sum: one replay */
	int chain;              /* each node depends on the one before alone */
};

#define GRAPH_TAG (0xB1D0ull << 48)
#define GRAPH_TAG_MASK (0xffffull << 48)

static struct built_graph *built;
static long live_graphs;
static size_t nr_execs;         /* execs instantiated and not destroyed */

static int is_built(CUgraph graph)
{
	return ((uint64_t)(uintptr_t)graph & GRAPH_TAG_MASK) == GRAPH_TAG;
}

static struct built_graph *find_built(CUgraph graph, struct built_graph ***link)
{
	uint64_t serial = (uint64_t)(uintptr_t)graph & ~GRAPH_TAG_MASK;
	struct built_graph **pp = &built;

	if (!is_built(graph))
		return NULL;
	for (; *pp; pp = &(*pp)->next) {
		if ((*pp)->serial == serial) {
			if (link)
				*link = pp;
			return *pp;
		}
	}
	return NULL;
}

FAKE_API CUresult cuGraphGetNodes(CUgraph graph, CUgraphNode *nodes, size_t *count)
{
	struct built_graph *g = NULL;
	uint64_t n[4], total;
	size_t i;

	if (!graph || !count)
		return CUDA_ERROR_INVALID_VALUE;
	if (is_built(graph)) {
		g = find_built(graph, NULL);
		if (!g)
			return CUDA_ERROR_INVALID_VALUE;
		total = g->nodes;
	} else {
		graph_counts(graph, n);
		total = n[0] + n[1] + n[2] + n[3];
	}
	if (!nodes) {
		*count = (size_t)total;
		return CUDA_SUCCESS;
	}
	for (i = 0; i < *count && i < total; i++)
		nodes[i] = g ? node_handle(g->serial, i, CU_GRAPH_NODE_TYPE_GRAPH) :
			       node_handle(0, i, node_type(i, n));
	if (*count > total) {
		for (; i < *count; i++)
			nodes[i] = NULL;
		*count = (size_t)total;
	}
	return CUDA_SUCCESS;
}
CHECK(cuGraphGetNodes, cuGraphGetNodes);

FAKE_API CUresult cuGraphNodeGetType(CUgraphNode node, CUgraphNodeType *type)
{
	uint64_t v = (uint64_t)(uintptr_t)node;

	if (!type || !(v & NODE_TAG) || (v & 0xff) > CU_GRAPH_NODE_TYPE_CONDITIONAL)
		return CUDA_ERROR_INVALID_VALUE;
	*type = (CUgraphNodeType)(v & 0xff);
	return CUDA_SUCCESS;
}
CHECK(cuGraphNodeGetType, cuGraphNodeGetType);

/* Built graphs and execs made and not yet destroyed. */
FAKE_API long fake_cuda_live_graphs(void)
{
	return live_graphs;
}

FAKE_API long fake_cuda_live_execs(void)
{
	return (long)nr_execs;
}

/* 1 if each node of the built graph depends on the one before alone, else 0; -1: no such graph. */
FAKE_API int fake_cuda_graph_is_chain(uint64_t graph)
{
	struct built_graph *g = find_built((CUgraph)(uintptr_t)graph, NULL);

	return g ? g->chain : -1;
}

#if FAKE_CUDA_GRAPH_BUILD >= 1

static uint64_t built_serial;
/* The live execs' values, repeats allowed: equal times, equal handles. */
static uint64_t *execs;
static size_t execs_alloc;

/* One replay of graph, in ns (0: a graph of no kernels), or an error. */
static CUresult graph_ns(CUgraph graph, uint64_t *ns)
{
	struct built_graph *g;
	uint64_t n[4];

	if (!graph)
		return CUDA_ERROR_INVALID_VALUE;
	if (is_built(graph)) {
		g = find_built(graph, NULL);
		if (!g)
			return CUDA_ERROR_INVALID_VALUE;
		*ns = g->ns;
		return CUDA_SUCCESS;
	}
	graph_counts(graph, n);
	*ns = n[0] * (uint64_t)env_long("FAKE_CUDA_KERNEL_NS", 1000);
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuGraphCreate(CUgraph *graph, unsigned int flags)
{
	struct built_graph *g;

	if (!graph || flags)
		return CUDA_ERROR_INVALID_VALUE;
	if (env_long("FAKE_CUDA_GRAPH_CREATE_FAIL", 0))
		return CUDA_ERROR_OUT_OF_MEMORY;
	g = calloc(1, sizeof(*g));
	if (!g)
		return CUDA_ERROR_OUT_OF_MEMORY;
	g->serial = ++built_serial;
	g->chain = 1;
	g->next = built;
	built = g;
	live_graphs++;
	*graph = (CUgraph)(uintptr_t)(GRAPH_TAG | g->serial);
	return CUDA_SUCCESS;
}
CHECK(cuGraphCreate, cuGraphCreate);

/* The index of dep if it is a node of g, else -1. */
static long node_of(const struct built_graph *g, CUgraphNode dep)
{
	uint64_t v = (uint64_t)(uintptr_t)dep;
	uint64_t serial = (v >> 40) & ((1ull << NODE_SERIAL_BITS) - 1);
	uint64_t index = (v >> 8) & 0xffffffffull;

	if (!(v & NODE_TAG) || serial != (g->serial & ((1ull << NODE_SERIAL_BITS) - 1)) ||
	    index >= g->nodes)
		return -1;
	return (long)index;
}

FAKE_API CUresult cuGraphAddChildGraphNode(CUgraphNode *node, CUgraph graph,
					   const CUgraphNode *deps, size_t ndeps,
					   CUgraph child)
{
	struct built_graph *g = find_built(graph, NULL);
	long fail_after = env_long("FAKE_CUDA_CHILD_FAIL_AFTER", -1);
	int chained;
	uint64_t ns;
	CUresult rc;

	if (!node || !g || (ndeps && !deps))
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < ndeps; i++)
		if (node_of(g, deps[i]) < 0)
			return CUDA_ERROR_INVALID_VALUE;
	rc = graph_ns(child, &ns);
	if (rc)
		return rc;
	if (fail_after >= 0 && child_nodes_added >= (unsigned long long)fail_after)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (g->nodes == g->alloc) {
		size_t alloc = g->alloc ? 2 * g->alloc : 16;
		uint64_t *p = realloc(g->node_ns, alloc * sizeof(*p));

		if (!p)
			return CUDA_ERROR_OUT_OF_MEMORY;
		g->node_ns = p;
		g->alloc = alloc;
	}
	chained = g->nodes ? ndeps == 1 && node_of(g, deps[0]) == (long)g->nodes - 1 :
			     ndeps == 0;
	g->chain = g->chain && chained;
	g->node_ns[g->nodes] = ns;
	g->ns += ns;
	*node = node_handle(g->serial, g->nodes, CU_GRAPH_NODE_TYPE_GRAPH);
	g->nodes++;
	child_nodes_added++;
	return CUDA_SUCCESS;
}
CHECK(cuGraphAddChildGraphNode, cuGraphAddChildGraphNode);

/* The exec of graph: its replay time, recorded as live. */
static CUresult instantiate(CUgraphExec *exec, CUgraph graph)
{
	uint64_t ns;
	CUresult rc;

	if (!exec)
		return CUDA_ERROR_INVALID_VALUE;
	rc = graph_ns(graph, &ns);
	if (rc)
		return rc;
	if (!ns)
		return CUDA_ERROR_INVALID_VALUE;
	if (env_long("FAKE_CUDA_INSTANTIATE_FAIL", 0))
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (nr_execs == execs_alloc) {
		size_t alloc = execs_alloc ? 2 * execs_alloc : 16;
		uint64_t *p = realloc(execs, alloc * sizeof(*p));

		if (!p)
			return CUDA_ERROR_OUT_OF_MEMORY;
		execs = p;
		execs_alloc = alloc;
	}
	execs[nr_execs++] = ns;
	*exec = (CUgraphExec)(uintptr_t)ns;
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuGraphInstantiate(CUgraphExec *exec, CUgraph graph,
				     CUgraphNode *error_node, char *log,
				     size_t log_size)
{
	if (log && log_size)
		log[0] = '\0';
	return instantiate(exec, graph);
}
CHECK(cuGraphInstantiate, cuGraphInstantiate);

FAKE_API CUresult cuGraphExecDestroy(CUgraphExec exec)
{
	uint64_t v = (uint64_t)(uintptr_t)exec;

	for (size_t i = 0; i < nr_execs; i++) {
		if (execs[i] == v) {
			execs[i] = execs[--nr_execs];
			if (!nr_execs) {
				free(execs);
				execs = NULL;
				execs_alloc = 0;
			}
			return CUDA_SUCCESS;
		}
	}
	return CUDA_ERROR_INVALID_VALUE;
}
CHECK(cuGraphExecDestroy, cuGraphExecDestroy);

FAKE_API CUresult cuGraphDestroy(CUgraph graph)
{
	struct built_graph **link = NULL, *g = find_built(graph, &link);

	if (!g)
		return CUDA_ERROR_INVALID_VALUE;
	*link = g->next;
	free(g->node_ns);
	free(g);
	live_graphs--;
	return CUDA_SUCCESS;
}
CHECK(cuGraphDestroy, cuGraphDestroy);

#endif

#if FAKE_CUDA_GRAPH_BUILD >= 2

FAKE_API CUresult cuGraphInstantiate_v2(CUgraphExec *exec, CUgraph graph,
					CUgraphNode *error_node, char *log,
					size_t log_size)
{
	return cuGraphInstantiate(exec, graph, error_node, log, log_size);
}
CHECK(cuGraphInstantiate, cuGraphInstantiate_v2);

FAKE_API CUresult cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph graph,
					      unsigned long long flags)
{
	return instantiate(exec, graph);
}
CHECK(cuGraphInstantiateWithFlags, cuGraphInstantiateWithFlags);

#endif

/* ---- memory ------------------------------------------------------------ */

static struct alloc *find_alloc(CUdeviceptr ptr, struct alloc ***link)
{
	struct alloc **pp = &allocs;

	for (; *pp; pp = &(*pp)->next) {
		struct alloc *a = *pp;

		if ((uintptr_t)ptr >= (uintptr_t)a->p &&
		    (uintptr_t)ptr < (uintptr_t)a->p + a->bytes) {
			if (link)
				*link = pp;
			return a;
		}
	}
	return NULL;
}

FAKE_API CUresult cuMemAlloc_v2(CUdeviceptr *ptr, size_t bytes)
{
	struct alloc *a;

	if (!ptr || !bytes)
		return CUDA_ERROR_INVALID_VALUE;
	if (env_long("FAKE_CUDA_MEMALLOC_FAIL", 0))
		return CUDA_ERROR_OUT_OF_MEMORY;
	a = calloc(1, sizeof(*a));
	/* Large and never touched beyond 4 KiB: the pages are never mapped. */
	if (!a || !(a->p = malloc(bytes))) {
		free(a);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	a->bytes = bytes;
	a->next = allocs;
	allocs = a;
	live_allocs++;
	*ptr = (CUdeviceptr)(uintptr_t)a->p;
	return CUDA_SUCCESS;
}
CHECK(cuMemAlloc, cuMemAlloc_v2);

FAKE_API CUresult cuMemFree_v2(CUdeviceptr ptr)
{
	struct alloc **link = NULL, *a = find_alloc(ptr, &link);

	/* Only the start of an allocation can be freed. */
	if (!a || (uintptr_t)a->p != (uintptr_t)ptr)
		return CUDA_ERROR_INVALID_VALUE;
	*link = a->next;
	free(a->p);
	free(a);
	live_allocs--;
	return CUDA_SUCCESS;
}
CHECK(cuMemFree, cuMemFree_v2);

FAKE_API CUresult cuMemsetD8Async(CUdeviceptr ptr, unsigned char value,
				  size_t count, CUstream stream)
{
	struct alloc *a = find_alloc(ptr, NULL);
	size_t off;

	if (!a)
		return CUDA_ERROR_INVALID_VALUE;
	off = (size_t)((uintptr_t)ptr - (uintptr_t)a->p);
	if (count > a->bytes - off)
		return CUDA_ERROR_INVALID_VALUE;
	memset(a->p + off, value, count < 4096 ? count : 4096);
	memsets++;
	memset_bytes += count;
	memset_last = value;
	clock_ns += count / 2048;
	return CUDA_SUCCESS;
}
CHECK(cuMemsetD8Async, cuMemsetD8Async);
