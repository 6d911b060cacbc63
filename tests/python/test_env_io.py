"""The environment contract, the JSON-lines writer and importability."""

import json
import os
import subprocess
import textwrap

import pytest

from conftest import PYDIR, PYTHON, events, rows, subprocess_env

from zlbench import SCHEMA_VERSION, _env, _io


def test_plugins_import_without_torch_triton_yaml_flag_gems():
    blocker = textwrap.dedent("""
        import sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("torch", "triton", "yaml", "flag_gems",
                                          "flaggems_vllm", "numpy"):
                    raise ImportError("blocked: " + name)
        sys.meta_path.insert(0, Block())
        import zlbench, zlbench.results, zlbench.seed, zlbench.shapes, zlbench.timing
        import zlbench._graph, zlbench._bespoke, zlbench._stats, zlbench._env, zlbench._io
        try:
            import torch
        except ImportError:
            pass
        else:
            raise SystemExit("the blocker did not block")
        print("IMPORTED", sorted(m for m in sys.modules if m.startswith("zlbench")))
    """)
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": PYDIR}
    r = subprocess.run([PYTHON, "-c", blocker], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "zlbench.timing" in r.stdout and "zlbench.shapes" in r.stdout


@pytest.mark.parametrize("raw,want", [(None, 1), ("1", 1), ("5", 5), (" 7 ", 7)])
def test_direct_repeat_values(monkeypatch, raw, want):
    if raw is not None:
        monkeypatch.setenv("ZLB_DIRECT_REPEAT", raw)
    assert _env.direct_repeat() == want


@pytest.mark.parametrize("raw", ["abc", "0", "-4", "2.5", "3x"])
def test_direct_repeat_garbage_is_refused(monkeypatch, raw):
    monkeypatch.setenv("ZLB_DIRECT_REPEAT", raw)
    with pytest.raises(_env.EnvError, match="ZLB_DIRECT_REPEAT"):
        _env.direct_repeat()


def test_timer_and_seed_domains(monkeypatch):
    assert _env.timer() == "direct"
    monkeypatch.setenv("ZLB_TIMER", "graph")
    assert _env.timer() == "graph"
    monkeypatch.setenv("ZLB_TIMER", "cudagraph")
    with pytest.raises(_env.EnvError, match="ZLB_TIMER"):
        _env.timer()
    assert _env.seed() == 0
    monkeypatch.setenv("ZLB_SEED", "1234")
    assert _env.seed() == 1234
    monkeypatch.setenv("ZLB_SEED", "zero")
    with pytest.raises(_env.EnvError, match="ZLB_SEED"):
        _env.seed()


def test_capture_fatal_is_split_on_newlines(monkeypatch):
    monkeypatch.setenv("ZLB_CAPTURE_FATAL", "an illegal memory access was encountered\n"
                       "\nCUDA out of memory\r\n")
    assert _env.capture_fatal() == ["an illegal memory access was encountered",
                                    "CUDA out of memory"]


def test_garbage_repeat_stops_pytest_at_configure(tmp_path):
    (tmp_path / "test_x.py").write_text("def test_x():\n    pass\n")
    env = subprocess_env({"ZLB_RUN_DIR": str(tmp_path), "ZLB_DIRECT_REPEAT": "three"})
    r = subprocess.run([PYTHON, "-m", "pytest", "-p", "no:cacheprovider", "-p",
                        "zlbench.results", "-p", "zlbench.timing", "test_x.py"],
                       cwd=tmp_path, env=env, capture_output=True, text=True)
    assert r.returncode == 4, r.stdout + r.stderr          # pytest's usage error
    assert "ZLB_DIRECT_REPEAT='three' is not an integer" in r.stderr


def test_events_and_rows_are_json_lines_with_schema_version(run_dir):
    _io.event("PLUGIN", name="x", status="ready", detail="d")
    _io.event("WEIRD", value=float("nan"), inf=float("inf"), obj=object, ok=1.5)
    _io.row({"kind": "row", "latency_ms": float("inf"), "speedup": 2.0})
    evs = events(run_dir)
    assert [e["event"] for e in evs] == ["PLUGIN", "WEIRD"]
    assert all(e["schema_version"] == SCHEMA_VERSION and isinstance(e["ts"], float)
               for e in evs)
    assert evs[0]["name"] == "x"
    assert evs[1]["value"] is None and evs[1]["inf"] is None and evs[1]["ok"] == 1.5
    assert evs[1]["obj"] == str(object)
    (r,) = rows(run_dir)
    assert r == {"schema_version": SCHEMA_VERSION, "kind": "row", "latency_ms": None,
                 "speedup": 2.0}
    # Each line is one strict JSON object (no NaN/Infinity tokens).
    for name in ("events.jsonl", "results.jsonl"):
        for line in (run_dir / name).read_text().splitlines():
            json.loads(line, parse_constant=lambda c: pytest.fail("bad token " + c))


def test_lines_are_on_disk_as_soon_as_written(run_dir):
    _io.event("PLUGIN", name="a", status="ready", detail="")
    # Another reader sees it without any close or flush from us.
    with open(run_dir / "events.jsonl") as f:
        assert json.loads(f.readline())["name"] == "a"


def test_without_run_dir_plugins_say_inactive_once(capsys):
    assert _io.active("zlbench.results") is False
    assert _io.active("zlbench.timing") is False
    err = capsys.readouterr().err
    assert err.count("ZLB_RUN_DIR is not set") == 1
    _io.event("PLUGIN", name="x", status="ready", detail="")   # goes nowhere, no error


def test_one_line():
    assert _io.one_line("a\n  b\tc\n") == "a b c"
    assert len(_io.one_line("x" * 1000, 50)) == 50


def _pytest_in(tmp_path, env_extra, *plugins):
    env = subprocess_env(env_extra)
    args = [PYTHON, "-m", "pytest", "-p", "no:cacheprovider"]
    for p in plugins:
        args += ["-p", p]
    return subprocess.run(args + ["."], cwd=tmp_path, env=env, capture_output=True,
                          text=True)


def test_unwritable_run_dir_is_a_usage_error(tmp_path):
    (tmp_path / "test_x.py").write_text("def test_x():\n    pass\n")
    r = _pytest_in(tmp_path, {"ZLB_RUN_DIR": str(tmp_path / "missing" / "run")},
                   "zlbench.results", "zlbench.timing")
    assert r.returncode == 4
    assert "cannot write under ZLB_RUN_DIR" in r.stderr


def test_provenance_once_even_when_collection_fails(tmp_path):
    (tmp_path / "test_bad.py").write_text("def test_x(:\n")
    run = tmp_path / "run"
    run.mkdir()
    r = _pytest_in(tmp_path, {"ZLB_RUN_DIR": str(run)}, "zlbench.results")
    assert r.returncode == 2
    (prov,) = events(run, "PROVENANCE")
    assert prov["torch"] == "0.0-stub"
