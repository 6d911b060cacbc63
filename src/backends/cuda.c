/*
 * NVIDIA CUDA: the reference backend. Devices come from the driver API
 * (cuda_driver.c, loaded with dlopen), and it is the one backend where
 * zlb's graph timer (libzlbtimer, driving the CUDA driver) works.
 */
#include <stdlib.h>

#include "backends/backend.h"
#include "backends/cuda_driver.h"

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

static const char *const no_plugins[] = { NULL };

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

const struct backend_ops cuda_backend = {
	.name = "cuda",
	.aliases = aliases,
	.description = "NVIDIA GPUs through the CUDA driver",
	.visibility_keys = visibility,
	.flaggems_vendor = "nvidia",
	.caps = BACKEND_CAP_GRAPH_TIMER,
	.capture_fatal_texts = fatal_texts,
	.compat_plugins = no_plugins,
	.list_devices = cuda_list,
};
