/*
 * src/backends/: the registry (names, aliases, help text), what each
 * backend writes into a child's environment, the inherited-visibility
 * mapping, the per-vendor facts (FlagGems vendor, capabilities, fatal
 * capture texts), device listing against the fake driver; and
 * run/plugin_plan.c, which derives the plugin list and timer from them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "lib/error.h"
#include "run/plugin_plan.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"

#include "error_capture.h"

static int setup(void **state)
{
	strbuf_reset(&errors);
	set_error_routine(capture_error);
	return 0;
}

static int teardown(void **state)
{
	set_error_routine(NULL);
	strbuf_release(&errors);
	return 0;
}

static const struct backend_ops *must_find(const char *name)
{
	const struct backend_ops *b = backend_find(name);

	if (!b)
		fail_msg("backend '%s' not found", name);
	return b;
}

static void find_by_name_and_alias(void **state)
{
	static const struct { const char *given, *canonical; } cases[] = {
		{ "cuda", "cuda" }, { "CUDA", "cuda" }, { "nvidia", "cuda" },
		{ "NVIDIA", "cuda" }, { "nv", "cuda" }, { "Nv", "cuda" },
		{ "rocm", "rocm" }, { "ROCm", "rocm" }, { "amd", "rocm" }, { "hip", "rocm" },
		{ "HIP", "rocm" },
		{ "ascend", "ascend" }, { "npu", "ascend" }, { "huawei", "ascend" },
		{ "Huawei", "ascend" },
		{ "musa", "musa" }, { "mthreads", "musa" }, { "MThreads", "musa" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		const struct backend_ops *b = backend_find(cases[i].given);
		if (!b)
			fail_msg("'%s' not found", cases[i].given);
		assert_string_equal(b->name, cases[i].canonical);
	}
	assert_null(backend_find("tpu"));
	assert_null(backend_find("cud"));
	assert_null(backend_find("cudax"));
	assert_null(backend_find("nvidia "));
	assert_null(backend_find(""));
	assert_null(backend_find(NULL));
}

static void registry_lists_four(void **state)
{
	const struct backend_ops *const *all = backend_all();
	char *help = backend_names_help();
	size_t n = 0;

	while (all[n])
		n++;
	assert_int_equal(n, 4);
	/* Each canonical name finds itself. */
	for (size_t i = 0; i < n; i++)
		assert_ptr_equal(backend_find(all[i]->name), all[i]);

	assert_contains(help, "cuda (nvidia, nv)");
	assert_contains(help, "rocm (amd, hip)");
	assert_contains(help, "ascend (npu, huawei)");
	assert_contains(help, "musa (mthreads");
	assert_true(starts_with(help, "cuda"));
	free(help);
}

/* An environment with every vendor's keys and some bystanders. */
static void full_env(struct strvec *env)
{
	strvec_pushl(env, "PATH=/usr/bin:/bin", "CUDA_VISIBLE_DEVICES=9",
		     "HIP_VISIBLE_DEVICES=8", "ROCR_VISIBLE_DEVICES=8",
		     "ASCEND_RT_VISIBLE_DEVICES=7", "ASCEND_VISIBLE_DEVICES=7",
		     "MUSA_VISIBLE_DEVICES=6", "CUDA_VISIBLE_DEVICES_EXTRA=keep",
		     "XCUDA_VISIBLE_DEVICES=keep", "HOME=/root", NULL);
}

static void assert_bystanders(const struct strvec *env)
{
	assert_string_equal(env_get(env, "PATH"), "/usr/bin:/bin");
	assert_string_equal(env_get(env, "HOME"), "/root");
	assert_string_equal(env_get(env, "CUDA_VISIBLE_DEVICES_EXTRA"), "keep");
	assert_string_equal(env_get(env, "XCUDA_VISIBLE_DEVICES"), "keep");
}

static void visibility_cuda(void **state)
{
	struct strvec env = STRVEC_INIT;

	full_env(&env);
	backend_apply_visibility(must_find("cuda"), &env, "3");
	assert_string_equal(env_get(&env, "CUDA_VISIBLE_DEVICES"), "3");
	assert_null(env_get(&env, "HIP_VISIBLE_DEVICES"));
	assert_null(env_get(&env, "ROCR_VISIBLE_DEVICES"));
	assert_null(env_get(&env, "ASCEND_RT_VISIBLE_DEVICES"));
	assert_null(env_get(&env, "ASCEND_VISIBLE_DEVICES"));
	assert_null(env_get(&env, "MUSA_VISIBLE_DEVICES"));
	assert_bystanders(&env);
	/* 4 bystanders + one key; the key appears once. */
	assert_int_equal(env.nr, 5);
	assert_null(env.v[env.nr]);
	strvec_clear(&env);
}

