/*
 * zlb batch --junit FILE: a batch as the test report CI systems show
 * (lib/junit.h), read back from the batch's ops_status.csv
 * (batch_status.h) once the batch has ended, so it says exactly what the
 * table says: one test case per operator (classname zlb.batch.<repo>,
 * name its spec, time its seconds), FAIL, TIMEOUT and CANCELLED (a cluster
 * task cancelled) failed (status,
 * remarks, exit code, run directory), SKIP skipped (its remarks), an
 * operator that did not run (PENDING, RUNNING: an interrupted or stopped
 * batch) skipped as "not run". Each case's <properties> say where it
 * ran: backend, device (the lane's index), gpu and gpu_uuid, those the
 * table holds.
 */
#ifndef ZLB_BATCH_JUNIT_H
#define ZLB_BATCH_JUNIT_H

#include "lib/junit.h"

/* Fill suite from <batch_dir>/ops_status.csv. Returns 0, or -1 with error(). */
int batch_junit_read(const char *batch_dir, struct junit_suite *suite);

#endif
