/*
 * Moore Threads MUSA. torch_musa can capture graphs (MUSAGraph), but zlb's
 * graph timer drives the CUDA driver, so MUSA rows are timed directly
 * (upstream do_bench, repeated ZL_DIRECT_REPEAT times) until libzlbtimer
 * learns the MUSA driver.
 */
#include "backends/backend.h"

static const char *const aliases[] = { "mthreads", "moore", NULL };
static const char *const visibility[] = { "MUSA_VISIBLE_DEVICES", NULL };
static const char *const fatal_texts[] = {
	"an illegal memory access was encountered",
	"unspecified launch failure",
	/* On MUSA this text leaves the device unusable for the process. */
	"MUSA error: unknown error",
	"MUSA out of memory",
	NULL,
};
static const char *const no_plugins[] = { NULL };

static const char *const libs[] = { "libmusa.so.1", "libmusa.so", NULL };
static const struct dl_count_probe probe = {
	.libs = libs,
	.init_sym = "muInit",
	.count_sym = "muDeviceGetCount",
	.name_sym = "muDeviceGetName",
	.version_sym = "muDriverGetVersion",
};

static int musa_list(struct device_list *out, struct strbuf *why)
{
	return dl_count_devices(&probe, out, why);
}

const struct backend_ops musa_backend = {
	.name = "musa",
	.aliases = aliases,
	.description = "Moore Threads GPUs through the MUSA driver",
	.visibility_keys = visibility,
	.flaggems_vendor = "mthreads",
	.caps = 0,
	.capture_fatal_texts = fatal_texts,
	.compat_plugins = no_plugins,
	.list_devices = musa_list,
};