static void visibility_rocm(void **state)
{
	struct strvec env = STRVEC_INIT;

	full_env(&env);
	backend_apply_visibility(must_find("amd"), &env, "1");
	assert_string_equal(env_get(&env, "HIP_VISIBLE_DEVICES"), "1");
	assert_string_equal(env_get(&env, "ROCR_VISIBLE_DEVICES"), "1");
	assert_null(env_get(&env, "CUDA_VISIBLE_DEVICES"));
	assert_null(env_get(&env, "ASCEND_RT_VISIBLE_DEVICES"));
	assert_null(env_get(&env, "ASCEND_VISIBLE_DEVICES"));
	assert_null(env_get(&env, "MUSA_VISIBLE_DEVICES"));
	assert_bystanders(&env);
	assert_int_equal(env.nr, 6);
	strvec_clear(&env);
}

static void visibility_ascend(void **state)
{
	struct strvec env = STRVEC_INIT;

	full_env(&env);
	backend_apply_visibility(must_find("npu"), &env, "2");
	assert_string_equal(env_get(&env, "ASCEND_RT_VISIBLE_DEVICES"), "2");
	assert_string_equal(env_get(&env, "ASCEND_VISIBLE_DEVICES"), "2");
	assert_null(env_get(&env, "CUDA_VISIBLE_DEVICES"));
	assert_null(env_get(&env, "HIP_VISIBLE_DEVICES"));
	assert_null(env_get(&env, "ROCR_VISIBLE_DEVICES"));
	assert_null(env_get(&env, "MUSA_VISIBLE_DEVICES"));
	assert_bystanders(&env);
	assert_int_equal(env.nr, 6);
	strvec_clear(&env);
}

static void visibility_musa(void **state)
{
	struct strvec env = STRVEC_INIT;

	full_env(&env);
	backend_apply_visibility(must_find("musa"), &env, "GPU-x");
	assert_string_equal(env_get(&env, "MUSA_VISIBLE_DEVICES"), "GPU-x");
	assert_null(env_get(&env, "CUDA_VISIBLE_DEVICES"));
	assert_null(env_get(&env, "HIP_VISIBLE_DEVICES"));
	assert_null(env_get(&env, "ROCR_VISIBLE_DEVICES"));
	assert_null(env_get(&env, "ASCEND_RT_VISIBLE_DEVICES"));
	assert_null(env_get(&env, "ASCEND_VISIBLE_DEVICES"));
	assert_bystanders(&env);
	assert_int_equal(env.nr, 5);
	strvec_clear(&env);

	/* From an empty environment: just the key. */
	backend_apply_visibility(must_find("musa"), &env, "0");
	assert_int_equal(env.nr, 1);
	assert_string_equal(env.v[0], "MUSA_VISIBLE_DEVICES=0");
	strvec_clear(&env);
}

static void physical_device_mapping(void **state)
{
	const struct backend_ops *cuda = must_find("cuda");
	struct strvec env = STRVEC_INIT;
	char *id;

	/* Nothing inherited: the logical index is the physical one. */
	strvec_push(&env, "PATH=/bin");
	id = backend_physical_device(cuda, &env, 1);
	assert_string_equal(id, "1");
	free(id);

	env_set(&env, "CUDA_VISIBLE_DEVICES", "6,7");
	id = backend_physical_device(cuda, &env, 1);
	assert_string_equal(id, "7");
	free(id);
	id = backend_physical_device(cuda, &env, 0);
	assert_string_equal(id, "6");
	free(id);

	assert_null(backend_physical_device(cuda, &env, 2));
	assert_contains(errors.buf, "device 2 is not among the 2 device(s) that "
			"CUDA_VISIBLE_DEVICES=6,7 leaves visible");

	strbuf_reset(&errors);
	assert_null(backend_physical_device(cuda, &env, -1));
	assert_contains(errors.buf, "negative");

	/* UUIDs pass through as they are. */
	env_set(&env, "CUDA_VISIBLE_DEVICES", "GPU-aa,GPU-bb");
	id = backend_physical_device(cuda, &env, 1);
	assert_string_equal(id, "GPU-bb");
	free(id);

	/* Another vendor's variable does not restrict CUDA, and vice versa. */
	{
		const struct backend_ops *rocm = must_find("rocm");
		env_set(&env, "HIP_VISIBLE_DEVICES", "4,5");
		id = backend_physical_device(rocm, &env, 1);
		assert_string_equal(id, "5");
		free(id);
		env_unset(&env, "HIP_VISIBLE_DEVICES");
		id = backend_physical_device(rocm, &env, 1);
		assert_string_equal(id, "1");
		free(id);
	}
	strvec_clear(&env);
}

