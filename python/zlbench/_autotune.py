"""What autotune record and replay share (zlbench.autotune, protocol §7):
finding the tuners of the FlagGems package, naming them stably across
processes, and the JSON forms of keys and configs.

Nothing here imports torch, triton or flag_gems: objects are recognised by the
names of their classes (Triton's Autotuner and its subclasses, FlagGems'
LibTuner and LibEntry, Triton's Heuristics and JITFunction), so vendor forks
that subclass them are recognised too.

A tuner is named by where it is reachable from a module global of the package:
"<module>:<attribute path>", e.g. "flag_gems.ops.mm:mm_kernel.fn" for the
LibTuner under the LibEntry `mm_kernel`, plus its kernel name (the Python
function's __name__). A tuner reachable from several places (re-exported) has
several such paths; its canonical one, the one a record carries, is the
shortest path in the module that defines its kernel (else the shortest, then
alphabetically first). Two processes running the same FlagGems code import the
same modules, so A's name finds B's object; replay accepts any of B's paths.
"""

import inspect
import json
import math
import os
import sys

from . import _env
from . import _io
from ._io import clean

# Classes whose `.fn` leads towards a kernel (Triton's KernelInterface family
# and FlagGems' LibEntry).
_FOLLOW = frozenset(("KernelInterface", "Autotuner", "LibTuner", "LibEntry", "Heuristics"))
_MAX_DEPTH = 16
_names_of = {}


def class_names(tp):
    """The names of tp and its bases (cached per type)."""
    names = _names_of.get(tp)
    if names is None:
        try:
            names = frozenset(c.__name__ for c in tp.__mro__)
        except Exception:
            names = frozenset()
        _names_of[tp] = names
    return names


def tuner_kind(obj):
    """'libtuner', 'autotuner' or None."""
    names = class_names(type(obj))
    if "Autotuner" not in names and "LibTuner" not in names:
        return None
    if not (hasattr(obj, "configs") and hasattr(obj, "cache")):
        return None
    return "libtuner" if "LibTuner" in names else "autotuner"


def is_libentry(obj):
    return "LibEntry" in class_names(type(obj)) and hasattr(obj, "kernel_cache")


def kernel_name(tuner):
    """The kernel's Python function name."""
    base = getattr(tuner, "base_fn", None)
    if base is not None and getattr(base, "__name__", None):
        return base.__name__
    cur, depth = tuner, 0
    while cur is not None and depth < _MAX_DEPTH:
        if inspect.isfunction(cur):
            return cur.__name__
        cur = getattr(cur, "fn", None)
        depth += 1
    return getattr(tuner, "__name__", None) or type(tuner).__name__


def kernel_module(tuner):
    base = getattr(tuner, "base_fn", None)
    return getattr(base, "__module__", None)


def key_names(tuner):
    keys = getattr(tuner, "keys", None)
    if keys is None:
        keys = getattr(tuner, "key", None)
    try:
        return [str(k) for k in keys] if keys is not None else []
    except TypeError:
        return []


def packages():
    """The FlagGems packages to walk: ZLB_PACKAGE, or those imported."""
    pkg = _env.package()
    if pkg:
        return [pkg]
    return [p for p in ("flag_gems", "flaggems_vllm") if p in sys.modules]


class Found:
    """One tuner object of this process and every path that reaches it."""

    def __init__(self, obj, kind):
        self.obj = obj
        self.kind = kind
        self.kernel = kernel_name(obj)
        self.key_names = key_names(obj)
        self.paths = []           # "<module>:<attribute path>"
        self.entries = []         # LibEntry objects whose chain holds it

    @property
    def where(self):
        home = kernel_module(self.obj)

        def rank(p):
            mod, path = p.split(":", 1)
            return (mod != home, path.count("."), len(p), p)

        return min(self.paths, key=rank)


