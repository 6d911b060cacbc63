"""flag_gems.utils.libentry of the fake: LibEntry, LibTuner and its persistent
ConfigCache, libentry(), libtuner() and clear_libentry_dispatch_cache, behaving
as FlagGems' own (src/flag_gems/utils/libentry.py) where autotune record and
replay look, on the stub Triton of tests/stubs.

- The config DB stands for FlagGems' sqlite one: a JSON file
  <config_cache_dir()>/TunedConfig_<vendor>_triton_stub.json, config_cache_dir()
  being $FLAGGEMS_CACHE_DIR/config_cache (default: a per-user folder in the
  system temp directory, never ~/.flaggems). It persists across processes: a
  second process finds the first one's winners (a warm DB) and takes
  LibTuner.run's cached branch. Unlike upstream (lru_cache'd at import), the
  directory is read at each access, so that in-process tests can isolate
  themselves. One table per tuner, named as upstream:
  f"{kernel}_{md5(jit cache_key + configs_hash)[:32]}".
- ConfigCache (libcache[table]): `key in cache`, `cache[key]` (KeyError when
  absent) returns a fresh triton.Config read back from the DB: kwargs,
  num_warps, num_stages, num_ctas, maxnreg when set, and no pre_hook;
  `cache[key] = cfg` writes only when the key has no row yet (put_config never
  overwrites); there is no __delitem__.
- LibTuner(triton.runtime.Autotuner): get_key() applies the key strategies
  ("default", "log", "align32") and appends str(dtype) of the tensor
  arguments; run() is upstream's: for a key not in the DB every pruned config
  is timed with the do_bench_cudagraph bound at construction (upstream binds
  its benchmarker in __init__, so a later patch of triton.testing does not
  reach it), the winner is written and read back (losing its pre_hook); a
  pre_hook-less config is then swapped for the tuner's own config with the
  same all_kwargs() (pre_hook re-attachment); a config's pre_hook runs before
  the launch. `tunings` / `benchmarks` count sweeps and timed configs (and the
  stub JIT's stats); `db_hits` the calls answered by the DB.
- LibEntry: per-device dispatch dicts kernel_cache[device][entry_key] (entry_key:
  tensor dtypes, scalar types and values, constexpr keywords). The first call
  for an entry_key goes through self.fn.run (the tuner); later calls launch the
  JIT kernel directly with the config captured then, never calling the tuner
  again (`dispatch_hits` counts them). clear_libentry_dispatch_cache(entry)
  empties the dispatch dicts.

As upstream, `flag_gems.utils.libentry` as an attribute is the decorator; the
module is sys.modules["flag_gems.utils.libentry"].
"""

import hashlib
import json
import math
import os
import tempfile

import torch
import triton

DEVICE_COUNT = max(1, torch.cuda.device_count())


# --- the persistent config DB -----------------------------------------------------------

def config_cache_dir():
    base = os.environ.get("FLAGGEMS_CACHE_DIR")
    if not base:
        uid = os.getuid() if hasattr(os, "getuid") else 0
        base = os.path.join(tempfile.gettempdir(), "zlb-fake-flaggems-%d" % uid)
    return os.path.join(base, "config_cache")


def _vendor():
    return (os.environ.get("GEMS_VENDOR") or "nvidia").lower()


def db_path():
    return os.path.join(config_cache_dir(), "TunedConfig_%s_triton_stub.json" % _vendor())


def _row_key(key):
    return json.dumps(list(key))


class JsonPersistantModel:
    """SQLPersistantModel's get_config/put_config over a JSON file."""

    def _load(self):
        try:
            with open(db_path(), encoding="utf-8") as f:
                return json.load(f)
        except (OSError, ValueError):
            return {}

    def get_config(self, table, key):
        row = self._load().get(table, {}).get(_row_key(key))
        if row is None:
            return None
        extra = {"maxnreg": row["maxnreg"]} if row.get("maxnreg") is not None else {}
        return triton.Config(dict(row["kwargs"]), num_warps=row["num_warps"],
                             num_stages=row["num_stages"], num_ctas=row["num_ctas"], **extra)

    def put_config(self, table, key, config):
        data = self._load()
        rows = data.setdefault(table, {})
        rk = _row_key(key)
        if rk in rows:                       # upstream: no overwrite of an existing row
            return
        rows[rk] = {"kwargs": dict(config.kwargs), "num_warps": config.num_warps,
                    "num_stages": config.num_stages, "num_ctas": config.num_ctas,
                    "maxnreg": getattr(config, "maxnreg", None)}
        path = db_path()
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = "%s.tmp.%d" % (path, os.getpid())
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1, sort_keys=True)
        os.replace(tmp, path)


