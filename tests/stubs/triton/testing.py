"""triton.testing of the stub.

do_bench runs fn once and returns its eager GPU cost (the stub torch's cost
model, tests/stubs/torch/_stub.py) plus a 0.05 ms launch overhead, in ms,
honouring quantiles (a list, or the value itself for one quantile) and
return_mode ("all": a list of a few equal samples). `calls` counts calls.
"""

RETURN_MODES = ("min", "max", "mean", "median", "all")

calls = 0


def _eager_ms(fn, grad_to_none):
    import torch

    if grad_to_none is not None:
        for x in grad_to_none:
            x.grad = None
    before = torch._stub.eager_ns
    fn()
    return (torch._stub.eager_ns - before) / 1e6


def do_bench(fn, warmup=25, rep=100, grad_to_none=None, quantiles=None,
             return_mode="mean"):
    global calls
    assert return_mode in RETURN_MODES
    calls += 1
    import torch

    ms = _eager_ms(fn, grad_to_none) + torch._stub.LAUNCH_OVERHEAD_MS
    if quantiles is not None:
        ret = [ms for _ in quantiles]
        return ret[0] if len(ret) == 1 else ret
    if return_mode == "all":
        return [ms] * 5
    return ms


def do_bench_cudagraph(fn, rep=20, grad_to_none=None, quantiles=None,
                       return_mode="mean"):
    assert return_mode in RETURN_MODES
    ms = _eager_ms(fn, grad_to_none)
    if quantiles is not None:
        ret = [ms for _ in quantiles]
        return ret[0] if len(ret) == 1 else ret
    if return_mode == "all":
        return [ms] * 5
    return ms
