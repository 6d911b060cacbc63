"""zlbench.shapes: makes the shape file ($ZLB_SHAPE_FILE) win where FlagGems
benchmark classes hard-code their shapes. Active only when ZLB_SHAPE_FILE is set.

FlagGems' Benchmark.set_shapes(file) looks up op_name, then each class name
along type(self).__mro__, else keeps DEFAULT_SHAPES. Plain classes need
nothing from us. Three kinds of class ignore the file:

(a) set_shapes overridden with a hard-coded list (e.g. FusedMarlinMoEBenchmark):
    the override still runs; when it did not go through Benchmark.set_shapes,
    the file's entry is applied after it (via "set_shapes");
(b) get_input_iter overridden to iterate a list of its own instead of
    self.shapes, building inputs through self.input_fn (AvgPool2dBenchmark,
    Conv2DPaddingBenchmark): replaced by iterating the file's shapes through
    input_fn (via "get_input_iter");
(c) get_input_iter hard-coding shapes and building inputs by hand: a builder
    registered for the class in _bespoke.REGISTRY is used (via "bespoke").

"Hard-coded get_input_iter" is read from its code: it names neither `shapes`
nor `super` nor `get_input_iter` (nested functions included).

The lookup is upstream's chain, op_name, then class names along the MRO, but
for a hard-coding class the class names stop at the class that hard-codes:
keys of the classes above it (Benchmark, GenericBenchmark, ... in upstream's
core_shapes.yaml) describe inputs of their layout, which is exactly what the
hard-coding class chose not to use. Nothing found: upstream behaviour is left
alone and a SHAPES_INJECTED event with key null says the class hard-codes.

Classes are found after collection by walking Benchmark's subclasses, and
classes defined later (inside a test function) through __init_subclass__.
"""

import os
import sys

import pytest

from . import _bespoke, _env, _io, _markers, _state

NAME = "zlbench.shapes"

# Classes looked at carry this in their own __dict__ (ids would be reused
# by later classes once a local class is garbage collected).
_SEEN = "_zlb_shapes_seen"
_HOOKED = "_zlb_shapes_hooked"
_cache = {}                 # path -> ((mtime, size), config)


class ShapeFileError(ValueError):
    pass


def pytest_configure(config):
    if not _io.require(NAME):
        return
    path = _env.shape_file()
    if path is None:
        _io.plugin(NAME, "inactive", "ZLB_SHAPE_FILE is not set (shape mode %s): "
                   "FlagGems reads its own shapes" % (_env.shape_mode() or "upstream"))
        return
    try:
        cfg = load(path)
    except ShapeFileError as e:
        raise pytest.UsageError("%s: %s" % (NAME, e))
    _io.plugin(NAME, "ready", "shape file %s: %d key(s); bespoke builders for %s"
               % (path, len(cfg), ", ".join(sorted(_bespoke.REGISTRY))))


def pytest_collection_finish(session):
    if _enabled():
        install_all()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item):
    if _enabled():
        install_all()


def _enabled():
    return _io.active(NAME) and _env.shape_file() is not None


# --- the shape file -------------------------------------------------------------

def load(path):
    """The shape file as a dict (cached while the file is unchanged)."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise ShapeFileError("shape file %s: %s" % (path, e.strerror))
    stamp = (st.st_mtime_ns, st.st_size)
    hit = _cache.get(path)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    import yaml

    try:
        with open(path, "r", encoding="utf-8") as f:
            cfg = yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as e:
        raise ShapeFileError("shape file %s cannot be read: %s"
                             % (path, _io.one_line(e)))
    if cfg is None:
        cfg = {}
    if not isinstance(cfg, dict):
        raise ShapeFileError("shape file %s is not a mapping of op/class names" % path)
    _cache[path] = (stamp, cfg)
    return cfg


def _as_shape(s):
    if isinstance(s, (list, tuple)):
        return tuple(s)
    return (s,)


def find_entry(cfg, op_name, classes):
    """Upstream's chain over op_name and the given classes' names:
    (key, shapes as tuples, shape_desc or None), or (None, None, None).
    A key whose entry has no non-empty `shapes` list counts as absent."""
    key = None
    if op_name is not None and op_name in cfg:
        key = op_name
    else:
        for c in classes:
            if c.__name__ in cfg:
                key = c.__name__
                break
    if key is None:
        return None, None, None
    entry = cfg[key]
    shapes = entry.get("shapes") if isinstance(entry, dict) else None
    if not isinstance(shapes, list) or not shapes:
        return None, None, None
    desc = entry.get("shape_desc")
    return key, [_as_shape(s) for s in shapes], desc


def _chain_to(obj, owner):
    """type(obj)'s classes from itself up to and including owner."""
    mro = type(obj).__mro__
    out = []
    for c in mro:
        out.append(c)
        if c is owner:
            break
    return out


