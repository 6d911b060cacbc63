/*
 * What zlb compare, zlb summary and zlb ir diff --stat share about their
 * output: --format (the one on standard output), --out DIR (files, only
 * when asked), and the order that keeps a closed pipe from losing anything:
 * files first, then standard output.
 */
#ifndef ZLB_CLI_OUTPUT_H
#define ZLB_CLI_OUTPUT_H

#include <jansson.h>

#include "lib/strbuf.h"

enum output_format { OUTPUT_TABLE, OUTPUT_JSON, OUTPUT_CSV, OUTPUT_MD };

/* --format's words, for an option table's choices: table, json, csv, md. */
extern const char *const output_formats[];

/* The format a --format word names (checked by the table: table for anything else). */
enum output_format output_format_of(const char *word);

/*
 * --out DIR as given to command cmd: refused (a usage error, exit 2) when
 * empty or "-" (standard output is --format's), else created. Returns 0,
 * ZLB_EXIT_USAGE, or ZLB_EXIT_IO having said why on stderr.
 */
int output_dir_prepare(const char *cmd, const char *dir);

/* j as the JSON text zlb writes (indented, keys in order, 15 digits), newline ended. */
void output_json(struct strbuf *out, const json_t *j);

/* text onto standard output, all of it (a failure is found by main.c's check). */
void output_stdout(const struct strbuf *text);

#endif
