/*
 * Moore Threads MUSA. torch_musa captures graphs (torch.musa.MUSAGraph) but
 * hands no raw graph exec out, so libzlbtimer cannot replay them through the
 * driver: the timing plugin replays them itself between torch.musa timing
 * events (BACKEND_REPLAY_EVENTS), under the same stopping rule.
 */
#include "backends/backend.h"

static const char *const aliases[] = { "mthreads", "moore", NULL };
static const char *const visibility[] = { "MUSA_VISIBLE_DEVICES", NULL };
static const char *const fatal_texts[] = {
	"an illegal memory access was encountered",
	"unspecified launch failure",
	"MUSA out of memory",
	NULL,
};
/*
 * After this text the MUSA context is unusable for the rest of the process:
 * every later call fails or, worse, returns garbage that times as a number.
 */
static const char *const poison_texts[] = {
	"MUSA error: unknown error",
	NULL,
};
/*
 * Capture of test_unique.py::test_unique2 takes the MUSA context down with
 * it (the "unknown error" above): it is timed directly. Keyed by the test
 * function, not the file: "unique" would deny nothing.
 */
static const char *const deny[] = { "unique2", NULL };
/* FlagGems skip guards that only hold on CUDA (python/zlbench/compat_musa.py). */
static const char *const compat[] = { "zlbench.compat_musa", NULL };

static const char *const libs[] = { "libmusa.so.1", "libmusa.so", NULL };
static const struct dl_count_probe probe = {
	.what = "MUSA driver",
	.env_override = "ZLB_LIBMUSA",
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
	.flagtree_vendor = "MUSA",
	.caps = BACKEND_CAP_GRAPH_TIMER,
	.torch_module = "musa",
	.graph_replay = BACKEND_REPLAY_EVENTS,
	.capture_fatal_texts = fatal_texts,
	.capture_poison_texts = poison_texts,
	.capture_deny = deny,
	.compat_plugins = compat,
	.list_devices = musa_list,
};
