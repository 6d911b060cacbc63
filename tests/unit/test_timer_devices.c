/*
 * cuda_driver.c against the fake driver with two devices: entry points
 * resolved by their versioned names, device identity, error sentences.
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backends/cuda_driver.h"
#include "timer/zlbtimer.h"

static void *fake;

static int setup_driver(void **state)
{
	unsetenv("FAKE_CUDA_NO_CONTEXT");
	setenv("FAKE_CUDA_DEVICES", "2", 1);
	setenv("ZLB_LIBCUDA", ZLB_FAKECUDA, 1);
	fake = dlopen(ZLB_FAKECUDA, RTLD_NOW | RTLD_LOCAL);
	return fake ? 0 : -1;
}

/* A member's address, comparable with dlsym's answer. */
static void *fn_addr(const void *member)
{
	void *p;

	memcpy(&p, member, sizeof(p));
	return p;
}

static void loads_once(void **state)
{
	const struct cuda_driver *a = NULL, *b = NULL;
	char err[256] = "junk";

	assert_int_equal(cuda_driver_load(&a, err, sizeof(err)), 0);
	assert_non_null(a);
	assert_string_equal(err, "");
	assert_string_equal(a->path, ZLB_FAKECUDA);
	assert_int_equal(cuda_driver_load(&b, NULL, 0), 0);
	assert_ptr_equal(a, b);
}

static void prefers_versioned_names(void **state)
{
	const struct cuda_driver *d;

	assert_int_equal(cuda_driver_load(&d, NULL, 0), 0);
	assert_ptr_equal(fn_addr(&d->cuDeviceTotalMem),
			 dlsym(fake, "cuDeviceTotalMem_v2"));
	assert_ptr_equal(fn_addr(&d->cuDeviceGetUuid),
			 dlsym(fake, "cuDeviceGetUuid_v2"));
	assert_ptr_equal(fn_addr(&d->cuEventDestroy),
			 dlsym(fake, "cuEventDestroy_v2"));
	assert_ptr_equal(fn_addr(&d->cuEventElapsedTime),
			 dlsym(fake, "cuEventElapsedTime_v2"));
	assert_ptr_equal(fn_addr(&d->cuStreamDestroy),
			 dlsym(fake, "cuStreamDestroy_v2"));
	assert_ptr_equal(fn_addr(&d->cuMemAlloc), dlsym(fake, "cuMemAlloc_v2"));
	assert_ptr_equal(fn_addr(&d->cuMemFree), dlsym(fake, "cuMemFree_v2"));
	assert_ptr_equal(fn_addr(&d->cuGraphLaunch), dlsym(fake, "cuGraphLaunch"));
	assert_non_null(fn_addr(&d->cuGraphGetNodes));
	assert_non_null(fn_addr(&d->cuGraphNodeGetType));
	assert_non_null(fn_addr(&d->cuMemsetD8Async));
	/* What the timer maps a context to NVML's device with. */
	assert_ptr_equal(fn_addr(&d->cuCtxGetDevice), dlsym(fake, "cuCtxGetDevice"));
	assert_ptr_equal(fn_addr(&d->cuDeviceGetPCIBusId),
			 dlsym(fake, "cuDeviceGetPCIBusId"));
}

static void lists_two_devices(void **state)
{
	struct cuda_device_info *v = NULL;
	int count = -1, drv = -1;
	char err[256] = "junk";

	assert_int_equal(cuda_list_devices(&v, &count, &drv, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_int_equal(count, 2);
	assert_int_equal(drv, 13000);
	assert_non_null(v);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(v[i].index, i);
		assert_string_equal(v[i].name, "Fake H200 (zlbench test driver)");
		assert_int_equal(v[i].total_mem, 141ull << 30);
		assert_int_equal(v[i].cc_major, 9);
		assert_int_equal(v[i].cc_minor, 0);
		assert_int_equal(v[i].l2_bytes, 60ull << 20);
		assert_int_equal(v[i].sm_count, 132);
	}
	/* nvidia-smi's form, bytes in order, one uuid per device. */
	assert_string_equal(v[0].uuid, "GPU-facec0da-0000-4000-8000-000000000000");
	assert_string_equal(v[1].uuid, "GPU-facec0da-0000-4000-8000-000000000001");
	free(v);

	/* The driver version is optional to ask for. */
	assert_int_equal(cuda_list_devices(&v, &count, NULL, err, sizeof(err)), 0);
	assert_int_equal(count, 2);
	free(v);
}

static void uuid_format(void **state)
{
	const unsigned char b[16] = {
		0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
		0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10,
	};
	char buf[48];

	cuda_format_uuid(b, buf, sizeof(buf));
	assert_string_equal(buf, "GPU-01234567-89ab-cdef-fedc-ba9876543210");
	assert_int_equal(strlen(buf), 40);
}

static void error_sentences(void **state)
{
	const struct cuda_driver *d;
	char buf[256];

	assert_int_equal(cuda_driver_load(&d, NULL, 0), 0);
	assert_string_equal(cuda_strerror(d, 719, buf, sizeof(buf)),
			    "CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure)");
	/* A code the driver cannot name still gives a sentence. */
	assert_string_equal(cuda_strerror(d, 12345, buf, sizeof(buf)),
			    "CUDA error 12345");
	assert_string_equal(cuda_strerror(NULL, 1, buf, sizeof(buf)),
			    "CUDA error 1");
	cuda_call_failed(d, "cuEventRecord", 400, buf, sizeof(buf));
	assert_string_equal(buf, "cuEventRecord failed: CUDA_ERROR_INVALID_HANDLE "
			    "(invalid resource handle)");
	/* Truncated to fit, still terminated. */
	cuda_call_failed(d, "cuEventRecord", 400, buf, 8);
	assert_string_equal(buf, "cuEvent");
}

static void timer_opens(void **state)
{
	char err[256];

	assert_int_equal(zlbt_open(err, sizeof(err)), ZLBT_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(loads_once),
		cmocka_unit_test(prefers_versioned_names),
		cmocka_unit_test(lists_two_devices),
		cmocka_unit_test(uuid_format),
		cmocka_unit_test(error_sentences),
		cmocka_unit_test(timer_opens),
	};

	return cmocka_run_group_tests(tests, setup_driver, NULL);
}
