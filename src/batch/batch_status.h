/*
 * The state of a batch on disk, kept so that a batch killed at any
 * instant (SIGKILL included) and resumed reruns exactly the unfinished
 * operators:
 *
 *   <batch>/ops_status.csv     one row per operator, rewritten whole
 *                              (write_file_atomic) as each operator changes
 *   <batch>/<repo>/<key>/.complete
 *                              written (atomically) once that run directory
 *                              is final and its status is PASS or SKIP; the
 *                              truth a resume trusts; holds the row as JSON
 *
 * ops_status.csv columns, in this order (readers go by name):
 *   repo,op,spec,status,seconds,attempts,rows,remarks,backend,device,gpu,
 *   gpu_uuid,timer,exit_code,run_dir,job
 * status: PASS FAIL SKIP TIMEOUT CANCELLED when final; PENDING (not run yet,
 * or interrupted) and RUNNING (a child is at work) for the live view. seconds:
 * wall time of all attempts; rows: results.jsonl rows of the final attempt;
 * device: the logical device index given to `zlb run --device`; exit_code:
 * gpu, gpu_uuid: the card the final attempt ran on, as its run_identity.json
 * recorded it (provenance gpu_name, gpu_uuid; empty when the run recorded
 * none); exit_code:
 * the final attempt's zlb run exit status (empty when none ran); run_dir:
 * relative to the batch directory, empty when no run directory was made;
 * job: the cluster task that ran the final attempt ("<array>_<index>"),
 * empty for a local batch. Version 2 added job and CANCELLED; version 3 gpu
 * and gpu_uuid. Readers go by name, so tables of versions 1 and 2 read
 * with those columns empty.
 * The table's version is batch.json's tables.ops_status (OPS_STATUS_VERSION).
 */
#ifndef ZLB_CORE_BATCH_STATUS_H
#define ZLB_CORE_BATCH_STATUS_H

#include "batch/batch_policy.h"
#include "batch/opspec.h"

#define OPS_STATUS_VERSION 3
/* .complete: version 2 added gpu and gpu_uuid; version 1 markers still read. */
#define COMPLETE_VERSION 2
#define COMPLETE_MARKER ".complete"

struct op_row {
	enum op_status status;
	double seconds;
	int attempts;
	long rows;
	char *remarks;    /* owned; NULL: none */
	char *backend;    /* owned */
	int device;       /* -1: not assigned */
	char *gpu;        /* owned: the GPU's name as the run recorded it; NULL: unknown */
	char *gpu_uuid;   /* owned: its uuid; NULL: unknown */
	char *timer;      /* owned; NULL: unknown */
	int exit_code;    /* -1: no attempt ended */
	char *run_dir;    /* owned, relative to the batch; NULL: none */
	char *job;        /* owned: the cluster task of the final attempt; NULL: none */
};

void op_row_init(struct op_row *r);
void op_row_release(struct op_row *r);
/* Replace *field with a copy of value (NULL allowed). */
void op_row_set(char **field, const char *value);

/* The header line's names, in order, NULL-terminated. */
extern const char *const ops_status_columns[];

/* Render the table (header + one row per operator) into out. */
void ops_status_render(const struct op_spec *specs, const struct op_row *rows, size_t n,
		       struct strbuf *out);
/* Render and land it at path atomically. Returns 0 or error(). */
int ops_status_write(const char *path, const struct op_spec *specs,
		     const struct op_row *rows, size_t n);
/*
 * Read the table at path into rows[i] for each of the n specs it lists (by
 * spec); found[i] is set for those. Rows of other specs are ignored. Returns
 * 0, 1 when there is no table, or -1 with error() for one that cannot be read.
 */
int ops_status_read(const char *path, const struct op_spec *specs, size_t n,
		    struct op_row *rows, int *found);
/* Copy src into dst (dst's fields released first). */
void op_row_copy(struct op_row *dst, const struct op_row *src);

/*
 * Write <run_dir_abs>/.complete for a PASS or SKIP row (BUG otherwise).
 * Returns 0 or error().
 */
int complete_write(const char *run_dir_abs, const struct op_spec *spec,
		   const struct op_row *row);
/*
 * Read <run_dir_abs>/.complete into row (its fields replaced). Returns 0,
 * 1 when there is none, or -1 (with error()) for a marker that cannot be
 * read, is of an unknown version or another spec: the caller reruns that op.
 * A version 1 marker leaves gpu and gpu_uuid NULL.
 */
int complete_read(const char *run_dir_abs, const struct op_spec *spec, struct op_row *row);

#endif
