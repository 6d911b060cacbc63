"""Autotune record (protocol §7): what each tuner chose in this process,
read back from its own cache, written to <run>/autotune_records/.

- A plain Triton Autotuner's cache is a dict that lives in this process only:
  every (key, config) in it was chosen here, and the dict is read whole after
  each test. A config carrying a pre_hook is listed as unrecordable: Triton
  has no way to give a pre_hook back to a config that is not its own object.
- A LibTuner's cache is FlagGems' persistent config DB, shared by every run on
  the machine: a warm DB answers from the cached branch and writes nothing, so
  comparing its keys before and after a call finds nothing. Instead the
  tuner's run is wrapped (on the instance) and, after a call, the key this
  call used (the tuner's own get_key) is read back from self.cache[key] once.
  A LibTuner config is recordable with a pre_hook: the DB drops it anyway and
  LibTuner.run gives it back by matching all_kwargs().
- A LibEntry that already dispatched before its tuner was wrapped would keep
  bypassing the tuner, so its dispatch cache is cleared when it is first seen
  (the next call goes through the tuner, which answers from its cache without
  tuning again); a LibTuner that had run unwatched gets a WARNING.

Files: <op>.json and meta.json, written after each test and at the end of the
session (each through a temporary file and a rename; meta.json last).
"""

import os

from . import SCHEMA_VERSION, _autotune, _env, _io, _markers

NAME = "zlbench.autotune"
REASON_PRE_HOOK = "pre_hook on a plain Autotuner config"
REASON_NOT_IN_CACHE = "key not in the tuner's cache after run()"


class TunerRecord:
    def __init__(self, found):
        self.obj = found.obj
        self.kind = found.kind
        self.kernel = found.kernel
        self.key_names = found.key_names
        self.paths = list(found.paths)
        self.where = found.where
        self.entries = {}           # key id -> entry
        self.unrecordable = {}      # key id -> {key, reason}
        self.raw_seen = set()       # raw keys already read back (LibTuner)

    def merge_paths(self, found):
        for p in found.paths:
            if p not in self.paths:
                self.paths.append(p)
        found.paths = self.paths
        self.where = found.where

    def add(self, key, cfg):
        values, rep = _autotune.key_json(key)
        kid = _autotune.key_id(values, rep)
        if kid in self.entries or kid in self.unrecordable:
            return
        if self.kind == "autotuner" and getattr(cfg, "pre_hook", None) is not None:
            item = {"key": values, "reason": REASON_PRE_HOOK}
            if rep:
                item["key_repr"] = True
            self.unrecordable[kid] = item
            return
        entry = {"key": values, "config": _autotune.config_json(cfg)}
        if rep:
            entry["key_repr"] = True
        self.entries[kid] = entry

    def not_in_cache(self, key):
        values, rep = _autotune.key_json(key)
        kid = _autotune.key_id(values, rep)
        if kid not in self.entries and kid not in self.unrecordable:
            item = {"key": values, "reason": REASON_NOT_IN_CACHE}
            if rep:
                item["key_repr"] = True
            self.unrecordable[kid] = item

    def as_json(self):
        return {"tuner": self.kind, "kernel": self.kernel, "where": self.where,
                "key_names": list(self.key_names),
                "entries": list(self.entries.values()),
                "unrecordable": list(self.unrecordable.values())}


