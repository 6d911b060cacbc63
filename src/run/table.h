/*
 * FlagGems' per-operator result tables: parsing them, and a prettier
 * rendering for the terminal.
 *
 * Upstream (benchmark/consts.py, BenchmarkResult.__str__) prints, per
 * operator and dtype:
 *
 *     Operator: softmax  Performance Test (dtype=torch.float16, mode=cudagraph,level=core)
 *     Status       Torch Latency (ms)    Gems Latency (ms)         Gems Speedup          Size Detail
 *     -----------------------------------------------------------------------------------------------
 *     SUCCESS               0.004690            0.002301               2.038          [torch.Size([1024, 1024]), 1]
 *
 * with optional "TFLOPS" or "Torch GBPS" / "Gems GBPS" columns before Size
 * Detail. run.log keeps that text as printed (users grep SUCCESS lines);
 * only the terminal gets table_render()'s version, through table_filter.
 */
#ifndef ZLB_TABLE_H
#define ZLB_TABLE_H

#include <stddef.h>

#include "lib/strbuf.h"
#include "lib/strvec.h"

struct table_row {
	char *status;		/* "SUCCESS" or "FAILED" */
	struct strvec fields;	/* one per numeric column, as printed: "0.004690", "N/A" */
	char *size_detail;	/* everything after the numeric columns, trimmed */
};

struct table_block {
	char *title;		/* the "Operator: ..." line as read */
	char *op;
	char *dtype;		/* "torch.float16" */
	char *mode;		/* "" when the title has no mode= */
	char *level;		/* "" when the title has no level= */
	struct strvec columns;	/* "Status", the numeric columns, "Size Detail" */
	size_t nr_fields;	/* numeric columns: columns.nr - 2 */
	struct table_row *rows;
	size_t nr_rows, alloc_rows;
};

#define TABLE_BLOCK_INIT { NULL, NULL, NULL, NULL, NULL, STRVEC_INIT, 0, NULL, 0, 0 }

void table_block_init(struct table_block *b);
void table_block_release(struct table_block *b);

/*
 * Parse the block that starts at lines[0] (its "Operator: " line; a
 * trailing "\n" or "\r\n" on any line is ignored) into out, which must be
 * initialised and is emptied first. The block is the title, the column
 * names, the dashes and every following row; it ends at the first line
 * that is not a row (a blank line, ".", "PASSED", ...) or at lines[n].
 *
 * Returns the number of lines the block spans (4 or more: there is at
 * least one row), or -1 with error() when the layout is not upstream's;
 * out is then empty.
 */
int table_parse_block(const char *const *lines, size_t n, struct table_block *out);

/* Does line start a table block ("Operator: ")? */
int table_is_title(const char *line);

/*
 * Is line a row of a table: "SUCCESS" or "FAILED" padded with at least two
 * spaces? (pytest's "FAILED benchmark/x.py::test_y" has one, and is not.)
 */
int table_is_row(const char *line);

/* Index into each row's fields of the numeric column named name, or -1. */
int table_block_field(const struct table_block *b, const char *name);

/*
 * Append the terminal rendering of b to out, each line ending in "\n":
 * the title (op and dtype bold), a legend of the Size Detail arguments
 * that are the same in every row, then the table with upstream's column
 * names and widths fitted to the content. Each row's Size Detail shows
 * only the arguments that vary, e.g. for sum_dim_out
 *
 *       same in every row: #2=1
 *     ... torch.Size([1024, 1024]), out=torch.Size([1024])
 *
 * (#k is the 1-based argument position, kwargs appear as name=value). The
 * full text is shown when there is one row, when nothing or everything is
 * the same, or when the rows' Size Details do not split alike. With color
 * SUCCESS is green and FAILED red; without, out gets no ESC byte.
 */
void table_render(const struct table_block *b, int color, struct strbuf *out);

/*
 * Append line (len bytes, no newline) to out as the terminal shows lines
 * outside tables. With color, a line without escapes of its own is
 * coloured: yellow when it starts with BENCHMARK_DIRECT_NO_CUDAGRAPH,
 * AUTOTUNE_REPLAY_FALLBACK, CAPTURE_FATAL, GRAPH_MEMCPY_NODES,
 * GRAPH_MEMSET_NODES, GRAPH_NO_KERNELS or WARNING; red when it holds
 * the word FAILED or PREFLIGHT_FAILED or is pytest's "N failed ... in Ns"
 * summary (the markers win over a FAILED in their text: a fallback is not
 * a failure). A line with escapes is left as the child coloured it.
 * Without color, escapes are stripped and any other line is unchanged.
 */
void table_decorate_line(const char *line, size_t len, int color, struct strbuf *out);

/*
 * The streaming filter for the terminal. Feed it the child's output one
 * line at a time, without the newline; it calls emit once per output line
 * (again without the newline). Lines outside tables come out at once,
 * through table_decorate_line(). A table block is held until its first
 * non-row line (or table_filter_flush()) and comes out rendered, followed
 * by that line. A block whose layout is not upstream's comes out as it
 * went in: output is never lost.
 *
 *     struct table_filter tf;
 *     table_filter_init(&tf, term_color_wanted(1, setting), write_line, NULL);
 *     while (read_line(...))
 *             table_filter_line(&tf, line, len);
 *     table_filter_flush(&tf);
 *     table_filter_release(&tf);
 *
 * emit gets line[len] == '\0'. Lines are held as C strings, so a held
 * line is cut at a NUL byte (a passed-through one is not).
 */
typedef void (*table_emit_fn)(void *data, const char *line, size_t len);

/*
 * What the filter lets through to the terminal (zlb run -q, its default,
 * -v); run.log is written beside it and always gets every line.
 */
enum table_show {
	TABLE_SHOW_ERRORS,	/* failures only: FAILED and ERROR lines, pytest's failed summary */
	/*
	 * The tables (rendered, or as they came when they do not parse),
	 * markers, warnings, failures and pytest's short summary lines (SKIPPED,
	 * XFAIL, ...); not the rest of pytest's output (its session header,
	 * progress lines, tracebacks)
	 */
	TABLE_SHOW_TABLES,
	TABLE_SHOW_ALL,		/* every line (what table_filter_init sets) */
};

struct table_filter {
	int color;
	table_emit_fn emit;
	void *data;
	enum table_show show;

	/* private */
	int state;
	struct strvec held;
	struct strbuf line;
	struct strbuf out;
};

void table_filter_init(struct table_filter *tf, int color,
		       table_emit_fn emit, void *data);
void table_filter_line(struct table_filter *tf, const char *line, size_t len);
/* Emit whatever is held (end of output, or before writing around the filter). */
void table_filter_flush(struct table_filter *tf);
/* Is a block being held? (A caller showing a partial line should wait.) */
int table_filter_holding(const struct table_filter *tf);
/* Free the filter's memory; held lines are dropped, so flush first. */
void table_filter_release(struct table_filter *tf);

/* An emit function that appends line and "\n" to the strbuf at data. */
void table_emit_strbuf(void *data, const char *line, size_t len);

#endif