static void vendor_facts(void **state)
{
	assert_string_equal(must_find("cuda")->flaggems_vendor, "nvidia");
	assert_string_equal(must_find("rocm")->flaggems_vendor, "amd");
	assert_string_equal(must_find("musa")->flaggems_vendor, "mthreads");
	assert_string_equal(must_find("ascend")->flaggems_vendor, "ascend");

	assert_true(must_find("cuda")->caps & BACKEND_CAP_GRAPH_TIMER);
	assert_false(must_find("rocm")->caps & BACKEND_CAP_GRAPH_TIMER);
	/* torch_musa captures MUSAGraph; its replays are timed by torch.musa events. */
	assert_true(must_find("musa")->caps & BACKEND_CAP_GRAPH_TIMER);
	assert_false(must_find("ascend")->caps & BACKEND_CAP_GRAPH_TIMER);
	assert_string_equal(must_find("cuda")->graph_replay, BACKEND_REPLAY_DRIVER);
	assert_string_equal(must_find("musa")->graph_replay, BACKEND_REPLAY_EVENTS);
	assert_string_equal(must_find("cuda")->torch_module, "cuda");
	assert_string_equal(must_find("musa")->torch_module, "musa");
	assert_string_equal(must_find("rocm")->torch_module, "cuda");

	/* The Hopper mm cluster fix is CUDA's alone. */
	assert_true(must_find("cuda")->caps & BACKEND_CAP_MM_CLUSTER_FIX);
	assert_false(must_find("musa")->caps & BACKEND_CAP_MM_CLUSTER_FIX);
	assert_false(must_find("rocm")->caps & BACKEND_CAP_MM_CLUSTER_FIX);
	assert_false(must_find("ascend")->caps & BACKEND_CAP_MM_CLUSTER_FIX);

	/* FlagTree's switch spelling: FLAGTREE_<VENDOR>_... */
	assert_string_equal(must_find("musa")->flagtree_vendor, "MUSA");
	assert_string_equal(must_find("cuda")->flagtree_vendor, "");
	assert_null(must_find("ascend")->flagtree_vendor);

	for (const struct backend_ops *const *b = backend_all(); *b; b++) {
		assert_non_null((*b)->description);
		assert_non_null((*b)->visibility_keys);
		assert_non_null((*b)->visibility_keys[0]);
		assert_non_null((*b)->compat_plugins);
		assert_non_null((*b)->capture_fatal_texts);
		assert_non_null((*b)->capture_poison_texts);
		assert_non_null((*b)->capture_deny);
		assert_non_null((*b)->list_devices);
		assert_non_null((*b)->torch_module);
		/* A graph timer says how its replays are timed. */
		assert_int_equal(!!((*b)->caps & BACKEND_CAP_GRAPH_TIMER), !!(*b)->graph_replay);
	}
}

static int in_list(const char *const *list, const char *text)
{
	for (; list && *list; list++)
		if (!strcmp(*list, text))
			return 1;
	return 0;
}

/* A text that some backend's list holds (as a substring: how the plugin matches). */
static int matches(const char *const *list, const char *error_text)
{
	for (; list && *list; list++)
		if (strstr(error_text, *list))
			return 1;
	return 0;
}

