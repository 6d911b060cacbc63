/*
 * backends/nvml.c against the fake NVML (tests/fakes/fake_nvml.c): device
 * lookup by uuid and bus id, the snapshot, locked-clock detection, the
 * process list across the drivers' element sizes and the fallbacks to
 * older entry points.
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backends/nvml.h"

#define UUID0 "GPU-facec0da-0000-4000-8000-000000000000"
#define UUID1 "GPU-facec0da-0000-4000-8000-000000000001"

static const char *const knobs[] = {
	"FAKE_NVML_DEVICES", "FAKE_NVML_SM_CLOCKS", "FAKE_NVML_MEM_CLOCK",
	"FAKE_NVML_MAX_CLOCK", "FAKE_NVML_APP_CLOCK",
	"FAKE_NVML_DEFAULT_APP_CLOCK", "FAKE_NVML_REASONS", "FAKE_NVML_TEMP",
	"FAKE_NVML_POWER_MW", "FAKE_NVML_PIDS", "FAKE_NVML_PROC_STRIDE",
	"FAKE_NVML_NO_PERMISSION", "FAKE_NVML_OLD", "FAKE_CUDA_DEVICES",
};

static void (*nvml_reset)(void);
static unsigned long (*nvml_reads)(void);
static unsigned long (*nvml_lookups)(void);

static void clear_knobs(void)
{
	for (size_t i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++)
		unsetenv(knobs[i]);
}

static int setup_nvml(void **state)
{
	void *n;

	clear_knobs();
	setenv("ZLB_LIBNVML", ZLB_FAKENVML, 1);
	n = dlopen(ZLB_FAKENVML, RTLD_NOW | RTLD_LOCAL);
	if (!n)
		return -1;
	*(void **)&nvml_reset = dlsym(n, "fake_nvml_reset");
	*(void **)&nvml_reads = dlsym(n, "fake_nvml_sm_clock_reads");
	*(void **)&nvml_lookups = dlsym(n, "fake_nvml_handle_lookups");
	return nvml_reset && nvml_reads && nvml_lookups ? 0 : -1;
}

static int fresh(void **state)
{
	nvml_reset();
	return 0;
}

static int tidy(void **state)
{
	clear_knobs();
	return 0;
}

static void loads(void **state)
{
	char err[256] = "junk";

	assert_int_equal(nvml_load(err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_int_equal(nvml_load(NULL, 0), 0);
}

static void snapshot_by_uuid(void **state)
{
	struct nvml_state st;
	char err[256];

	setenv("FAKE_NVML_SM_CLOCKS", "1755", 1);
	setenv("FAKE_NVML_TEMP", "61", 1);
	setenv("FAKE_NVML_POWER_MW", "612345", 1);
	setenv("FAKE_NVML_PIDS", "1234,5678", 1);
	setenv("FAKE_NVML_REASONS", "0x4", 1);
	assert_int_equal(nvml_state_by_uuid(UUID0, &st, err, sizeof(err)), 0);
	assert_int_equal(st.valid, 1);
	assert_int_equal(st.sm_clock_mhz, 1755);
	assert_int_equal(st.mem_clock_mhz, 3201);
	assert_int_equal(st.sm_max_mhz, 1980);
	assert_int_equal(st.sm_app_mhz, 1980);
	assert_int_equal(st.sm_default_app_mhz, 1980);
	assert_int_equal(st.reasons_known, 1);
	assert_int_equal(st.reasons, NVML_REASON_SW_POWER_CAP);
	assert_int_equal(st.temperature_c, 61);
	assert_int_equal(st.power_mw, 612345);
	assert_int_equal(st.procs_known, 1);
	assert_int_equal(st.nprocs, 2);
	assert_int_equal(st.pids[0], 1234);
	assert_int_equal(st.pids[1], 5678);
	assert_int_equal(st.pids[2], 0);
	/* Busy, held by the power cap, no setting of anyone's: can't tell. */
	assert_int_equal(st.clocks_locked, -1);
	/* One SM clock read for the snapshot. */
	assert_int_equal(nvml_reads(), 1);
}

