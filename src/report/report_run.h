/*
 * The run page of a report: one run's rows, latency against size per
 * dtype (torch and gems), with its identity.
 */
#ifndef ZLB_REPORT_RUN_H
#define ZLB_REPORT_RUN_H

#include <jansson.h>
#include <stddef.h>

#include "lib/strbuf.h"
#include "report/report.h"

struct report_run_row {
	char *op_name, *dtype, *shape, *status, *timer, *markers;
	double torch_ms, gems_ms, speedup;
	double size;		/* report_shape_size(shape) */
};

struct report_run {
	char *dir;
	json_t *identity;	/* NULL when absent or unreadable */
	struct report_run_row *rows;
	size_t nr_rows, alloc_rows, bad_lines;
};

/*
 * The size of a row's input from its shape_detail text: the elements of
 * every torch.Size([...]) in it, added up ("[torch.Size([1024, 1024]), 1]"
 * is 1048576). NAN when it names no Size.
 */
double report_shape_size(const char *shape);

/* Read the run at dir. Returns 0, or -1 with error(). */
int report_run_load(struct report_run *m, const char *dir);
void report_run_release(struct report_run *m);

void report_run_render(const struct report_run *m, const struct report_opts *o,
		       struct strbuf *html);

/* Check, load and render the run at dir. Returns an exit status as report_build(). */
int report_run_build(const char *dir, const struct report_opts *o, struct strbuf *html);

#endif
