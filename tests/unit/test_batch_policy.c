/* The retry / fallback rules of zlb batch (batch/batch_policy.h) and its tables. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "batch/batch.h"
#include "batch/batch_policy.h"
#include "batch/batch_status.h"

static struct attempt_result res(int code)
{
	struct attempt_result r;
	memset(&r, 0, sizeof(r));
	r.exit_code = code;
	return r;
}

/* Feed exit codes; return the attempts made and the final status. */
static int drive(struct op_progress *p, const int *codes, size_t n, enum op_status *st,
		 enum policy_action *acts)
{
	for (size_t i = 0; i < n; i++) {
		struct attempt_result r = res(codes[i]);
		enum policy_action a = policy_next(p, &r, st);
		if (acts)
			acts[i] = a;
		if (a == POLICY_DONE)
			return (int)i + 1;
	}
	return -1;
}

static void test_pass_skip_timeout(void **state)
{
	struct op_progress p;
	struct attempt_result r = res(0);
	enum op_status st;

	op_progress_init(&p, 2, 0, 0);
	r.passed = 1;
	assert_int_equal(policy_next(&p, &r, &st), POLICY_DONE);
	assert_int_equal(st, OP_PASS);
	op_progress_init(&p, 2, 0, 0);
	r.passed = 0;
	r.skipped = 1;
	r.xfailed = 1;
	assert_int_equal(policy_next(&p, &r, &st), POLICY_DONE);
	assert_int_equal(st, OP_SKIP);
	op_progress_init(&p, 2, 1, 1);
	r = res(130);
	r.timed_out = 1;
	assert_int_equal(policy_next(&p, &r, &st), POLICY_DONE);
	assert_int_equal(st, OP_TIMEOUT);
}

static void test_retry_cutoff(void **state)
{
	struct op_progress p;
	enum op_status st;
	const int same[] = { 1, 1, 1 }, differ[] = { 1, 139, 1, 1 }, flaky[] = { 139, 0 };
	const int env[] = { 3 }, perr[] = { 6 };

	op_progress_init(&p, 2, 0, 0);
	assert_int_equal(drive(&p, same, 3, &st, NULL), 2);   /* same rc: deterministic */
	assert_int_equal(st, OP_FAIL);
	op_progress_init(&p, 2, 0, 0);
	assert_int_equal(drive(&p, differ, 4, &st, NULL), 3); /* at most 2 retries */
	assert_int_equal(st, OP_FAIL);
	op_progress_init(&p, 2, 0, 0);
	assert_int_equal(drive(&p, flaky, 2, &st, NULL), 2);
	assert_int_equal(st, OP_PASS);
	assert_int_equal(p.retries, 1);
	op_progress_init(&p, 2, 0, 0);
	assert_int_equal(drive(&p, env, 1, &st, NULL), 1);    /* preflight: never retried */
	op_progress_init(&p, 2, 0, 0);
	assert_int_equal(drive(&p, perr, 1, &st, NULL), 1);   /* pytest usage error */
	op_progress_init(&p, 0, 0, 0);
	assert_int_equal(drive(&p, same, 3, &st, NULL), 1);   /* --retries 0 */
}

