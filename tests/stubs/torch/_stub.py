"""The stub's cost model and capture bookkeeping.

THE COST MODEL (agreed with the fake CUDA driver, tests/fakes/fake_libcuda.c;
change both together):

- Every stub op has a deterministic GPU cost in integer nanoseconds:
  1000 + nbytes // 2 of its main tensor (numel * element_size // 2), except
  mm/bmm/addmm: 1000 + M * N * K // 512 (per batch for bmm). Creation ops on
  the device (randn, zeros, ...) cost the same formula; empty() costs nothing.
- Inside flag_gems.use_gems() (the "gems" variants) an op costs 4/5 of that,
  integer division: cost * 4 // 5.
- Outside a capture the cost is added to an eager counter (eager_ns); the stub
  triton.testing.do_bench reads it around one call of fn and returns
  cost / 1e6 + 0.05 ms (a launch overhead).
- During a capture the cost is added to the capturing CUDAGraph; an
  instantiated graph's raw_cuda_graph_exec() is that integer sum: the handle's
  VALUE is the nanoseconds one replay takes, and the fake driver advances its
  clock by it on cuGraphLaunch. So a graph of K calls of a 5000 ns op is the
  handle 5000 * K and libzlbtimer reports 0.005 ms per call.

THE NODE MODEL (agreed with the fake driver's "Graph inspection"):

- Every op charged during a capture adds one node to the capturing graph, of
  the kind it declares: "kernel" (the default), "memcpy", "memset" or
  "other". Tensor.copy_ between tensors of the same dtype and size is a
  "memcpy" node, as in real torch (cudaMemcpyAsync); a converting copy_ is a
  kernel. make_op(..., node="memset") makes an op of another kind.
- raw_cuda_graph() (keep_graph=True only, from capture_end until reset, as
  in torch) is the CUgraph handle the fake driver decodes: 16 bits per kind,
  kernels in bits 0-15, memcpys 16-31, memsets 32-47, others 48-63. The
  value 0 (no node at all) is the fake's NULL graph.

Capture-illegal work (a host sync: torch.cuda.synchronize(), Tensor.item(),
torch.sort) raises the CUDA error "operation not permitted when stream is
capturing" during a capture and invalidates it; capture_end then fails and the
default CUDA generator state registered at capture_begin stays "capturing",
after which manual_seed/randn on it fail with "Offset increment outside graph
capture" -- the poisoning zlbench's throwaway RNG state exists to prevent.
"""

import math

LAUNCH_OVERHEAD_MS = 0.05

DSA_FOOTER = (
    "\nCUDA kernel errors might be asynchronously reported at some other API call, "
    "so the stacktrace below might be incorrect.\n"
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n"
)

CAPTURE_ILLEGAL = "operation not permitted when stream is capturing"


class AcceleratorError(RuntimeError):
    """torch.AcceleratorError: what a CUDA error raises in newer torch."""


def cuda_error(text):
    """A CUDA error as torch words it, footer included."""
    return AcceleratorError("CUDA error: " + text + DSA_FOOTER)


# --- counters -----------------------------------------------------------------

eager_ns = 0          # GPU time of eager work so far
eager_ops = 0         # eager op calls so far
gems_depth = 0        # > 0 inside flag_gems.use_gems()
capture = None        # the CUDAGraph being captured, if any
live_graphs = 0       # captured graphs not yet reset
last_graph = None     # the CUDAGraph whose capture ended last
captures_begun = 0
replays = 0


def reset_counters():
    global eager_ns, eager_ops, captures_begun, replays
    eager_ns = eager_ops = captures_begun = replays = 0


def scaled(base_ns):
    """The cost of an op with base cost base_ns in the current mode."""
    base_ns = int(base_ns)
    return base_ns * 4 // 5 if gems_depth > 0 else base_ns


NODE_KINDS = ("kernel", "memcpy", "memset", "other")
NODE_SHIFT = {"kernel": 0, "memcpy": 16, "memset": 32, "other": 48}


