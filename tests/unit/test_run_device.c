/*
 * run_device.c: where a run ran, read back from its run_identity.json
 * (the facts ops_status.csv and zlb summary label operators with).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/error.h"
#include "lib/paths.h"
#include "lib/strbuf.h"
#include "rundir/run_device.h"

#include "error_capture.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/zlb-run-device-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	strbuf_reset(&errors);
	set_error_routine(capture_error);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	set_error_routine(NULL);
	strbuf_release(&errors);
	return remove_tree(dir) ? -1 : 0;
}

static void identity(const char *text)
{
	char *path = path_join(dir, "run_identity.json");
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
	free(path);
}

static void test_facts_of_a_run(void **state)
{
	struct run_device d;

	(void)state;
	run_device_init(&d);
	identity("{\"schema_version\": 1, \"caliber\": {\"backend\": \"cuda\", \"timer\": \"graph\","
		 " \"device\": \"NVIDIA H200\"}, \"provenance\": {\"device_index\": 3,"
		 " \"gpu_name\": \"NVIDIA H200\", \"gpu_uuid\": \"GPU-aaaa\","
		 " \"device_uuid\": \"GPU-bbbb\"}}");
	assert_int_equal(run_device_read(dir, &d), 0);
	assert_string_equal(d.backend, "cuda");
	assert_string_equal(d.timer, "graph");
	assert_int_equal(d.index, 3);
	assert_string_equal(d.gpu_name, "NVIDIA H200");
	assert_string_equal(d.gpu_uuid, "GPU-aaaa");     /* gpu_uuid wins over device_uuid */
	run_device_release(&d);
	assert_null(d.backend);
	assert_int_equal(d.index, -1);
}

/* What older runs and runs without a driver name wrote. */
static void test_gaps_are_null(void **state)
{
	struct run_device d;

	(void)state;
	run_device_init(&d);
	identity("{\"schema_version\": 1, \"caliber\": {\"backend\": \"\"}, \"provenance\": "
		 "{\"gpu_name\": \"unknown\", \"device_uuid\": \"GPU-old\", \"device_index\": -1}}");
	assert_int_equal(run_device_read(dir, &d), 0);
	assert_null(d.backend);               /* "" is no fact */
	assert_null(d.timer);
	assert_null(d.gpu_name);              /* "unknown" is no name */
	assert_string_equal(d.gpu_uuid, "GPU-old");
	assert_int_equal(d.index, -1);
	/* a second read replaces, never leaks or keeps, the first one's facts */
	identity("{\"schema_version\": 1, \"provenance\": {\"gpu_uuid\": null}}");
	assert_int_equal(run_device_read(dir, &d), 0);
	assert_null(d.gpu_uuid);
	run_device_release(&d);
}

static void test_absent_and_unreadable(void **state)
{
	struct run_device d;
	char *missing = path_join(dir, "nope");

	(void)state;
	run_device_init(&d);
	assert_int_equal(run_device_read(missing, &d), 1);
	assert_null(d.gpu_name);
	identity("{\"schema_version\": 99, \"provenance\": {\"gpu_name\": \"X\"}}");
	assert_int_equal(run_device_read(dir, &d), -1);
	assert_contains(errors.buf, "schema_version 99");
	assert_null(d.gpu_name);
	identity("{\"schema_version\": 1, \"provenance\": ");
	assert_int_equal(run_device_read(dir, &d), -1);
	assert_contains(errors.buf, "not valid JSON");
	run_device_release(&d);
	free(missing);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_facts_of_a_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gaps_are_null, setup, teardown),
		cmocka_unit_test_setup_teardown(test_absent_and_unreadable, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