static void idle_device(void **state)
{
	struct nvml_state st;
	char err[256];

	/* No processes: known to be none, which is not "unknown". */
	setenv("FAKE_NVML_SM_CLOCKS", "345", 1);
	setenv("FAKE_NVML_REASONS", "1", 1);
	assert_int_equal(nvml_state_by_uuid(UUID0, &st, err, sizeof(err)), 0);
	assert_int_equal(st.procs_known, 1);
	assert_int_equal(st.nprocs, 0);
	assert_int_equal(st.reasons, NVML_REASON_GPU_IDLE);
	/* Idling at 345 of 1980: nothing holds the clock up. */
	assert_int_equal(st.clocks_locked, 0);
}

static void locked_detection(void **state)
{
	struct nvml_state st;
	char err[256];

	/* Application clocks off their default: nvidia-smi -ac. */
	setenv("FAKE_NVML_APP_CLOCK", "1500", 1);
	assert_int_equal(nvml_state_by_uuid(UUID0, &st, err, sizeof(err)), 0);
	assert_int_equal(st.sm_app_mhz, 1500);
	assert_int_equal(st.clocks_locked, 1);
	unsetenv("FAKE_NVML_APP_CLOCK");

	/* The driver says a clock setting limits the clock. */
	setenv("FAKE_NVML_SM_CLOCKS", "1500", 1);
	setenv("FAKE_NVML_REASONS", "0x2", 1);
	assert_int_equal(nvml_state_by_uuid(UUID0, &st, err, sizeof(err)), 0);
	assert_int_equal(st.clocks_locked, 1);

	/* Idle but at a high clock: a lock would do that; so might a ramp. */
	setenv("FAKE_NVML_SM_CLOCKS", "1980", 1);
	setenv("FAKE_NVML_REASONS", "0x1", 1);
	assert_int_equal(nvml_state_by_uuid(UUID0, &st, err, sizeof(err)), 0);
	assert_int_equal(st.clocks_locked, -1);

	/* Idle and low on a board without application clocks: not locked. */
	setenv("FAKE_NVML_SM_CLOCKS", "210", 1);
	setenv("FAKE_NVML_APP_CLOCK", "0", 1);
	setenv("FAKE_NVML_DEFAULT_APP_CLOCK", "0", 1);
	assert_int_equal(nvml_state_by_uuid(UUID0, &st, err, sizeof(err)), 0);
	assert_int_equal(st.sm_app_mhz, 0);
	assert_int_equal(st.sm_default_app_mhz, 0);
	assert_int_equal(st.clocks_locked, 0);

	/* Idle and low, but -ac set: locked all the same. */
	setenv("FAKE_NVML_APP_CLOCK", "1410", 1);
	setenv("FAKE_NVML_DEFAULT_APP_CLOCK", "1980", 1);
	assert_int_equal(nvml_state_by_uuid(UUID0, &st, err, sizeof(err)), 0);
	assert_int_equal(st.clocks_locked, 1);
}

static void unknown_devices(void **state)
{
	struct nvml_state st;
	char err[256];

	memset(&st, 0x5a, sizeof(st));
	assert_int_equal(nvml_state_by_uuid(UUID1, &st, err, sizeof(err)), -1);
	assert_string_equal(err, "NVML cannot find the device with uuid " UUID1
			    ": NVML_ERROR_NOT_FOUND (Not Found)");
	assert_int_equal(st.valid, 0);
	assert_int_equal(st.sm_clock_mhz, 0);
	assert_int_equal(nvml_state_by_pci("0000:01:00.0", &st, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "PCI bus id 0000:01:00.0"));
	assert_int_equal(nvml_state_by_pci("not a bus", &st, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "NVML_ERROR_INVALID_ARGUMENT"));
	assert_int_equal(nvml_state_by_uuid(NULL, &st, err, sizeof(err)), -1);
	assert_int_equal(nvml_state_by_uuid(UUID0, NULL, err, sizeof(err)), -1);
}

static void by_bus_id(void **state)
{
	struct nvml_state st;
	char err[256];

	setenv("FAKE_NVML_DEVICES", "2", 1);
	/* The driver's form, NVML's own, and the short one. */
	assert_int_equal(nvml_state_by_pci("0000:01:00.0", &st, err, sizeof(err)), 0);
	assert_int_equal(st.valid, 1);
	assert_int_equal(nvml_state_by_pci("00000000:01:00.0", &st, err, sizeof(err)), 0);
	assert_int_equal(nvml_state_by_pci("01:00.0", &st, err, sizeof(err)), 0);
	assert_int_equal(nvml_state_by_uuid(UUID1, &st, err, sizeof(err)), 0);
	assert_int_equal(nvml_state_by_pci("0000:05:00.0", &st, err, sizeof(err)), -1);
}

