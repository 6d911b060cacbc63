"""torch.nn.functional of the stub: every function is a costed kernel."""

import torch
from torch import _stub


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    return torch.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    return torch.log_softmax(input, dim, dtype=dtype)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    return torch.layer_norm(input, normalized_shape, weight, bias, eps)


def relu(input, inplace=False):
    return torch.relu(input)


def gelu(input, approximate="none"):
    _stub.charge(_stub.tensor_cost(input))
    return torch._derive(input, "gelu", [input])


def silu(input, inplace=False):
    _stub.charge(_stub.tensor_cost(input))
    return torch._derive(input, "silu", [input])


def _pool(name, input, kernel_size, stride=None, padding=0, ceil_mode=False):
    k = kernel_size if isinstance(kernel_size, (tuple, list)) else (kernel_size,) * 2
    s = stride if stride else k
    s = s if isinstance(s, (tuple, list)) else (s,) * 2
    p = padding if isinstance(padding, (tuple, list)) else (padding,) * 2
    shape = list(input.shape)
    for i in (0, 1):
        shape[-2 + i] = max(1, (shape[-2 + i] + 2 * p[i] - k[i]) // s[i] + 1)
    _stub.charge(_stub.tensor_cost(input))
    return torch._derive(input, name, [input], shape)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    return _pool("avg_pool2d", input, kernel_size, stride, padding, ceil_mode)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode=False, return_indices=False):
    return _pool("max_pool2d", input, kernel_size, stride, padding, ceil_mode)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    shape = list(input.shape[:-2]) + list(output_size)
    _stub.charge(_stub.tensor_cost(input))
    return torch._derive(input, "adaptive_max_pool2d", [input], shape)


def dropout(input, p=0.5, training=True, inplace=False):
    gen = torch._generator_for(input.device)
    gen._draw()
    _stub.charge(_stub.tensor_cost(input))
    return torch._derive(input, "dropout", [input])