static void capture_classes(void **state)
{
	const struct backend_ops *musa = must_find("musa"), *cuda = must_find("cuda");
	static const char musa_unknown[] = "MUSA error: unknown error";

	/* MUSA's "unknown error" poisons the context: not fatal, not recoverable. */
	assert_true(in_list(musa->capture_poison_texts, musa_unknown));
	assert_false(matches(musa->capture_fatal_texts, musa_unknown));
	/* The same words mean nothing to any other backend: recoverable there. */
	for (const struct backend_ops *const *b = backend_all(); *b; b++) {
		if (*b == musa)
			continue;
		assert_false(matches((*b)->capture_poison_texts, musa_unknown));
		assert_false(matches((*b)->capture_fatal_texts, musa_unknown));
	}
	/* CUDA has no poisoned class; its fatal texts stay fatal. */
	assert_null(cuda->capture_poison_texts[0]);
	assert_true(in_list(cuda->capture_fatal_texts, "an illegal memory access was encountered"));
	/* Within a backend, no text is in two classes, and none is empty. */
	for (const struct backend_ops *const *b = backend_all(); *b; b++)
		for (const char *const *t = (*b)->capture_poison_texts; *t; t++) {
			assert_true(**t);
			if (matches((*b)->capture_fatal_texts, *t))
				fail_msg("%s: poison text '%s' is also fatal", (*b)->name, *t);
		}
	/* An ordinary refusal is in no list of any backend. */
	for (const struct backend_ops *const *b = backend_all(); *b; b++) {
		assert_false(matches((*b)->capture_fatal_texts,
				     "operation not permitted when stream is capturing"));
		assert_false(matches((*b)->capture_poison_texts,
				     "operation not permitted when stream is capturing"));
	}
}

static void capture_deny_lists(void **state)
{
	/* Keyed by the test function (test_unique.py::test_unique2), not the file. */
	assert_true(in_list(must_find("musa")->capture_deny, "unique2"));
	assert_false(in_list(must_find("musa")->capture_deny, "unique"));
	for (const struct backend_ops *const *b = backend_all(); *b; b++) {
		if (strcmp((*b)->name, "musa"))
			assert_null((*b)->capture_deny[0]);
		for (const char *const *k = (*b)->capture_deny; *k; k++) {
			/* A function name without test_: an operator name. */
			assert_false(starts_with(*k, "test_"));
			assert_null(strchr(*k, '.'));
			assert_null(strchr(*k, '/'));
		}
	}
}

