/*
 * What the table's files share (table_parse.c reads upstream's blocks,
 * table_render.c draws them, table_filter.c finds them in pytest's output
 * as it streams). Private to src/run/.
 */
#ifndef ZLB_TABLE_INT_H
#define ZLB_TABLE_INT_H

#include "lib/strbuf.h"
#include "run/table.h"

#define TITLE_PREFIX "Operator: "
#define TITLE_MIDDLE "  Performance Test ("
#define COLUMN_GAP "  "

/* A line of dashes only (the rule under a block's column names). */
int table_is_dashes(const char *line);

/* table_parse_block, with the reason for a refusal in why instead of error(). */
int table_parse_lines(const char *const *lines, size_t n, struct table_block *out,
		      struct strbuf *why);

#endif