static void test_dtype_fallback_and_rescue(void **state)
{
	struct op_progress p;
	struct attempt_result r = res(1);
	struct strbuf sb = STRBUF_INIT;
	enum op_status st;
	enum policy_action acts[8];
	const int fails[] = { 1, 1, 1, 1, 1 };

	op_progress_init(&p, 2, 1, 0);
	r.cant_support = 1;
	assert_int_equal(policy_next(&p, &r, &st), POLICY_DROP_DTYPES);
	assert_true(p.dtype_fallback && !p.dtypes_active);
	r = res(0);
	r.passed = 1;
	r.rows = r.rows_ok = 4;
	assert_int_equal(policy_next(&p, &r, &st), POLICY_DONE);
	policy_remarks(&p, &r, st, &sb);
	assert_string_equal(sb.buf, "dtype_fallback");
	strbuf_reset(&sb);
	/* the same pass without a row says so */
	r.rows = r.rows_ok = 0;
	policy_remarks(&p, &r, st, &sb);
	assert_string_equal(sb.buf, "dtype_fallback;no_rows");
	strbuf_reset(&sb);
	/* a skip measures nothing by its nature */
	policy_remarks(&p, &r, OP_SKIP, &sb);
	assert_string_equal(sb.buf, "dtype_fallback");
	strbuf_reset(&sb);

	op_progress_init(&p, 2, 1, 0);
	assert_int_equal(drive(&p, fails, 5, &st, acts), 4);
	assert_int_equal(acts[0], POLICY_RETRY);
	assert_int_equal(acts[1], POLICY_DROP_DTYPES);
	assert_int_equal(acts[2], POLICY_RETRY);
	assert_int_equal(st, OP_FAIL);
	r = res(1);
	policy_remarks(&p, &r, st, &sb);
	assert_string_equal(sb.buf, "dtype_rescue;retries=2");
	strbuf_reset(&sb);

	/* success rows: no rescue */
	op_progress_init(&p, 0, 1, 0);
	r = res(1);
	r.rows_ok = 3;
	assert_int_equal(policy_next(&p, &r, &st), POLICY_DONE);
	/* preflight shape_file: drop the batch's shape file */
	op_progress_init(&p, 2, 0, 1);
	r = res(3);
	strcpy(r.preflight, "shape_file");
	assert_int_equal(policy_next(&p, &r, &st), POLICY_DROP_SHAPES);
	r = res(139);
	r.rows_direct = 2;
	r.replay_fallbacks = 1;
	assert_int_equal(policy_next(&p, &r, &st), POLICY_RETRY);
	assert_int_equal(policy_next(&p, &r, &st), POLICY_DONE);
	policy_remarks(&p, &r, st, &sb);
	assert_string_equal(sb.buf, "shapes_default;retries=1;signal=11;"
			    "no_cudagraph_rows=2;replay_fallback=1");
	strbuf_release(&sb);
}

/* What a warm worker may take as the operator's, not its own state's. */
static void test_configuration_refused(void **state)
{
	struct op_progress p;
	struct attempt_result r = res(1);

	(void)state;
	op_progress_init(&p, 2, 1, 1);
	assert_false(policy_configuration_refused(&p, &r));       /* a plain failure */
	r.cant_support = 1;
	assert_true(policy_configuration_refused(&p, &r));        /* dtypes refused */
	r.timed_out = 1;
	assert_false(policy_configuration_refused(&p, &r));       /* a hang is a verdict */
	r = res(0);
	r.cant_support = 1;
	assert_false(policy_configuration_refused(&p, &r));       /* it passed */
	r = res(1);
	r.cant_support = 1;
	p.dtypes_active = 0;                                       /* dtypes already dropped */
	assert_false(policy_configuration_refused(&p, &r));
	r = res(3);
	strcpy(r.preflight, "shape_file");
	assert_true(policy_configuration_refused(&p, &r));        /* shape file refused */
	p.shapes_active = 0;
	assert_false(policy_configuration_refused(&p, &r));
	strcpy(r.preflight, "python");
	p.shapes_active = 1;
	assert_false(policy_configuration_refused(&p, &r));       /* the environment's */
}

