#include "providers/builtin_shapes.h"

#include <string.h>

/*
 * softmax: a launch-bound, a mid and a bandwidth-bound size (on an H200
 * about 2, 23 and 130 us for FlagGems' kernel), enough to see both regimes.
 *
 * fused_marlin_moe_mxfp4: the original tool's default operator. Its 16 shapes
 * are (num_tokens, num_experts, hidden_size, intermediate_size, topk), the
 * tuple FlagGems' MoE benchmarks take: decode through prefill token counts
 * for a DeepSeek-V3-style layer sharded 8 ways (256 experts, 7168 hidden,
 * 2048 intermediate, top-8) and a Mixtral-style layer (8 experts, 4096
 * hidden, 14336 intermediate, top-2).
 */
const struct builtin_shapes builtin_shape_sets[] = {
	{ "softmax", NULL,
	  "softmax:\n"
	  "  shapes:\n"
	  "    - [1024, 1024]\n"
	  "    - [4096, 4096]\n"
	  "    - [16384, 8192]\n",
	  "zlb's default softmax set: 1024x1024, 4096x4096, 16384x8192" },
	{ "fused_marlin_moe_mxfp4", "fused_marlin_moe",
	  "fused_marlin_moe_mxfp4:\n"
	  "  shape_desc: \"num_tokens, num_experts, hidden_size, intermediate_size, topk\"\n"
	  "  shapes:\n"
	  "    - [1, 256, 7168, 2048, 8]\n"
	  "    - [4, 256, 7168, 2048, 8]\n"
	  "    - [16, 256, 7168, 2048, 8]\n"
	  "    - [32, 256, 7168, 2048, 8]\n"
	  "    - [64, 256, 7168, 2048, 8]\n"
	  "    - [128, 256, 7168, 2048, 8]\n"
	  "    - [512, 256, 7168, 2048, 8]\n"
	  "    - [2048, 256, 7168, 2048, 8]\n"
	  "    - [1, 8, 4096, 14336, 2]\n"
	  "    - [4, 8, 4096, 14336, 2]\n"
	  "    - [16, 8, 4096, 14336, 2]\n"
	  "    - [32, 8, 4096, 14336, 2]\n"
	  "    - [64, 8, 4096, 14336, 2]\n"
	  "    - [128, 8, 4096, 14336, 2]\n"
	  "    - [512, 8, 4096, 14336, 2]\n"
	  "    - [2048, 8, 4096, 14336, 2]\n",
	  "16 MoE shapes: 8 token counts x {DeepSeek-V3 TP8, Mixtral} layers" },
	{ NULL, NULL, NULL, NULL },
};

const struct builtin_shapes *builtin_shapes_find(const char *op)
{
	for (const struct builtin_shapes *b = builtin_shape_sets; b->op; b++)
		if (op && !strcmp(b->op, op))
			return b;
	return NULL;
}
