/*
 * <run>/autotune_records/: what a recording run's zlbench.autotune plugin
 * wrote (meta.json, and <op>.json per operator) and what a replaying run's
 * plugin loads, every *.json of the directory. zlb checks a recording the
 * way the plugin will read it before anything starts, so a damaged one is
 * a preflight sentence, not a traceback in pytest (exit 6) after a run
 * directory exists.
 */
#ifndef ZLB_RUNDIR_AUTOTUNE_RECORDS_H
#define ZLB_RUNDIR_AUTOTUNE_RECORDS_H

#include <jansson.h>

#define AUTOTUNE_RECORDS_DIR "autotune_records"
#define AUTOTUNE_SCHEMA_VERSION 1
/*
 * A record is a few levels deep (kernels, entries, key lists). Python's
 * JSON reader stops at about a thousand levels with a RecursionError;
 * anything near that is no record the plugin wrote.
 */
#define AUTOTUNE_RECORD_MAX_DEPTH 64

/*
 * Is doc (parsed from shown) an operator record the plugin loads: an
 * object of this schema_version with a "kernels" list, each kernel an
 * object with "where", "kernel" and "tuner" and "entries" of
 * {"key": [...], "config": {...}}, nested at most
 * AUTOTUNE_RECORD_MAX_DEPTH levels? 0, or -1 with error() naming the file
 * and what is wrong.
 */
int autotune_record_check(const json_t *doc, const char *shown);

/*
 * Every *.json below run_dir/autotune_records/ other than meta.json: a
 * regular file (no link), valid JSON, and autotune_record_check(). 0, or
 * -1 with error().
 */
int autotune_records_check_dir(const char *run_dir);

#endif