def _lookup(obj, owner):
    path = _env.shape_file()
    if path is None:
        return None
    cfg = load(path)
    return find_entry(cfg, getattr(obj, "op_name", None), _chain_to(obj, owner))


def _say(obj, via, key, count, detail=None):
    """SHAPES_INJECTED, once per benchmark instance and kind."""
    said = obj.__dict__.setdefault("_zlb_shapes_said", set())
    if str(via) in said:
        return
    said.add(str(via))
    fields = dict(cls=type(obj).__name__, op_name=getattr(obj, "op_name", None),
                  via=via, key=key, count=count)
    if detail is not None:
        fields["detail"] = detail
    _io.event(_markers.EVENT_SHAPES_INJECTED, **fields)


# --- finding and wrapping classes -----------------------------------------------------

def base_classes():
    """Benchmark classes of the loaded FlagGems benchmark base modules."""
    out = []
    for name, mod in list(sys.modules.items()):
        if mod is None or not (name == "base" or name.endswith(".base")):
            continue
        b = getattr(mod, "Benchmark", None)
        if isinstance(b, type) and callable(getattr(mod, "update_result", None)):
            out.append(b)
    return out


def install_all():
    n = 0
    for b in base_classes():
        n += install(b)
    return n


def _subclasses(cls):
    seen, todo, out = set(), list(cls.__subclasses__()), []
    while todo:
        c = todo.pop(0)
        if id(c) in seen:
            continue
        seen.add(id(c))
        out.append(c)
        todo.extend(c.__subclasses__())
    return out


def install(benchmark):
    """Hook the Benchmark base class and process all its subclasses.
    Returns how many classes were wrapped now."""
    if _HOOKED not in benchmark.__dict__:
        setattr(benchmark, _HOOKED, True)
        _mark_base_set_shapes(benchmark)
        _hook_new_subclasses(benchmark)
    return sum(process(c) for c in _subclasses(benchmark))


def _mark_base_set_shapes(benchmark):
    orig = benchmark.__dict__.get("set_shapes")
    if orig is None or getattr(orig, "_zlb_wrapped", False):
        return

    def set_shapes(self, *args, **kwargs):
        self.__dict__["_zlb_base_set_shapes"] = True
        return orig(self, *args, **kwargs)

    set_shapes._zlb_wrapped = True
    set_shapes.__wrapped__ = orig
    set_shapes.__name__ = orig.__name__
    set_shapes.__doc__ = orig.__doc__
    benchmark.set_shapes = set_shapes


def _hook_new_subclasses(benchmark):
    prev = benchmark.__dict__.get("__init_subclass__")

    def __init_subclass__(cls, **kwargs):
        if prev is not None:
            prev.__get__(None, cls)(**kwargs)
        else:
            super(benchmark, cls).__init_subclass__(**kwargs)
        try:
            process(cls)
        except Exception as e:
            _io.warning(NAME, "class %s not examined: %s" % (cls.__name__,
                                                             _io.one_line(e)))

    benchmark.__init_subclass__ = classmethod(__init_subclass__)


def code_names(func):
    """Names (globals and attributes) a function's code uses, nested code included."""
    code = getattr(func, "__code__", None)
    names, todo = set(), [code] if code is not None else []
    while todo:
        c = todo.pop()
        names.update(c.co_names)
        todo.extend(k for k in c.co_consts if hasattr(k, "co_names"))
    return names


def hard_codes_iter(func):
    names = code_names(func)
    return not (names & {"shapes", "super", "get_input_iter"})


