"""Constants and result records of the fake FlagGems benchmark suites.

BenchmarkResult.__str__ prints the same table as upstream's benchmark/consts.py:
a title line, the column header (Status, Torch/Gems Latency, Gems Speedup,
TFLOPS when the first row has a non-zero one, Torch/Gems GBPS when the first
row has gbps, Size Detail), a dashed rule as long as the header, then one
fixed-width row per metric ending in 10 spaces and the shape detail.
"""

import itertools
from dataclasses import asdict, dataclass, fields
from enum import Enum
from typing import List, Optional, Tuple

import torch

FLOAT_DTYPES = [torch.float16, torch.float32, torch.bfloat16]
INT_DTYPES = [torch.int16, torch.int32]
BOOL_DTYPES = [torch.bool]
COMPLEX_DTYPES = [torch.complex64]

DEFAULT_WARMUP_TIME = 1000
DEFAULT_ITER_TIME = 100

DEFAULT_SHAPES = [
    (1024 * 1024 * 1024,),
    (64, 64),
    (4096, 4096),
    (64, 512, 512),
    (1024, 1024, 1024),
]


def model_shapes():
    batch = [1, 8, 256]
    nk = [(1024, 4096), (4096, 4096)]
    return [(4, bs, n, k) for bs, (n, k) in itertools.product(batch, nk)]


@dataclass
class BenchmarkMetrics:
    legacy_shape: Optional[int] = None
    shape_detail: Optional[Tuple[int, ...]] = None
    latency_base: Optional[float] = None
    latency: Optional[float] = None
    gbps_base: Optional[float] = None
    gbps: Optional[float] = None
    speedup: Optional[float] = None
    accuracy: Optional[float] = None
    tflops: Optional[float] = None
    utilization: Optional[float] = None
    compared_speedup: Optional[float] = None
    error_msg: Optional[str] = None


ALL_AVAILABLE_METRICS = {f.name for f in fields(BenchmarkMetrics)} - {
    "legacy_shape", "shape_detail"}

DEFAULT_METRICS = ["latency_base", "latency", "speedup"]


def check_metric_dependencies(requested):
    """The requested metrics whose dependencies come later or not at all."""
    needs = {"speedup": ["latency", "latency_base"], "utilization": ["latency", "tflops"]}
    if requested is None:
        return []
    ok, bad = set(), []
    for m in requested:
        if all(d in ok for d in needs.get(m, [])):
            ok.add(m)
        else:
            bad.append(m)
    return bad


class BenchMode(Enum):
    KERNEL = "kernel"
    OPERATOR = "operator"
    WRAPPER = "wrapper"
    CUDAGRAPH = "cudagraph"


class BenchLevel(Enum):
    COMPREHENSIVE = "comprehensive"
    CORE = "core"


@dataclass
class OperationAttribute:
    op_name: str
    recommended_core_shapes: List[Tuple[int, ...]]
    shape_desc: str

    def __str__(self):
        return "%-40s |  %s\n%-40s |  %s\n" % (
            "Operator name", self.op_name,
            "Recommended Core Shapes[%s]" % self.shape_desc, self.recommended_core_shapes)

    def to_dict(self):
        return dict(self.__dict__)


def custom_json_encoder(obj):
    if isinstance(obj, torch.dtype):
        return str(obj)
    raise TypeError("Object of type %s is not JSON serializable" % type(obj).__name__)


def _num(v, spec):
    return "N/A" if v is None else format(v, spec)


@dataclass
class BenchmarkResult:
    op_name: str
    dtype: str
    mode: str
    level: str
    result: List[BenchmarkMetrics]

    def __str__(self):
        first = self.result[0]
        cols = ["%-10s" % "Status", "%20s" % "Torch Latency (ms)",
                "%20s" % "Gems Latency (ms)", "%20s" % "Gems Speedup"]
        if first.tflops:
            cols.append("%20s" % "TFLOPS")
        if first.gbps is not None:
            cols += ["%20s" % "Torch GBPS ", "%20s" % "Gems GBPS "]
        cols.append("%20s\n" % "Size Detail")
        header = " ".join(cols)
        title = ("\nOperator: %s  Performance Test (dtype=%s, mode=%s,level=%s)\n"
                 % (self.op_name, self.dtype, self.mode, self.level))
        return title + header + "-" * len(header) + "\n" + "".join(
            self._row(m) for m in self.result)

    @staticmethod
    def _row(m):
        status = "SUCCESS" if m.error_msg is None else "FAILED"
        line = "%-10s%20s%20s%20s" % (status, _num(m.latency_base, ".6f"),
                                      _num(m.latency, ".6f"), _num(m.speedup, ".3f"))
        if m.tflops:
            line += "%20s" % _num(m.tflops, ".3f")
        if m.gbps is not None:
            line += "%20s%20s" % (_num(m.gbps_base, ".3f"), _num(m.gbps, ".3f"))
        detail = "N/A" if m.shape_detail is None else m.shape_detail
        return line + " " * 10 + "%s\n" % (detail,)

    def to_json(self):
        import json

        return json.dumps(asdict(self), default=custom_json_encoder)

    def to_dict(self):
        return self.__dict__
