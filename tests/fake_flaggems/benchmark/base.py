"""Benchmark classes of the fake FlagGems suite, with upstream's behaviour
where zlb and its plugins depend on it:

- set_shapes(file): op_name key, else the first class name along
  type(self).__mro__ found in the file, else DEFAULT_SHAPES; shapes become
  tuples; at --level comprehensive set_more_shapes() is merged in;
- set_dtypes raises "Given dtype(s) '...'can't be supported by this op '<op>'"
  (upstream's wording, missing space included);
- get_latency looks triton.testing.do_bench up at call time and calls it with
  warmup=Config.warm_up, rep=Config.repetition, return_mode="median";
- run(): per dtype, per input: shape_detail = record_shapes(...), latency_base
  (torch), latency (gems: gems_op, or torch_op under the package's use_gems()),
  speedup, gbps, tflops; a failure is pytest.fail(str(e)); then print the
  BenchmarkResult table and call update_result (a module global, looked up at
  call time) with asdict(result).
"""

import gc
import os
import time
from dataclasses import asdict

import pytest
import torch
import triton
import yaml

from ._package import gems as flag_gems

shape_utils = flag_gems.utils.shape_utils

from . import consts
from .conftest import Config, emit_record_logger, update_result
from .consts import BenchmarkMetrics, BenchmarkResult, OperationAttribute, \
    check_metric_dependencies, model_shapes

torch_device_fn = flag_gems.runtime.torch_device_fn
device = flag_gems.device
vendor_name = flag_gems.vendor_name