def walk(pkgs=None):
    """(tuners {id: Found}, entries {id: LibEntry}) reachable from the module
    globals of the packages (package_modules), following `.fn` from LibEntry / Autotuner /
    Heuristics objects down to the JIT function."""
    pkgs = packages() if pkgs is None else pkgs
    tuners, entries = {}, {}
    if not pkgs:
        return tuners, entries
    for name in package_modules(pkgs):
        mod = sys.modules.get(name)
        try:
            items = sorted(vars(mod).items(), key=lambda kv: str(kv[0]))
        except Exception:           # None placeholders, odd module objects
            continue
        for attr, obj in items:
            if not (class_names(type(obj)) & _FOLLOW):
                continue
            _follow(name, attr, obj, tuners, entries)
    return tuners, entries


_inside = {}     # (module name, id(module)) -> is its file inside a package root


def _roots(pkgs):
    """The directories of the packages, each ending in a separator."""
    roots = []
    for p in pkgs:
        for d in getattr(sys.modules.get(p), "__path__", None) or ():
            roots.append(os.path.join(os.path.realpath(d), ""))
    return tuple(roots)


def package_modules(pkgs):
    """The names of the loaded modules that belong to the packages: those
    named under them, and those whose file lies inside their directories.

    The second kind is how FlagGems loads its vendor code: the backend puts
    runtime/backend/_<vendor>/ on sys.path and imports `_nvidia.ops`,
    `hopper.ops.mm`, ... as top-level modules, so on an H100/H200 the mm that
    runs (and its LibTuners) lives in `hopper.ops.mm`, a name with no
    flag_gems prefix. Such a module is named by its import name, which every
    process running the same checkout on the same device uses."""
    prefixes = tuple(p + "." for p in pkgs)
    roots = _roots(pkgs)
    names = []
    for name, mod in list(sys.modules.items()):
        if name in pkgs or name.startswith(prefixes):
            names.append(name)
            continue
        if not roots or mod is None:
            continue
        k = (name, id(mod))
        inside = _inside.get(k)
        if inside is None:
            f = getattr(mod, "__file__", None)
            try:
                inside = bool(f) and os.path.realpath(f).startswith(roots)
            except (TypeError, ValueError, OSError):
                inside = False
            _inside[k] = inside
        if inside:
            names.append(name)
    return sorted(names)


def _follow(mod, attr, obj, tuners, entries):
    path = attr
    cur = obj
    chain_entries = []
    seen = set()
    for _ in range(_MAX_DEPTH):
        if cur is None or id(cur) in seen:
            break
        seen.add(id(cur))
        names = class_names(type(cur))
        if "JITFunction" in names or not (names & _FOLLOW):
            break
        if is_libentry(cur):
            entries[id(cur)] = cur
            chain_entries.append(cur)
        kind = tuner_kind(cur)
        if kind is not None:
            f = tuners.get(id(cur))
            if f is None:
                f = tuners[id(cur)] = Found(cur, kind)
            where = "%s:%s" % (mod, path)
            if where not in f.paths:
                f.paths.append(where)
            for e in chain_entries:
                if all(e is not x for x in f.entries):
                    f.entries.append(e)
        try:
            cur = getattr(cur, "fn", None)
        except Exception:
            break
        path += ".fn"


# --- the JSON forms ---------------------------------------------------------------------

def key_json(key):
    """(list of JSON values, key_repr): an element that is not a bool, int,
    str or finite float is written as its repr, and key_repr is then True."""
    out, rep = [], False
    for v in tuple(key):
        t = type(v)
        if t is bool or t is int or t is str or (t is float and math.isfinite(v)):
            out.append(v)
        else:
            out.append(repr(v))
            rep = True
    return out, rep


def key_id(values, rep):
    """A hashable text naming a key in its JSON form (for matching)."""
    return json.dumps([bool(rep), values], ensure_ascii=False, allow_nan=False)


def id_of_key(key):
    values, rep = key_json(key)
    return key_id(values, rep)


def _plain(v):
    return clean(v)


