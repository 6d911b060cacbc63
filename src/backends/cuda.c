/*
 * NVIDIA CUDA: the reference backend. Devices come from the driver API
 * (cuda_driver.c, loaded with dlopen), and it is the one backend where
 * zlb's graph timer (libzlbtimer, driving the CUDA driver) works.
 */
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "backends/cuda_driver.h"
#include "backends/nvml.h"

static const char *const aliases[] = { "nvidia", "nv", NULL };
static const char *const visibility[] = { "CUDA_VISIBLE_DEVICES", NULL };

/*
 * Exact CUDA error texts after which the context is unusable: falling back
 * to direct timing would only hide a broken device. Matched verbatim: torch
 * appends "...to enable device-side assertions." to every CUDA error, so a
 * loose match on "device-side assert" would make every refusal fatal.
 */
static const char *const fatal_texts[] = {
	"an illegal memory access was encountered",
	"an illegal instruction was encountered",
	"misaligned address",
	"unspecified launch failure",
	"device-side assert triggered",
	"the launch timed out and was terminated",
	"uncorrectable ECC error encountered",
	"CUDA out of memory",
	NULL,
};

static const char *const none[] = { NULL };

static int cuda_list(struct device_list *out, struct strbuf *why)
{
	struct cuda_device_info *devs = NULL;
	int count = 0, drv = 0, rc;
	char err[512] = "";

	rc = cuda_list_devices(&devs, &count, &drv, err, sizeof(err));
	if (rc) {
		strbuf_addstr(why, err[0] ? err : "the CUDA driver reports no device");
		return rc > 0 ? 1 : -1;
	}
	out->v = xcalloc((size_t)(count ? count : 1), sizeof(*out->v));
	out->nr = count;
	for (int i = 0; i < count; i++) {
		out->v[i].index = devs[i].index;
		out->v[i].name = xstrdup(devs[i].name);
		out->v[i].uuid = devs[i].uuid[0] ? xstrdup(devs[i].uuid) : NULL;
		out->v[i].total_mem = devs[i].total_mem;
	}
	out->driver_version = xstrfmt("%d.%d", drv / 1000, (drv % 1000) / 10);
	free(devs);
	return 0;
}

static int cuda_state(const struct device_info *dev, struct device_state *st,
		      struct strbuf *why)
{
	struct nvml_state n;
	char err[512] = "";

	memset(st, 0, sizeof(*st));
	if (!dev->uuid) {
		strbuf_addstr(why, "the device has no uuid to find it in NVML");
		return 1;
	}
	if (nvml_state_by_uuid(dev->uuid, &n, err, sizeof(err))) {
		strbuf_addstr(why, err[0] ? err : "NVML cannot read the device");
		return 1;
	}
	st->sm_clock_mhz = n.sm_clock_mhz;
	st->mem_clock_mhz = n.mem_clock_mhz;
	st->sm_max_mhz = n.sm_max_mhz;
	st->reasons_known = n.reasons_known;
	clock_reasons_text(n.reasons, st->reasons, sizeof(st->reasons));
	st->clocks_locked = n.clocks_locked;
	st->temperature_c = n.temperature_c;
	st->power_mw = n.power_mw;
	st->procs_known = n.procs_known;
	st->nprocs = n.nprocs;
	for (unsigned i = 0; i < n.nprocs && i < 16; i++)
		st->pids[i] = n.pids[i];
	return 0;
}

const struct backend_ops cuda_backend = {
	.name = "cuda",
	.aliases = aliases,
	.description = "NVIDIA GPUs through the CUDA driver",
	.visibility_keys = visibility,
	.flaggems_vendor = "nvidia",
	/* FlagTree's NVIDIA build reads FLAGTREE_RLC_ENHANCE, no vendor in the name. */
	.flagtree_vendor = "",
	.caps = BACKEND_CAP_GRAPH_TIMER | BACKEND_CAP_MM_CLUSTER_FIX,
	.torch_module = "cuda",
	.graph_replay = BACKEND_REPLAY_DRIVER,
	.capture_fatal_texts = fatal_texts,
	.capture_poison_texts = none,
	.capture_deny = none,
	.compat_plugins = none,
	.list_devices = cuda_list,
	.device_state = cuda_state,
};
