/*
 * graph_plan.json: the graphs a replay run must capture (docs/protocol.md §1).
 *
 * A run that replays another's autotune configs (--replay-from, every
 * compared round of zlb ab) also takes the recording's graph shape: for each
 * graph-timed torch or gems measurement of a SUCCESS row, its calls per
 * replay (K), its placement count, the power duty its kept samples ran at
 * and the K it captured first before settling K, keyed by nodeid, op_name,
 * dtype, shape detail and role, in the recording's order. The timing plugin
 * captures exactly that graph, after the same first capture and check, so
 * two runs of one A/B never differ in K nor in what was allocated before
 * the measured graph, and samples it at the recording's duty where that
 * was below 1, so that whether NVML's cap bit was caught in one process
 * does not decide which protocol each side's row ran.
 *
 *   { "schema_version": 2, "kind": "graph_plan", "replay_from": DIR,
 *     "measurements": [ { "nodeid", "op_name", "dtype", "shape_detail",
 *                         "role", "calls_per_replay", "placements",
 *                         "power_duty", "calls_first" } ] }
 *
 * power_duty and calls_first are null where the recording did not say;
 * version 1 had neither.
 */
#ifndef ZLB_GRAPH_PLAN_H
#define ZLB_GRAPH_PLAN_H

#include <stddef.h>

#define GRAPH_PLAN_FILE "graph_plan.json"
#define GRAPH_PLAN_SCHEMA_VERSION 2

/*
 * Write run_dir/graph_plan.json from replay_from/results.jsonl. *path gets
 * the file's path (free it), *count the measurements planned. A recording
 * without results.jsonl gives an empty plan. Returns 0, or -1 (error())
 * when the recording cannot be read or the plan cannot be written.
 */
int graph_plan_write(const char *replay_from, const char *run_dir, char **path,
		     size_t *count);

#endif
