/*
 * Operator specs of zlb batch: `[repo:]op[@file]`.
 *
 *   softmax               repo main (package flag_gems; --flaggems-dir, FLAGGEMS_DIR)
 *   vllm:fused_marlin_moe repo vllm (package flaggems_vllm; --vllm-dir, FLAGGEMS_VLLM_DIR)
 *   nextafter_@nextafter_ op_file "nextafter_": benchmark/test_nextafter_.py, to tell
 *                         apart test functions of the same name in several files
 *
 * op is the test function name without "test_" (letters, digits, '_');
 * file is what `zlb run --op-file` accepts: "stem" or "folder/stem" with
 * letters, digits, '_' and '-'. Each spec owns one directory of the batch,
 * <batch>/<repo>/<key>, where key is op, or op@file with '/' written '+'
 * (file stems never hold '+', so keys of different specs never collide).
 */
#ifndef ZLB_CORE_OPSPEC_H
#define ZLB_CORE_OPSPEC_H

#include <stddef.h>

struct op_spec {
	char *spec;  /* canonical text: "op", "vllm:op", "op@file" ("main:" dropped) */
	char *repo;  /* "main" or "vllm" */
	char *op;
	char *file;  /* NULL when not given */
	char *key;   /* directory name under <batch>/<repo>/ */
};

/* Known repositories, NULL-terminated: "main", "vllm". */
extern const char *const opspec_repos[];

/*
 * Parse text into s. Returns 0, or -1 with error() saying what is wrong
 * with the spec and what would be accepted.
 */
int opspec_parse(struct op_spec *s, const char *text);
void opspec_release(struct op_spec *s);

/*
 * Read an ops file: one spec per line; blank lines and everything after
 * '#' ignored; surrounding spaces trimmed. Specs are appended to out as
 * written (parse them with opspec_parse). Returns 0, or -1 with error()
 * naming the file (and line, for a line with two words).
 */
struct strvec;
int opspec_read_file(const char *path, struct strvec *out);

#endif
