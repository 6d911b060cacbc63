"""torch.autograd of the stub: grad() is a kernel like any other op."""

from . import _stub


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=False):
    import torch

    outs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    ins = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    # A backward pass: twice the cost of the forward's output.
    _stub.charge(2 * _stub.tensor_cost(outs[0]))
    return tuple(torch._derive(x, "grad", [x] + outs) for x in ins)


class Function:
    @classmethod
    def apply(cls, *args, **kwargs):
        return cls.forward(None, *args, **kwargs)