def graph_handle(nodes):
    """The fake driver's CUgraph value for node counts {kind: n}."""
    h = 0
    for kind, n in nodes.items():
        if not 0 <= n <= 0xFFFF:
            raise ValueError("the fake driver's graph handle holds at most 65535 "
                             "%s nodes, not %d" % (kind, n))
        h |= n << NODE_SHIFT[kind]
    return h


def charge(base_ns, node="kernel"):
    """Run an op of base cost base_ns: into the capture (one node of kind
    node), or eagerly."""
    global eager_ns, eager_ops
    if node not in NODE_KINDS:
        raise ValueError("node kind %r is none of %s" % (node, ", ".join(NODE_KINDS)))
    ns = scaled(base_ns)
    if capture is not None:
        capture._cost_ns += ns
        capture._ops += 1
        capture._nodes[node] += 1
    else:
        eager_ns += ns
        eager_ops += 1
    return ns


def tensor_cost(t):
    return 1000 + t.numel() * t.element_size() // 2


def mm_cost(m, n, k, batch=1):
    return 1000 + batch * (m * n * k // 512)


def refuse_in_capture():
    """A host sync: illegal during a capture, which it invalidates."""
    if capture is not None:
        capture._invalid = CAPTURE_ILLEGAL
        raise cuda_error(CAPTURE_ILLEGAL)


class gems:
    """Context: ops cost 4/5 (what fake flag_gems.use_gems() enters)."""

    def __enter__(self):
        global gems_depth
        gems_depth += 1
        return self

    def __exit__(self, *exc):
        global gems_depth
        gems_depth -= 1
        return False


def make_op(name, cost_ns=None, capture_error=None, capture_invalidates=True,
            eager_error=None, eager_error_after=None, eager_error_on=None, body=None,
            node="kernel", capture_cost_ns=None):
    """A stub op for tests: fn(*tensors) -> a tensor like the first.

    cost_ns: fixed base cost (default: the cost of the first tensor argument).
    capture_error: the text of a CUDA error raised when called during a
      capture (footer included, like torch); the capture is invalidated unless
      capture_invalidates is False.
    eager_error / eager_error_after=N: outside captures, the first N calls
      succeed and later ones raise RuntimeError(eager_error);
      eager_error_on={i, ...}: only the i-th eager calls (1-based) raise.
    body(*args): called first on every call (to do more inside the op).
    node: the kind of graph node the op is when captured (see the node model).
    capture_cost_ns(i): the cost of a call captured into the i-th graph
      (0-based) this op was captured into, in place of cost_ns: where one
      capture's buffers land against another's; it may raise (a capture
      that fails there).
    The op counts its calls in .calls, .captured_calls and .eager_calls.
    """
    import torch

    def op(*args, **kwargs):
        op.calls += 1
        if body is not None:
            body(*args)
        if capture is not None:
            op.captured_calls += 1
            if capture_error is not None:
                if capture_invalidates:
                    capture._invalid = capture_error
                raise cuda_error(capture_error)
        else:
            op.eager_calls += 1
            if eager_error is not None:
                if eager_error_on is not None:
                    if op.eager_calls in eager_error_on:
                        raise RuntimeError(eager_error)
                elif eager_error_after is None or op.eager_calls > eager_error_after:
                    raise RuntimeError(eager_error)
        first = next((a for a in args if isinstance(a, torch.Tensor)), None)
        cost = cost_ns
        if capture is not None and capture_cost_ns is not None:
            if not op.graphs or op.graphs[-1] is not capture:
                op.graphs.append(capture)
            cost = capture_cost_ns(len(op.graphs) - 1)
        charge(cost if cost is not None else
               (tensor_cost(first) if first is not None else 1000), node=node)
        if first is None:
            return torch.empty(1, device="cuda")
        return torch._derive(first, name, args)

    op.__name__ = name
    op.calls = 0
    op.captured_calls = 0
    op.eager_calls = 0
    op.graphs = []
    return op


def prod(shape):
    return int(math.prod(shape)) if len(shape) else 1
