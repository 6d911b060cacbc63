"""IR capture inside the measured process (the zlbench.ir plugin's machinery).

A Capture, installed on Triton's knobs:

- chains itself onto knobs.compilation.listener and writes one
  <run>/ir/compiles.jsonl line per call (_irsrc.describe's fields, cache_hit,
  nodeid, during);
- keeps kernel handle -> hash from knobs.runtime.kernel_load_end_hook (added
  for the whole session: it fires once per kernel load), because the launch
  hook's metadata holds the kernel's name and function handle but, in Triton
  3.6, not its hash;
- first_call(call): runs one call with its launch hook on
  knobs.runtime.launch_enter_hook and returns the launches it saw,
  [{"hash", "kernel", "count"}] in first-launch order; the hook is removed
  before first_call returns, so warm-up and timing run without it. Launches
  made while an autotuner times configs inside that call are not counted:
  tuning() (entered by the timing plugin around a nested/quantiles do_bench)
  takes the hook off, and a launch with Triton's own do_bench /
  do_bench_cudagraph / Autotuner._bench on the stack (a tuner bound to
  upstream's timer, as FlagGems' LibTuner is) is skipped;
- stage(): copies every stage file of every variant launched in a first_call
  to <run>/ir/files/<hash>/<name>.<stage> and appends one line per variant to
  <run>/ir/staged.jsonl. Each variant is staged once per process, so calling
  it again (pytest_unconfigure, then atexit) adds nothing. A file that cannot
  be read is listed under "missing", never raised.

Nothing here raises into Triton or the measured code: a failure inside a hook
becomes one WARNING event per kind of failure.
"""

import hashlib
import os
import re
import sys
import time

from . import SCHEMA_VERSION, _io, _irsrc, _state

NAME = "zlbench.ir"
COMPILES = "compiles.jsonl"
STAGED = "staged.jsonl"
FILES = "files"

_HASH_OK = re.compile(r"[A-Za-z0-9]{1,128}\Z")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
# Triton's timers and tuner: a launch or compile under one of these (called
# from anywhere but our own timing plugin) belongs to an autotune sweep.
_TUNER_FRAMES = {("triton.testing", "do_bench"), ("triton.testing", "do_bench_cudagraph"),
                 ("triton.runtime.autotuner", "_bench")}


def safe_hash(h):
    """The metadata hash as a directory name: itself when it is 1-128 letters
    and digits (hex, base32), else the sha256 hex digest of its text."""
    text = "" if h is None else str(h)
    if _HASH_OK.match(text):
        return text
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()


def safe_name(name, default="kernel"):
    """A file name part made of [A-Za-z0-9_.-] only, not starting with a dot,
    at most 150 characters."""
    text = _UNSAFE.sub("_", "" if name is None else str(name))[:150]
    if not text.strip("."):
        return default
    if text.startswith("."):
        text = "_" + text[1:]
    return text


def tuner_on_stack(frame, stop=None):
    """True when one of Triton's timers or its tuner is running below frame,
    other than a timer our timing plugin called; the walk stops at a frame
    running the code object stop."""
    f = frame
    while f is not None:
        if stop is not None and f.f_code is stop:
            return False
        key = (f.f_globals.get("__name__"), f.f_code.co_name)
        if key in _TUNER_FRAMES:
            caller = f.f_back
            if caller is None or caller.f_globals.get("__name__") != "zlbench.timing":
                return True
        f = f.f_back
    return False


class Launches:
    """Launches seen during one first_call, counted per (hash, kernel)."""

    def __init__(self):
        self.counts = {}

    def add(self, h, kernel):
        key = (h, kernel)
        self.counts[key] = self.counts.get(key, 0) + 1

    def as_list(self):
        return [{"hash": h, "kernel": k, "count": n} for (h, k), n in self.counts.items()]


class Hook:
    """fn on obj.<attr>: a HookChain's add/remove where there is one (Triton
    3.6), else a wrapper chained in front of whatever callable was there,
    restored by off() when nobody has replaced it since (and disabled when
    somebody has)."""

    def __init__(self, obj, attr, fn):
        self.obj, self.attr, self.fn = obj, attr, fn
        self.on_now = False
        self._wrapper = None
        self._prev = None
        cur = getattr(obj, attr, None)
        self.chain = (callable(getattr(cur, "add", None))
                      and callable(getattr(cur, "remove", None)))

    @staticmethod
    def available(obj, attr):
        return obj is not None and hasattr(obj, attr)

    def on(self):
        if self.on_now:
            return
        self.on_now = True
        if self.chain:
            getattr(self.obj, self.attr).add(self.fn)
            return
        prev = getattr(self.obj, self.attr, None)
        self._prev = prev
        fn = self.fn

        def wrapper(*args, **kwargs):
            if prev is not None:
                prev(*args, **kwargs)
            if wrapper.enabled:
                fn(*args, **kwargs)

        wrapper.enabled = True
        self._wrapper = wrapper
        setattr(self.obj, self.attr, wrapper)

    def off(self):
        if not self.on_now:
            return
        self.on_now = False
        if self.chain:
            getattr(self.obj, self.attr).remove(self.fn)
            return
        w = self._wrapper
        w.enabled = False
        if getattr(self.obj, self.attr, None) is w:
            setattr(self.obj, self.attr, self._prev)
        self._wrapper = self._prev = None