class Recorder:
    def __init__(self, run_dir, backend, use_flagtune):
        self.dir = os.path.join(run_dir, "autotune_records")
        self.backend = backend
        self.use_flagtune = use_flagtune
        self.tuners = {}            # id(tuner) -> TunerRecord
        self.wrapped = {}           # id(tuner) -> (tuner, previous instance `run` or None)
        self.entries_seen = set()
        self.op = None
        self.package = None

    def describe(self):
        return "record: the configs chosen here go to %s/<op>.json" % self.dir

    # --- finding and watching the tuners ----------------------------------------------

    def scan(self):
        found, entries = _autotune.walk()
        pkgs = _autotune.packages()
        if pkgs and self.package is None:
            self.package = pkgs[0]
        for f in found.values():
            rec = self.tuners.get(id(f.obj))
            if rec is None:
                rec = self.tuners[id(f.obj)] = TunerRecord(f)
            else:
                rec.merge_paths(f)
            if f.kind == "libtuner" and id(f.obj) not in self.wrapped:
                if getattr(f.obj, "best_config", None) is not None:
                    _io.warning(NAME, "LibTuner %s (%s) ran before zlbench.autotune could "
                                "watch it: the keys it served until now are not recorded"
                                % (rec.kernel, rec.where))
                self._wrap(rec)
        _autotune.clear_new_dispatch(entries, self.entries_seen)

    def _wrap(self, rec):
        tuner = rec.obj
        previous = vars(tuner).get("run")
        original = tuner.run
        note = self._note

        def run(*args, **kwargs):
            ret = original(*args, **kwargs)
            note(rec, args, kwargs)
            return ret

        run._zlb_autotune = True
        tuner.run = run
        self.wrapped[id(tuner)] = (tuner, previous)

    def _note(self, rec, args, kwargs):
        """After a LibTuner call: read this call's key back from its cache once."""
        tuner = rec.obj
        try:
            if len(tuner.configs) <= 1:          # no cache lookup with one config
                return
            key = _autotune.tuner_key(tuner, rec.kind, args, kwargs)
            try:
                if key in rec.raw_seen:
                    return
                rec.raw_seen.add(key)
            except TypeError:                    # unhashable key element
                pass
            try:
                cfg = tuner.cache[key]
            except KeyError:
                rec.not_in_cache(key)
                return
            rec.add(key, cfg)
        except Exception as e:                   # never break the measured call
            tag = ("note", id(tuner))
            if tag not in _said:
                _said.add(tag)
                _io.warning(NAME, "the choice of %s (%s) could not be read back: %s: %s"
                            % (rec.kernel, rec.where, type(e).__name__, _io.one_line(e)))

    def unwrap(self):
        for tuner, previous in self.wrapped.values():
            if previous is None:
                vars(tuner).pop("run", None)
            else:
                tuner.run = previous
        self.wrapped.clear()

    # --- reading back and writing -------------------------------------------------------

    def collect(self):
        """Plain Autotuners: everything in their in-process cache dicts."""
        for rec in self.tuners.values():
            if rec.kind != "autotuner":
                continue
            try:
                items = list(rec.obj.cache.items())
            except Exception:
                continue
            for key, cfg in items:
                rec.add(key, cfg)

    def totals(self):
        kernels = [r for r in self.tuners.values() if r.entries or r.unrecordable]
        kernels.sort(key=lambda r: (r.where, r.kernel))
        return (kernels, sum(len(r.entries) for r in kernels),
                sum(len(r.unrecordable) for r in kernels))

    def write(self, op):
        self.collect()
        kernels, n_entries, _ = self.totals()
        op = op or self.op or "unknown"
        _io.makedirs(self.dir)
        _autotune.write_json(os.path.join(self.dir, _autotune.safe_name(op) + ".json"),
                             {"schema_version": SCHEMA_VERSION, "op": op,
                              "kernels": [r.as_json() for r in kernels]})
        _autotune.write_json(os.path.join(self.dir, "meta.json"),
                             {"schema_version": SCHEMA_VERSION, "op": op,
                              "backend": self.backend, "use_flagtune": self.use_flagtune,
                              "package": self.package or _env.package(),
                              "tuners": len(kernels), "entries": n_entries})

    def finish(self, op):
        try:
            self.write(op)
        finally:
            self.unwrap()
        kernels, n_entries, n_unrec = self.totals()
        _io.event(_markers.EVENT_AUTOTUNE_RECORDED, tuners=len(kernels), entries=n_entries,
                  unrecordable=n_unrec)


_said = set()
