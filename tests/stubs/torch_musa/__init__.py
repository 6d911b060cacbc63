"""A stub torch_musa: importing it registers torch.musa, as the real
extension does. torch.musa here is torch_musa's shape of the API on the stub
torch's one fake device (the cuda stub's streams, generators and cost model;
STUB_TORCH_MUSA=0: no device):

- MUSAGraph() takes no keep_graph and hands out no raw graph or graph exec
  (torch_musa's MUSAGraph has capture_begin/capture_end/replay/reset/pool),
  so libzlbtimer cannot replay it: the graph timer times replay() between
  torch.musa.Event pairs;
- Event(enable_timing=True) reads the stub's GPU clock (the eager counter,
  which replay() advances by the graph's cost): elapsed_time is exact.
"""

import os
import sys
import types

import torch
from torch import _stub, cuda as _cuda

musa = types.ModuleType("torch.musa")
musa.__doc__ = __doc__


def is_available():
    return os.environ.get("STUB_TORCH_MUSA", "1") != "0" and _cuda.is_available()


class Stream(_cuda.Stream):
    @property
    def musa_stream(self):
        return self.cuda_stream


class Event:
    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self.enable_timing = enable_timing
        self.t = None

    def record(self, stream=None):
        _stub.refuse_in_capture()
        self.t = _stub.eager_ns

    def synchronize(self):
        _stub.refuse_in_capture()

    def elapsed_time(self, other):
        if not (self.enable_timing and other.enable_timing):
            raise RuntimeError("Both events must be created with enable_timing=True")
        if self.t is None or other.t is None:
            raise RuntimeError("Both events must be recorded before elapsed_time")
        return (other.t - self.t) / 1e6


class MUSAGraph(_cuda.CUDAGraph):
    def __init__(self):
        super().__init__(keep_graph=False)

    def __getattribute__(self, name):
        # torch_musa exposes neither: hasattr() must say False.
        if name in ("raw_cuda_graph", "raw_cuda_graph_exec"):
            raise AttributeError(name)
        return object.__getattribute__(self, name)


class graph(_cuda.graph):
    """torch.musa.graph(musa_graph, pool=None, stream=None, capture_error_mode)."""

    def __init__(self, musa_graph, pool=None, stream=None, capture_error_mode="global"):
        super().__init__(musa_graph, pool=pool, stream=stream if stream is not None
                         else Stream(), capture_error_mode=capture_error_mode)


for _name in ("device_count", "is_initialized", "init", "current_device", "set_device",
              "synchronize", "empty_cache", "memory_allocated", "max_memory_allocated",
              "is_current_stream_capturing", "manual_seed", "manual_seed_all", "seed_all",
              "initial_seed", "current_stream", "default_stream", "stream",
              "graph_pool_handle", "get_device_name", "get_device_properties"):
    setattr(musa, _name, getattr(_cuda, _name))
musa.is_available = is_available
musa.Stream = Stream
musa.Event = Event
musa.MUSAGraph = MUSAGraph
musa.graph = graph
musa.memory_reserved = lambda device=None: 0
musa.mem_get_info = lambda device=None: (100 << 30, 141 << 30)


def _module_getattr(name):
    # The cuda stub's generators, () until its lazy initialisation, as torch's.
    if name == "default_generators":
        return _cuda.default_generators
    raise AttributeError("module 'torch.musa' has no attribute %r" % name)


musa.__getattr__ = _module_getattr

torch.musa = musa
sys.modules["torch.musa"] = musa
