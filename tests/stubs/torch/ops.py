"""torch.ops of the stub: torch.ops.aten.<any name>[.<overload>](...) is a
generic op costing what its first tensor argument costs (see _stub.py)."""

from . import _stub


class _Op:
    def __init__(self, name):
        self._name = name

    def __call__(self, *args, **kwargs):
        import torch

        first = next((a for a in args if isinstance(a, torch.Tensor)), None)
        if first is None:
            first = next((v for v in kwargs.values() if isinstance(v, torch.Tensor)), None)
        _stub.charge(_stub.tensor_cost(first) if first is not None else 1000)
        if first is None:
            return torch.empty(1, device="cuda")
        return torch._derive(first, self._name, list(args) + list(kwargs.values()))

    def __getattr__(self, overload):
        if overload.startswith("__"):
            raise AttributeError(overload)
        return _Op(self._name + "." + overload)

    def __repr__(self):
        return "aten::" + self._name


class _Namespace:
    def __init__(self, ns):
        self._ns = ns

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Op(name)


aten = _Namespace("aten")
_C = _Namespace("_C")