/* Each non-CUDA backend enumerates through its own runtime, here the fake one. */
static void vendor_devices_from_fake_runtimes(void **state)
{
	static const struct { const char *backend, *env, *name0, *version; } cases[] = {
		{ "musa", "ZLB_LIBMUSA", "Fake MTT S5000 0", "40100" },
		{ "rocm", "ZLB_LIBHIP", "Fake AMD MI300X 0", "60200" },
		{ "ascend", "ZLB_LIBASCENDCL", "device 0", NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		const struct backend_ops *b = must_find(cases[i].backend);
		struct device_list list = { 0 };
		struct strbuf why = STRBUF_INIT;

		setenv(cases[i].env, ZLB_FAKEVENDOR, 1);
		setenv("FAKE_VENDOR_DEVICES", "3", 1);
		assert_int_equal(b->list_devices(&list, &why), 0);
		assert_int_equal(list.nr, 3);
		assert_string_equal(list.v[0].name, cases[i].name0);
		assert_int_equal(list.v[2].index, 2);
		if (cases[i].version)
			assert_string_equal(list.driver_version, cases[i].version);
		else
			assert_null(list.driver_version);
		device_list_release(&list);

		/* The runtime's init says no device: the stack is absent, said so. */
		setenv("FAKE_VENDOR_INIT_FAILS", "1", 1);
		assert_int_equal(b->list_devices(&list, &why), 1);
		assert_contains(why.buf, "returned 100");
		unsetenv("FAKE_VENDOR_INIT_FAILS");
		strbuf_reset(&why);

		/* An override that does not load is said, not replaced by a soname. */
		setenv(cases[i].env, "/nonexistent/libfake.so", 1);
		assert_int_equal(b->list_devices(&list, &why), 1);
		assert_contains(why.buf, cases[i].env);
		unsetenv(cases[i].env);
		strbuf_release(&why);
	}
	unsetenv("FAKE_VENDOR_DEVICES");
}

static void fatal_texts(void **state)
{
	static const char footer[] =
		"CUDA kernel errors might be asynchronously reported at some other API "
		"call, so the stacktrace below might be incorrect.\n"
		"For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
		"Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.";
	const struct backend_ops *cuda = must_find("cuda");
	int found = 0;

	for (const char *const *t = cuda->capture_fatal_texts; *t; t++)
		found |= !strcmp(*t, "an illegal memory access was encountered");
	assert_true(found);

	/*
	 * torch appends this footer to every CUDA error: a fatal text found in
	 * it would make every capture refusal fatal.
	 */
	for (const struct backend_ops *const *b = backend_all(); *b; b++)
		for (const char *const *t = (*b)->capture_fatal_texts; *t; t++) {
			assert_true(**t);
			if (strstr(footer, *t))
				fail_msg("%s fatal text '%s' matches torch's footer",
					 (*b)->name, *t);
		}
}

static void cuda_devices_from_fake_driver(void **state)
{
	const struct backend_ops *cuda = must_find("cuda");
	struct device_list list = { 0 };
	struct strbuf why = STRBUF_INIT;

	assert_int_equal(cuda->list_devices(&list, &why), 0);
	assert_string_equal(why.buf, "");
	assert_int_equal(list.nr, 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(list.v[i].index, i);
		assert_string_equal(list.v[i].name, "Fake H200 (zlbench test driver)");
		assert_non_null(list.v[i].uuid);
		assert_true(starts_with(list.v[i].uuid, "GPU-"));
		assert_int_equal(strlen(list.v[i].uuid), 40);
		assert_true(list.v[i].total_mem > 0);
	}
	assert_string_not_equal(list.v[0].uuid, list.v[1].uuid);
	assert_string_equal(list.v[1].uuid, "GPU-facec0da-0000-4000-8000-000000000001");
	assert_int_equal(list.v[0].total_mem, (uint64_t)141 << 30);
	assert_string_equal(list.driver_version, "13.0");
	device_list_release(&list);
	assert_int_equal(list.nr, 0);
	assert_null(list.v);
	strbuf_release(&why);
}

static void dlprobe_against_fake_driver(void **state)
{
	static const char *const fake_libs[] = { "libzlb-does-not-exist.so.9", ZLB_FAKECUDA, NULL };
	static const char *const none[] = { "libzlb-does-not-exist.so.9", NULL };
	struct dl_count_probe p = {
		.libs = fake_libs,
		.init_sym = "cuInit",
		.count_sym = "cuDeviceGetCount",
		.name_sym = "cuDeviceGetName",
		.version_sym = "cuDriverGetVersion",
	};
	struct device_list list;
	struct strbuf why = STRBUF_INIT;

	/* The second library of the list loads. */
	assert_int_equal(dl_count_devices(&p, &list, &why), 0);
	assert_int_equal(list.nr, 2);
	assert_string_equal(list.v[1].name, "Fake H200 (zlbench test driver)");
	assert_int_equal(list.v[1].index, 1);
	assert_string_equal(list.driver_version, "13000");
	device_list_release(&list);

	/* Without a name function the devices are numbered. */
	p.name_sym = NULL;
	p.version_sym = NULL;
	assert_int_equal(dl_count_devices(&p, &list, &why), 0);
	assert_string_equal(list.v[0].name, "device 0");
	assert_null(list.driver_version);
	device_list_release(&list);

	/* Missing count symbol: the stack is unusable, said so. */
	p.count_sym = "cuNoSuchCount";
	assert_int_equal(dl_count_devices(&p, &list, &why), 1);
	assert_contains(why.buf, "cuNoSuchCount is missing from the runtime");
	strbuf_reset(&why);

	/* No library at all. */
	p.libs = none;
	assert_int_equal(dl_count_devices(&p, &list, &why), 1);
	assert_contains(why.buf, "none of its runtime libraries could be loaded "
			"(libzlb-does-not-exist.so.9)");
	assert_int_equal(list.nr, 0);
	strbuf_reset(&why);

	/* Zero devices: init fails with CUDA_ERROR_NO_DEVICE. */
	p.libs = fake_libs;
	p.count_sym = "cuDeviceGetCount";
	setenv("FAKE_CUDA_DEVICES", "0", 1);
	assert_int_equal(dl_count_devices(&p, &list, &why), 1);
	assert_contains(why.buf, "cuInit returned 100");
	strbuf_reset(&why);
	/* Without an init call the count itself says none. */
	p.init_sym = NULL;
	assert_int_equal(dl_count_devices(&p, &list, &why), 1);
	assert_contains(why.buf, "cuDeviceGetCount reports no device");
	setenv("FAKE_CUDA_DEVICES", "2", 1);
	strbuf_release(&why);
}

/* --- plugin_plan --------------------------------------------------------- */

static void assert_plan(const struct strvec *got, const char *const *want)
{
	size_t n = 0;

	while (want[n])
		n++;
	if (got->nr != n) {
		struct strbuf sb = STRBUF_INIT;
		for (size_t i = 0; i < got->nr; i++)
			strbuf_addf(&sb, " %s", got->v[i]);
		fail_msg("plan has %zu entries (%s), want %zu", got->nr, sb.buf, n);
	}
	for (size_t i = 0; i < n; i++)
		assert_string_equal(got->v[i], want[i]);
}

#define LIST(...) ((const char *const[]){ __VA_ARGS__, NULL })

static void plan_order(void **state)
{
	struct strvec out = STRVEC_INIT, extra = STRVEC_INIT;
	struct plugin_plan_input in = { must_find("cuda"), "inline", NULL };

	plan_plugins(&in, &out);
	assert_plan(&out, LIST("zlbench.results", "zlbench.seed", "zlbench.autotune",
			       "zlbench.shapes", "zlbench.timing"));
	strvec_clear(&out);

	in.shape_mode = "file";
	plan_plugins(&in, &out);
	assert_plan(&out, LIST("zlbench.results", "zlbench.seed", "zlbench.autotune",
			       "zlbench.shapes", "zlbench.timing"));
	strvec_clear(&out);

	/* Upstream shapes: FlagGems' own, so no shapes plugin. */
	in.shape_mode = "upstream";
	plan_plugins(&in, &out);
	assert_plan(&out, LIST("zlbench.results", "zlbench.seed", "zlbench.autotune",
			       "zlbench.timing"));
	strvec_clear(&out);

	/* Extras last, each once, and none repeating a built-in. */
	strvec_pushl(&extra, "my.plugin", "zlbench.seed", "other", "my.plugin", NULL);
	in.shape_mode = "inline";
	in.extra = &extra;
	plan_plugins(&in, &out);
	assert_plan(&out, LIST("zlbench.results", "zlbench.seed", "zlbench.autotune",
			       "zlbench.shapes", "zlbench.timing", "my.plugin", "other"));
	strvec_clear(&out);

	/* An empty extra list is no extra. */
	strvec_clear(&extra);
	plan_plugins(&in, &out);
	assert_int_equal(out.nr, 5);
	strvec_clear(&out);

	/* IR capture: its listener goes in right after results, before anything compiles. */
	in.ir = 1;
	plan_plugins(&in, &out);
	assert_plan(&out, LIST("zlbench.results", "zlbench.ir", "zlbench.seed",
			       "zlbench.autotune", "zlbench.shapes", "zlbench.timing"));
	strvec_clear(&out);
}

static void plan_compat_first(void **state)
{
	static const char *const compat[] = { "zlbench.compat_x", "zlbench.results", NULL };
	struct backend_ops fake = *must_find("musa");
	struct strvec out = STRVEC_INIT;
	struct plugin_plan_input in = { &fake, "upstream", NULL };

	fake.compat_plugins = compat;
	plan_plugins(&in, &out);
	assert_plan(&out, LIST("zlbench.compat_x", "zlbench.results", "zlbench.seed",
			       "zlbench.autotune", "zlbench.timing"));
	strvec_clear(&out);
}

/* The real MUSA table: its compat plugin first; no other backend has it. */
static void plan_musa_compat(void **state)
{
	struct strvec out = STRVEC_INIT;
	struct plugin_plan_input in = { must_find("musa"), "file", NULL };

	plan_plugins(&in, &out);
	assert_string_equal(out.v[0], "zlbench.compat_musa");
	strvec_clear(&out);
	for (const struct backend_ops *const *b = backend_all(); *b; b++) {
		if (!strcmp((*b)->name, "musa"))
			continue;
		in.backend = *b;
		plan_plugins(&in, &out);
		assert_int_equal(strvec_find(&out, "zlbench.compat_musa"), -1);
		strvec_clear(&out);
	}
}

/* --mm-cluster-fix: planned on CUDA (before timing), never elsewhere. */
static void plan_mm_cluster_fix(void **state)
{
	struct strvec out = STRVEC_INIT;
	struct plugin_plan_input in = { must_find("cuda"), "file", NULL, 0, 1 };

	plan_plugins(&in, &out);
	assert_plan(&out, LIST("zlbench.results", "zlbench.seed", "zlbench.autotune",
			       "zlbench.shapes", "zlbench.mm_cluster_fix", "zlbench.timing"));
	strvec_clear(&out);
	in.mm_cluster_fix = 0;
	plan_plugins(&in, &out);
	assert_int_equal(strvec_find(&out, "zlbench.mm_cluster_fix"), -1);
	strvec_clear(&out);
	in.mm_cluster_fix = 1;
	in.backend = must_find("musa");
	plan_plugins(&in, &out);
	assert_int_equal(strvec_find(&out, "zlbench.mm_cluster_fix"), -1);
	strvec_clear(&out);
}

static void timer_choice(void **state)
{
	const struct backend_ops *cuda = must_find("cuda"), *rocm = must_find("rocm");

	assert_string_equal(plan_timer(cuda, "auto"), "graph");
	assert_string_equal(plan_timer(cuda, NULL), "graph");
	assert_string_equal(plan_timer(cuda, "graph"), "graph");
	assert_string_equal(plan_timer(cuda, "direct"), "direct");

	assert_string_equal(plan_timer(rocm, "auto"), "direct");
	assert_string_equal(plan_timer(rocm, NULL), "direct");
	assert_string_equal(plan_timer(rocm, "direct"), "direct");
	assert_string_equal(plan_timer(must_find("musa"), "auto"), "graph");
	assert_string_equal(plan_timer(must_find("ascend"), "auto"), "direct");
	assert_string_equal(errors.buf, "");

	assert_null(plan_timer(rocm, "graph"));
	assert_contains(errors.buf, "--timer graph: the rocm backend has no graph timer");
	strbuf_reset(&errors);
	assert_null(plan_timer(must_find("ascend"), "graph"));
	assert_contains(errors.buf, "the ascend backend");
}

/* The warm worker that measures is not "another process" on the card. */
static void test_device_state_drop_pid(void **state)
{
	struct device_state st = { .procs_known = 1, .nprocs = 3, .pids = { 11, 22, 33 } };

	(void)state;
	device_state_drop_pid(&st, 22);
	assert_int_equal(st.nprocs, 2);
	assert_int_equal(st.pids[0], 11);
	assert_int_equal(st.pids[1], 33);
	device_state_drop_pid(&st, 44);          /* not there: nothing */
	assert_int_equal(st.nprocs, 2);
	device_state_drop_pid(&st, 0);           /* no worker */
	assert_int_equal(st.nprocs, 2);
	st.procs_known = 0;
	device_state_drop_pid(&st, 11);          /* unknown users stay unknown */
	assert_int_equal(st.nprocs, 2);
	/* more users than listed: the unlisted ones still count */
	st = (struct device_state){ .procs_known = 1, .nprocs = 20 };
	for (unsigned i = 0; i < 16; i++)
		st.pids[i] = 100 + i;
	device_state_drop_pid(&st, 105);
	assert_int_equal(st.nprocs, 19);
	assert_int_equal(st.pids[5], 106);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_device_state_drop_pid),
		cmocka_unit_test(find_by_name_and_alias),
		cmocka_unit_test(registry_lists_four),
		cmocka_unit_test(visibility_cuda),
		cmocka_unit_test(visibility_rocm),
		cmocka_unit_test(visibility_ascend),
		cmocka_unit_test(visibility_musa),
		cmocka_unit_test_setup_teardown(physical_device_mapping, setup, teardown),
		cmocka_unit_test(vendor_facts),
		cmocka_unit_test(fatal_texts),
		cmocka_unit_test(capture_classes),
		cmocka_unit_test(capture_deny_lists),
		cmocka_unit_test(vendor_devices_from_fake_runtimes),
		cmocka_unit_test(plan_musa_compat),
		cmocka_unit_test(plan_mm_cluster_fix),
		cmocka_unit_test(cuda_devices_from_fake_driver),
		cmocka_unit_test(dlprobe_against_fake_driver),
		cmocka_unit_test(plan_order),
		cmocka_unit_test(plan_compat_first),
		cmocka_unit_test_setup_teardown(timer_choice, setup, teardown),
	};

	/* The driver is loaded once per process: point it at the fake first. */
	setenv("ZLB_LIBCUDA", ZLB_FAKECUDA, 1);
	setenv("FAKE_CUDA_DEVICES", "2", 1);
	unsetenv("FAKE_CUDA_NO_CONTEXT");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
