"""A stand-in for torch: just enough for zlbench's plugins and the fake
FlagGems trees (tests/fake_flaggems*), with no GPU. Tensors hold no data, only
a shape, a dtype and a fingerprint (values drawn from the generator they were
made with), so that "same seed, same inputs" can be checked. Every op charges
a deterministic GPU cost: see _stub.py for the model the fake CUDA driver
relies on.
"""

import hashlib
import math
import random as _random

from . import _stub

__version__ = "0.0-stub"

AcceleratorError = _stub.AcceleratorError


# --- dtypes --------------------------------------------------------------------

class dtype:
    def __init__(self, name, itemsize, is_floating_point=False, is_complex=False,
                 is_signed=True):
        self._name = name
        self.itemsize = itemsize
        self.is_floating_point = is_floating_point
        self.is_complex = is_complex
        self.is_signed = is_signed

    def __repr__(self):
        return "torch." + self._name

    __str__ = __repr__

    def __reduce__(self):
        return (getattr, (__import__("torch"), self._name))

    def __deepcopy__(self, memo):
        return self

    def __copy__(self):
        return self


float16 = half = dtype("float16", 2, True)
float32 = float = dtype("float32", 4, True)
float64 = double = dtype("float64", 8, True)
bfloat16 = dtype("bfloat16", 2, True)
float8_e4m3fn = dtype("float8_e4m3fn", 1, True)
float8_e5m2 = dtype("float8_e5m2", 1, True)
int8 = dtype("int8", 1)
uint8 = dtype("uint8", 1, is_signed=False)
int16 = short = dtype("int16", 2)
int32 = int = dtype("int32", 4)
int64 = long = dtype("int64", 8)
bool = dtype("bool", 1, is_signed=False)
complex64 = cfloat = dtype("complex64", 8, is_complex=True)

_builtin_bool = __builtins__["bool"] if isinstance(__builtins__, dict) else __builtins__.bool
_builtin_int = __builtins__["int"] if isinstance(__builtins__, dict) else __builtins__.int
_builtin_float = __builtins__["float"] if isinstance(__builtins__, dict) else __builtins__.float


class iinfo:
    _ranges = {"int8": (-2 ** 7, 2 ** 7 - 1), "uint8": (0, 255),
               "int16": (-2 ** 15, 2 ** 15 - 1), "int32": (-2 ** 31, 2 ** 31 - 1),
               "int64": (-2 ** 63, 2 ** 63 - 1), "bool": (0, 1)}

    def __init__(self, dt):
        self.min, self.max = self._ranges[dt._name]
        self.bits = dt.itemsize * 8
        self.dtype = dt._name


class finfo:
    def __init__(self, dt=None):
        dt = dt or float32
        big = {"float16": 65504.0, "bfloat16": 3.3895e38, "float8_e4m3fn": 448.0,
               "float8_e5m2": 57344.0}.get(dt._name, 3.4028e38)
        self.max, self.min = big, -big
        self.eps = 2.0 ** -10 if dt.itemsize <= 2 else 2.0 ** -23
        self.bits = dt.itemsize * 8


def get_default_dtype():
    return float32


# --- shapes and devices ------------------------------------------------------------

class Size(tuple):
    """torch.Size: a tuple whose repr is torch.Size([1024, 1024])."""

    def __new__(cls, dims=()):
        return tuple.__new__(cls, (_builtin_int(d) for d in dims))

    def __repr__(self):
        return "torch.Size([%s])" % ", ".join(str(d) for d in self)

    __str__ = __repr__

    def __getitem__(self, item):
        r = tuple.__getitem__(self, item)
        return Size(r) if isinstance(item, slice) else r

    def numel(self):
        return _stub.prod(self)


class device:
    def __init__(self, spec="cpu", index=None):
        if isinstance(spec, device):
            self.type, self.index = spec.type, spec.index
            return
        spec = str(spec)
        if ":" in spec:
            t, i = spec.split(":", 1)
            self.type, self.index = t, _builtin_int(i)
        else:
            self.type, self.index = spec, index

    def __repr__(self):
        return "device(type='%s'%s)" % (self.type, "" if self.index is None
                                          else ", index=%d" % self.index)

    def __str__(self):
        return self.type if self.index is None else "%s:%d" % (self.type, self.index)

    def __eq__(self, other):
        try:
            o = device(other)
        except Exception:
            return False
        return self.type == o.type and (self.index or 0) == (o.index or 0)

    def __hash__(self):
        return hash((self.type, self.index or 0))