static void cheap_clock_reads(void **state)
{
	unsigned mhz = 0;

	setenv("FAKE_NVML_DEVICES", "3", 1);
	setenv("FAKE_NVML_SM_CLOCKS", "1980,1500,1410", 1);
	assert_int_equal(nvml_sm_clock_by_pci("0000:02:00.0", &mhz), 0);
	assert_int_equal(mhz, 1980);
	assert_int_equal(nvml_sm_clock_by_pci("0000:02:00.0", &mhz), 0);
	assert_int_equal(mhz, 1500);
	assert_int_equal(nvml_sm_clock_by_pci("0000:02:00.0", &mhz), 0);
	assert_int_equal(mhz, 1410);
	/* The last value repeats. */
	assert_int_equal(nvml_sm_clock_by_pci("0000:02:00.0", &mhz), 0);
	assert_int_equal(mhz, 1410);
	/* One lookup for four reads. */
	assert_int_equal(nvml_lookups(), 1);
	assert_int_equal(nvml_reads(), 4);

	/* An unknown bus: no clock, and not looked up again and again. */
	mhz = 7;
	assert_int_not_equal(nvml_sm_clock_by_pci("0000:09:00.0", &mhz), 0);
	assert_int_equal(mhz, 0);
	assert_int_not_equal(nvml_sm_clock_by_pci("0000:09:00.0", &mhz), 0);
	assert_int_equal(nvml_lookups(), 2);
	assert_int_not_equal(nvml_sm_clock_by_pci(NULL, &mhz), 0);
}

static void board_top_clock(void **state)
{
	unsigned mhz = 0;

	(void)state;
	setenv("FAKE_NVML_SM_CLOCKS", "1500,1410", 1);
	assert_int_equal(nvml_sm_top_by_pci("0000:00:00.0", &mhz), 0);
	assert_int_equal(mhz, 1980);
	/* An application clock target below the maximum, at its default. */
	setenv("FAKE_NVML_APP_CLOCK", "1755", 1);
	setenv("FAKE_NVML_DEFAULT_APP_CLOCK", "1755", 1);
	assert_int_equal(nvml_sm_top_by_pci("0000:00:00.0", &mhz), 0);
	assert_int_equal(mhz, 1755);
	/* nvidia-smi -ac: the user's clock, no limit's top. */
	setenv("FAKE_NVML_APP_CLOCK", "1410", 1);
	mhz = 7;
	assert_int_not_equal(nvml_sm_top_by_pci("0000:00:00.0", &mhz), 0);
	assert_int_equal(mhz, 0);
	/* No maximum known: nothing. */
	unsetenv("FAKE_NVML_APP_CLOCK");
	unsetenv("FAKE_NVML_DEFAULT_APP_CLOCK");
	setenv("FAKE_NVML_MAX_CLOCK", "0", 1);
	assert_int_not_equal(nvml_sm_top_by_pci("0000:00:00.0", &mhz), 0);
	assert_int_not_equal(nvml_sm_top_by_pci("0000:09:00.0", &mhz), 0);
	/* None of it took a current clock from the sequence. */
	assert_int_equal(nvml_sm_clock_by_pci("0000:00:00.0", &mhz), 0);
	assert_int_equal(mhz, 1500);
}

static void reasons_text(void **state)
{
	char buf[256], small[10];

	clock_reasons_text(0, buf, sizeof(buf));
	assert_string_equal(buf, "none");
	clock_reasons_text(0x5, buf, sizeof(buf));
	assert_string_equal(buf, "gpu_idle,sw_power_cap");
	clock_reasons_text(0x1ff, buf, sizeof(buf));
	assert_string_equal(buf, "gpu_idle,app_clocks_setting,sw_power_cap,"
			    "hw_slowdown,sync_boost,sw_thermal_slowdown,"
			    "hw_thermal_slowdown,hw_power_brake_slowdown,"
			    "display_clock_setting");
	/* Bits without a name (older NVML's "unknown" among them) in hex. */
	clock_reasons_text(0x8000000000000008ull | 0x1000, buf, sizeof(buf));
	assert_string_equal(buf, "hw_slowdown,0x8000000000001000");
	clock_reasons_text(0x400, buf, sizeof(buf));
	assert_string_equal(buf, "0x400");
	/* Truncated, terminated. */
	memset(small, 'x', sizeof(small));
	clock_reasons_text(0x5, small, sizeof(small));
	assert_string_equal(small, "gpu_idle,");
	clock_reasons_text(0x5, NULL, 0);
}

