"""torch's device module of the backend zlb chose (ZLB_TORCH_MODULE):
torch.cuda on NVIDIA (and ROCm, whose torch keeps the name), torch.musa on
Moore Threads (registered by `import torch_musa`). The graph timer asks this
module for everything device-side: streams, events, graphs, generators,
memory; nothing in it names CUDA.
"""

import importlib

from . import _env


class DeviceModuleError(RuntimeError):
    """The backend's device module cannot be found in this torch."""


def module(torch, name=None):
    """torch.<name> (ZLB_TORCH_MODULE when name is None), importing its
    vendor extension torch_<name> first where torch alone lacks it."""
    name = name or _env.torch_module()
    mod = getattr(torch, name, None)
    if mod is None:
        try:
            importlib.import_module("torch_" + name)
        except ImportError as e:
            raise DeviceModuleError("torch.%s does not exist and torch_%s cannot be imported "
                                    "(%s)" % (name, name, e)) from None
        mod = getattr(torch, name, None)
        if mod is None:
            raise DeviceModuleError("torch_%s was imported but torch.%s is still missing"
                                    % (name, name))
    return mod


def name_of(mod):
    """'cuda', 'musa', ...: the module's last name."""
    return getattr(mod, "__name__", "cuda").rsplit(".", 1)[-1]


def graph_class(mod):
    """The module's graph class: CUDAGraph in torch.cuda, MUSAGraph in
    torch.musa (torch_musa's port keeps torch's API, under its own name)."""
    want = name_of(mod).upper() + "Graph"
    cls = getattr(mod, want, None) or getattr(mod, "CUDAGraph", None)
    if cls is None:
        raise DeviceModuleError("torch.%s has no %s: this torch cannot capture graphs"
                                % (name_of(mod), want))
    return cls


def stream_handle(stream):
    """The raw stream of a torch stream object (cuda_stream, musa_stream, ...)."""
    for attr in ("cuda_stream", "musa_stream", "npu_stream"):
        h = getattr(stream, attr, None)
        if h is not None:
            return int(h)
    raise DeviceModuleError("%r has no raw stream handle" % (stream,))
