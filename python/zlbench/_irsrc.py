"""What a compile-listener call says about one compiled variant, as plain data.

describe(src, metadata, metadata_group) -> the variant fields of a
compiles.jsonl line (docs/protocol.md §6): hash, kernel, name, num_warps,
num_stages, num_ctas, constexprs, signature, specialization, stages.

Triton has laid ASTSource out in several ways; all are read:

- 3.3 and later (3.6 included): signature {arg name: type}, "constexpr" for
  compile-time arguments; constants {(arg index,): value} (tuple paths, longer
  for arguments inside tuples); attrs {(arg index,): [["tt.divisibility", 16],
  ...]}. An int argument specialised as equal to 1 is a "constexpr" whose
  parameter is not declared tl.constexpr (fn.constexprs / fn.params say which
  are).
- 3.2: attrs is an AttrsDescriptor whose arg_properties maps
  "tt.divisibility" / "tt.equal_to" to argument indices.
- 3.0/3.1: signature {arg index: type} (constexprs left out), constants keyed
  by index or name, attrs with divisible_by_16 / equal_to_1 index sets.

Anything missing or unreadable is left out rather than guessed: a field is
null, a dict or list empty. Nothing here imports triton.
"""

import os


def _get(obj, key, default=None):
    """metadata[key] for a dict, a namedtuple or a plain object."""
    if obj is None:
        return default
    if isinstance(obj, dict):
        return obj.get(key, default)
    asdict = getattr(obj, "_asdict", None)
    if callable(asdict):
        try:
            return asdict().get(key, default)
        except Exception:
            pass
    return getattr(obj, key, default)


def _int_or_none(v):
    if isinstance(v, bool) or v is None:
        return None
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def arg_names(fn):
    names = getattr(fn, "arg_names", None)
    if names is None:
        params = getattr(fn, "params", None) or ()
        names = [getattr(p, "name", None) for p in params]
    try:
        return [str(n) for n in names]
    except TypeError:
        return []


def declared_constexprs(fn):
    """Indices of the parameters declared tl.constexpr, or None if unknown."""
    idx = getattr(fn, "constexprs", None)
    if idx is not None:
        try:
            return {int(i) for i in idx}
        except (TypeError, ValueError):
            pass
    params = getattr(fn, "params", None)
    if params:
        return {i for i, p in enumerate(params) if getattr(p, "is_constexpr", False)}
    return None


def _index(key, names):
    """The top-level argument index a key stands for, or None."""
    if isinstance(key, tuple):
        if not key:
            return None
        key = key[0]
    if isinstance(key, bool):
        return None
    if isinstance(key, int):
        return key
    if isinstance(key, str) and key in names:
        return names.index(key)
    return None


def key_name(key, names):
    """An argument's name for a signature / constants / attrs key: a name, an
    index, or a tuple path ((2,) -> "x", (2, 1) -> "x[1]")."""
    if isinstance(key, str):
        return key
    if isinstance(key, tuple) and key:
        head = key_name(key[0], names)
        return head + "".join("[%s]" % (k,) for k in key[1:])
    if isinstance(key, int) and not isinstance(key, bool):
        return names[key] if 0 <= key < len(names) else str(key)
    return str(key)


def _order(key, names):
    i = _index(key, names)
    return (0, i, str(key)) if i is not None else (1, 0, str(key))


def _items(d, names):
    """dict items sorted by argument position (unknown keys last)."""
    try:
        items = list(d.items())
    except AttributeError:
        return []
    return sorted(items, key=lambda kv: _order(kv[0], names))


def _signature(src, names):
    sig = getattr(src, "signature", None)
    if isinstance(sig, str):                      # "*fp16,i32" (very old)
        sig = {i: t.strip() for i, t in enumerate(sig.split(",")) if t.strip()}
    if not isinstance(sig, dict):
        return []
    return [(key_name(k, names), k, str(v)) for k, v in _items(sig, names)]


