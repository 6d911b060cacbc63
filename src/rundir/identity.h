/*
 * run_identity.json: what a run was (caliber) and what it ran on
 * (provenance). Two runs are comparable only when every caliber field
 * matches; provenance may differ (the compiler under test is provenance).
 *
 *   { "schema_version": 1,
 *     "status": "running" | "completed" | "failed" | "interrupted" | "crashed",
 *     "op": ..., "caliber": {...}, "provenance": {...}, "outcome": {...} }
 *
 * What the caliber holds is the writer's (zlb run: run/run_caliber.c);
 * a reader compares every key it finds.
 */
#ifndef ZLB_IDENTITY_H
#define ZLB_IDENTITY_H

#include <jansson.h>

#define IDENTITY_SCHEMA_VERSION 1
#define IDENTITY_FILE "run_identity.json"

/*
 * caliber.centre: what a graph-timed row's latency is. Runs before it had
 * no such field and reported the pooled median of all placements' samples;
 * a comparison against one of them is caught as a caliber difference.
 */
#define TIMER_CENTRE "mean_of_placement_medians"

/* A fresh identity of op's run in run_dir: schema_version, status, empty sections. */
json_t *identity_new(const char *op, const char *run_dir);

/* The named section ("caliber", "provenance", "outcome"), created if absent. */
json_t *identity_section(json_t *id, const char *name);

/* Write <run_dir>/run_identity.json atomically. */
int identity_write(const char *run_dir, const json_t *id);

/* Read it back: 0, 1 when absent, -1 on error. Checks schema_version. */
int identity_load(const char *run_dir, json_t **out);

/* Current UTC time as ISO 8601 ("2026-11-29T08:15:02Z"). */
json_t *identity_now(void);

#endif