def _dev(d):
    if d is None:
        return device("cpu")
    return d if isinstance(d, device) else device(d)


def _shape_args(size):
    """randn(2, 3) / randn((2, 3)) / randn([2, 3]) / randn(torch.Size(...))."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    return Size(size)


# --- random generators ----------------------------------------------------------------

class _GenState:
    """What a CUDA graph registers: seed, offset and whether it is capturing."""

    def __init__(self, seed, offset=0):
        self.seed = seed
        self.offset = offset
        self.capturing = False


OFFSET_OUTSIDE_CAPTURE = "Offset increment outside graph capture encountered unexpectedly."


class Generator:
    def __init__(self, device="cpu"):
        self.device = _dev(device)
        self._state = _GenState(67280421310721)

    def _check(self):
        st = self._state
        if st.capturing and (_stub.capture is None or st not in _stub.capture._gen_states):
            raise RuntimeError(OFFSET_OUTSIDE_CAPTURE)

    def manual_seed(self, seed):
        self._check()
        self._state.seed = _builtin_int(seed)
        self._state.offset = 0
        return self

    def seed(self):
        self.manual_seed(_random.SystemRandom().randrange(2 ** 63))
        return self._state.seed

    def initial_seed(self):
        return self._state.seed

    def get_state(self):
        return ("stub-rng-state", self._state.seed, self._state.offset)

    def set_state(self, state):
        self._check()
        _, self._state.seed, self._state.offset = state

    def graphsafe_get_state(self):
        return self._state

    def graphsafe_set_state(self, state):
        self._state = state

    def clone_state(self):
        return _GenState(self._state.seed, self._state.offset)

    def _draw(self, n=4):
        """n numbers from this generator, advancing its offset."""
        self._check()
        st = self._state
        r = _random.Random("%s/%d/%d" % (self.device.type, st.seed, st.offset))
        st.offset += n
        return tuple(round(r.gauss(0.0, 1.0), 12) for _ in range(n))


default_generator = Generator("cpu")


def manual_seed(seed):
    default_generator.manual_seed(seed)
    if cuda.is_available():
        cuda.manual_seed_all(seed)
    return default_generator


def initial_seed():
    return default_generator.initial_seed()


def _generator_for(dev, generator=None):
    if generator is not None:
        return generator
    if dev.type == "cuda":
        cuda.init()
        return cuda.default_generators[dev.index if dev.index is not None
                                       else cuda.current_device()]
    return default_generator


# --- tensors -------------------------------------------------------------------------

class Tensor:
    def __init__(self, shape, dtype=None, device=None, fp=(), requires_grad=False):
        self._shape = Size(shape)
        self.dtype = dtype or float32
        self.device = _dev(device)
        self._fp = tuple(fp)
        self.requires_grad = requires_grad
        self.grad = None

    # shape and layout
    @property
    def shape(self):
        return self._shape

    def size(self, dim=None):
        return self._shape if dim is None else self._shape[dim]

    def dim(self):
        return len(self._shape)

    @property
    def ndim(self):
        return len(self._shape)

    def numel(self):
        return self._shape.numel()

    def element_size(self):
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return self.numel() * self.element_size()

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def is_contiguous(self):
        return True

    def stride(self):
        out, acc = [], 1
        for d in reversed(self._shape):
            out.insert(0, acc)
            acc *= d
        return tuple(out)

    def __len__(self):
        return self._shape[0]

    def __getitem__(self, idx):
        """A view: integers drop dimensions, slices keep them (length kept)."""
        idx = idx if isinstance(idx, tuple) else (idx,)
        shape, i = [], 0
        for ix in idx:
            if ix is Ellipsis:
                keep = len(self._shape) - (len(idx) - 1)
                shape.extend(self._shape[i:i + keep])
                i += keep
            elif isinstance(ix, slice):
                shape.append(len(range(*ix.indices(self._shape[i]))))
                i += 1
            else:
                i += 1
        shape.extend(self._shape[i:])
        t = self._like(shape=shape, tag="getitem%r" % (idx,))
        return t

    def __repr__(self):
        return "tensor(<stub %s %s %s>)" % (list(self._shape), self.dtype, self.device)

    # conversions (no kernel charged: copies are not what is measured)
    def _like(self, shape=None, dtype=None, device=None, tag="like"):
        return Tensor(self._shape if shape is None else shape, dtype or self.dtype,
                      self.device if device is None else device,
                      _mix(tag, [self]), self.requires_grad)

    def clone(self, *a, **k):
        t = self._like(tag="clone")
        t._fp = self._fp
        return t

    def detach(self):
        t = self.clone()
        t.requires_grad = False
        return t

    def contiguous(self, *a, **k):
        return self

    def to(self, *args, **kwargs):
        dt = kwargs.get("dtype")
        dv = kwargs.get("device")
        for a in args:
            if isinstance(a, dtype):
                dt = a
            elif isinstance(a, (str, device)):
                dv = a
        t = self._like(dtype=dt, device=_dev(dv) if dv is not None else None, tag="to")
        t._fp = self._fp
        return t

    def cuda(self):
        return self.to("cuda")

    def cpu(self):
        return self.to("cpu")

    def float(self):
        return self.to(float32)

    def half(self):
        return self.to(float16)

    def requires_grad_(self, requires_grad=True):
        self.requires_grad = requires_grad
        return self

    def view(self, *shape):
        return self._like(shape=_shape_args(shape), tag="view")

    reshape = view

    def t(self):
        return self._like(shape=tuple(reversed(self._shape)), tag="t")

    def transpose(self, a, b):
        s = list(self._shape)
        s[a], s[b] = s[b], s[a]
        return self._like(shape=s, tag="transpose")

    def unsqueeze(self, d):
        s = list(self._shape)
        s.insert(d if d >= 0 else len(s) + 1 + d, 1)
        return self._like(shape=s, tag="unsqueeze")

    def expand(self, *shape):
        return self._like(shape=_shape_args(shape), tag="expand")

    def item(self):
        _stub.refuse_in_capture()
        return self._fp[0] if self._fp else 0.0

    def tolist(self):
        _stub.refuse_in_capture()
        return list(self._fp)

    # math: each is a kernel
    def __add__(self, o):
        return add(self, o)

    __radd__ = __add__

    def __sub__(self, o):
        return sub(self, o)

    def __mul__(self, o):
        return mul(self, o)

    __rmul__ = __mul__

    def __truediv__(self, o):
        return div(self, o)

    def __neg__(self):
        return mul(self, -1)

    def mm(self, other):
        return mm(self, other)

    def sum(self, dim=None, keepdim=False, dtype=None):
        return sum(self, dim, keepdim, dtype=dtype)

    def mean(self, dim=None, keepdim=False, dtype=None):
        return mean(self, dim, keepdim, dtype=dtype)

    def abs(self):
        return abs(self)

    def exp(self):
        return exp(self)

    def softmax(self, dim, dtype=None):
        return softmax(self, dim, dtype=dtype)

    def zero_(self):
        _stub.charge(_stub.tensor_cost(self))
        return self

    def copy_(self, src, non_blocking=False):
        # Same dtype and size: torch copies with cudaMemcpyAsync, a memcpy
        # node when captured; a converting copy is a kernel.
        same = (isinstance(src, Tensor) and src.dtype is self.dtype
                and src.numel() == self.numel())
        _stub.charge(_stub.tensor_cost(self), node="memcpy" if same else "kernel")
        self._fp = src._fp
        return self

    def fill_(self, v):
        _stub.charge(_stub.tensor_cost(self))
        return self

    def uniform_(self, a=0.0, b=1.0, generator=None):
        self._fp = _generator_for(self.device, generator)._draw()
        _stub.charge(_stub.tensor_cost(self))
        return self

    def normal_(self, mean=0.0, std=1.0, generator=None):
        return self.uniform_(generator=generator)


def _mix(tag, parts):
    """A deterministic fingerprint from an op name and its inputs."""
    h = hashlib.sha256(tag.encode())
    for p in parts:
        h.update(repr(getattr(p, "_fp", p)).encode())
    d = h.digest()
    return tuple(round((d[i] - 128) / 64.0, 6) for i in range(4))


def _derive(first, name, args, shape=None, dtype=None):
    """The output of an op: like `first`, fingerprint from all tensor args."""
    tensors = [a for a in args if isinstance(a, Tensor)]
    rg = any(t.requires_grad for t in tensors)
    return Tensor(first.shape if shape is None else shape, dtype or first.dtype,
                  first.device, _mix(name, tensors), rg)


def is_tensor(x):
    return isinstance(x, Tensor)


def is_floating_point(x):
    return x.dtype.is_floating_point


def equal(a, b):
    return (a.shape == b.shape and a.dtype is b.dtype and a._fp == b._fp)


def numel(x):
    return x.numel()


# --- creation ---------------------------------------------------------------------------

def _create(shape, dtype, dev, fp, requires_grad=False, charge=True):
    t = Tensor(shape, dtype or float32, dev, fp, requires_grad)
    if charge and t.device.type == "cuda":
        _stub.charge(_stub.tensor_cost(t))
    return t


def randn(*size, dtype=None, device=None, generator=None, requires_grad=False,
          layout=None, pin_memory=False, out=None):
    dev = _dev(device)
    fp = _generator_for(dev, generator)._draw()
    return _create(_shape_args(size), dtype, dev, fp, requires_grad)


def rand(*size, dtype=None, device=None, generator=None, requires_grad=False, **kw):
    return randn(*size, dtype=dtype, device=device, generator=generator,
                 requires_grad=requires_grad)


def randn_like(t, dtype=None, device=None, **kw):
    return randn(t.shape, dtype=dtype or t.dtype, device=device or t.device)


rand_like = randn_like


def randint(low, high=None, size=None, *, dtype=None, device=None, generator=None,
            **kw):
    if high is None:
        low, high = 0, low
    dev = _dev(device)
    fp = _generator_for(dev, generator)._draw()
    return _create(Size(size), dtype or int64, dev, fp)


def randperm(n, *, dtype=None, device=None, generator=None, **kw):
    dev = _dev(device)
    fp = _generator_for(dev, generator)._draw()
    return _create(Size([n]), dtype or int64, dev, fp)


def empty(*size, dtype=None, device=None, requires_grad=False, **kw):
    return _create(_shape_args(size), dtype, _dev(device), (), requires_grad,
                   charge=False)


def empty_like(t, dtype=None, device=None, **kw):
    return empty(t.shape, dtype=dtype or t.dtype, device=device or t.device)


def zeros(*size, dtype=None, device=None, requires_grad=False, **kw):
    return _create(_shape_args(size), dtype, _dev(device), (0.0,), requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False, **kw):
    return _create(_shape_args(size), dtype, _dev(device), (1.0,), requires_grad)


def zeros_like(t, dtype=None, device=None, **kw):
    return zeros(t.shape, dtype=dtype or t.dtype, device=device or t.device)


def ones_like(t, dtype=None, device=None, **kw):
    return ones(t.shape, dtype=dtype or t.dtype, device=device or t.device)


def full(size, fill_value, *, dtype=None, device=None, **kw):
    return _create(Size(size), dtype, _dev(device), (_builtin_float(fill_value),))


def tensor(data, dtype=None, device=None, requires_grad=False):
    def shape_of(x):
        if isinstance(x, (list, tuple)):
            return [len(x)] + (shape_of(x[0]) if x else [])
        return []

    if dtype is None:
        dtype = float32 if isinstance(data, _builtin_float) or (
            isinstance(data, (list, tuple)) and data and
            isinstance(data[0], _builtin_float)) else int64
    return _create(Size(shape_of(data)), dtype, _dev(device), (repr(data),),
                   requires_grad, charge=False)


def arange(*args, dtype=None, device=None, **kw):
    vals = range(*[_builtin_int(a) for a in args])
    return _create(Size([len(vals)]), dtype or int64, _dev(device), (len(vals),))


# --- math ---------------------------------------------------------------------------------

def _first_tensor(args):
    return next((a for a in args if isinstance(a, Tensor)), None)


def _elementwise(name):
    def op(*args, out=None, **kwargs):
        first = _first_tensor(args)
        _stub.charge(_stub.tensor_cost(first))
        r = _derive(first, name, args)
        if out is not None:
            out._fp = r._fp
            return out
        return r

    op.__name__ = name
    return op


add = _elementwise("add")
sub = _elementwise("sub")
mul = _elementwise("mul")
div = _elementwise("div")
exp = _elementwise("exp")
abs = _elementwise("abs")
neg = _elementwise("neg")
sigmoid = _elementwise("sigmoid")
tanh = _elementwise("tanh")
relu = _elementwise("relu")
clamp = _elementwise("clamp")
where = _elementwise("where")


def _reduce_shape(shape, dim, keepdim):
    if dim is None:
        return Size([])
    dims = [dim] if not isinstance(dim, (list, tuple)) else list(dim)
    dims = [d % len(shape) for d in dims] if len(shape) else []
    return Size([1 if i in dims else s for i, s in enumerate(shape)
                 if keepdim or i not in dims])


def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    _stub.charge(_stub.tensor_cost(input))
    return _derive(input, "sum", [input], _reduce_shape(input.shape, dim, keepdim), dtype)


def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    _stub.charge(_stub.tensor_cost(input))
    return _derive(input, "mean", [input], _reduce_shape(input.shape, dim, keepdim), dtype)


def amax(input, dim=(), keepdim=False):
    _stub.charge(_stub.tensor_cost(input))
    return _derive(input, "amax", [input], _reduce_shape(input.shape, dim or None, keepdim))


def softmax(input, dim=None, dtype=None, _stacklevel=3):
    _stub.charge(_stub.tensor_cost(input))
    return _derive(input, "softmax", [input], dtype=dtype)


def log_softmax(input, dim=None, dtype=None, _stacklevel=3):
    _stub.charge(_stub.tensor_cost(input))
    return _derive(input, "log_softmax", [input], dtype=dtype)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5,
               cudnn_enable=True):
    _stub.charge(_stub.tensor_cost(input))
    return _derive(input, "layer_norm", [input, weight, bias])


def mm(a, b, out=None):
    m, k = a.shape[-2], a.shape[-1]
    n = b.shape[-1]
    _stub.charge(_stub.mm_cost(m, n, k))
    return _derive(a, "mm", [a, b], Size([m, n]))


def bmm(a, b, out=None):
    bt, m, k = a.shape
    n = b.shape[-1]
    _stub.charge(_stub.mm_cost(m, n, k, bt))
    return _derive(a, "bmm", [a, b], Size([bt, m, n]))


def addmm(bias, a, b, beta=1, alpha=1, out=None):
    m, k = a.shape
    n = b.shape[-1]
    _stub.charge(_stub.mm_cost(m, n, k))
    return _derive(a, "addmm", [bias, a, b], Size([m, n]))


def matmul(a, b):
    return mm(a, b) if a.ndim == 2 else bmm(a, b)


class _SortResult(tuple):
    @property
    def values(self):
        return self[0]

    @property
    def indices(self):
        return self[1]


def sort(input, dim=-1, descending=False, stable=False, *, out=None):
    """Capture-illegal in this stub (it synchronizes with the host)."""
    _stub.refuse_in_capture()
    _stub.charge(_stub.tensor_cost(input))
    return _SortResult((_derive(input, "sort.values", [input]),
                        _derive(input, "sort.indices", [input], dtype=int64)))


def topk(input, k, dim=-1, largest=True, sorted=True):
    _stub.charge(_stub.tensor_cost(input))
    shape = list(input.shape)
    shape[dim] = k
    return _SortResult((_derive(input, "topk.values", [input], shape),
                        _derive(input, "topk.indices", [input], shape, int64)))


def cat(tensors, dim=0):
    first = tensors[0]
    shape = list(first.shape)
    shape[dim] = _builtin_int(math.fsum(t.shape[dim] for t in tensors))
    out = _derive(first, "cat", list(tensors), shape)
    _stub.charge(_stub.tensor_cost(out))
    return out


stack = cat


# --- submodules ---------------------------------------------------------------------------

from . import cuda  # noqa: E402
from . import version  # noqa: E402
from . import autograd  # noqa: E402
from . import nn  # noqa: E402
from . import ops  # noqa: E402
from . import backends  # noqa: E402
from . import library  # noqa: E402

__all__ = ["Tensor", "Size", "dtype", "cuda", "nn", "ops"]
