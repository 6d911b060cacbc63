/*
 * zlb ab: one A/B of one operator, end to end.
 *
 *   zlb ab OP --axis NAME=VA,VB [--rounds N] [zlb run options ...]
 *
 * The two sides differ only in what is named here: environment settings
 * (--axis, --a-env/--b-env), the interpreter (--a-python/--b-python: two
 * Triton builds in two environments) or the FlagGems checkout
 * (--a-flaggems-dir/--b-flaggems-dir). Every other option is a `zlb run`
 * option given unchanged to every round, so both sides share one caliber.
 *
 * Rounds. Each round of a side is a child `zlb run` (this binary, spawned
 * without a shell, in its own process group, on the same terminal) whose
 * run directory lands in <ab>/<side>/r<k>/<op>_<time>/. First the
 * recording R (<ab>/R/<op>_<time>/, side A's settings) records the autotune
 * configs (on an isolated tuner cache by default, so its choice is its own
 * and not inherited from whatever ran on the machine before); it is not
 * compared. Then A1 B1 A2 B2 ... (interleaved, so slow drift of the machine
 * hits both sides alike), every one replaying R: one set of configs
 * everywhere, the compiler change the only variable, and every compared
 * round one kind of process (a recording's rows carry its tuning's history:
 * on an H100 they read up to 1% apart from replays that agreed within
 * 0.1%). The tuner-cache setting is the same for every run (it is
 * caliber): isolated unless --shared-tuner-cache (or an explicit
 * --isolate-tuner-cache=0 / ZL_ISOLATE_TUNER_CACHE=0).
 *
 * Gates. Before round 1, each environment variable the sides set is looked
 * up, as a whole identifier, in the FlagGems checkout's Python source
 * (<checkout>/src, or the checkout when it has no src/): a switch found
 * nowhere was probably renamed or removed upstream and is warned about.
 * Names of the compiler's own switches (TRITON_*, FLAGTREE_*) are not
 * looked up: FlagGems never mentions them. After round 1 the IR of both
 * runs is fingerprinted (ir_diff.h): byte-identical IR, or no IR on either
 * side, means nothing shows that the switch changed the generated code, and
 * more rounds would measure the same code twice; zlb ab stops with
 * SWITCH_NO_IR_DIFF (exit 10) unless --allow-no-ir-diff.
 *
 * End. One comparison over all rounds (compare.h: A = <ab>/A, B = <ab>/B),
 * compare.csv and compare.json in the ab directory, and ab.json (below).
 * The exit status is compare's (0, 1 regression, 4 caliber, 8 nothing
 * paired, 7 files), or the code of the first round that failed, or 10, or
 * 130 when interrupted.
 *
 * ab.json (schema_version 3; 2 had no "calibrate"; 1 had no R, A1 recorded and
 * was compared),
 * rewritten after every step:
 *   { "schema_version": 3, "kind": "zlb-ab", "zlb_version", "status"
 *       ("running" | "completed" | "no_ir_diff" | "round_failed" |
 *        "interrupted" | "error"), "exit_code" (null while running),
 *     "op", "ab_dir", "started_at", "finished_at", "axis" (text),
 *     "sides": { "A"|"B": { "env": {NAME: value | null (unset)},
 *                           "python", "flaggems_dir" (null: shared),
 *                           "checkout" } },
 *     "rounds", "rounds_done", "order": ["R", "A1", "B1", ...],
 *     "tuner_cache": "isolated" | "shared", "run_options": [...],
 *     "calibrate": whether R read the rows' clock elasticity for the comparison,
 *     "recording": <R's run dir> | null,
 *     "runs": [ { side ("R" | "A" | "B"), round (0 for R), runs_dir,
 *                 dir | null, autotune_mode, replay_from, exit_code } ],
 *     "switch_check": [ { name, searched | null, found | null, skipped } ],
 *     "ir": null | { "A"|"B": { captured, fingerprint, files, why },
 *                    verdict ("differ" | "identical" | "none" | "one_side"),
 *                    same, differing, only_a, only_b, first, allowed },
 *     "compare": null | { exit_code, csv, json, paired, regression,
 *                         caliber_problems, gems: {SAME, FASTER, SLOWER,
 *                         UNSURE}, torch: {...} },
 *     "failed": null | { side, round, dir, exit_code } }
 *
 * A round that fails stops the A/B; R failing stops it before round 1.
 */
#ifndef ZLB_AB_H
#define ZLB_AB_H

#include <stddef.h>

#include "lib/reporter.h"
#include "ir/ir_diff.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"

#define AB_SCHEMA_VERSION 3
#define AB_RECORDING "R"	/* the recording's directory and name */
#define AB_FILE "ab.json"
#define AB_DEFAULT_ROUNDS 3
#define AB_MAX_ROUNDS 100
/* How many differing IR files are named after round 1. */
#define AB_IR_FIRST 5