static void test_status_csv_and_shard(void **state)
{
	struct op_spec specs[2];
	struct op_row rows[2];
	struct strbuf sb = STRBUF_INIT;

	assert_int_equal(opspec_parse(&specs[0], "softmax"), 0);
	assert_int_equal(opspec_parse(&specs[1], "vllm:mm@a"), 0);
	op_row_init(&rows[0]);
	op_row_init(&rows[1]);
	rows[0].status = OP_PASS;
	rows[0].seconds = 1.5;
	rows[0].attempts = 2;
	rows[0].rows = 3;
	op_row_set(&rows[0].remarks, "retries=1;a,b");
	op_row_set(&rows[0].backend, "cuda");
	rows[0].device = 1;
	op_row_set(&rows[0].gpu, "NVIDIA H200");
	op_row_set(&rows[0].gpu_uuid, "GPU-1");
	op_row_set(&rows[0].timer, "graph");
	rows[0].exit_code = 0;
	op_row_set(&rows[0].run_dir, "main/softmax");
	op_row_set(&rows[0].job, "1234_5");
	rows[1].status = OP_CANCELLED;
	ops_status_render(specs, rows, 2, &sb);
	assert_string_equal(sb.buf,
		"repo,op,spec,status,seconds,attempts,rows,remarks,backend,device,gpu,gpu_uuid,"
		"timer,exit_code,run_dir,job\n"
		"main,softmax,softmax,PASS,1.500,2,3,\"retries=1;a,b\",cuda,1,NVIDIA H200,GPU-1,"
		"graph,0,main/softmax,1234_5\n"
		"vllm,mm,vllm:mm@a,CANCELLED,,0,,,,,,,,,,\n");
	assert_int_equal(op_status_parse("CANCELLED"), OP_CANCELLED);
	/* and back: what a cluster driver reads of its tasks' tables */
	{
		char path[] = "/tmp/zlb-ops-status-XXXXXX";
		int fd = mkstemp(path), found[2] = { 0, 0 };
		struct op_row back[2];

		assert_true(fd >= 0);
		assert_int_equal(write(fd, sb.buf, sb.len), (ssize_t)sb.len);
		close(fd);
		op_row_init(&back[0]);
		op_row_init(&back[1]);
		assert_int_equal(ops_status_read(path, specs, 2, back, found), 0);
		assert_true(found[0] && found[1]);
		assert_int_equal(back[0].status, OP_PASS);
		assert_int_equal(back[0].attempts, 2);
		assert_int_equal(back[0].rows, 3);
		assert_int_equal(back[0].device, 1);
		assert_string_equal(back[0].gpu, "NVIDIA H200");
		assert_string_equal(back[0].gpu_uuid, "GPU-1");
		assert_int_equal(back[0].exit_code, 0);
		assert_string_equal(back[0].remarks, "retries=1;a,b");
		assert_string_equal(back[0].job, "1234_5");
		assert_string_equal(back[0].run_dir, "main/softmax");
		assert_int_equal(back[1].status, OP_CANCELLED);
		assert_null(back[1].job);
		assert_null(back[1].gpu);
		assert_null(back[1].gpu_uuid);
		assert_int_equal(back[1].exit_code, -1);
		unlink(path);
		assert_int_equal(ops_status_read(path, specs, 2, back, found), 1);   /* none */
		op_row_release(&back[0]);
		op_row_release(&back[1]);
	}
	strbuf_release(&sb);
	/* stable: the same spec always lands on the same device */
	assert_int_equal(batch_shard("softmax", 8), batch_shard("softmax", 8));
	assert_true(batch_shard("softmax", 8) >= 0 && batch_shard("softmax", 8) < 8);
	assert_int_equal(batch_shard("softmax", 1), 0);
	for (int i = 0; i < 2; i++) {
		op_row_release(&rows[i]);
		opspec_release(&specs[i]);
	}
}

static void test_environment_failures(void **state)
{
	struct attempt_result r = res(3);
	const char *shared[] = { "backend", "timer", "python", "flaggems_dir", "device",
				 "runs_dir" };
	const char *own[] = { "benchmark_file", "shape_file", "replay_dir", "" };

	(void)state;
	for (size_t i = 0; i < sizeof(shared) / sizeof(*shared); i++) {
		snprintf(r.preflight, sizeof(r.preflight), "%s", shared[i]);
		assert_int_equal(policy_environment_failure(&r), 3);
	}
	for (size_t i = 0; i < sizeof(own) / sizeof(*own); i++) {
		snprintf(r.preflight, sizeof(r.preflight), "%s", own[i]);
		assert_int_equal(policy_environment_failure(&r), 0);
	}
	r = res(7);
	assert_int_equal(policy_environment_failure(&r), 7);
	r.timed_out = 1;
	assert_int_equal(policy_environment_failure(&r), 0);
	for (int code = 0; code < 140; code++) {
		if (code == 3 || code == 7)
			continue;
		r = res(code);
		snprintf(r.preflight, sizeof(r.preflight), "python");
		assert_int_equal(policy_environment_failure(&r), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pass_skip_timeout),
		cmocka_unit_test(test_retry_cutoff),
		cmocka_unit_test(test_dtype_fallback_and_rescue),
		cmocka_unit_test(test_configuration_refused),
		cmocka_unit_test(test_status_csv_and_shard),
		cmocka_unit_test(test_environment_failures),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