def process(cls):
    """Wrap what cls itself defines that ignores the shape file. Returns 1 when
    something was wrapped."""
    if _SEEN in cls.__dict__:
        return 0
    setattr(cls, _SEEN, True)
    wrapped = 0
    d = cls.__dict__
    ss = d.get("set_shapes")
    if callable(ss) and hasattr(ss, "__code__") and not getattr(ss, "_zlb_wrapped", False):
        cls.set_shapes = _wrap_set_shapes(cls, ss)
        wrapped = 1
    gi = d.get("get_input_iter")
    if callable(gi) and hasattr(gi, "__code__") and not getattr(gi, "_zlb_wrapped", False) \
            and hard_codes_iter(gi):
        names = code_names(gi)
        if _bespoke.get(cls.__name__) is not None:
            via = "bespoke"
        elif "input_fn" in names:
            via = "get_input_iter"
        else:
            via = None
        cls.get_input_iter = _wrap_iter(cls, gi, via)
        wrapped = 1
    return wrapped


def _wrap_set_shapes(owner, orig):
    def set_shapes(self, *args, **kwargs):
        depth = self.__dict__.get("_zlb_set_shapes_depth", 0)
        if depth == 0:
            self.__dict__["_zlb_base_set_shapes"] = False
        self.__dict__["_zlb_set_shapes_depth"] = depth + 1
        try:
            result = orig(self, *args, **kwargs)
        finally:
            self.__dict__["_zlb_set_shapes_depth"] = depth
        if depth == 0 and not self.__dict__.get("_zlb_base_set_shapes"):
            _apply_file(self, owner)
        return result

    set_shapes._zlb_wrapped = True
    set_shapes.__wrapped__ = orig
    set_shapes.__name__ = orig.__name__
    set_shapes.__doc__ = orig.__doc__
    return set_shapes


def _apply_file(obj, owner):
    found = _lookup(obj, owner)
    if found is None:
        return
    key, shapes, desc = found
    if key is None:
        _say(obj, "set_shapes", None, 0,
             "%s.set_shapes hard-codes its shapes and the file has no key for it"
             % owner.__name__)
        return
    obj.shapes = shapes
    if desc is not None:
        obj.shape_desc = desc
    _say(obj, "set_shapes", key, len(shapes))


def _wrap_iter(owner, orig, via):
    def get_input_iter(self, dtype, *args, **kwargs):
        found = _lookup(self, owner)
        if found is None:                  # no shape file: upstream untouched
            return orig(self, dtype, *args, **kwargs)
        key, shapes, _ = found
        usable = via == "bespoke" or (via == "get_input_iter"
                                      and callable(getattr(self, "input_fn", None)))
        if key is None or not usable:
            if key is None:
                why = "%s.get_input_iter hard-codes its shapes and the file has no " \
                      "key for it" % owner.__name__
            elif via is None:
                why = "%s.get_input_iter hard-codes its shapes and builds its inputs " \
                      "by hand, and no bespoke builder is registered for it: key %s " \
                      "not used" % (owner.__name__, key)
                # Said where the user looks, not only in events.jsonl.
                if ("no_builder", owner.__name__) not in _state.said:
                    _state.said.add(("no_builder", owner.__name__))
                    _io.warning(NAME, "the shape file names %s (key %s), whose inputs "
                                "are built by hand in get_input_iter, and zlb has no "
                                "builder for it: its own hard-coded shapes are measured, "
                                "not the file's" % (owner.__name__, key))
            else:
                why = "%s.get_input_iter hard-codes its shapes and this instance has " \
                      "no input_fn: key %s not used" % (owner.__name__, key)
            _say(self, via, None, 0, why)
            return orig(self, dtype, *args, **kwargs)
        _say(self, via, key, len(shapes))
        if via == "bespoke":
            return _bespoke_inputs(self, _bespoke.get(owner.__name__), shapes, dtype)
        return _input_fn_inputs(self, shapes, dtype)

    get_input_iter._zlb_wrapped = True
    get_input_iter.__wrapped__ = orig
    get_input_iter.__name__ = orig.__name__
    get_input_iter.__doc__ = orig.__doc__
    return get_input_iter


def _input_fn_inputs(bench, shapes, dtype):
    for shape in shapes:
        yield from bench.input_fn(shape, dtype, bench.device)


def _bespoke_inputs(bench, builder, shapes, dtype):
    for shape in shapes:
        yield from builder.build(bench, shape, dtype)