def config_json(cfg):
    """A triton.Config as recorded: kwargs, num_warps, num_stages, num_ctas, maxnreg."""
    kwargs = getattr(cfg, "kwargs", None) or {}
    return {"kwargs": {str(k): _plain(v) for k, v in kwargs.items()},
            "num_warps": _plain(getattr(cfg, "num_warps", None)),
            "num_stages": _plain(getattr(cfg, "num_stages", None)),
            "num_ctas": _plain(getattr(cfg, "num_ctas", None)),
            "maxnreg": _plain(getattr(cfg, "maxnreg", None))}


def match_config(configs, recorded):
    """The tuner's own config equal to the recorded one (kwargs, num_warps,
    num_stages, num_ctas, maxnreg), or None."""
    want = {"kwargs": recorded.get("kwargs") or {},
            "num_warps": recorded.get("num_warps"),
            "num_stages": recorded.get("num_stages"),
            "num_ctas": recorded.get("num_ctas"),
            "maxnreg": recorded.get("maxnreg")}
    for c in list(configs or ()):
        if config_json(c) == want:
            return c
    return None


def call_args(tuner, args, kwargs):
    """The named arguments a tuner builds its key from (as Autotuner.run)."""
    names = list(getattr(tuner, "arg_names", ()) or ())
    all_args = dict(zip(names, args))
    all_args.update(kwargs)
    return {k: v for k, v in all_args.items() if k in names}


def plain_key(tuner, args, kwargs):
    """Triton's Autotuner key: the key arguments present, in keys order, then
    str(dtype) of every argument that has one."""
    _args = call_args(tuner, args, kwargs)
    key = [_args[k] for k in getattr(tuner, "keys", ()) if k in _args]
    for v in _args.values():
        if hasattr(v, "dtype"):
            key.append(str(v.dtype))
    return tuple(key)


def tuner_key(tuner, kind, args, kwargs):
    """The key the tuner's cache is indexed by for this call: a LibTuner's own
    get_key (its strategies applied), else Triton's Autotuner key."""
    if kind == "libtuner" and callable(getattr(tuner, "get_key", None)):
        return tuple(tuner.get_key(call_args(tuner, args, kwargs)))
    return plain_key(tuner, args, kwargs)


def clear_dispatch(entry):
    """Empty a LibEntry's dispatch caches, through FlagGems' own
    clear_libentry_dispatch_cache when its module is loaded."""
    mod_name = type(entry).__module__
    mod = sys.modules.get(mod_name)
    fn = getattr(mod, "clear_libentry_dispatch_cache", None)
    if callable(fn):
        fn(entry)
        return
    for cache in getattr(entry, "kernel_cache", ()) or ():
        cache.clear()
    cpu = getattr(entry, "_cpu_cache", None)
    if cpu is not None:
        cpu.clear()


def clear_new_dispatch(entries, seen):
    """Clear the dispatch cache of each LibEntry not in seen (ids) that has
    already dispatched, and add it to seen: an entry that dispatched before
    its tuner was watched would keep bypassing it. Record and replay alike."""
    for eid, entry in entries.items():
        if eid in seen:
            continue
        seen.add(eid)
        if dispatch_filled(entry):
            clear_dispatch(entry)


def dispatch_filled(entry):
    try:
        caches = list(getattr(entry, "kernel_cache", ()) or ())
        cpu = getattr(entry, "_cpu_cache", None)
        return any(len(c) for c in caches) or bool(cpu)
    except Exception:
        return False


def safe_name(op):
    """op as a file name: characters other than letters, digits, '_', '-',
    '.' become '_'."""
    text = "".join(c if (c.isascii() and (c.isalnum() or c in "_-.")) else "_"
                   for c in str(op))
    return text.strip(".") or "unknown"


def write_json(path, obj):
    """obj to path atomically (a temp file in the same folder, then rename)."""
    text = json.dumps(clean(obj), indent=1, ensure_ascii=False, allow_nan=False) + "\n"
    _io.write_atomic(path, text.encode("utf-8"))