def _launch_data(md):
    """The plain dict behind a launch hook's argument (Triton's LazyDict keeps
    it in .data; its get() would run the kernel's launch_metadata function)."""
    data = getattr(md, "data", None)
    if isinstance(data, dict):
        return data
    if isinstance(md, dict):
        return md
    return {}


class Capture:
    def __init__(self, run_dir, knobs):
        self.ir_dir = os.path.join(run_dir, "ir")
        _io.makedirs(self.ir_dir)
        self.knobs = knobs
        self.compiles = _io.open_append(os.path.join(self.ir_dir, COMPILES))
        self.variants = {}        # hash -> {"kernel", "name", "stages"} from the listener
        self.loaded = {}          # hash -> the same, from kernel_load_end_hook's group
        self.by_function = {}     # loaded kernel handle -> hash
        self.by_name = {}         # metadata name -> [hashes]
        self.launched = {}        # hashes launched in a first_call, in order
        self.staged = set()
        self.active = False
        self.finished = False
        self._prev_listener = None
        self._listener_fn = self._listener
        rt = getattr(knobs, "runtime", None)
        self.launch_hook = (Hook(rt, "launch_enter_hook", self._on_launch)
                            if Hook.available(rt, "launch_enter_hook") else None)
        self.load_hook = (Hook(rt, "kernel_load_end_hook", self._on_load)
                          if Hook.available(rt, "kernel_load_end_hook") else None)

    # --- install -------------------------------------------------------------------

    def install(self):
        comp = self.knobs.compilation
        self._prev_listener = getattr(comp, "listener", None)
        comp.listener = self._listener_fn
        if self.load_hook is not None:
            self.load_hook.on()
        self.active = True

    def uninstall(self):
        self.active = False
        comp = getattr(self.knobs, "compilation", None)
        if comp is not None and getattr(comp, "listener", None) is self._listener_fn:
            comp.listener = self._prev_listener
        for h in (self.launch_hook, self.load_hook):
            if h is not None:
                try:
                    h.off()
                except Exception:
                    pass

    def describe(self):
        how = []
        if self.launch_hook is None:
            how.append("knobs.runtime has no launch_enter_hook: nothing is attributed "
                       "or copied")
        else:
            how.append("launch attribution through knobs.runtime.launch_enter_hook (%s)"
                       % ("hook chain" if self.launch_hook.chain else "chained callable"))
        how.append("kernel handles through kernel_load_end_hook" if self.load_hook
                   else "no kernel_load_end_hook: launches are matched by kernel name")
        return "compiles to %s; %s" % (os.path.join(self.ir_dir, COMPILES), "; ".join(how))

    # --- failures inside hooks --------------------------------------------------------

    def _trouble(self, where, e):
        key = "ir:%s:%s" % (where, type(e).__name__)
        if key in _state.said:
            return
        _state.said.add(key)
        try:
            _io.warning(NAME, "%s failed (ignored from now on for this kind of error): "
                        "%s: %s" % (where, type(e).__name__, _io.one_line(e)))
        except Exception:
            pass

    # --- the compile listener ------------------------------------------------------------

    def _listener(self, *, src=None, metadata=None, metadata_group=None, times=None,
                  cache_hit=None, **extra):
        if self.active:
            try:
                self._on_compile(src, metadata, metadata_group, cache_hit)
            except Exception as e:
                self._trouble("compile listener", e)
        prev = self._prev_listener
        if prev is not None:
            prev(src=src, metadata=metadata, metadata_group=metadata_group, times=times,
                 cache_hit=cache_hit, **extra)

    def _during(self):
        during = _state.ir_during
        if during == "tune":
            return during
        try:
            frame = sys._getframe(3)        # Triton's caller of the listener
        except ValueError:                  # a shallow stack (a compile thread)
            frame = None
        if tuner_on_stack(frame):
            return "tune"
        return during or "other"

    def _on_compile(self, src, metadata, metadata_group, cache_hit):
        d = _irsrc.describe(src, metadata, metadata_group)
        line = {"schema_version": SCHEMA_VERSION, "ts": round(time.time(), 6)}
        for k in ("hash", "kernel", "name", "num_warps", "num_stages", "num_ctas",
                  "constexprs", "signature", "specialization"):
            line[k] = d[k]
        line.update({"cache_hit": bool(cache_hit), "stages": d["stages"],
                     "nodeid": _state.nodeid, "during": self._during()})
        self.compiles.write(_io.dumps(line) + "\n")
        self.compiles.flush()
        h = d["hash"]
        if h is None:
            return
        h = str(h)
        self.variants[h] = {"kernel": d["kernel"], "name": d["name"], "stages": d["stages"]}
        if d["name"] is not None:
            hs = self.by_name.setdefault(d["name"], [])
            if h not in hs:
                hs.append(h)

    # --- kernel loads and launches -------------------------------------------------------

    def _on_load(self, module=None, function=None, name=None, metadata_group=None,
                 hash=None, *args, **kwargs):
        if not self.active or hash is None:
            return
        try:
            h = str(hash)
            if function is not None:
                self.by_function[function] = h
            if h not in self.loaded:
                self.loaded[h] = {"kernel": None if name is None else str(name),
                                  "name": None if name is None else str(name),
                                  "stages": _irsrc.stages(metadata_group)}
        except Exception as e:
            self._trouble("kernel_load_end_hook", e)

    def _resolve(self, data):
        h = data.get("hash")
        if h:
            return str(h)
        fn = data.get("function")
        if fn is not None:
            try:
                h = self.by_function.get(fn)
            except TypeError:
                h = None
            if h:
                return h
        cands = self.by_name.get(data.get("name")) if data.get("name") is not None else None
        if cands and len(cands) == 1:
            return cands[0]
        return None

    def _on_launch(self, md=None, *args, **kwargs):
        rec = _state.ir_launches
        if not self.active or rec is None or _state.ir_during != "eager":
            return
        try:
            if tuner_on_stack(sys._getframe(1), stop=_FIRST_CALL_CODE):
                return
            data = _launch_data(md)
            h = self._resolve(data)
            known = self.variants.get(h) or self.loaded.get(h) if h else None
            kernel = (known or {}).get("kernel") or data.get("name")
            rec.add(h, None if kernel is None else str(kernel))
            if h is not None and h not in self.launched:
                self.launched[h] = True
        except Exception as e:
            self._trouble("launch_enter_hook", e)

    def first_call(self, call):
        """call() with the launch hook on; the launches it made, or None where
        Triton has no launch hook."""
        if self.launch_hook is None:
            call()
            return None
        rec = Launches()
        prev = (_state.ir_during, _state.ir_launches)
        _state.ir_during, _state.ir_launches = "eager", rec
        self.launch_hook.on()
        try:
            call()
        finally:
            self.launch_hook.off()
            _state.ir_during, _state.ir_launches = prev
        return rec.as_list()

    def tuning(self):
        return _Tuning(self)

    # --- staging ------------------------------------------------------------------------

    def stage(self):
        """Copy the files of the launched variants not staged yet. Returns how
        many variants were staged now."""
        n = 0
        for h in list(self.launched):
            if h in self.staged:
                continue
            self.staged.add(h)
            n += 1
            try:
                self._stage_one(h)
            except Exception as e:
                self._trouble("staging", e)
        return n

    def _stage_one(self, h):
        v = self.variants.get(h) or self.loaded.get(h)
        if v is None:
            _io.warning(NAME, "variant %s was launched but neither compiled nor loaded "
                        "under the plugin's eyes: its files are unknown" % h)
            return
        sub = safe_hash(h)
        base = safe_name(v.get("name") or v.get("kernel"))
        files, missing = {}, {}
        for stage, path in v["stages"].items():
            rel = "%s/%s/%s.%s" % (FILES, sub, base, safe_name(stage, "stage"))
            dest = os.path.join(self.ir_dir, *rel.split("/"))
            try:
                _io.makedirs(os.path.dirname(dest))
                with open(path, "rb") as src:
                    _io.write_atomic(dest, src.read())
                files[stage] = rel
            except OSError:
                missing[stage] = path
        line = {"schema_version": SCHEMA_VERSION, "ts": round(time.time(), 6), "hash": h,
                "kernel": v.get("kernel"), "name": v.get("name"), "files": files,
                "missing": missing}
        with _io.open_append(os.path.join(self.ir_dir, STAGED)) as f:
            f.write(_io.dumps(line) + "\n")

    def finish(self, uninstall=True):
        """Stage what is left and close compiles.jsonl; idempotent."""
        if uninstall:
            self.uninstall()
        if self.finished:
            return
        try:
            self.stage()
        finally:
            self.finished = True
            try:
                self.compiles.close()
            except OSError:
                pass


class _Tuning:
    """An autotuner's timing call: compiles are "tune", launches uncounted and
    the launch hook off (it would build launch metadata on every launch)."""

    def __init__(self, cap):
        self.cap = cap
        self.prev = None
        self.hooked = False

    def __enter__(self):
        self.prev = _state.ir_during
        hook = self.cap.launch_hook
        self.hooked = hook is not None and hook.on_now
        if self.hooked:
            hook.off()
        _state.ir_during = "tune"
        return self

    def __exit__(self, *exc):
        _state.ir_during = self.prev
        if self.hooked:
            self.cap.launch_hook.on()
        return False


_FIRST_CALL_CODE = Capture.first_call.__code__
