import torch

import flaggems_vllm

from . import base

# Like upstream FlagGems-vllm: the class hard-codes 5-tuple MoE shapes
# (num_tokens, num_experts, hidden_size, intermediate_size, topk) in set_shapes.


class FusedMarlinMoEBenchmark(base.Benchmark):
    def __init__(self, op_name, torch_op, dtypes):
        super().__init__(op_name=op_name, torch_op=torch_op, dtypes=dtypes)

    def set_shapes(self, shape_file_path=None):
        self.shapes = [
            (1, 8, 4096, 14336, 2),
            (16, 8, 4096, 14336, 2),
            (1, 256, 7168, 2048, 8),
        ]

    def get_input_iter(self, cur_dtype):
        for config in self.shapes:
            yield from self._gen(config, cur_dtype)

    def _gen(self, config, dtype):
        num_tokens, num_experts, hidden_size, intermediate_size, topk = config
        device = flaggems_vllm.device
        hidden_states = torch.randn(num_tokens, hidden_size, device=device, dtype=dtype)
        w1 = torch.randn(num_experts, intermediate_size * 2, hidden_size, device=device,
                         dtype=dtype) / 10.0
        w2 = torch.randn(num_experts, hidden_size, intermediate_size, device=device,
                         dtype=dtype) / 10.0
        gating = torch.randn(num_tokens, num_experts, device=device, dtype=torch.float32)
        topk_weights, topk_ids = torch.topk(torch.softmax(gating, dim=-1), topk, dim=-1)
        yield hidden_states, w1, w2, topk_weights, topk_ids


def _moe(hidden_states, w1, w2, topk_weights, topk_ids):
    # A stand-in for the two grouped GEMMs: one mm against expert 0.
    return torch.mm(hidden_states, w1[0].t())


@flaggems_vllm.gems_variant
def _gems_moe(hidden_states, w1, w2, topk_weights, topk_ids):
    return _moe(hidden_states, w1, w2, topk_weights, topk_ids)


def test_fused_marlin_moe():
    bench = FusedMarlinMoEBenchmark(
        op_name="fused_marlin_moe",
        torch_op=_moe,
        dtypes=[torch.bfloat16],
    )
    bench.set_gems(_gems_moe)
    bench.run()