class Benchmark:
    device: str = device
    DEFAULT_METRICS = consts.DEFAULT_METRICS
    DEFAULT_DTYPES = consts.FLOAT_DTYPES
    DEFAULT_SHAPES = consts.DEFAULT_SHAPES
    DEFAULT_SHAPE_DESC = "M, N"
    DEFAULT_SHAPE_FILES = "core_shapes.yaml"

    def __init__(self, op_name, torch_op, dtypes=None, is_backward=False,
                 is_inplace=False, **kwargs):
        self.op_name = op_name
        if is_backward and "_backward" not in self.op_name:
            self.op_name += "_backward"
        self.torch_op = torch_op
        self.gems_op = kwargs.get("gems_op")
        self.is_backward = is_backward
        self.is_inplace = is_inplace
        self.dtypes = dtypes if dtypes is not None else self.DEFAULT_DTYPES
        self.metrics = self.DEFAULT_METRICS
        self.shapes = self.DEFAULT_SHAPES
        self.shape_desc = self.DEFAULT_SHAPE_DESC
        self.shape_file = self.DEFAULT_SHAPE_FILES
        self.to_bench_dtypes = self.dtypes
        self.to_bench_metrics = self.metrics
        for k, v in kwargs.items():
            if hasattr(self, k):
                setattr(self, k, v)

    # --- configuration ---------------------------------------------------------------

    def set_metrics(self, user_desired_metrics):
        if user_desired_metrics:
            bad = [m for m in user_desired_metrics if m not in self.metrics]
            if bad:
                raise ValueError("Invalid metrics: %s for operation: '%s'"
                                 % (", ".join(bad), self.op_name))
            unmet = check_metric_dependencies(user_desired_metrics)
            if unmet:
                raise ValueError("Unsatisfied metric dependencies: %s" % ", ".join(unmet))
        self.to_bench_metrics = list(user_desired_metrics or self.metrics)
        if Config.bench_level == consts.BenchLevel.COMPREHENSIVE and not Config.query:
            for m in self.set_more_metrics():
                if m not in self.to_bench_metrics:
                    self.to_bench_metrics.append(m)

    def set_more_metrics(self):
        return []

    def set_dtypes(self, user_desired_dtypes):
        if user_desired_dtypes:
            bad = [d for d in user_desired_dtypes if d not in self.dtypes]
            if bad:
                raise ValueError(
                    "Given dtype(s) '%s'can't be supported by this op '%s'"
                    % (", ".join(str(d) for d in bad), self.op_name))
        self.to_bench_dtypes = user_desired_dtypes or self.dtypes

    def set_shapes(self, shape_file_path=None):
        if not os.path.isfile(shape_file_path):
            raise FileNotFoundError("Shape file '%s' does not exist." % shape_file_path)
        try:
            with open(shape_file_path) as f:
                cfg = yaml.safe_load(f)
        except yaml.YAMLError as e:
            raise ValueError("Shape file '%s' is not a valid YAML file. Error: %s"
                             % (shape_file_path, e))
        entry = None
        if self.op_name in cfg:
            entry = cfg[self.op_name]
        else:
            entry = next((cfg[c.__name__] for c in type(self).__mro__
                          if c.__name__ in cfg), None)
        if entry is None:
            self.shapes = self.DEFAULT_SHAPES
        else:
            self.shapes = entry.get("shapes", self.DEFAULT_SHAPES)
            self.shape_desc = entry.get("shape_desc", self.DEFAULT_SHAPE_DESC)
        self.shapes = [tuple(s) for s in self.shapes]
        if Config.bench_level == consts.BenchLevel.COMPREHENSIVE and not Config.query:
            more = self.set_more_shapes()
            if more:
                self.shapes = list(dict.fromkeys(self.shapes + more))

    def set_more_shapes(self):
        return []

    def record_shapes(self, *args, **kwargs):
        def parse(item):
            if isinstance(item, torch.Tensor):
                return item.size()
            if isinstance(item, (int, float, str, torch.dtype)):
                return item
            if isinstance(item, (list, tuple)):
                return [parse(x) for x in item]
            if isinstance(item, dict):
                return {k: parse(v) for k, v in item.items()}
            return None

        a = [parse(x) for x in args]
        k = {key: parse(v) for key, v in kwargs.items()}
        if a and k:
            return a, k
        return a if a else k

    def init_default_config(self):
        self.set_shapes(self.DEFAULT_SHAPE_FILES)

    def init_user_config(self):
        self.mode = Config.mode
        self.set_dtypes(Config.user_desired_dtypes)
        self.set_metrics(Config.user_desired_metrics)
        self.set_shapes(Config.shape_file)

    def set_gems(self, gems_op):
        self.gems_op = gems_op

    # --- measuring ------------------------------------------------------------------------

    def get_latency(self, op, *args, **kwargs):
        fn = lambda: op(*args, **kwargs)  # noqa: E731
        xs = None
        if self.is_backward:
            out = fn()
            dout = torch.randn_like(out)
            xs = [a for a in args if torch.is_tensor(a) and a.requires_grad]
            fn = lambda: torch.autograd.grad((out,), xs, grad_outputs=(dout,),  # noqa: E731
                                             retain_graph=True)
        if Config.mode == consts.BenchMode.KERNEL:
            do_bench = triton.testing.do_bench
            return do_bench(fn, warmup=Config.warm_up, rep=Config.repetition,
                            return_mode="median", grad_to_none=xs)
        if Config.mode == consts.BenchMode.CUDAGRAPH:
            return triton.testing.do_bench_cudagraph(fn, rep=Config.repetition,
                                                     return_mode="median",
                                                     grad_to_none=xs)
        if Config.mode in (consts.BenchMode.OPERATOR, consts.BenchMode.WRAPPER):
            n = max(1, Config.repetition)
            torch_device_fn.synchronize()
            t0 = time.time()
            for _ in range(n):
                fn()
            torch_device_fn.synchronize()
            return (time.time() - t0) / n * 1000
        raise ValueError("Undefined Value of Benchmark Mode.")

    def get_gbps(self, args, latency=None):
        raise NotImplementedError("Each Benchmark must implement its own input iterator.")

    def get_tflops(self, op, *args, **kwargs):
        return 0

    def get_input_iter(self, dtype):
        raise NotImplementedError("Each Benchmark must implement its own input iterator.")

    def unpack_to_args_kwargs(self, input_tuple):
        args, kwargs = [], {}
        for item in input_tuple:
            if isinstance(item, dict):
                kwargs.update(item)
            elif item is None or isinstance(item, (torch.Tensor, int, float, str, list,
                                                   tuple, torch.dtype)):
                args.append(item)
        if self.is_backward:
            args = [a.clone().requires_grad_()
                    if torch.is_tensor(a) and torch.is_floating_point(a) else a
                    for a in args]
        return args, kwargs

    def run(self):
        if Config.query:
            self.init_default_config()
            attri = OperationAttribute(op_name=self.op_name,
                                       recommended_core_shapes=self.shapes,
                                       shape_desc=self.shape_desc)
            print(attri)
            emit_record_logger(attri.to_dict())
            return
        self.init_user_config()
        for dtype in self.to_bench_dtypes:
            metrics = []
            input_iter = self.get_input_iter(dtype)
            while True:
                try:
                    inp = next(input_iter)
                except StopIteration:
                    break
                except Exception as e:
                    print("\033[31mFAILED\033[0m: Operator=%s dtype=%s err=<<<%s>>>"
                          % (self.op_name, dtype, e))
                    pytest.fail(str(e))
                metric = BenchmarkMetrics()
                try:
                    args, kwargs = self.unpack_to_args_kwargs(inp)
                    metric.shape_detail = self.record_shapes(*args, **kwargs)
                    if "latency_base" in self.to_bench_metrics:
                        metric.latency_base = self.get_latency(self.torch_op, *args,
                                                               **kwargs)
                    if "latency" in self.to_bench_metrics:
                        if self.gems_op:
                            metric.latency = self.get_latency(self.gems_op, *args, **kwargs)
                        else:
                            with flag_gems.use_gems(exclude=["zero_"]):
                                metric.latency = self.get_latency(self.torch_op, *args,
                                                                  **kwargs)
                    if "speedup" in self.to_bench_metrics:
                        metric.speedup = metric.latency_base / metric.latency
                    if "gbps" in self.to_bench_metrics:
                        metric.gbps_base = self.get_gbps(args, latency=metric.latency_base)
                        metric.gbps = self.get_gbps(args, latency=metric.latency)
                    if "tflops" in self.to_bench_metrics:
                        metric.tflops = (self.get_tflops(self.torch_op, *args, **kwargs)
                                         / metric.latency / 1e12 * 1e3)
                except Exception as e:
                    metric.error_msg = str(e)
                    pytest.fail(str(e))
                finally:
                    metrics.append(metric)
                    gc.collect()
            result = BenchmarkResult(level=Config.bench_level.value, op_name=self.op_name,
                                     dtype=str(dtype), mode=Config.mode.value,
                                     result=metrics)
            print(result)
            update_result(self.op_name, asdict(result))
            emit_record_logger(result.to_json())


