/*
 * What the files of struct compare share (compare.c: runs and the
 * analysis; compare_caliber.c: identities and the caliber check;
 * compare_rows.c: reading and pairing rows). Private to src/compare/.
 */
#ifndef ZLB_COMPARE_INT_H
#define ZLB_COMPARE_INT_H

#include <stdint.h>

#include "compare/compare.h"
#include "lib/strvec.h"

/* "gems", "torch": the kinds' names in files and messages. */
extern const char *const compare_kind_name[COMPARE_KINDS];
/* The operator of a run: its identity's op, else its directory's name. */
const char *compare_run_op(const struct compare_run *r);
/* XXH3 of a row key: the row map's hash and the seed of the row's bootstrap. */
uint64_t compare_key_hash(const char *key);
/* The verdict a row's kind k shows: SAME, FASTER, ..., EXCLUDED (compare_report.c). */
const char *compare_verdict_text(const struct compare_row *row, int k);

#endif
