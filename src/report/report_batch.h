/*
 * The batch page of a report: what zlb summary reads (batch/summary.h),
 * drawn: statuses, the distribution of speedups, the slowest and fastest
 * operators, the rows that were not graph-timed, every operator (and the
 * card it ran on), the cards when there were several.
 */
#ifndef ZLB_REPORT_BATCH_H
#define ZLB_REPORT_BATCH_H

#include <stddef.h>

#include "batch/summary.h"
#include "lib/strbuf.h"
#include "report/report.h"

/* How many operators the slowest and the fastest lists show, each. */
#define REPORT_BATCH_EXTREMES 10

/* One operator's speedup over its ranked rows (summary.h's ranking). */
struct report_batch_op {
	size_t op;		/* index into summary.ops */
	size_t rows;		/* ranked rows */
	double geomean, min, max;
};

/*
 * The operators with ranked rows, by geometric-mean speedup ascending
 * (ties by repo/op). *out is allocated; returns how many.
 */
size_t report_batch_ranked_ops(const struct summary *s, struct report_batch_op **out);

/*
 * The speedups' histogram: bins a quarter of an octave wide (x2^0.25)
 * from the lowest to the highest ranked speedup, at most 64 bins (wider
 * when the range is). edges gets nbins + 1 values, counts nbins; both
 * allocated. Returns nbins, 0 when no row is ranked.
 */
size_t report_batch_histogram(const struct summary *s, double **edges, size_t **counts);

/* The cards the batch's operators ran on, read once for the page. */
struct report_batch_cards {
	json_t *devs;     /* summary_devices() */
	size_t known;     /* how many name a card: operators that recorded none are not one */
	size_t uuid_len;  /* how much of a uuid tells them apart (uuid_abbrev.h); 0 when
			     known <= 1: the card's name is enough */
};
void report_batch_cards(const struct summary *s, struct report_batch_cards *c);
void report_batch_cards_release(struct report_batch_cards *c);
/* "H200 GPU-1a2b3c4d": a card's name ("(unknown)" when none) and uuid_len of its uuid. */
void report_batch_gpu_label(struct strbuf *sb, const char *gpu, const char *uuid,
			    size_t uuid_len);
/*
 * The devices section: a chart of operators per card with its table beside
 * it; for a batch whose operators ran on more than one (c->known > 1).
 */
void report_batch_devices(const struct report_batch_cards *c, struct strbuf *sb);

/* The page of a loaded summary. */
void report_batch_render(const struct summary *s, const struct report_opts *o,
			 struct strbuf *html);

/*
 * Check the batch at dir (links out of it, ops_status.csv's run_dir
 * column), load it and render the page. Returns an exit status as
 * report_build().
 */
int report_batch_build(const char *dir, const struct report_opts *o, struct strbuf *html);

#endif
