"""Autotune replay (protocol §7): the configs a recording run chose, put in
place in this process before first use, overriding whatever the tuners would
have chosen or already hold.

Loading: <ZLB_REPLAY_FROM>/autotune_records/meta.json must say the same
backend (ZLB_BACKEND) and the same use_flagtune (ZLB_USE_FLAGTUNE) as this
run; then every other *.json there is read (ReplayError: a sentence for
pytest's usage error). A recording made before meta.json existed (records,
no meta.json) replays with a WARNING that its terms are unchecked.

Binding: a recorded tuner ("where" and kernel name) is bound to this process's
object of the same kind found at that path (see _autotune.walk). Then:

- plain Triton Autotuner: each recorded config is matched to the tuner's own
  `configs` (kwargs, num_warps, num_stages, num_ctas, maxnreg) and written into
  its cache dict at once, cache[key] = that object, overwriting any entry.
  Its run is wrapped: a key added to the cache by a call is a key that was not
  recorded (key_missing: Triton tuned it live); a call that raises while it
  runs an injected config not yet seen to work (compile_failed) has the entry
  evicted and is retried once, which tunes live.
- LibTuner: its `cache` (the persistent config DB) is fronted by an overlay
  that answers recorded keys itself -- `key in cache` is True and `cache[key]`
  is the tuner's own matching config, pre_hook included -- before the DB is
  asked, so a warm DB holding another winner is overridden, and a cold one is
  neither benchmarked nor written. Writes and other keys go to the DB. The
  overlay is put back in front when the tuner swaps its cache (FlagTune's
  config spaces, benchmark protocols). Matching happens at use, against the
  configs the tuner has then. A failing injected config stops being served
  and the call is retried once: with no DB row the tuner tunes live
  (compile_failed); with a DB row the DB's config runs, which cannot be
  evicted (no __delitem__): compile_failed_no_evict, the point is unverified.
- A LibEntry whose dispatch cache was already filled when first seen is
  cleared, so its next call reaches the (now injected) tuner.

Each point that cannot be replayed: AUTOTUNE_REPLAY_FALLBACK, as an event and
as the stdout line `AUTOTUNE_REPLAY_FALLBACK reason=<r> kernel=<k>`, once per
tuner and key (tuner_missing once per recorded tuner, at the end, with no
nodeid: it is the whole run's). One that fires while a torch/gems measurement
is under way (the tuner's first call with a new key is inside timing's
do_bench) is also that measurement's: {reason, kernel} joins its record's
replay_fallbacks and its markers get AUTOTUNE_REPLAY_FALLBACK (the event says
measured: true), so zlb compare flags that row and not the test's others.
"""

import glob
import json
import os

from . import SCHEMA_VERSION, _autotune, _io, _markers, _state

NAME = "zlbench.autotune"
MARKER = _markers.MARKER_REPLAY_FALLBACK
REASONS = ("key_missing", "config_missing", "compile_failed", "compile_failed_no_evict",
           "tuner_missing")


class ReplayError(Exception):
    """The recording cannot be replayed here (a sentence for the user)."""


# --- loading -----------------------------------------------------------------------------