class Cache:
    def __init__(self, table_name, model):
        self.table_name = table_name
        self.model = model


class ConfigCache(Cache):
    def __contains__(self, key):
        return self.get(key) is not None

    def __getitem__(self, key):
        ret = self.get(key)
        if ret is None:
            raise KeyError("Key %s not found in ConfigCache." % (key,))
        return ret

    def __setitem__(self, key, config):
        self.set(key, config)

    def get(self, key):
        return self.model.get_config(self.table_name, key)

    def set(self, key, config):
        return self.model.put_config(self.table_name, key, config)


class LibCache:
    _instance = None

    def __new__(cls, *args, **kwargs):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
            cls._instance.config_cache_pool = {}
            cls._instance.model = JsonPersistantModel()
        return cls._instance

    def __getitem__(self, table):
        ret = self.config_cache_pool.get(table)
        if ret is None:
            ret = self.config_cache_pool[table] = ConfigCache(table, self.model)
        return ret


libcache = LibCache()


# --- LibTuner -----------------------------------------------------------------------------

def default_strategy(key):
    return key


def log2_strategy(key):
    return 2 ** math.ceil(math.log2(key))


def align32_strategy(key):
    if key == 0:
        return 0
    if key < 32:
        return 2 ** math.ceil(math.log2(key))
    return math.ceil(key / 32) * 32


STRATEGIES = {"default": default_strategy, "log": log2_strategy, "align32": align32_strategy}


def _tensor_dtypes(values):
    return tuple(v.dtype for v in values if isinstance(v, torch.Tensor))


class LibTuner(triton.runtime.Autotuner):
    def __init__(self, fn, arg_names, configs, key, reset_to_zero=None, restore_value=None,
                 pre_hook=None, post_hook=None, prune_configs_by=None, warmup=None, rep=None,
                 use_cuda_graph=None, benchmark_mode=None, benchmark_retries=10,
                 do_bench=None, strategy="default", **flagtune):
        from triton.testing import do_bench_cudagraph   # bound now, as upstream

        super().__init__(fn, arg_names, configs, key, reset_to_zero, restore_value,
                         pre_hook=pre_hook, post_hook=post_hook,
                         prune_configs_by=prune_configs_by,
                         do_bench=do_bench or (lambda kernel_call, quantiles:
                                               do_bench_cudagraph(kernel_call,
                                                                  quantiles=quantiles)))
        if strategy is None:
            self.strategy = None
        else:
            if not isinstance(strategy, (list, tuple)):
                strategy = [strategy] * len(self.keys)
            self.strategy = [STRATEGIES[s] if isinstance(s, str) else s for s in strategy]
        jit = fn
        while not isinstance(jit, triton.runtime.JITFunction):
            jit = jit.fn
        configs_hash = hashlib.md5(",".join(str(c) for c in self.configs)
                                   .encode()).hexdigest()[:32]
        kernel_hash = hashlib.md5((jit.cache_key + configs_hash).encode()).hexdigest()[:32]
        self.config_table_name = "%s_%s" % (self.base_fn.__name__, kernel_hash)
        self.cache = libcache[self.config_table_name]

    def _reset(self):
        cache = getattr(self, "cache", None)
        super()._reset()
        if isinstance(cache, ConfigCache):      # the DB outlives an in-process reset
            self.cache = cache
        self.db_hits = 0

    def get_key(self, args):
        if self.strategy is None:
            key = tuple(args[k] for k in self.keys if k in args)
        else:
            key = tuple(self.strategy[i](args[k]) for i, k in enumerate(self.keys))
        return key + tuple(str(d) for d in _tensor_dtypes(args.values()))

    def policy(self, bench, configs, args, kwargs):
        timings = {config: bench(config) for config in configs}
        return min(timings, key=lambda c: timings[c][0]), timings

    def run(self, *args, **kwargs):
        self.nargs = dict(zip(self.arg_names, args))
        key = None
        benchmarked = False
        if len(self.configs) > 1:
            all_args = {**self.nargs, **kwargs}
            _args = {k: v for k, v in all_args.items() if k in self.arg_names}
            key = self.get_key(_args)
            if key not in self.cache:
                benchmarked = True
                pruned = self.prune_configs(kwargs)

                def bench(config):
                    ret = self._bench(*args, config=config, **kwargs)
                    return list(ret) if isinstance(ret, (list, tuple)) else [ret] * 3

                best, timings = self.policy(bench, pruned, args, kwargs)
                self.tunings += 1
                triton._jit.stats["tunings"] += 1
                self.configs_timings = timings
                self.cache[key] = best
                config = self.cache[key]                 # read back: no pre_hook
                self.pre_hook({**self.nargs, **kwargs, **config.all_kwargs()},
                              reset_only=True)
            else:
                config = self.cache[key]
                self.db_hits += 1
            if config.pre_hook is None:                  # pre_hook re-attachment
                cached = config.all_kwargs()
                for original in self.configs:
                    if original.all_kwargs() == cached:
                        config = original
                        break
        else:
            config = self.configs[0]
        self.best_config = config
        triton._jit._tune_log(self, key, config, benchmarked)
        full_nargs = {**self.nargs, **kwargs, **config.all_kwargs()}
        if config.pre_hook is not None:
            config.pre_hook(full_nargs)
        ret = self.fn.run(*args, **kwargs, **config.all_kwargs())
        self.nargs = None
        return ret