class GenericBenchmark(Benchmark):
    def __init__(self, *args, input_fn, **kwargs):
        super().__init__(*args, **kwargs)
        self.input_fn = input_fn

    def set_more_shapes(self):
        return [(2 ** 28,)] + [(10000, 2 ** i) for i in (0, 8, 16)] + \
            [(100, 2 ** i, 100) for i in (0, 8, 16)]

    def get_input_iter(self, dtype):
        for shape in self.shapes:
            yield from self.input_fn(shape, dtype, self.device)


class GenericBenchmark2DOnly(GenericBenchmark):
    def set_more_shapes(self):
        return [s for s in super().set_more_shapes() if len(s) == 2]


class UnaryReductionBenchmark(Benchmark):
    def set_more_metrics(self):
        return ["gbps"]

    def get_gbps(self, args, latency):
        inp = args[0]
        return 2 * shape_utils.size_in_bytes(inp) * 1e-9 / (latency * 1e-3)

    def set_more_shapes(self):
        return [(1025 * 1024,)] + [(1024, 2 ** i) for i in range(0, 21, 4)]

    def get_input_iter(self, dtype):
        for shape in self.shapes:
            inp = generate_tensor_input(shape, dtype, self.device)
            if inp.ndim > 1:
                yield inp, 1
            else:
                yield inp,


class BinaryPointwiseBenchmark(Benchmark):
    DEFAULT_METRICS = consts.DEFAULT_METRICS[:] + ["tflops"]

    def set_more_shapes(self):
        return [(1024, 2 ** i) for i in range(0, 20, 4)]

    def get_input_iter(self, dtype):
        for shape in self.shapes:
            yield (generate_tensor_input(shape, dtype, self.device),
                   generate_tensor_input(shape, dtype, self.device))

    def get_tflops(self, op, *args, **kwargs):
        return 2 * args[0].numel()


class BlasBenchmark(Benchmark):
    DEFAULT_METRICS = consts.DEFAULT_METRICS[:] + ["tflops"]

    def __init__(self, *args, input_fn, **kwargs):
        super().__init__(*args, **kwargs)
        self.input_fn = input_fn

    def get_input_iter(self, dtype):
        for b, m, n, k in self.shapes:
            yield from self.input_fn(b, m, n, k, dtype, self.device, False)
        if Config.bench_level == consts.BenchLevel.COMPREHENSIVE:
            for b, m, n, k in self.shapes:
                yield from self.input_fn(b, m, n, k, dtype, self.device, True)

    def set_more_shapes(self):
        return [(8, 1848, 1536, 151936)] + model_shapes()

    def get_tflops(self, op, *args, **kwargs):
        if self.op_name == "mm":
            return args[0].shape[0] * args[0].shape[1] * args[1].shape[1] * 2
        return 0


def generate_tensor_input(shape, dtype, device):
    if dtype in consts.FLOAT_DTYPES or dtype in consts.COMPLEX_DTYPES:
        return torch.randn(shape, dtype=dtype, device=device)
    if dtype in consts.INT_DTYPES:
        info = torch.iinfo(dtype)
        return torch.randint(info.min, info.max, shape, dtype=dtype,
                             device="cpu").to(device)
    if dtype in consts.BOOL_DTYPES:
        return torch.randint(0, 2, size=shape, dtype=dtype, device="cpu").to(device)
    raise ValueError("no input for dtype %s" % dtype)


def binary_input_fn(shape, dtype, device):
    yield generate_tensor_input(shape, dtype, device), \
        generate_tensor_input(shape, dtype, device)


def unary_input_fn(shape, dtype, device):
    yield generate_tensor_input(shape, dtype, device),
