/*
 * CSV files: the batch layer's tables (inventory, ops_status, summary).
 *
 * Writing builds the whole file in a strbuf (RFC 4180 quoting: a field with
 * a comma, quote, CR or LF is quoted, quotes doubled) and lands it with
 * write_file_atomic, so a reader, or a batch killed with SIGKILL, never sees
 * half a table. Reading goes through libcsv (Debian's libcsv-dev), which
 * handles quoting, embedded newlines and a missing final newline; a table
 * is read whole and addressed by header name, so a column added later does
 * not break an older reader.
 *
 * Tables stay plain CSV (no comment lines) so pandas, spreadsheets and grep
 * read them as they are; their format version is kept beside them in a JSON
 * file of the same directory (batch.json, inventory.json), and readers look
 * columns up by name.
 */
#ifndef ZLB_CORE_CSVFILE_H
#define ZLB_CORE_CSVFILE_H

#include <stddef.h>

#include "lib/strbuf.h"

/* Append one field to sb, quoted when needed (no separator added). */
void csv_add_field(struct strbuf *sb, const char *field);

/*
 * Append one row of n fields to sb, comma-separated, ending in "\n".
 * A NULL field is written as the empty string.
 */
void csv_add_row(struct strbuf *sb, const char *const *fields, size_t n);

/* A table read whole: header names and rows of ncols strings each. */
struct csv_table {
	size_t ncols;
	char **header;  /* ncols names */
	size_t nrows;
	char ***rows;   /* nrows arrays of ncols strings ("" for short rows) */
};

/*
 * Read path into t (header row first). Rows longer than the header are an
 * error naming the line; shorter rows are padded with "". Returns 0, or -1
 * after error() (missing file: errno ENOENT is kept for the caller).
 */
int csv_read_file(const char *path, struct csv_table *t);

/*
 * Parse CSV text already in memory; same rules as csv_read_file. (Not
 * csv_parse: libcsv owns that name.)
 */
int csv_parse_text(const char *text, size_t len, const char *what, struct csv_table *t);

/* Index of the column named name, or -1. */
int csv_column(const struct csv_table *t, const char *name);

/* Field of row r in the column named name; "" when there is no such column. */
const char *csv_get(const struct csv_table *t, size_t r, const char *name);

void csv_table_free(struct csv_table *t);

#endif
