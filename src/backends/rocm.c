/*
 * AMD ROCm. HIP honours HIP_VISIBLE_DEVICES and the ROCr runtime
 * ROCR_VISIBLE_DEVICES; both are written so that either layer agrees.
 */
#include "backends/backend.h"

static const char *const aliases[] = { "amd", "hip", NULL };
static const char *const visibility[] = {
	"HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", NULL,
};
static const char *const fatal_texts[] = {
	"an illegal memory access was encountered",
	"unspecified launch failure",
	"HIP out of memory",
	NULL,
};
static const char *const none[] = { NULL };

static const char *const libs[] = {
	"libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so", NULL,
};
static const struct dl_count_probe probe = {
	.what = "HIP runtime",
	.env_override = "ZLB_LIBHIP",
	.libs = libs,
	.init_sym = "hipInit",
	.count_sym = "hipGetDeviceCount",
	.name_sym = "hipDeviceGetName",
	.version_sym = "hipDriverGetVersion",
};

static int rocm_list(struct device_list *out, struct strbuf *why)
{
	return dl_count_devices(&probe, out, why);
}

const struct backend_ops rocm_backend = {
	.name = "rocm",
	.aliases = aliases,
	.description = "AMD GPUs through HIP",
	.visibility_keys = visibility,
	.flaggems_vendor = "amd",
	/*
	 * FlagTree's default build holds the NVIDIA and AMD backends and reads
	 * the vendor-less FLAGTREE_RLC_ENHANCE for both.
	 */
	.flagtree_vendor = "",
	.caps = 0,
	/* torch built for ROCm keeps the torch.cuda module name. */
	.torch_module = "cuda",
	.capture_fatal_texts = fatal_texts,
	.capture_poison_texts = none,
	.capture_deny = none,
	.compat_plugins = none,
	.list_devices = rocm_list,
};
