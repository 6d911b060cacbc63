"""The stub JIT: @triton.jit kernels and @triton.autotune, as seen from
Triton 3.6's hooks, with no compiler and no GPU.

`kernel[grid](*args, CONST=..., num_warps=4, num_stages=3, num_ctas=1)`:

1. specialises the call as Triton does: parameters annotated tl.constexpr,
   ints equal to 1 and None become "constexpr" (values in ASTSource.constants);
   tensors are "*fp16"-like pointers, always 16-byte aligned (tt.divisibility
   16); other ints are "i32"/"i64", divisible by 16 when they are; bools "i1",
   floats "fp32";
2. "compiles" each specialisation once per process: the variant's hash is a
   sha256 of the kernel's source, the specialisation, the options and
   $FAKE_TRITON_BUILD (a stand-in for another compiler build: it also shows in
   the IR text). Its files -- <name>.source .ttir .ttgir .llir .ptx .cubin
   .json -- are written under <cache dir>/<base32 of the hash>/ with a
   __grp__<name>.json group file, as Triton's cache manager does; when that
   group file already exists the files are reused (cache_hit=True).
   knobs.compilation.listener, if set, is called with src (an ASTSource),
   metadata (hash, name, num_warps, num_stages, num_ctas, shared, target, ...),
   metadata_group ({"<name>.<ext>": path}), times and cache_hit;
3. "loads" the variant on its first launch: kernel_load_start_hook(None, None,
   name, group, hash), then a fresh integer function handle and
   kernel_load_end_hook(module, function, name, group, hash);
4. "launches" it: when launch_enter_hook holds hooks, a LazyDict with name,
   function and stream (no hash, as in 3.6) is built and passed to it; then
   the kernel body runs as plain Python with the bound arguments and returns
   its base GPU cost in ns (None: the cost of the first tensor argument, the
   stub torch's formula), charged through torch._stub.charge (so it is scaled
   inside use_gems and lands in a capturing graph like any stub op).

@triton.autotune(configs=[triton.Config({...}, num_warps=...)], key=[names]) is
Triton 3.6's Autotuner as far as autotune record/replay sees it (configs,
keys, arg_names, the cache dict {key: Config}, best_config, run(), a Config's
pre_hook): on the first call for a key (the key arguments' values plus the
dtypes of the tensor arguments) every config is timed through
triton.runtime.driver.active.get_benchmarker() in the quantiles form (each
config compiles inside that timing call), the fastest (first on ties) is
kept; then, and on every later call for that key, only the winner launches.
@triton.heuristics(values) sits between an autotuner and its kernel.

A variant can be made to fail its "compile" with OutOfResources, as a config
another compiler build cannot fit: triton._jit.fail_compile (in-process) or
$FAKE_TRITON_FAIL="kernel:BLOCK=128,num_warps=8;...". Autotuning times such
a config as inf; a direct launch raises. $FAKE_TUNE_LOG=<file>: one JSON line
per tuner call (kernel, key, the config run, whether it benchmarked).

`stats` counts compiles, cache hits, loads, launches, launches that ran
with launch hooks, tuning sweeps and benchmarked configs; `launch_log` lists (name, hash, hooked) per launch;
reset() forgets every compiled variant, tuning result and count.
"""

import base64
import hashlib
import inspect
import itertools
import json
import os
import time

from . import compiler, language

TRITON_VERSION = "3.6.0+stub"

stats = {"compiles": 0, "cache_hits": 0, "loads": 0, "launches": 0, "hooked_launches": 0,
         "tunings": 0, "benchmarks": 0}
launch_log = []
_registry = []
_handles = itertools.count(1)


def reset():
    for obj in _registry:
        obj._reset()
    for k in stats:
        stats[k] = 0
    del launch_log[:]


def _knobs():
    try:
        from . import knobs
    except ImportError:
        return None
    return knobs


def _has_hooks(h):
    if h is None:
        return False
    calls = getattr(h, "calls", None)
    return bool(calls) if calls is not None else callable(h)


def cdiv(a, b):
    return (a + b - 1) // b


def next_power_of_2(n):
    n = int(n)
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


# --- types -------------------------------------------------------------------------

_CODES = {"float16": "fp16", "float32": "fp32", "bfloat16": "bf16", "float64": "fp64",
          "int8": "i8", "uint8": "u8", "int16": "i16", "int32": "i32", "int64": "i64",
          "bool": "i1", "float8_e4m3fn": "fp8e4nv", "float8_e5m2": "fp8e5",
          "complex64": "fp32"}
