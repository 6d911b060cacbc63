/*
 * batch_lanes.c: `zlb batch --status`'s operators per device lane and card.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "batch/batch_lanes.h"

#define U0 "GPU-facec0da-0000-4000-8000-000000000000"
#define U1 "GPU-facec0da-0000-4000-8000-000000000001"

static struct op_row row(enum op_status st, int device, char *gpu, char *uuid)
{
	struct op_row r;

	op_row_init(&r);
	r.status = st;
	r.device = device;
	r.gpu = gpu;
	r.gpu_uuid = uuid;
	return r;
}

static void lanes_of_a_local_batch(void **state)
{
	struct op_row rows[] = {
		row(OP_PASS, 1, "H200", U1),
		row(OP_PENDING, -1, NULL, NULL),	/* not in a lane yet */
		row(OP_FAIL, 0, "H200", U0),
		row(OP_RUNNING, 0, "H200", U1),		/* an earlier attempt ran on device 1 */
		row(OP_PASS, 0, "H200", U0),
		row(OP_SKIP, 1, "H200", U1),
	};
	struct lane_group *g;
	size_t n = batch_lane_groups(rows, 6, &g);

	(void)state;
	assert_int_equal(n, 2);
	assert_int_equal(batch_lane_devices(g, n), 2);
	assert_int_equal(g[0].device, 0);
	assert_string_equal(g[0].gpu_uuid, U0);
	assert_string_equal(g[0].gpu, "H200");
	/* the running operator is counted in its own lane's one card, not device 1's */
	assert_int_equal(g[0].ops, 3);
	assert_int_equal(g[0].counts[OP_PASS], 1);
	assert_int_equal(g[0].counts[OP_FAIL], 1);
	assert_int_equal(g[0].counts[OP_RUNNING], 1);
	assert_int_equal(g[1].device, 1);
	assert_string_equal(g[1].gpu_uuid, U1);
	assert_int_equal(g[1].ops, 2);
	assert_int_equal(g[1].counts[OP_PASS] + g[1].counts[OP_SKIP], 2);
	free(g);
}

static void lanes_of_a_cluster_batch(void **state)
{
	/* device 0 on two nodes: two cards in one lane; a card known by name only */
	struct op_row rows[] = {
		row(OP_PASS, 0, "H200", "GPU-b"),
		row(OP_RUNNING, 0, NULL, NULL),		/* which node's card: not known */
		row(OP_PASS, 0, "H200", "GPU-a"),
		row(OP_FAIL, 0, "H200", "GPU-b"),
		row(OP_PASS, 2, "A100", NULL),
		row(OP_PASS, 2, "", ""),		/* a version 2 table: joins the one card */
	};
	struct lane_group *g;
	size_t n = batch_lane_groups(rows, 6, &g);

	(void)state;
	assert_int_equal(n, 4);
	assert_int_equal(batch_lane_devices(g, n), 2);
	/* in the order the cards first appear, the unknown one last */
	assert_string_equal(g[0].gpu_uuid, "GPU-b");
	assert_int_equal(g[0].ops, 2);
	assert_string_equal(g[1].gpu_uuid, "GPU-a");
	assert_int_equal(g[1].ops, 1);
	assert_int_equal(g[2].device, 0);
	assert_null(g[2].gpu);
	assert_null(g[2].gpu_uuid);
	assert_int_equal(g[2].counts[OP_RUNNING], 1);
	assert_int_equal(g[3].device, 2);
	assert_string_equal(g[3].gpu, "A100");
	assert_null(g[3].gpu_uuid);
	assert_int_equal(g[3].ops, 2);
	free(g);
}

static void no_lane(void **state)
{
	struct op_row rows[] = { row(OP_PENDING, -1, NULL, NULL) };
	struct lane_group *g;

	(void)state;
	assert_int_equal(batch_lane_groups(rows, 1, &g), 0);
	assert_int_equal(batch_lane_devices(g, 0), 0);
	free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lanes_of_a_local_batch),
		cmocka_unit_test(lanes_of_a_cluster_batch),
		cmocka_unit_test(no_lane),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
