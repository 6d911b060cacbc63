/*
 * Names of the IR tree <run>/ttgir/<shape>/<kernel>/<variant>.<stage>.
 *
 * Every name here becomes one path component, so each is made only of
 * [A-Za-z0-9._+=-] (with '_'), never starts with '.' or '-', never holds
 * ".." nor "__" (except where a collision suffix was added), and is capped in
 * length (a cut name ends in '-' and 8 hex digits of the full text's XXH3).
 * Everything is a pure function of its inputs: the same run gives the same
 * tree on any machine, whatever order files or hash tables come in.
 *
 * Shape names (ir_shape_names):
 *   "[torch.Size([1024, 1024]), 1]"  -> "1024x1024"  (dims of the first torch.Size)
 *   "N/A", "[4, 8]"                  -> "noshape"    (no torch.Size at all)
 *   "[torch.Size([]), 1]"            -> "scalar"     (a 0-d tensor)
 *   rows sharing that name but differing elsewhere get the differing leaves:
 *   "[torch.Size([64, 64]), 0]" / "[torch.Size([64, 64]), 1]" -> "64x64_0" / "64x64_1";
 *   a dict leaf is written key=value: "(.., {'dim': 1})" -> "64x64_dim=1".
 *
 * Variant names (ir_name_variants), within one (shape, kernel) group:
 *   only the parameters whose values differ in the group: constexprs in
 *   name order as ABBR+value ("BSM64", "EVEN1"; '=' between them when the
 *   value does not start with a digit or '-', or the abbreviation ends in a
 *   digit: "MODE=max"), joined by '_', then num_warps/num_stages/num_ctas
 *   as one block "w4s3c1" (only the differing ones), e.g. "BSM128_w8".
 *   Nothing differs: "w<warps>s<stages>". Names that still collide get,
 *   in order and only while they collide: "__<dtype>" ("__bf16"), then
 *   "__<args>div16" ("__EMdiv16", "__nodiv16"; "_<args>eq1" appended when
 *   some argument was specialised to 1), then "__h<8+ hex of the hash>".
 */
#ifndef ZLB_IR_NAMING_H
#define ZLB_IR_NAMING_H

#include <jansson.h>
#include <stddef.h>

#include "lib/strbuf.h"
#include "lib/strvec.h"

/* Longest shape / kernel / variant base name, before collision suffixes. */
#define IR_NAME_CAP 96

/*
 * Append s made safe as a path component (rules above) to out. Bytes
 * outside the set become '-', runs of '-', '_' or '.' shrink to one, leading
 * and trailing '-', '_' are dropped, a leading '.' gets a '_' before it.
 * An empty result becomes empty_as. Longer than cap: cut, then "-<hex8>".
 */
void ir_sanitize(const char *s, size_t cap, const char *empty_as, struct strbuf *out);

/* 8 lowercase hex digits of XXH3-64 of s (its low 32 bits). */
void ir_hex8(const char *s, char out[9]);

/*
 * Initials of a multi-word name ("BLOCK_SIZE_M" -> "BSM", "block_m" -> "bm");
 * a name of one word is kept as is ("EVEN", "_x"). Appends to out.
 */
void ir_initials(const char *name, struct strbuf *out);

/*
 * A name -> abbreviation table for one kernel. Abbreviations are the
 * initials; names whose initials collide with another name's, or with a
 * reserved token, keep their full name (a full name equal to a reserved
 * token gets a trailing '_'). used[] is set by the naming functions that
 * put an abbreviation into a file name, for the legend.
 */
struct ir_abbrevs {
	size_t nr;
	char **names;		/* sorted, unique */
	char **abbrs;
	unsigned char *used;
};
#define IR_ABBREVS_INIT { 0, NULL, NULL, NULL }

/* names: any order, duplicates allowed. reserved: NULL-terminated or NULL. */
void ir_abbrevs_build(struct ir_abbrevs *ab, const struct strvec *names,
		      const char *const *reserved);
/* Index of name, or -1. */
int ir_abbrevs_find(const struct ir_abbrevs *ab, const char *name);
void ir_abbrevs_release(struct ir_abbrevs *ab);

/* The reserved tokens of constexpr abbreviations: "w", "s", "c". */
extern const char *const ir_reserved_params[];

/*
 * Short dtype for a suffix: "torch.float16" -> "fp16", "torch.bfloat16"
 * -> "bf16", "torch.float32" -> "fp32", "torch.float64" -> "fp64",
 * "torch.int32" -> "i32", "torch.uint8" -> "u8", "torch.bool" -> "bool",
 * "torch.complex64" -> "c64", "torch.float8_e4m3fn" -> "fp8e4m3fn";
 * anything else without its "torch." prefix, sanitised; NULL/"" -> "nodtype".
 */
void ir_dtype_short(const char *dtype, struct strbuf *out);

/*
 * The dims of the first torch.Size in a Size Detail text, joined with 'x'
 * ("1024x1024"; "scalar" for torch.Size([])). Returns 0, or 1 (out
 * untouched) when the text holds no torch.Size.
 */
int ir_shape_dims(const char *detail, struct strbuf *out);

/*
 * Names for the n distinct Size Detail texts details[] (any order; out[i]
 * gets a fresh string for details[i]). Distinct texts get distinct names;
 * equal texts get equal names.
 */
void ir_shape_names(const char *const *details, size_t n, char **out);

/*
 * Render a specialisation for the "__...div16" suffix: the short forms of
 * the div16 argument names (from args, a per-kernel table) sorted and
 * concatenated ("EM"), joined by '-' when one is longer than a character
 * ("xp-M"), then "div16" ("nodiv16" when none); then "_<args>eq1" when
 * equal1 is not empty. spec may be NULL (-> "nospec"). Marks used args.
 */
void ir_spec_suffix(const json_t *spec, struct ir_abbrevs *args, struct strbuf *out);

/* Which collision stages a naming call used (bit flags). */
enum {
	IR_SUFFIX_DTYPE = 1,
	IR_SUFFIX_SPEC = 2,
	IR_SUFFIX_HASH = 4,
};

/* One compiled variant of a (shape, kernel) group. */
struct ir_variant_desc {
	const char *hash;		/* never NULL */
	const json_t *constexprs;	/* object; NULL when the compile was not recorded */
	int num_warps, num_stages, num_ctas;	/* < 0: unknown */
	const char *dtype;		/* short dtype text for the suffix; NULL: unknown */
	const char *spec;		/* rendered specialisation; NULL: unknown */
};

/*
 * Name the n variants of one group (rules above). names[i] gets a fresh
 * string; the names are distinct (variants must have distinct hashes).
 * ab is the kernel's constexpr table (its used[] is marked). Returns the
 * IR_SUFFIX_* stages that were needed.
 */
unsigned ir_name_variants(const struct ir_variant_desc *v, size_t n,
			  struct ir_abbrevs *ab, char **names);

/* The text of a constexpr value in a name: true -> "1", 64 -> "64", "max" -> "max". */
void ir_value_text(const json_t *v, struct strbuf *out);

#endif