_MLIR = {"fp16": "f16", "fp32": "f32", "bf16": "bf16", "fp64": "f64", "i8": "i8", "u8": "i8",
         "i16": "i16", "i32": "i32", "i64": "i64", "i1": "i1", "fp8e4nv": "f8E4M3FN",
         "fp8e5": "f8E5M2"}


def _is_tensor(v):
    return hasattr(v, "dtype") and hasattr(v, "shape") and not isinstance(v, type)


def _code(dtype):
    name = str(dtype).split(".")[-1]
    return _CODES.get(name, name)


def _mlir(ty):
    if ty.startswith("*"):
        return "!tt.ptr<%s>" % _mlir(ty[1:])
    return _MLIR.get(ty, ty)


def _b32(hexhash):
    return base64.b32encode(bytes.fromhex(hexhash)).decode().rstrip("=")


def _write(path, data):
    tmp = "%s.tmp.pid_%d" % (path, os.getpid())
    with open(tmp, "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)
    os.replace(tmp, path)


# --- configs and the compiled variant --------------------------------------------

class Config:
    def __init__(self, kwargs, num_warps=4, num_stages=3, num_ctas=1, maxnreg=None,
                 pre_hook=None):
        self.kwargs = dict(kwargs)
        self.num_warps = num_warps
        self.num_stages = num_stages
        self.num_ctas = num_ctas
        self.maxnreg = maxnreg
        self.pre_hook = pre_hook

    def all_kwargs(self):
        out = dict(self.kwargs)
        out.update(num_warps=self.num_warps, num_stages=self.num_stages,
                   num_ctas=self.num_ctas)
        if self.maxnreg is not None:
            out["maxnreg"] = self.maxnreg
        return out

    def __repr__(self):
        parts = ["%s: %r" % kv for kv in self.kwargs.items()]
        parts += ["num_warps: %d" % self.num_warps, "num_stages: %d" % self.num_stages,
                  "num_ctas: %d" % self.num_ctas]
        return ", ".join(parts)


class CompiledKernel:
    def __init__(self, fn, hash, metadata, metadata_group):
        self.fn = fn
        self.hash = hash
        self.name = metadata["name"]
        self.metadata = metadata
        self.metadata_group = metadata_group
        self.module = None
        self.function = None

    def _load(self, kn):
        if self.function is not None:
            return
        if kn is not None:
            kn.runtime.kernel_load_start_hook(None, None, self.name, self.metadata_group,
                                              self.hash)
        n = next(_handles)
        self.module = 0x7F5A00000000 + 0x10000 * n
        self.function = self.module + 0x40
        stats["loads"] += 1
        if kn is not None:
            kn.runtime.kernel_load_end_hook(self.module, self.function, self.name,
                                            self.metadata_group, self.hash)

    def launch(self, cost_ns):
        import torch

        kn = _knobs()
        self._load(kn)
        md = None
        if kn is not None and _has_hooks(kn.runtime.launch_enter_hook):
            data = {"name": self.name, "function": self.function, "stream": 0}
            if compiler.LAUNCH_DATA_HASH:
                data["hash"] = self.hash
            md = compiler.LazyDict(data)
            kn.runtime.launch_enter_hook(md)
        stats["launches"] += 1
        stats["hooked_launches"] += md is not None
        launch_log.append((self.name, self.hash, md is not None))
        torch._stub.charge(cost_ns)
        if md is not None and _has_hooks(kn.runtime.launch_exit_hook):
            kn.runtime.launch_exit_hook(md)


# --- @triton.jit ---------------------------------------------------------------------

def _is_constexpr(annotation):
    if annotation is language.constexpr:
        return True
    return isinstance(annotation, str) and annotation.split(".")[-1] == "constexpr"


class KernelInterface:
    """What every launchable of the stub shares: kernel[grid](*args, **kw)."""

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.run(*args, grid=grid, **kwargs)


class JITFunction(KernelInterface):
    def __init__(self, fn):
        self.fn = fn
        self.__name__ = fn.__name__
        self.__qualname__ = getattr(fn, "__qualname__", fn.__name__)
        self.__module__ = fn.__module__
        self.__doc__ = fn.__doc__
        self.signature = inspect.signature(fn)
        self.params = list(self.signature.parameters.values())
        self.arg_names = [p.name for p in self.params]
        self.constexprs = [i for i, p in enumerate(self.params) if _is_constexpr(p.annotation)]
        try:
            text = inspect.getsource(fn)
        except (OSError, TypeError):
            text = self.__qualname__
        self.cache_key = hashlib.sha256(text.encode()).hexdigest()
        self.launch_metadata = None
        self._reset()
        _registry.append(self)

    def _reset(self):
        self.kernels = {}           # specialisation key -> CompiledKernel
        self.launches = 0

    def __repr__(self):
        return "JITFunction(%s:%s)" % (self.__module__, self.__qualname__)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Cannot call @triton.jit'd outside of the scope of a kernel")

    def _specialize(self, values):
        signature, constants, attrs = {}, {}, {}
        for i, (name, v) in enumerate(zip(self.arg_names, values)):
            if i in self.constexprs or v is None:
                signature[name] = "constexpr"
                constants[(i,)] = v
            elif isinstance(v, bool):
                signature[name] = "i1"
            elif isinstance(v, int):
                if v == 1:
                    signature[name] = "constexpr"
                    constants[(i,)] = 1
                else:
                    signature[name] = "i32" if -2 ** 31 <= v < 2 ** 31 else "i64"
                    if v % 16 == 0:
                        attrs[(i,)] = [["tt.divisibility", 16]]
            elif isinstance(v, float):
                signature[name] = "fp32"
            elif _is_tensor(v):
                signature[name] = "*" + _code(v.dtype)
                attrs[(i,)] = [["tt.divisibility", 16]]
            else:
                raise TypeError("stub JIT: cannot specialise %s=%r" % (name, v))
        return signature, constants, attrs

    def run(self, *args, grid=None, num_warps=4, num_stages=3, num_ctas=1, maxnreg=None,
            warmup=False, **kwargs):
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        values = [bound.arguments[n] for n in self.arg_names]
        signature, constants, attrs = self._specialize(values)
        opts = {"num_warps": int(num_warps), "num_stages": int(num_stages),
                "num_ctas": int(num_ctas)}
        if maxnreg is not None:
            opts["maxnreg"] = int(maxnreg)
        key = (tuple(signature.items()), tuple((k, repr(v)) for k, v in constants.items()),
               tuple(sorted(attrs)), tuple(sorted(opts.items())))
        kernel = self.kernels.get(key)
        if kernel is None:
            _refuse_compile(self.__name__, {self.arg_names[i[0]]: v
                                            for i, v in constants.items()}, opts)
            kernel = self._compile(signature, constants, attrs, opts)
            self.kernels[key] = kernel
        if warmup:
            return kernel
        cost = self.fn(*values)
        if cost is None:
            first = next((v for v in values if _is_tensor(v)), None)
            import torch

            cost = torch._stub.tensor_cost(first) if first is not None else 1000
        self.launches += 1
        kernel.launch(int(cost))
        return kernel

    # --- compile --------------------------------------------------------------------

    def _hash(self, signature, constants, attrs, opts):
        build = os.environ.get("FAKE_TRITON_BUILD", "")
        key = "%s-%s-%s-%r-%r-%r-%s" % (
            self.cache_key, TRITON_VERSION, build, sorted(signature.items()),
            sorted((k, repr(v)) for k, v in constants.items()), sorted(attrs.items()),
            sorted(opts.items()))
        return hashlib.sha256(key.encode()).hexdigest()

    def _compile(self, signature, constants, attrs, opts):
        kn = _knobs()
        t0 = time.time()
        h = self._hash(signature, constants, attrs, opts)
        name = self.__name__
        cache_dir = kn.cache.dir if kn is not None else os.environ.get(
            "TRITON_CACHE_DIR", os.path.join(os.path.expanduser("~"), ".triton", "cache"))
        d = os.path.join(cache_dir, _b32(h))
        grp = os.path.join(d, "__grp__%s.json" % name)
        group = metadata = None
        if os.path.isfile(grp) and not getattr(getattr(kn, "compilation", None),
                                               "always_compile", False):
            try:
                with open(grp) as f:
                    group = json.load(f)["child_paths"]
                with open(group[name + ".json"]) as f:
                    metadata = json.load(f)
            except (OSError, ValueError, KeyError):
                group = metadata = None
        hit = group is not None
        if not hit:
            metadata, group = self._write_variant(d, grp, h, name, signature, constants,
                                                  attrs, opts)
            stats["compiles"] += 1
        else:
            stats["cache_hits"] += 1
        listener = getattr(getattr(kn, "compilation", None), "listener", None)
        if listener is not None:
            t1 = time.time()
            us = max(1, int((t1 - t0) * 1e6))
            times = kn.CompileTimes(ir_initialization=us // 4,
                                    lowering_stages=[] if hit else
                                    [(s, us // 8) for s in ("ttir", "ttgir", "llir",
                                                            "ptx", "cubin")],
                                    store_results=us // 8)
            listener(src=compiler.ASTSource(self, signature, constants, attrs),
                     metadata=dict(metadata), metadata_group=dict(group), times=times,
                     cache_hit=hit)
        return CompiledKernel(self, h, metadata, group)

    def _write_variant(self, d, grp, h, name, signature, constants, attrs, opts):
        os.makedirs(d, exist_ok=True)
        build = os.environ.get("FAKE_TRITON_BUILD", "")
        nw, ns, nc = opts["num_warps"], opts["num_stages"], opts["num_ctas"]
        args = [(i, n, t) for i, (n, t) in enumerate(signature.items()) if t != "constexpr"]

        def arg_attr(i):
            return " {tt.divisibility = 16 : i32}" if (i,) in attrs else ""

        params = ", ".join("%%arg%d: %s%s" % (i, _mlir(t), arg_attr(i)) for i, _, t in args)
        consts = ", ".join("%s = %r" % (self.arg_names[p[0]], v)
                           for p, v in sorted(constants.items()))
        comment = "    // constexprs: %s\n" % (consts or "-")
        if build:
            comment += "    // stub triton build: %s\n" % build
        ttir = ("module {\n  tt.func public @%s(%s) attributes {noinline = false} {\n%s"
                "    tt.return\n  }\n}\n" % (name, params, comment))
        blocked = ("#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], "
                   "warpsPerCTA = [%d], order = [0]}>\n" % nw)
        ttgir = (blocked + 'module attributes {"ttg.num-ctas" = %d : i32, "ttg.num-warps" = '
                 '%d : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {\n'
                 "  tt.func public @%s(%s) attributes {noinline = false} {\n%s"
                 "    // num_stages = %d\n    tt.return\n  }\n}\n"
                 % (nc, nw, name, params, comment, ns))
        llir = ("; ModuleID = 'LLVMDialectModule'\nsource_filename = \"LLVMDialectModule\"\n\n"
                "define ptx_kernel void @%s(%s) local_unnamed_addr #0 {\n  ret void\n}\n\n"
                "attributes #0 = { \"nvvm.reqntid\"=\"%d\" }\n"
                % (name, ", ".join("ptr addrspace(1) %%%d" % i if t.startswith("*")
                                   else "%s %%%d" % (_mlir(t), i) for i, _, t in args),
                   32 * nw))
        ptx = ("//\n// Generated by the stub Triton %s%s\n//\n\n.version 8.7\n.target sm_90a\n"
               ".address_size 64\n\n.visible .entry %s(\n%s\n)\n.reqntid %d\n{\n\tret;\n}\n"
               % (TRITON_VERSION, (" build " + build) if build else "", name,
                  ",\n".join("\t.param .%s %s_param_%d" % ("u64" if t.startswith("*") else "u32",
                                                          name, i) for i, _, t in args),
                  32 * nw))
        cubin = b"\x7fELF\x02\x01\x01\x33" + hashlib.sha256(ptx.encode()).digest() + \
            bytes(range(256))
        shared = 1024 * ns if ns > 1 else 0
        metadata = {"hash": h, "target": {"backend": "cuda", "arch": 90, "warp_size": 32},
                    "name": name, "num_warps": nw, "num_ctas": nc, "num_stages": ns,
                    "maxnreg": None, "cluster_dims": [1, 1, 1], "ptx_version": None,
                    "enable_fp_fusion": True, "launch_cooperative_grid": False,
                    "default_dot_input_precision": "tf32", "debug": False,
                    "backend_name": "cuda", "arch": "sm90", "triton_version": TRITON_VERSION,
                    "shared": shared, "tmem_size": 0, "global_scratch_size": 0,
                    "global_scratch_align": 1, "profile_scratch_size": 0,
                    "profile_scratch_align": 1}
        group = {}
        files = (("source", "// source\n" + ttir), ("ttir", ttir), ("ttgir", ttgir),
                 ("llir", llir), ("ptx", ptx), ("cubin", cubin), ("json", json.dumps(metadata)))
        for ext, data in files:
            path = os.path.join(d, "%s.%s" % (name, ext))
            _write(path, data)
            group["%s.%s" % (name, ext)] = path
        _write(grp, json.dumps({"child_paths": group}))
        return metadata, group


def jit(fn=None, **kwargs):
    if fn is None:
        return lambda f: JITFunction(f)
    return JITFunction(fn)


# --- compile failures (a config another build cannot compile) ----------------------------

class OutOfResources(Exception):
    """triton.runtime.errors.OutOfResources of the stub."""

    def __init__(self, required, limit, name):
        self.required, self.limit, self.name = required, limit, name
        super().__init__("out of resource: %s, Required: %d, Hardware limit: %d. Reducing "
                         "block sizes or `num_stages` may help." % (name, required, limit))


# In-process refusals: (kernel name, {constexpr or option: value}) pairs; a
# variant matching one of them fails to "compile". $FAKE_TRITON_FAIL adds more,
# read at each compile: "kernel:BLOCK=128,num_warps=8;other:BLOCK=4".
fail_compile = []


def _fail_rules():
    rules = list(fail_compile)
    for part in os.environ.get("FAKE_TRITON_FAIL", "").split(";"):
        part = part.strip()
        if not part:
            continue
        name, _, conds = part.partition(":")
        cond = {}
        for c in conds.split(","):
            if c.strip():
                k, _, v = c.partition("=")
                cond[k.strip()] = v.strip()
        rules.append((name.strip(), cond))
    return rules


def _refuse_compile(name, constants, opts):
    values = dict(constants)
    values.update(opts)
    for rule_name, cond in _fail_rules():
        if rule_name != name:
            continue
        if all(k in values and str(values[k]) == str(v) for k, v in cond.items()):
            raise OutOfResources(232448 + 1024, 232448, "shared memory")


# --- @triton.heuristics and @triton.autotune ---------------------------------------------

class Heuristics(KernelInterface):
    """values: {constexpr name: f(named args) -> value}, as Triton's."""

    def __init__(self, fn, arg_names, values):
        self.fn = fn
        self.arg_names = arg_names
        self.values = values

    def run(self, *args, **kwargs):
        named = dict(zip(self.arg_names, args))
        for v, heur in self.values.items():
            kwargs[v] = heur({**named, **kwargs})
        return self.fn.run(*args, **kwargs)


def heuristics(values):
    return lambda fn: Heuristics(fn, fn.arg_names, values)


def _tune_log(tuner, key, config, benchmarked):
    """$FAKE_TUNE_LOG: one JSON line per tuner call (which config it ran and
    whether it benchmarked for it), a stand-in for TRITON_PRINT_AUTOTUNING."""
    path = os.environ.get("FAKE_TUNE_LOG")
    if not path:
        return
    line = {"pid": os.getpid(), "tuner": type(tuner).__name__,
            "kernel": tuner.base_fn.__name__,
            "key": [k if isinstance(k, (bool, int, float, str)) else repr(k) for k in key]
            if key is not None else None,
            "config": config.all_kwargs(), "benchmarked": bool(benchmarked),
            "visible": os.environ.get("CUDA_VISIBLE_DEVICES"),
            "sweep_only": os.environ.get("ZLB_SWEEP_ONLY")}
    with open(path, "a") as f:
        f.write(json.dumps(line) + "\n")


class Autotuner(KernelInterface):
    """triton.runtime.Autotuner of Triton 3.6, as far as record/replay sees it:
    configs, keys (the key argument names), arg_names, cache {key: Config}
    where key is the key arguments' values (in keys order, those present) plus
    str(dtype) of every argument with a dtype; run() benchmarks every (pruned)
    config through do_bench (driver.active.get_benchmarker(), looked up at
    tuning time) in the quantiles form only for a key not in cache; a config
    failing with OutOfResources times as inf; best_config is the config of the
    last call; a config's pre_hook runs before its launch. `tunings` counts
    sweeps, `benchmarks` timed configs (also in the module's stats)."""

    def __init__(self, fn, arg_names, configs, key, reset_to_zero=None, restore_value=None,
                 pre_hook=None, post_hook=None, prune_configs_by=None, warmup=None, rep=None,
                 use_cuda_graph=False, do_bench=None, cache_results=False):
        self.configs = list(configs) if configs else [Config({}, num_warps=4, num_stages=3)]
        self.keys = list(key)
        self.arg_names = arg_names
        self.fn = fn
        self.base_fn = fn
        while not inspect.isfunction(self.base_fn):
            self.base_fn = self.base_fn.fn
        self.__name__ = self.base_fn.__name__
        self.reset_to_zero = list(reset_to_zero or [])
        self.restore_value = list(restore_value or [])
        self.pre_hook = pre_hook or (lambda kwargs, reset_only=False: 0)
        self.post_hook = post_hook or (lambda kwargs, exception: 0)
        self.early_config_prune = (prune_configs_by or {}).get("early_config_prune")
        self._do_bench = do_bench
        self.cache = {}
        self._reset()
        _registry.append(self)

    def _reset(self):
        self.cache = {}
        self.best_config = None
        self.nargs = None
        self.tunings = 0
        self.benchmarks = 0

    @property
    def do_bench(self):
        if self._do_bench is not None:
            return self._do_bench
        from .runtime import driver

        return driver.active.get_benchmarker()

    def _bench(self, *args, config, **meta):
        current = dict(meta, **config.all_kwargs())
        full_nargs = {**self.nargs, **current}

        def kernel_call():
            if config.pre_hook:
                config.pre_hook(full_nargs)
            self.pre_hook(full_nargs)
            self.fn.run(*args, **current)

        self.benchmarks += 1
        stats["benchmarks"] += 1
        try:
            return self.do_bench(kernel_call, quantiles=(0.5, 0.2, 0.8))
        except OutOfResources:
            return [float("inf")] * 3

    def prune_configs(self, kwargs):
        pruned = self.configs
        if self.early_config_prune:
            pruned = self.early_config_prune(self.configs, self.nargs, **kwargs)
        return pruned

    def _key(self, args, kwargs):
        all_args = {**self.nargs, **kwargs}
        _args = {k: v for k, v in all_args.items() if k in self.arg_names}
        key = [_args[k] for k in self.keys if k in _args]
        for _, arg in _args.items():
            if hasattr(arg, "dtype"):
                key.append(str(arg.dtype))
        return tuple(key)

    def _tune(self, args, kwargs, configs):
        timings = {}
        for cfg in configs:
            t = self._bench(*args, config=cfg, **kwargs)
            timings[cfg] = t[0] if isinstance(t, (list, tuple)) else t
        self.tunings += 1
        stats["tunings"] += 1
        self.configs_timings = timings
        return min(configs, key=lambda c: timings[c])     # first on ties

    def run(self, *args, **kwargs):
        self.nargs = dict(zip(self.arg_names, args))
        key = None
        benchmarked = False
        if len(self.configs) > 1:
            key = self._key(args, kwargs)
            if key not in self.cache:
                pruned = self.prune_configs(kwargs)
                if len(pruned) == 1:
                    self.cache[key] = pruned[0]
                else:
                    benchmarked = True
                    self.cache[key] = self._tune(args, kwargs, pruned)
                    full_nargs = {**self.nargs, **kwargs, **self.cache[key].all_kwargs()}
                    self.pre_hook(full_nargs, reset_only=True)
            config = self.cache[key]
        else:
            config = self.configs[0]
        self.best_config = config
        _tune_log(self, key, config, benchmarked)
        if config.pre_hook is not None:
            config.pre_hook({**self.nargs, **kwargs, **config.all_kwargs()})
        ret = self.fn.run(*args, **kwargs, **config.all_kwargs())
        self.nargs = None
        return ret


def autotune(configs, key, prune_configs_by=None, reset_to_zero=None, restore_value=None,
             pre_hook=None, post_hook=None, warmup=None, rep=None, use_cuda_graph=False,
             do_bench=None, cache_results=False):
    def decorator(fn):
        return Autotuner(fn, fn.arg_names, configs, key, reset_to_zero, restore_value,
                         pre_hook=pre_hook, post_hook=post_hook,
                         prune_configs_by=prune_configs_by, warmup=warmup, rep=rep,
                         use_cuda_graph=use_cuda_graph, do_bench=do_bench,
                         cache_results=cache_results)

    return decorator
