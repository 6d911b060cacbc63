/*
 * The operators of a batch by where they ran, for `zlb batch --status`:
 * one group per device lane (ops_status.csv's device column) and card
 * (gpu_uuid, else gpu), each with its operators' counts per status. A
 * local lane is one card; a cluster batch's device 0 is a card on each
 * node, so one lane can hold several cards, each a group of its own.
 */
#ifndef ZLB_BATCH_LANES_H
#define ZLB_BATCH_LANES_H

#include <stddef.h>

#include "batch/batch_status.h"

struct lane_group {
	int device;			/* the lane's device index */
	const char *gpu, *gpu_uuid;	/* borrowed from the rows; NULL: not recorded */
	size_t ops;
	size_t counts[OP_STATUSES];
};

/*
 * Group rows[0..n) that have a device (device >= 0; an operator not yet
 * given to a lane is in none), by device ascending, then by the card's
 * first appearance. A row without a card of its own (running: its gpu
 * columns are an earlier attempt's; a table before version 3) joins the lane's first card when
 * the lane has exactly one, else a group of its own with gpu NULL.
 * *out is allocated (free()); returns how many groups.
 */
size_t batch_lane_groups(const struct op_row *rows, size_t n, struct lane_group **out);

/* How many distinct devices the groups hold. */
size_t batch_lane_devices(const struct lane_group *g, size_t n);

#endif