static void process_element_sizes(void **state)
{
	static const char *const strides[] = { "16", "24", "32" };
	struct nvml_state st;
	char err[256];

	/*
	 * _v3 wrote 32-byte elements on R535 drivers and 16-byte ones on
	 * another; read as 24-byte ones, the second pid would be garbage.
	 */
	setenv("FAKE_NVML_PIDS", "11,22,33", 1);
	for (size_t i = 0; i < 3; i++) {
		setenv("FAKE_NVML_PROC_STRIDE", strides[i], 1);
		assert_int_equal(nvml_state_by_uuid(UUID0, &st, err, sizeof(err)), 0);
		assert_int_equal(st.nprocs, 3);
		if (st.pids[0] != 11 || st.pids[1] != 22 || st.pids[2] != 33)
			fail_msg("%s-byte elements read as pids %u, %u, %u",
				 strides[i], st.pids[0], st.pids[1], st.pids[2]);
	}
	/* One process tells nothing about the stride, and needs nothing. */
	setenv("FAKE_NVML_PIDS", "99", 1);
	setenv("FAKE_NVML_PROC_STRIDE", "32", 1);
	assert_int_equal(nvml_state_by_uuid(UUID0, &st, err, sizeof(err)), 0);
	assert_int_equal(st.nprocs, 1);
	assert_int_equal(st.pids[0], 99);
}

static void many_processes(void **state)
{
	struct nvml_state st;
	char err[256], pids[256] = "";

	for (int i = 1; i <= 20; i++)
		snprintf(pids + strlen(pids), sizeof(pids) - strlen(pids),
			 "%s%d", i > 1 ? "," : "", 100 + i);
	setenv("FAKE_NVML_PIDS", pids, 1);
	assert_int_equal(nvml_state_by_uuid(UUID0, &st, err, sizeof(err)), 0);
	assert_int_equal(st.nprocs, 20);
	for (int i = 0; i < NVML_STATE_PIDS; i++)
		assert_int_equal(st.pids[i], 101 + i);
}

static void processes_not_allowed(void **state)
{
	struct nvml_state st;
	char err[256];

	setenv("FAKE_NVML_PIDS", "11", 1);
	setenv("FAKE_NVML_NO_PERMISSION", "1", 1);
	assert_int_equal(nvml_state_by_uuid(UUID0, &st, err, sizeof(err)), 0);
	assert_int_equal(st.valid, 1);
	assert_int_equal(st.procs_known, 0);
	assert_int_equal(st.nprocs, 0);
}

static void older_driver(void **state)
{
	struct nvml_state st;
	char err[256];

	/* The newer entry points exist but their driver does not have them. */
	setenv("FAKE_NVML_OLD", "1", 1);
	setenv("FAKE_NVML_REASONS", "0x48", 1);
	setenv("FAKE_NVML_PIDS", "42,43", 1);
	assert_int_equal(nvml_state_by_uuid(UUID0, &st, err, sizeof(err)), 0);
	assert_int_equal(st.reasons_known, 1);
	assert_int_equal(st.reasons, NVML_REASON_HW_SLOWDOWN | NVML_REASON_HW_THERMAL);
	assert_int_equal(st.procs_known, 1);
	assert_int_equal(st.nprocs, 2);
	assert_int_equal(st.pids[0], 42);
	assert_int_equal(st.pids[1], 43);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fresh, tidy)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(loads),
		T(snapshot_by_uuid),
		T(idle_device),
		T(locked_detection),
		T(unknown_devices),
		T(by_bus_id),
		T(cheap_clock_reads),
		T(board_top_clock),
		T(reasons_text),
		T(process_element_sizes),
		T(many_processes),
		T(processes_not_allowed),
		T(older_driver),
	};

	return cmocka_run_group_tests(tests, setup_nvml, NULL);
}
