/*
 * The A/B page of a report: the model read from a comparison (compare.json's
 * document, compare_report.h), and its page.
 *
 * The model is read from the JSON document, not from struct compare, so
 * the page says exactly what compare.json says and a unit test can build
 * any case by hand. Every field is read defensively: a missing or
 * mistyped field reads as absent (NAN, "", no row), never as a crash.
 */
#ifndef ZLB_REPORT_AB_H
#define ZLB_REPORT_AB_H

#include <jansson.h>
#include <stddef.h>

#include "lib/strbuf.h"
#include "lib/strvec.h"
#include "report/report.h"
#include "report/report_ir.h"

struct report_ab_cmp {
	int has;		/* the kind was compared */
	double a_ms, b_ms, ratio, lo, hi, q;
	const char *verdict;	/* "SAME", ..., "" when absent */
	const char *why;	/* NULL when none */
	long rounds_a, rounds_b;
};

struct report_ab_row {
	const char *op, *op_name, *dtype, *shape;	/* point into the document; "" when absent */
	int paired;
	const char *unpaired_reason;			/* "" when paired */
	struct report_ab_cmp gems, torch;
	struct strvec flags;		/* report_marker_flag() names, both sides */
	char *markers;			/* "A: X Y | B: Z", "" without markers */
	char *label;			/* "op dtype shape" (dtype without "torch.") */
};

struct report_ab {
	json_t *doc;			/* a reference held */
	double threshold, fdr, confidence;
	struct report_ab_row *rows;
	size_t nr_rows, nr_paired, nr_compared;
	int caliber_ok, caliber_allowed;
	const json_t *problems;		/* [{field, a, b, text}] */
	const json_t *warnings, *notes;	/* arrays of strings */
	const json_t *summary;
	const json_t *runs[2];		/* each side's runs: [{dir, op, caliber, provenance}] */
	long exit_code;			/* what zlb compare would exit with */
	/* set by the caller, not read from the document */
	const char *names[2];		/* the sides' paths as given */
	const char *result;		/* compare's "result: ..." line, or NULL */
	const json_t *ab;		/* the A/B directory's ab.json, or NULL */
	struct report_ir_op *ir;	/* per operator on both sides */
	size_t nr_ir;
};

/* Read the model from doc (compare_to_json's shape). Returns 0, or -1 with error(). */
int report_ab_load(struct report_ab *m, json_t *doc);
void report_ab_release(struct report_ab *m);

/* The page. */
void report_ab_render(const struct report_ab *m, const struct report_opts *o,
		      struct strbuf *html);

/*
 * The whole A/B: compare paths (A, B) or the A/B directory ab_dir (when
 * not NULL: its A/ and B/, its compare.json's settings, its ab.json) and
 * render the page. Returns an exit status as report_build().
 */
int report_ab_build(const char *ab_dir, const char *const *paths,
		    const struct report_opts *o, struct strbuf *html);

#endif