/* One environment setting of a side: value NULL means "unset on this side". */
struct ab_setting {
	char *key;
	char *value;
};

struct ab_side {
	const char *name;		/* "A" or "B" */
	struct ab_setting *set;
	size_t nr, alloc;
	char *python;			/* this side's --python, or NULL: the shared one */
	char *flaggems_dir;		/* this side's --flaggems-dir, or NULL */
};

struct ab_spec {
	struct ab_side side[2];
	char *axis;			/* --axis as given, or NULL */
	int rounds;
	int allow_no_ir_diff;		/* --allow-no-ir-diff or SWITCH_ALLOW_NO_IR_DIFF=1 */
	/* --shape-set FILE, repeatable: one A/B per file (ab_execute_sets) */
	struct strvec shape_sets;
	int shared_tuner_cache;		/* --shared-tuner-cache */
	double threshold;		/* compare's band (fraction); < 0: its default */
	/* compare --elasticity-from: a calibration batch's s for the rounds (NULL: none) */
	const char *elasticity_from;
	/*
	 * --calibrate: R also reads each hot row's clock elasticity (zlb run
	 * --clock-elasticity) and the comparison takes R's s for the rounds.
	 * R is the one run not compared, so its burns reach no measured row;
	 * what reaches the rounds is what R chose after them, the configs its
	 * tuners timed and the calls per replay it settled, alike for A and B.
	 */
	int calibrate;
};

void ab_spec_init(struct ab_spec *s);
void ab_spec_release(struct ab_spec *s);

/*
 * --axis NAME=VA,VB: A gets NAME=VA, B gets NAME=VB. Exactly one comma
 * (values holding a comma go through --a-env/--b-env); empty values are
 * set as empty strings. Returns 0, or -1 with error().
 */
int ab_spec_add_axis(struct ab_spec *s, const char *text);
/* --a-env / --b-env K=V for side 0 / 1. Returns 0, or -1 with error(). */
int ab_spec_add_env(struct ab_spec *s, int side, const char *text);
/* --a-python, --a-flaggems-dir, ... Returns 0, or -1 with error() (given twice, empty). */
int ab_spec_set_python(struct ab_spec *s, int side, const char *python);
int ab_spec_set_flaggems_dir(struct ab_spec *s, int side, const char *dir);

/*
 * After parsing: a variable named on one side only is unset on the other
 * (so the sides differ by exactly what was named); refuses zlb's own
 * variables (a caliber both sides must share) and sides that do not
 * differ. Returns 0, or -1 with error().
 */
int ab_spec_finish(struct ab_spec *s);

/*
 * The placeholder a switch name may hold for the backend's FlagTree vendor:
 * FLAGTREE_<VENDOR>_RLC_ENHANCE is FLAGTREE_MUSA_RLC_ENHANCE on musa and
 * FLAGTREE_RLC_ENHANCE where the vendor is "" (FlagTree's NVIDIA/AMD build).
 */
#define AB_VENDOR_PLACEHOLDER "<VENDOR>"

/*
 * text with every <VENDOR> replaced by vendor ("<VENDOR>_" dropped whole when
 * vendor is ""). Returns the new text, or NULL with error() when text holds
 * the placeholder and vendor is NULL (zlb does not know the spelling).
 * backend names the backend in that sentence.
 */
char *ab_expand_vendor(const char *text, const char *vendor, const char *backend);

/* The value of key on side (NULL: unset), and whether side names key at all. */
const struct ab_setting *ab_side_find(const struct ab_side *side, const char *key);

/*
 * The environment of a side's runs: base with the side's settings applied
 * (set or removed).
 */
void ab_side_env(const struct ab_side *side, char *const *base, struct strvec *out);

/*
 * What differs between the sides, one token per difference joined by ';':
 * "NAME=VA,VB" (an unset side shows as "(unset)"), "python=PA,PB",
 * "flaggems-dir=DA,DB" ("(shared)" for a side without its own). No spaces
 * unless a value holds one.
 */
void ab_axis_describe(const struct ab_spec *s, struct strbuf *out);

/* ---- the switch, in the FlagGems source ------------------------------------ */

/* The prefix that exempts name from the source search (TRITON_, FLAGTREE_), or NULL. */
const char *ab_switch_exempt(const char *name);

struct ab_switch_hit {
	char *root;		/* the directory searched */
	int found;		/* name occurs in a .py file below it */
	char *where;		/* the first file it occurs in (relative to root), or NULL */
	size_t files;		/* .py files read */
};

/*
 * Look for name as a whole identifier (not inside a longer one) in the .py
 * files below <checkout>/src (the checkout itself when it has no src/),
 * skipping hidden directories, __pycache__ and symbolic links. Returns 0,
 * or -1 with error() when the directory cannot be read.
 */