def libtuner(configs, key, prune_configs_by=None, reset_to_zero=None, restore_value=None,
             pre_hook=None, post_hook=None, warmup=25, rep=100, use_cuda_graph=None,
             benchmark_mode=None, benchmark_retries=10, do_bench=None, strategy="default",
             policy="default", **flagtune):
    def decorator(fn):
        return LibTuner(fn, fn.arg_names, configs, key, reset_to_zero, restore_value,
                        pre_hook=pre_hook, post_hook=post_hook,
                        prune_configs_by=prune_configs_by, warmup=warmup, rep=rep,
                        use_cuda_graph=use_cuda_graph, benchmark_mode=benchmark_mode,
                        benchmark_retries=benchmark_retries, do_bench=do_bench,
                        strategy=strategy)

    return decorator


# --- LibEntry ----------------------------------------------------------------------------

class LibEntry(triton.KernelInterface):
    def __init__(self, fn):
        self.fn = fn
        self.arg_names = fn.arg_names
        self.kernel_cache = tuple(dict() for _ in range(DEVICE_COUNT))
        self._cpu_cache = dict()
        jit = fn
        while not isinstance(jit, triton.runtime.JITFunction):
            jit = jit.fn
        self.jit_function = jit
        self.signature = jit.signature
        self.dispatch_hits = 0

    def key(self, args, kwargs):
        def arg_key(a):
            if isinstance(a, torch.Tensor):
                return (a.dtype, True)
            return (type(a), a)

        return tuple(arg_key(a) for a in args) + tuple(
            (k, arg_key(v)) for k, v in sorted(kwargs.items()) if k != "grid")

    def run(self, *args, **kwargs):
        grid = kwargs["grid"]
        entry_key = self.key(args, kwargs)
        device = torch.cuda.current_device()
        cache = self._cpu_cache if device == "cpu" else self.kernel_cache[device]
        if entry_key not in cache:
            kernel = self.fn.run(*args, **kwargs)
            constexprs = {}
            launch_pre_hooks = []
            fn = self.fn
            while not isinstance(fn, triton.runtime.JITFunction):
                if isinstance(fn, triton.runtime.Autotuner):
                    config = fn.best_config
                    constexprs.update(config.all_kwargs())
                    if config.pre_hook is not None:
                        launch_pre_hooks.append((config.pre_hook, config.all_kwargs()))
                elif isinstance(fn, triton.runtime.Heuristics):
                    named = {**dict(zip(fn.arg_names, args)), **kwargs, **constexprs}
                    for v, heur in fn.values.items():
                        constexprs[v] = heur(named)
                fn = fn.fn
            cache[entry_key] = (kernel, constexprs, tuple(launch_pre_hooks))
            return kernel
        kernel, constexprs, launch_pre_hooks = cache[entry_key]
        self.dispatch_hits += 1
        for pre_hook, hook_kwargs in launch_pre_hooks:
            pre_hook({**dict(zip(self.arg_names, args)), **kwargs, **hook_kwargs})
        rest = {k: v for k, v in kwargs.items() if k != "grid"}
        self.jit_function.run(*args, grid=grid, **rest, **constexprs)
        return kernel


def clear_libentry_dispatch_cache(entry):
    for cache in entry.kernel_cache:
        cache.clear()
    entry._cpu_cache.clear()


def libentry():
    def decorator(fn):
        return LibEntry(fn)

    return decorator


__all__ = ["LibEntry", "LibTuner", "ConfigCache", "libcache", "libentry", "libtuner",
           "clear_libentry_dispatch_cache", "config_cache_dir", "db_path"]
