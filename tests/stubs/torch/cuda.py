"""torch.cuda of the stub: one fake device (STUB_TORCH_CUDA=0: none;
STUB_TORCH_DEVICES=n: n), streams with integer handles, CUDA graphs that sum
the cost of what is captured (see _stub.py), default generators with
graphsafe_get_state / graphsafe_set_state / clone_state.

The device is described as the fake driver describes it
(tests/fakes/fake_libcuda.c): "Fake H200 (zlbench test driver)", capability
9.0, uuid GPU-facec0da-0000-4000-8000-0000000000ii.
"""

import contextlib
import itertools
import os

from . import _stub

DEVICE_NAME = "Fake H200 (zlbench test driver)"


def is_available():
    return os.environ.get("STUB_TORCH_CUDA", "1") != "0"


def device_count():
    if not is_available():
        return 0
    return max(0, int(os.environ.get("STUB_TORCH_DEVICES", "1")))


def is_initialized():
    return bool(default_generators)


def init():
    """Lazy initialisation: like torch, default_generators is () before it."""
    global default_generators
    if not default_generators and is_available():
        default_generators = _make_generators()


_current = 0


def current_device():
    return _current


def set_device(d):
    global _current
    import torch

    _current = torch.device(d).index or 0 if not isinstance(d, int) else d


def _index(d):
    if d is None:
        return _current
    if isinstance(d, int):
        return d
    import torch

    return torch.device(d).index or 0


class _CUuuid:
    def __init__(self, index):
        self.bytes = bytes([0xFA, 0xCE, 0xC0, 0xDA, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0,
                            index & 0xFF])

    def __str__(self):
        h = self.bytes.hex()
        return "%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])


class _DeviceProperties:
    def __init__(self, index):
        self.name = DEVICE_NAME
        self.uuid = _CUuuid(index)
        self.major = 9
        self.minor = 0
        self.total_memory = 141 << 30
        self.multi_processor_count = 132
        self.L2_cache_size = 60 << 20


def _check_device(i):
    if not is_available():
        raise RuntimeError("Found no NVIDIA driver on your system.")
    if i < 0 or i >= device_count():
        raise RuntimeError("CUDA error: invalid device ordinal")


def get_device_properties(device=None):
    i = _index(device)
    _check_device(i)
    init()
    return _DeviceProperties(i)


def get_device_name(device=None):
    return get_device_properties(device).name


def get_device_capability(device=None):
    p = get_device_properties(device)
    return (p.major, p.minor)


def synchronize(device=None):
    """A host sync: illegal during a capture."""
    init()
    _stub.refuse_in_capture()


def empty_cache():
    pass


def memory_allocated(device=None):
    return 0


def max_memory_allocated(device=None):
    return 0


def is_current_stream_capturing():
    return _stub.capture is not None


# --- generators -----------------------------------------------------------------

def _make_generators():
    import torch

    return tuple(torch.Generator("cuda:%d" % i) for i in range(max(1, device_count())))


# Like torch: () until CUDA is initialised (init(), or any CUDA work).
default_generators = ()


def manual_seed(seed):
    init()
    default_generators[current_device()].manual_seed(seed)


def manual_seed_all(seed):
    init()
    for g in default_generators:
        g.manual_seed(seed)


def seed_all():
    for g in default_generators:
        g.seed()


def initial_seed():
    return default_generators[current_device()].initial_seed()


# --- streams ---------------------------------------------------------------------------

_stream_ids = itertools.count(0x7F0000001000, 0x1000)


class Stream:
    def __init__(self, device=None, priority=0, _handle=None):
        self.device = device
        self.priority = priority
        self.cuda_stream = next(_stream_ids) if _handle is None else _handle

    def wait_stream(self, other):
        pass

    def wait_event(self, event):
        pass

    def synchronize(self):
        _stub.refuse_in_capture()

    def query(self):
        return True

    def __eq__(self, other):
        return isinstance(other, Stream) and other.cuda_stream == self.cuda_stream

    def __hash__(self):
        return hash(self.cuda_stream)

    def __repr__(self):
        return "<torch.cuda.Stream cuda_stream=0x%x>" % self.cuda_stream


_default_stream = Stream(_handle=0)
_current_stream = _default_stream


def default_stream(device=None):
    return _default_stream


def current_stream(device=None):
    return _current_stream


@contextlib.contextmanager
def stream(s):
    global _current_stream
    if s is None:
        yield
        return
    prev = _current_stream
    _current_stream = s
    try:
        yield
    finally:
        _current_stream = prev


