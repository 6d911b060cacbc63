/*
 * What a batch records so that `zlb batch --batch-dir DIR --resume`
 * continues the batch that was started, not a new one with today's
 * defaults: batch.json "resume" (schema 2) holds every batch option and
 * every zlb run option as the first session resolved them (value text, as
 * lib/options.h records them) and the operator list.
 *
 * Continuing: an option not given again as a flag takes its recorded
 * value (a variable set since is named and not used); a flag given again
 * with another value is a conflict,
 * refused with both values named unless --override says it is meant, and
 * then recorded with the session that overrode it.
 */
#ifndef ZLB_BATCH_RESUME_H
#define ZLB_BATCH_RESUME_H

#include <jansson.h>

#include "lib/options.h"
#include "lib/strvec.h"

/* One option table and the values a session resolved against it. */
struct batch_knobs {
	const struct opt_def *defs;
	struct opt_values *values;
	const char *const *skip;     /* names that belong to a session, not the batch */
};

/* The "resume" object of batch.json. A new reference. */
json_t *batch_record_make(const struct batch_knobs *batch, const struct batch_knobs *run,
			  const struct strvec *specs);

/*
 * Read dir's batch.json "resume" object into *rec (a new reference). Returns
 * 0; -1 with error() when there is no batch.json or it cannot be read, or
 * when it was written before options were recorded (schema 1) and so cannot
 * be continued as it was started.
 */
int batch_record_read(const char *dir, json_t **rec);

/*
 * Continue rec: restore both tables (opt_values_restore: flags given again
 * that differ are conflicts, variables that differ are notes) and the
 * operator list (specs: the list given now, or empty: then filled from rec;
 * a list given that differs is a conflict). Returns the number of conflicts.
 */
size_t batch_record_restore(const json_t *rec, const struct batch_knobs *batch,
			    const struct batch_knobs *run, struct strvec *specs,
			    struct strvec *conflicts, struct strvec *notes);

#endif
