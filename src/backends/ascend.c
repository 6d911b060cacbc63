/*
 * Huawei Ascend NPUs. The runtime reads ASCEND_RT_VISIBLE_DEVICES, older
 * driver tooling ASCEND_VISIBLE_DEVICES; both are written.
 */
#include "backends/backend.h"

static const char *const aliases[] = { "npu", "huawei", NULL };
static const char *const visibility[] = {
	"ASCEND_RT_VISIBLE_DEVICES", "ASCEND_VISIBLE_DEVICES", NULL,
};
static const char *const fatal_texts[] = {
	"NPU out of memory",
	NULL,
};
static const char *const none[] = { NULL };

static const char *const libs[] = { "libascendcl.so", NULL };
static const struct dl_count_probe probe = {
	.what = "AscendCL",
	.env_override = "ZLB_LIBASCENDCL",
	.libs = libs,
	.init_sym = "aclInit",
	.init_takes_null = 1,
	.count_sym = "aclrtGetDeviceCount",
};

static int ascend_list(struct device_list *out, struct strbuf *why)
{
	return dl_count_devices(&probe, out, why);
}

const struct backend_ops ascend_backend = {
	.name = "ascend",
	.aliases = aliases,
	.description = "Huawei Ascend NPUs through AscendCL",
	.visibility_keys = visibility,
	.flaggems_vendor = "ascend",
	/* FlagTree's Ascend switches are not known to zlb: <VENDOR> is refused. */
	.flagtree_vendor = NULL,
	.caps = 0,
	.torch_module = "npu",
	.capture_fatal_texts = fatal_texts,
	.capture_poison_texts = none,
	.capture_deny = none,
	.compat_plugins = none,
	.list_devices = ascend_list,
};
