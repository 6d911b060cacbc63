/*
 * The IR side of an A/B report: per operator, did the two builds generate
 * the same code (ab.h's verdict, the one zlb ab gates on), and which stage
 * files differ, with links to both sides' copies.
 */
#ifndef ZLB_REPORT_IR_H
#define ZLB_REPORT_IR_H

#include <stddef.h>

#include "ab/ab.h"

/* How many differing files of one operator get a line (the rest are counted). */
#define REPORT_IR_FILES_MAX 200

enum report_ir_what { REPORT_IR_DIFFERS, REPORT_IR_ONLY_A, REPORT_IR_ONLY_B };

struct report_ir_file {
	char *rel;			/* <shape>/<kernel>/<variant>.<stage> */
	enum report_ir_what what;
	char *link[2];			/* A's and B's copy, relative to the report; NULL: none */
};

struct report_ir_op {
	char *op;
	char *run[2];			/* the runs compared (absolute) */
	int ok;				/* the verdict could be reached */
	char *why;			/* !ok: why not; or a note (no ttgir/ to link) */
	enum ab_ir_verdict verdict;
	size_t same, differing, only_a, only_b;
	struct report_ir_file *files;	/* up to REPORT_IR_FILES_MAX, .ttgir first */
	size_t nr_files;
};

/*
 * Compare the IR of run_a and run_b (ab_ir_compare) and list the stage
 * files that differ. Links are made only to regular files of each run's
 * own ttgir/ that stay inside the run, relative to link_base (the
 * report's directory, resolved). Never fails: a verdict that cannot be
 * reached is recorded in why.
 */
void report_ir_pair(struct report_ir_op *o, const char *op, const char *run_a,
		    const char *run_b, const char *link_base);
void report_ir_op_release(struct report_ir_op *o);

#endif