int ab_switch_search(const char *checkout, const char *name, struct ab_switch_hit *hit);
void ab_switch_hit_release(struct ab_switch_hit *hit);

/* Does name occur in text[0..len) as a whole identifier? */
int ab_text_has_identifier(const char *text, size_t len, const char *name);

/* ---- the IR of round 1 ------------------------------------------------------ */

enum ab_ir_verdict {
	AB_IR_DIFFER,		/* both have IR, fingerprints differ */
	AB_IR_IDENTICAL,	/* both have IR, byte-identical */
	AB_IR_NONE,		/* neither side captured IR */
	AB_IR_ONE_SIDE,		/* one side has IR, the other none */
};

struct ab_ir_side {
	int has_ir;
	char why[512];			/* !has_ir: why not */
	struct ir_fingerprint fp;
};

struct ab_ir_result {
	struct ab_ir_side side[2];
	enum ab_ir_verdict verdict;
	size_t same, differing, only_a, only_b;	/* stage files, when both have IR */
	/* up to AB_IR_FIRST "<path> (differs|only in A|only in B)", .ttgir files first */
	struct strvec first;
};

/*
 * Fingerprint the IR of two runs (their ttgir/, or a temporary layout of
 * their ir/ staging) and, when both have IR, pair their stage files by
 * relative path. Returns 0, or -1 with error() (a tree could not be read).
 */
int ab_ir_compare(const char *run_a, const char *run_b, struct ab_ir_result *r);
void ab_ir_result_release(struct ab_ir_result *r);
const char *ab_ir_verdict_name(enum ab_ir_verdict v);

/* ---- the whole A/B ---------------------------------------------------------- */

struct ab_plan {
	const struct ab_spec *spec;
	const char *exe;		/* absolute path of zlb itself */
	char *const *envp;		/* zlb ab's own environment */
	const char *runs_dir;		/* where the ab directory is created */
	const char *op;			/* the operator (as preflight resolved it) */
	const char *checkout[2];	/* each side's FlagGems checkout */
	const struct strvec *run_args;	/* zlb run arguments for every round */
	int isolate_tuner_cache;	/* 1 isolated, 0 shared: the same for every run */
	int color;			/* colour our own lines */
	const char *color_setting;	/* for the compare report */
	int warn_color;			/* colour the warnings */
	struct reporter *rep;		/* where the A/B says what it does (the command's) */
	/*
	 * The ab directory's name under runs_dir (claimed exactly), or NULL for
	 * ab_<op>_<time> (ab_execute_sets names each set's A/B after its file).
	 */
	const char *dir_name;
	/* The shape file of this A/B (a set of ab_execute_sets), or NULL; in ab.json. */
	const char *shape_set;
};

/*
 * Claim <runs_dir>/ab_<op>_<time>/, run the rounds, gate on the IR after
 * round 1, compare, write ab.json. Tells p->rep as it goes (warnings as
 * REPORT_WARN); the rounds' own zlb run output goes to the terminal the
 * command inherited. Errors of the parts it calls are reported, not left to
 * the error routine, which the command sets. Returns the exit status (enum
 * zlb_exit or a round's code).
 */
int ab_execute(const struct ab_plan *p);

/*
 * Several shape sets in one call (the original's ab_fold_test.sh looped its
 * trace shape files): claims <runs_dir>/ab_<op>_sets_<time>/ and runs one
 * whole A/B per file of p->spec->shape_sets into a directory of its own,
 * named after the file (ab_execute with --shapes FILE added to every
 * round's options), each with its own recording, IR gate and comparison. A
 * set that stops (a failed round, SWITCH_NO_IR_DIFF) does not stop the
 * next ones; an interrupt stops them all. Then one combined table of every
 * set's paired rows (set, dtype, shape, A and B gems ms, B/A, interval,
 * verdict) on the terminal and in compare_sets.csv, and ab_sets.json:
 *
 *   { "schema_version": 1, "kind": "zlb-ab-sets", "op", "dir", "status",
 *     "exit_code", "sets": [ { "name", "shape_file", "dir", "exit_code",
 *     "status" (the set's ab.json status), "paired", "gems": {verdict
 *     counts} } ] }
 *
 * Everything zlb ab itself says, for every set, is also written ANSI-free
 * to ab.log in that directory; "##### set <name>" lines open each set, so
 * `grep -E '^#####|SLOWER|FAILED' ab.log` reads the outcome at a glance. The
 * rounds' own output is in each run's run.log. Returns the first non-zero
 * exit status of the sets in their order (130 when interrupted), else 0.
 */
int ab_execute_sets(const struct ab_plan *p);

#endif
