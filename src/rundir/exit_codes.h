/*
 * Exit statuses of zlb, shared by every command and documented in the
 * README ("Exit codes"). Scripts and the batch layer branch on them, so a
 * value never changes meaning; new ones are appended.
 */
#ifndef ZLB_EXIT_CODES_H
#define ZLB_EXIT_CODES_H

enum zlb_exit {
	ZLB_EXIT_OK = 0,            /* everything selected ran and passed */
	ZLB_EXIT_TESTS_FAILED = 1,  /* pytest reported failed tests */
	ZLB_EXIT_USAGE = 2,         /* bad command line or option value */
	ZLB_EXIT_PREFLIGHT = 3,     /* a preflight check failed; nothing started */
	ZLB_EXIT_CALIBER = 4,       /* (compare) calibers differ */
	ZLB_EXIT_NO_TESTS = 5,      /* pytest collected nothing */
	ZLB_EXIT_PYTEST_ERROR = 6,  /* pytest usage/internal error (its rc 2-4) */
	ZLB_EXIT_IO = 7,            /* zlb could not write its own files */
	ZLB_EXIT_NO_DATA = 8,       /* (ir) nothing to read: not a run directory, or no IR captured */
	ZLB_EXIT_OP_MISMATCH = 9,   /* (ir diff) the two sides measured different operators */
	ZLB_EXIT_INTERRUPTED = 130, /* SIGINT/SIGTERM: children stopped, run kept */
	/* 128+N: the child died from signal N (other than an interrupt) */

	/* (ir diff) the IR differs, as diff(1) says 1; same value as TESTS_FAILED */
	ZLB_EXIT_DIFFERENT = 1,
	/* (compare) a significant regression beyond the threshold; same value */
	ZLB_EXIT_REGRESSION = 1,

	/*
	 * (ab) after round 1 the IR of A and B was byte-identical, or neither
	 * side captured any: the switch changed no generated code (SWITCH_NO_IR_DIFF)
	 */
	ZLB_EXIT_NO_IR_DIFF = 10,
};

#endif
