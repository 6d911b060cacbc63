"""As upstream's benchmark/test_convert_weight_to_int4pack.py: its own run()
gives update_result, imported into this module by name (so a wrapper put on
base.py's global does not reach it), the result as a JSON string
(result.to_json()), then emits the same string."""

import pytest
import torch

from . import base, consts
from .conftest import Config, emit_record_logger, update_result
from .consts import BenchmarkMetrics, BenchmarkResult


class ConvertWeightBenchmark(base.GenericBenchmark):
    def _run_metric(self, input_item):
        metric = BenchmarkMetrics()
        metric.shape_detail = self.record_shapes(*input_item)
        metric.latency_base = self.get_latency(self.torch_op, *input_item)
        with base.flag_gems.use_gems():
            metric.latency = self.get_latency(self.torch_op, *input_item)
        metric.speedup = metric.latency_base / metric.latency
        return metric

    def run(self):
        self.init_user_config()
        for dtype in self.to_bench_dtypes:
            metrics = [self._run_metric(inp) for inp in self.get_input_iter(dtype)]
            result = BenchmarkResult(level=Config.bench_level.value, op_name=self.op_name,
                                     dtype=str(dtype), mode=Config.mode.value,
                                     result=metrics)
            print(result)
            update_result(self.op_name, result.to_json())
            emit_record_logger(result.to_json())


def int4pack_input_fn(shape, dtype, device):
    yield torch.randn(shape, dtype=dtype, device=device),


@pytest.mark.convert_weight_to_int4pack
def test_convert_weight_to_int4pack():
    bench = ConvertWeightBenchmark(input_fn=int4pack_input_fn,
                                   op_name="convert_weight_to_int4pack",
                                   torch_op=torch.abs, dtypes=consts.FLOAT_DTYPES)
    bench.run()