def _read(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise ReplayError("cannot read %s: %s" % (path, e.strerror or e)) from None
    except ValueError as e:
        raise ReplayError("%s is not valid JSON (%s)" % (path, e)) from None


def load(replay_from, backend, use_flagtune):
    """{where: kernel record} of the recording, after checking its terms."""
    rec_dir = os.path.join(replay_from, "autotune_records")
    meta_path = os.path.join(rec_dir, "meta.json")
    if not os.path.isfile(meta_path):
        # A recording older than meta.json: its records replay, but its
        # backend and USE_FLAGTUNE cannot be checked, which is said.
        if not [p for p in glob.glob(os.path.join(rec_dir, "*.json"))]:
            raise ReplayError("ZLB_REPLAY_FROM=%s has no autotune_records/: it is not a "
                              "recording run (a replay run records nothing)" % replay_from)
        _io.warning(NAME, "ZLB_REPLAY_FROM=%s has no autotune_records/meta.json (a recording "
                    "made before it existed): its backend and USE_FLAGTUNE are not checked; "
                    "replaying its records as they are" % replay_from)
        return None, _records(rec_dir)
    meta = _read(meta_path)
    if not isinstance(meta, dict) or meta.get("schema_version") != SCHEMA_VERSION:
        raise ReplayError("%s has schema_version %r; this zlbench reads %d"
                          % (meta_path, meta.get("schema_version") if isinstance(meta, dict)
                             else None, SCHEMA_VERSION))
    if meta.get("backend") != backend:
        raise ReplayError("ZLB_REPLAY_FROM=%s was recorded on backend %r and this run is on "
                          "%r: configs replay on the backend that chose them only"
                          % (replay_from, meta.get("backend"), backend))
    rec_ft = meta.get("use_flagtune")
    if not isinstance(rec_ft, bool) or rec_ft != use_flagtune:
        raise ReplayError("ZLB_REPLAY_FROM=%s was recorded with USE_FLAGTUNE=%s and this run "
                          "has %d: the config spaces differ, so set it as the recording "
                          "side had it" % (replay_from, {True: "1", False: "0"}.get(rec_ft, "?"),
                                           int(use_flagtune)))
    return meta, _records(rec_dir)


def _records(rec_dir):
    """{where: kernel record} of every *.json but meta.json in rec_dir."""
    records = {}
    for path in sorted(glob.glob(os.path.join(rec_dir, "*.json"))):
        if os.path.basename(path) == "meta.json":
            continue
        doc = _read(path)
        if not isinstance(doc, dict) or doc.get("schema_version") != SCHEMA_VERSION or \
                not isinstance(doc.get("kernels"), list):
            raise ReplayError("%s is not an autotune record of schema_version %d"
                              % (path, SCHEMA_VERSION))
        for k in doc["kernels"]:
            try:
                where, kernel, kind = k["where"], k["kernel"], k["tuner"]
                entries = list(k.get("entries") or [])
                for e in entries:
                    if not isinstance(e["key"], list) or not isinstance(e["config"], dict):
                        raise TypeError
            except (KeyError, TypeError):
                raise ReplayError("%s holds a kernel record without tuner, kernel, where "
                                  "and entries of {key, config}" % path) from None
            cur = records.get(where)
            if cur is None:
                records[where] = {"where": where, "kernel": kernel, "tuner": kind,
                                  "key_names": k.get("key_names") or [], "entries": entries}
            elif cur["kernel"] == kernel and cur["tuner"] == kind:
                cur["entries"].extend(entries)
    return records


# --- one bound tuner -----------------------------------------------------------------------

class Binding:
    def __init__(self, replayer, tuner, kind, rec):
        self.replayer = replayer
        self.tuner = tuner
        self.kind = kind
        self.kernel = rec["kernel"]
        self.where = rec["where"]
        self.entries = {}           # key id -> entry
        self.raw = {}               # raw key tuple -> key id (keys without key_repr)
        for e in rec["entries"]:
            rep = bool(e.get("key_repr"))
            kid = _autotune.key_id(e["key"], rep)
            if kid in self.entries:
                continue
            self.entries[kid] = e
            if not rep:
                try:
                    self.raw[tuple(e["key"])] = kid
                except TypeError:
                    pass
        self.has_repr = len(self.raw) < len(self.entries)
        self.injected = set()       # key ids put in place
        self.verified = set()       # ... that ran
        self.failed = set()         # ... that failed and were dropped
        self.config_missing = set()
        self.reported = set()       # (reason, key id)
        self.previous_run = vars(tuner).get("run")
        self.known = set()          # plain: keys of the cache dict after the last call

    # -- helpers

    def kid_of(self, key):
        try:
            kid = self.raw.get(key)
        except TypeError:
            kid = None
        if kid is not None:
            return kid
        kid = _autotune.id_of_key(key)
        return kid if kid in self.entries else None

    def fallback(self, reason, key_values=None, kid=None, detail=None):
        tag = (reason, kid if kid is not None else _autotune.key_id(key_values or [], False))
        if tag in self.reported:
            return
        self.reported.add(tag)
        self.replayer.fallback(reason, self.kernel, self.where, key_values, detail)

    def count_resolvable(self):
        """LibTuner: entries whose config the tuner has now count as injected
        (the overlay serves them from now on); nothing is reported here,
        config_missing is decided at use, against the configs of that time."""
        for kid, entry in self.entries.items():
            if kid not in self.injected and kid not in self.config_missing and \
                    _autotune.match_config(getattr(self.tuner, "configs", ()),
                                           entry["config"]) is not None:
                self.injected.add(kid)

    def resolve(self, kid):
        """The tuner's own config for a recorded entry, or None (config_missing,
        reported once)."""
        entry = self.entries[kid]
        cfg = _autotune.match_config(getattr(self.tuner, "configs", ()), entry["config"])
        if cfg is None and kid not in self.config_missing:
            self.config_missing.add(kid)
            self.fallback("config_missing", entry["key"], kid,
                          "recorded %s matches none of the tuner's %d configs"
                          % (json.dumps(entry["config"], sort_keys=True),
                             len(getattr(self.tuner, "configs", ()) or ())))
        return cfg

    # -- plain Autotuner

    def bind_plain(self):
        cache = self.tuner.cache
        before = list(cache.keys())
        if before:
            recorded = [k for k in before if self.kid_of(k) is not None]
            if recorded:
                _io.warning(NAME, "Autotuner %s (%s) had already tuned %d recorded key(s) "
                            "before replay could inject: calls before now ran live-tuned "
                            "configs" % (self.kernel, self.where, len(recorded)))
            for k in before:
                if self.kid_of(k) is None:
                    self.fallback("key_missing", _autotune.key_json(k)[0], None,
                                  "the key was not recorded: tuned live (before replay "
                                  "could watch this tuner)")
        for kid, e in self.entries.items():
            if e.get("key_repr"):
                continue                        # matched at the call (see run_plain)
            cfg = self.resolve(kid)
            if cfg is not None:
                cache[tuple(e["key"])] = cfg    # unconditional
                self.injected.add(kid)
        self.known = set(cache.keys())
        original = self.tuner.run
        binding = self

        def run(*args, **kwargs):
            return binding.run_plain(original, args, kwargs)

        run._zlb_autotune = True
        self.tuner.run = run

    def _pending(self):
        return (self.has_repr and len(self.injected) + len(self.config_missing)
                < len(self.entries)) or len(self.injected) > len(self.verified) + len(
                    self.failed)

    def run_plain(self, original, args, kwargs):
        cache = self.tuner.cache
        key = kid = None
        if self._pending():
            key = _autotune.tuner_key(self.tuner, "autotuner", args, kwargs)
            kid = self.kid_of(key)
            if kid is not None and kid not in self.injected and kid not in self.failed \
                    and kid not in self.config_missing:
                cfg = self.resolve(kid)         # a key_repr entry, first met here
                if cfg is not None:
                    cache[key] = cfg
                    self.injected.add(kid)
        try:
            ret = original(*args, **kwargs)
        except Exception as e:
            if key is None:
                key = _autotune.tuner_key(self.tuner, "autotuner", args, kwargs)
                kid = self.kid_of(key)
            if kid is None or kid not in self.injected or kid in self.verified \
                    or kid in self.failed:
                raise
            self.failed.add(kid)
            cache.pop(key, None)                # evict: live tuning takes over
            self.known.discard(key)
            self.fallback("compile_failed", self.entries[kid]["key"], kid,
                          "%s: %s" % (type(e).__name__, _io.one_line(e)))
            ret = original(*args, **kwargs)
            self._note_new_keys()
            return ret
        if kid is not None and kid in self.injected:
            self.verified.add(kid)
        self._note_new_keys()
        return ret

    def _note_new_keys(self):
        cache = self.tuner.cache
        if len(cache) == len(self.known):
            return
        for key in list(cache.keys()):
            if key in self.known:
                continue
            self.known.add(key)
            kid = self.kid_of(key)
            if kid is None:
                values, _ = _autotune.key_json(key)
                self.fallback("key_missing", values, None,
                              "the key was not recorded: tuned live")

    # -- LibTuner

    def bind_lib(self):
        if self.entries and getattr(self.tuner, "best_config", None) is not None:
            _io.warning(NAME, "LibTuner %s (%s) ran before replay could inject: calls "
                        "before now used its DB or live tuning" % (self.kernel, self.where))
        self.count_resolvable()
        self.install_overlay()
        original = self.tuner.run
        binding = self

        def run(*args, **kwargs):
            return binding.run_lib(original, args, kwargs)

        run._zlb_autotune = True
        self.tuner.run = run

    def install_overlay(self):
        cur = self.tuner.cache
        if isinstance(cur, Overlay) and cur._binding is self:
            return cur
        ov = Overlay(cur, self)
        self.tuner.cache = ov
        return ov

    def lookup(self, key):
        """The config the overlay serves for key, or None (the DB answers)."""
        kid = self.kid_of(key)
        if kid is None:
            values, _ = _autotune.key_json(key)
            self.fallback("key_missing", values, None,
                          "the key was not recorded: the tuner's DB or live tuning answers")
            return None, None
        if kid in self.failed or kid in self.config_missing:
            return None, None
        cfg = self.resolve(kid)
        if cfg is None:
            self.injected.discard(kid)
            return None, None
        self.injected.add(kid)
        return kid, cfg

    def run_lib(self, original, args, kwargs):
        ov = self.install_overlay()
        ov.served = None
        try:
            ret = original(*args, **kwargs)
        except Exception as e:
            if ov.served is None:
                raise
            kid, raw = ov.served
            if kid in self.verified or kid in self.failed:
                raise
            self.failed.add(kid)
            ov.served = None
            entry_key = self.entries[kid]["key"]
            detail = "%s: %s" % (type(e).__name__, _io.one_line(e))
            try:
                in_db = raw in ov._base
            except Exception:
                in_db = False
            if in_db:
                self.fallback("compile_failed_no_evict", entry_key, kid,
                              detail + "; the tuner's config DB holds this key and has no "
                              "delete: its config runs instead, unverified")
            else:
                self.fallback("compile_failed", entry_key, kid, detail)
            return original(*args, **kwargs)
        if ov.served is not None:
            self.verified.add(ov.served[0])
        return ret

    def unbind(self):
        if self.previous_run is None:
            vars(self.tuner).pop("run", None)
        else:
            self.tuner.run = self.previous_run
        cur = vars(self.tuner).get("cache")
        if isinstance(cur, Overlay) and cur._binding is self:
            self.tuner.cache = cur._base


class Overlay:
    """A LibTuner's cache with the recorded keys answered first (see the
    module docstring). Everything else is the DB's."""

    def __init__(self, base, binding):
        self._base = base
        self._binding = binding
        self.served = None          # (key id, key) served to the call under way

    def __contains__(self, key):
        kid, cfg = self._binding.lookup(key)
        if cfg is not None:
            return True
        return key in self._base

    def __getitem__(self, key):
        kid, cfg = self._binding.lookup(key)
        if cfg is not None:
            self.served = (kid, key)
            return cfg
        return self._base[key]

    def get(self, key, default=None):
        try:
            return self[key]
        except KeyError:
            return default

    def __setitem__(self, key, value):
        self._base[key] = value

    def set(self, key, value):
        self._base[key] = value

    def __getattr__(self, name):
        return getattr(self._base, name)


# --- the replayer ----------------------------------------------------------------------------

class Replayer:
    def __init__(self, replay_from, meta, records):
        self.replay_from = replay_from
        self.meta = meta
        self.records = records      # where -> kernel record
        self.bound = {}             # where -> Binding of a recorded tuner
        self.by_obj = {}            # id(tuner) -> Binding (recorded or not)
        self.entries_seen = set()
        self.fallbacks = 0

    def describe(self):
        n = sum(len(r["entries"]) for r in self.records.values())
        return "replay: %d entr%s of %d tuner(s) from %s" % (
            n, "y" if n == 1 else "ies", len(self.records), self.replay_from)

    def fallback(self, reason, kernel, where, key_values, detail, run_wide=False):
        """One point not replayed: the stdout line and the event; inside a
        measurement (timing.do_bench) also that measurement's record
        (_state.measure_fallbacks), the event then says measured. run_wide:
        tied to no test (tuner_missing, at session end), nodeid null."""
        self.fallbacks += 1
        during = None if run_wide else _state.measure_fallbacks
        if during is not None:
            point = {"reason": reason, "kernel": kernel}
            if point not in during:
                during.append(point)
        _io.marker("%s reason=%s kernel=%s" % (MARKER, reason, kernel))
        _io.event(MARKER, reason=reason, kernel=kernel, where=where, key=key_values,
                  detail=detail, nodeid=None if run_wide else _state.nodeid,
                  measured=during is not None)

    def scan(self):
        found, entries = _autotune.walk()
        for f in found.values():
            if id(f.obj) in self.by_obj:
                continue
            for path in f.paths:
                rec = self.records.get(path)
                if rec is None or path in self.bound:
                    continue
                if rec["kernel"] != f.kernel or rec["tuner"] != f.kind:
                    continue
                b = Binding(self, f.obj, f.kind, rec)
                self.bound[path] = b
                self.by_obj[id(f.obj)] = b
                break
            b = self.by_obj.get(id(f.obj))
            if b is None:
                # Not recorded (side A never called it): every key it is asked
                # for here is a key_missing point.
                b = self.by_obj[id(f.obj)] = Binding(
                    self, f.obj, f.kind, {"kernel": f.kernel, "where": f.where,
                                          "entries": []})
            if f.kind == "libtuner":
                b.bind_lib()
            else:
                b.bind_plain()
        _autotune.clear_new_dispatch(entries, self.entries_seen)

    def finish(self):
        for where in sorted(self.records):
            if where not in self.bound:
                rec = self.records[where]
                self.fallback("tuner_missing", rec["kernel"], where, None,
                              "no %s %s at %s in this process: its %d recorded entr%s "
                              "were not replayed" % (
                                  rec["tuner"], rec["kernel"], where, len(rec["entries"]),
                                  "y" if len(rec["entries"]) == 1 else "ies"),
                              run_wide=True)
        for b in self.bound.values():
            if b.kind == "libtuner":
                b.count_resolvable()
        injected = sum(len(b.injected) for b in self.bound.values())
        _io.event(_markers.EVENT_AUTOTUNE_REPLAYED, injected=injected, tuners=len(self.bound),
                  recorded=len(self.records))
        for b in self.by_obj.values():
            b.unbind()
