/*
 * batch_status.c: ops_status.csv of every version read by name (a batch
 * started by an older zlb is resumed and followed by this one), and
 * .complete markers of version 1 and 2.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch/batch_status.h"
#include "lib/error.h"
#include "lib/paths.h"
#include "lib/strbuf.h"

#include "error_capture.h"

static char dir[64];
static struct op_spec specs[2];

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/zlb-batch-status-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	strbuf_reset(&errors);
	set_error_routine(capture_error);
	if (opspec_parse(&specs[0], "softmax") || opspec_parse(&specs[1], "vllm:mm@a"))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	opspec_release(&specs[0]);
	opspec_release(&specs[1]);
	set_error_routine(NULL);
	strbuf_release(&errors);
	return remove_tree(dir) ? -1 : 0;
}

static char *put(const char *name, const char *text)
{
	char *path = path_join(dir, name);
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
	return path;
}

static void read_table(const char *text, struct op_row rows[2], int found[2])
{
	char *path = put("ops_status.csv", text);

	op_row_init(&rows[0]);
	op_row_init(&rows[1]);
	found[0] = found[1] = 0;
	assert_int_equal(ops_status_read(path, specs, 2, rows, found), 0);
	free(path);
}

/* Version 2 (no gpu columns): every other column read, the card unknown. */
static void test_version_2_table(void **state)
{
	struct op_row rows[2];
	int found[2];

	(void)state;
	read_table("repo,op,spec,status,seconds,attempts,rows,remarks,backend,device,timer,"
		   "exit_code,run_dir,job\n"
		   "main,softmax,softmax,PASS,1.500,1,4,,cuda,1,graph,0,main/softmax,77_1\n"
		   "vllm,mm,vllm:mm@a,FAIL,2.000,2,0,retries=1,cuda,0,,1,vllm/mm,\n", rows, found);
	assert_true(found[0] && found[1]);
	assert_int_equal(rows[0].status, OP_PASS);
	assert_int_equal(rows[0].device, 1);
	assert_string_equal(rows[0].timer, "graph");
	assert_string_equal(rows[0].job, "77_1");
	assert_null(rows[0].gpu);
	assert_null(rows[0].gpu_uuid);
	assert_int_equal(rows[1].status, OP_FAIL);
	assert_int_equal(rows[1].exit_code, 1);
	assert_string_equal(rows[1].remarks, "retries=1");
	assert_null(rows[1].gpu_uuid);
	op_row_release(&rows[0]);
	op_row_release(&rows[1]);
}

/* Version 1: no job either. */
static void test_version_1_table(void **state)
{
	struct op_row rows[2];
	int found[2];

	(void)state;
	read_table("repo,op,spec,status,seconds,attempts,rows,remarks,backend,device,timer,"
		   "exit_code,run_dir\n"
		   "main,softmax,softmax,SKIP,0.500,1,0,skipped=1,cuda,0,,0,main/softmax\n",
		   rows, found);
	assert_true(found[0]);
	assert_false(found[1]);
	assert_int_equal(rows[0].status, OP_SKIP);
	assert_string_equal(rows[0].run_dir, "main/softmax");
	assert_null(rows[0].job);
	assert_null(rows[0].gpu);
	op_row_release(&rows[0]);
	op_row_release(&rows[1]);
}

/* Version 3, columns in another order (readers go by name), then copied. */
static void test_version_3_by_name_and_copy(void **state)
{
	struct op_row rows[2], copy;
	int found[2];

	(void)state;
	read_table("spec,status,gpu_uuid,gpu,device\n"
		   "vllm:mm@a,PASS,GPU-facec0da-0000-4000-8000-000000000001,\"Fake, H200\",1\n",
		   rows, found);
	assert_false(found[0]);
	assert_true(found[1]);
	assert_string_equal(rows[1].gpu, "Fake, H200");
	assert_string_equal(rows[1].gpu_uuid, "GPU-facec0da-0000-4000-8000-000000000001");
	op_row_init(&copy);
	op_row_copy(&copy, &rows[1]);
	op_row_release(&rows[1]);
	assert_string_equal(copy.gpu, "Fake, H200");
	assert_string_equal(copy.gpu_uuid, "GPU-facec0da-0000-4000-8000-000000000001");
	assert_int_equal(copy.device, 1);
	op_row_release(&copy);
	op_row_release(&rows[0]);
}

static void test_complete_round_trip(void **state)
{
	struct op_row row, back;

	(void)state;
	op_row_init(&row);
	op_row_init(&back);
	row.status = OP_PASS;
	row.attempts = 1;
	row.device = 1;
	op_row_set(&row.gpu, "Fake H200");
	op_row_set(&row.gpu_uuid, "GPU-1");
	assert_int_equal(complete_write(dir, &specs[0], &row), 0);
	assert_int_equal(complete_read(dir, &specs[0], &back), 0);
	assert_int_equal(back.device, 1);
	assert_string_equal(back.gpu, "Fake H200");
	assert_string_equal(back.gpu_uuid, "GPU-1");
	/* another spec's marker is not this operator's */
	assert_int_equal(complete_read(dir, &specs[1], &back), -1);
	op_row_release(&row);
	op_row_release(&back);
}

/* A marker of the zlb that started the batch (version 1) is still trusted. */
static void test_complete_versions(void **state)
{
	struct op_row back;
	char *p;

	(void)state;
	op_row_init(&back);
	op_row_set(&back.gpu, "stale");
	p = put(COMPLETE_MARKER, "{\"schema_version\": 1, \"spec\": \"softmax\", \"status\":"
		" \"SKIP\", \"seconds\": 0.5, \"attempts\": 1, \"rows\": 0, \"backend\": \"cuda\","
		" \"device\": 0, \"timer\": null, \"exit_code\": 0}");
	assert_int_equal(complete_read(dir, &specs[0], &back), 0);
	assert_int_equal(back.status, OP_SKIP);
	assert_string_equal(back.backend, "cuda");
	assert_null(back.gpu);          /* replaced, not kept: version 1 knew no card */
	free(p);
	p = put(COMPLETE_MARKER, "{\"schema_version\": 3, \"spec\": \"softmax\", \"status\":"
		" \"PASS\"}");
	assert_int_equal(complete_read(dir, &specs[0], &back), -1);
	assert_contains(errors.buf, "not a version 1..2 marker");
	free(p);
	op_row_release(&back);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_version_2_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_version_1_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_version_3_by_name_and_copy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_complete_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_complete_versions, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