class Event:
    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self.enable_timing = enable_timing

    def record(self, stream=None):
        pass

    def synchronize(self):
        _stub.refuse_in_capture()

    def elapsed_time(self, other):
        return 0.0


# --- graphs --------------------------------------------------------------------------------

class CUDAGraph:
    """A capture sums the cost of the ops run during it; once instantiated,
    raw_cuda_graph_exec() is that sum in nanoseconds (the fake driver's
    replay time for the handle). It also counts the nodes by kind;
    raw_cuda_graph() encodes them for the fake driver's graph inspection."""

    def __init__(self, keep_graph=False):
        self._keep_graph = keep_graph
        self._status = "new"
        self._cost_ns = 0
        self._ops = 0
        self._invalid = None
        self._gen_states = []
        self._exec = None
        self._nodes = dict.fromkeys(_stub.NODE_KINDS, 0)

    def capture_begin(self, pool=None, capture_error_mode="global"):
        if self._status != "new":
            raise RuntimeError("This CUDAGraph instance already owns a captured graph.")
        if current_stream() == _default_stream:
            raise RuntimeError("CUDA graphs must be captured on a non-default stream. "
                               "(However, after capture, it's ok to replay them on the "
                               "default stream.)")
        if _stub.capture is not None:
            raise _stub.cuda_error(_stub.CAPTURE_ILLEGAL)
        # Like torch: the default generator's current state is registered with
        # the graph and marked capturing until capture_end succeeds.
        init()
        st = default_generators[current_device()]._state
        st.capturing = True
        self._gen_states = [st]
        _stub.capture = self
        _stub.captures_begun += 1
        self._status = "capturing"

    def capture_end(self):
        if _stub.capture is not self:
            raise RuntimeError("capture_end() called without a matching capture_begin()")
        _stub.capture = None
        if self._invalid is not None:
            # The registered generator state stays "capturing": poisoned.
            self._status = "failed"
            raise _stub.cuda_error("operation failed due to a previous error during "
                                   "capture")
        for st in self._gen_states:
            st.capturing = False
        self._status = "captured"
        _stub.live_graphs += 1
        _stub.last_graph = self
        if not self._keep_graph:
            self.instantiate()

    def instantiate(self):
        if self._status != "captured":
            raise RuntimeError("instantiate() needs a captured graph (status %s)"
                               % self._status)
        self._exec = self._cost_ns
        self._status = "instantiated"

    def raw_cuda_graph(self):
        """The fake driver's CUgraph: node counts by kind (see _stub.py).
        Like torch: only with keep_graph=True, from capture_end on."""
        if not self._keep_graph:
            raise RuntimeError("You cannot access the raw cudaGraph_t instance unless "
                               "CUDAGraph was initialized with keep_graph=true")
        if self._status not in ("captured", "instantiated"):
            raise RuntimeError("You cannot access the raw cudaGraph_t instance until "
                               "capture_end() has been called")
        return _stub.graph_handle(self._nodes)

    def raw_cuda_graph_exec(self):
        if self._status != "instantiated":
            raise RuntimeError("the graph is not instantiated (status %s)" % self._status)
        return self._exec

    def replay(self):
        if self._status == "captured":
            self.instantiate()
        if self._status != "instantiated":
            raise RuntimeError("nothing to replay")
        _stub.replays += 1
        _stub.eager_ns += self._cost_ns

    def reset(self):
        if self._status in ("captured", "instantiated"):
            _stub.live_graphs -= 1
        self._status = "reset"
        self._exec = None

    def pool(self):
        return (id(self), 0)

    @property
    def cost_ns(self):
        return self._cost_ns

    @property
    def nodes(self):
        return dict(self._nodes)


class graph:
    """torch.cuda.graph(cuda_graph, pool=None, stream=None, capture_error_mode)."""

    def __init__(self, cuda_graph, pool=None, stream=None, capture_error_mode="global"):
        self.cuda_graph = cuda_graph
        self.pool = pool
        self.capture_stream = stream if stream is not None else Stream()
        self.capture_error_mode = capture_error_mode
        self._ctx = None

    def __enter__(self):
        synchronize()
        empty_cache()
        self._ctx = globals()["stream"](self.capture_stream)
        self._ctx.__enter__()
        try:
            self.cuda_graph.capture_begin(self.pool,
                                          capture_error_mode=self.capture_error_mode)
        except BaseException:
            self._ctx.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc):
        try:
            self.cuda_graph.capture_end()
        finally:
            self._ctx.__exit__(None, None, None)
        return False


def graph_pool_handle():
    return (0, 0)