def _attr_names(attrs, names):
    """(div16 keys, equal1 keys) of an attrs value in any of the layouts."""
    div16, eq1 = [], []
    if attrs is None:
        return div16, eq1
    if isinstance(attrs, dict):
        for key, vals in attrs.items():
            try:
                pairs = list(vals or ())
            except TypeError:
                continue
            for pair in pairs:
                try:
                    k, v = pair[0], pair[1]
                except (TypeError, IndexError, KeyError):
                    continue
                if k == "tt.divisibility" and v == 16:
                    div16.append(key)
                elif k in ("tt.equal_to", "tt.equal_to_1") and v == 1:
                    eq1.append(key)
        return div16, eq1
    props = getattr(attrs, "arg_properties", None)          # 3.2
    if isinstance(props, dict):
        values = getattr(attrs, "property_values", None) or {}
        if values.get("tt.divisibility", 16) == 16:
            div16.extend(props.get("tt.divisibility", ()) or ())
        for k in ("tt.equal_to", "tt.equal_to_1"):
            eq1.extend(props.get(k, ()) or ())
    for attr, out in (("divisible_by_16", div16), ("equal_to_1", eq1)):   # 3.0/3.1
        v = getattr(attrs, attr, None)
        if v:
            out.extend(v)
    return div16, eq1


def _names_in_order(keys, names):
    out = []
    for k in sorted(keys, key=lambda k: _order(k, names)):
        n = key_name(k, names)
        if n not in out:
            out.append(n)
    return out


def stages(metadata_group):
    """{stage: absolute path} from {"<name>.<stage>": path}, in the group's
    order (every entry: ttir, ttgir, llir, ptx, cubin, json, source, ...)."""
    out = {}
    if not isinstance(metadata_group, dict):
        return out
    for key, path in metadata_group.items():
        key = str(key)
        stage = key.rsplit(".", 1)[1] if "." in key else key
        if path is None:
            continue
        try:
            out[stage] = os.path.abspath(os.fspath(path))
        except TypeError:
            out[stage] = str(path)
    return out


def describe(src, metadata, metadata_group):
    fn = getattr(src, "fn", None)
    names = arg_names(fn)
    declared = declared_constexprs(fn)
    kernel = getattr(fn, "__name__", None) or getattr(src, "name", None)
    name = _get(metadata, "name") or getattr(src, "name", None) or kernel

    div16_keys, eq1_keys = _attr_names(getattr(src, "attrs", None), names)
    eq1_keys = list(eq1_keys)
    eq1_names = {key_name(k, names) for k in eq1_keys}
    constants = getattr(src, "constants", None)
    if constants is None:
        constants = getattr(src, "constexprs", None)
    constexprs = {}
    for key, value in (_items(constants, names) if isinstance(constants, dict) else []):
        n = key_name(key, names)
        if n in eq1_names:
            continue
        i = _index(key, names)
        if declared is not None and i not in declared and type(value) is int and value == 1:
            eq1_keys.append(key)              # 3.3+: equal-to-1 is a constexpr
            eq1_names.add(n)
            continue
        constexprs[n] = value
    equal1 = _names_in_order(eq1_keys, names)

    signature = {}
    for n, _key, ty in _signature(src, names):
        if ty == "constexpr" or n in constexprs or n in equal1:
            continue
        signature[n] = ty

    return {
        "hash": _get(metadata, "hash"),
        "kernel": None if kernel is None else str(kernel),
        "name": None if name is None else str(name),
        "num_warps": _int_or_none(_get(metadata, "num_warps")),
        "num_stages": _int_or_none(_get(metadata, "num_stages")),
        "num_ctas": _int_or_none(_get(metadata, "num_ctas")),
        "constexprs": constexprs,
        "signature": signature,
        "specialization": {"div16": _names_in_order(div16_keys, names), "equal1": equal1},
        "stages": stages(metadata_group),
    }
