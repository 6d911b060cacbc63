"""What preflight reads for a run, refused before anything starts when the
measured process would fail on it later (issue 16 rows 14 and 15).

Each failure is `PREFLIGHT_FAILED check=<name>`, a sentence and a fix, exit
3, and no run directory. Before, a damaged autotune record passed preflight
and pytest died on it (rc 6, a RecursionError traceback for a deeply nested
one), and a missing --extra-plugins module was reported as failed tests.
"""
import json

from test_run import preflight


def recording(tmp_path):
    rec = tmp_path / "rec" / "autotune_records"
    rec.mkdir(parents=True)
    (rec / "meta.json").write_text(json.dumps(
        {"schema_version": 1, "backend": "cuda", "use_flagtune": False, "op": "softmax"}))
    (rec / "softmax.json").write_text(json.dumps(
        {"schema_version": 1, "op": "softmax", "kernels": [
            {"where": "m.k", "kernel": "k", "tuner": "autotuner", "key_names": ["N"],
             "entries": [{"key": [1024, "torch.float16"], "config": {"kwargs": {"B": 64}}}]}]}))
    return rec


def test_a_record_the_plugin_cannot_load_is_refused(zlb, tmp_path):
    rec = recording(tmp_path)
    deep = "[" * 1500 + "]" * 1500
    bad = {
        "softmax.json": ('{"schema_version": 1, "kernels": [%s]}' % deep,
                         "nested more than 64 levels deep"),
        "other.json": ('{"schema_version": 1, "kernels": [{"kernel": "k"}]}',
                       "lacks its tuner, kernel, where"),
        "third.json": ('{"schema_version": 1, "kernels": [', "is not valid JSON"),
        "fourth.json": ('{"schema_version": 2, "kernels": []}',
                        "not an autotune record of schema_version 1"),
    }
    good = (rec / "softmax.json").read_text()
    for name, (text, needle) in bad.items():
        (rec / name).write_text(text)
        r = zlb.run("softmax", "--dtypes", "float16", env={"REPLAY_FROM": str(rec.parent)})
        preflight(r, "replay_dir")
        assert needle in r.err and name in r.err, r
        assert "record A again" in r.err
        assert not zlb.runs.exists()
        if name == "softmax.json":
            (rec / name).write_text(good)
        else:
            (rec / name).unlink()
    (rec / "softmax.json").unlink()
    (rec / "softmax.json").symlink_to(tmp_path / "elsewhere.json")
    (tmp_path / "elsewhere.json").write_text(good)
    r = zlb.run("softmax", "--dtypes", "float16", env={"REPLAY_FROM": str(rec.parent)})
    preflight(r, "replay_dir")
    assert "softmax.json' is a symbolic link" in r.err, r
    (rec / "softmax.json").unlink()
    (rec / "softmax.json").write_text(good)
    r = zlb.run("softmax", "--dtypes", "float16", env={"REPLAY_FROM": str(rec.parent)})
    assert r.rc in (0, 1), r          # a fake record: replay falls back, the run goes on
    assert "PREFLIGHT_FAILED" not in r.err


def test_an_extra_plugin_that_cannot_be_found_is_a_preflight_failure(zlb, tmp_path):
    r = zlb.run("softmax", "--dtypes", "float16", env={"ZL_EXTRA_PLUGINS": "nonexistent_mod"})
    preflight(r, "plugins")
    assert "extra plugin 'nonexistent_mod' cannot be found by /usr/bin/python3" in r.err, r
    assert not zlb.runs.exists()
    r = zlb.run("softmax", "--dtypes", "float16", "--extra-plugins", "bad-name")
    assert r.rc == 2 and "'bad-name' is not a Python module name" in r.err, r
    # Found on PYTHONPATH (or in the checkout): fine.
    (tmp_path / "plugdir").mkdir()
    (tmp_path / "plugdir" / "my_plugin.py").write_text("")
    r = zlb.run("softmax", "--dtypes", "float16",
                env={"ZL_EXTRA_PLUGINS": "my_plugin",
                     "PYTHONPATH": zlb.env["PYTHONPATH"] + ":" + str(tmp_path / "plugdir")})
    assert r.rc == 0, r


def test_a_shape_file_pyyaml_reads_otherwise_is_refused_with_its_line(zlb, shapes):
    # issue 16 rows 7, 11, 12: each passed preflight and failed (or hung) later
    bomb = "m0: &m0 {x: 1}\n" + "".join(
        f"m{k}: &m{k}\n  <<: [{', '.join([f'*m{k - 1}'] * 20)}]\n" for k in range(1, 9)) + \
        "softmax:\n  <<: *m8\n  shapes: [[1024, 1024]]\n"
    cases = [
        ("softmax:\n  shapes: [[1024, 1024]]\nsoftmax:\n  shapes: [[64, 64]]\n",
         "the key 'softmax' appears twice in one mapping (lines 1 and 3)"),
        ("softmax:\n  shapes: [[1024, 1024]]\n---\nsoftmax:\n  shapes: [[64, 64]]\n",
         "more than one YAML document (the second starts at line 3)"),
        ("softmax:\n  shapes: !!python/tuple [[1024, 1024]]\n", "line 2: tag '!!python/tuple'"),
        ("softmax:\n  shapes:\n    - [abc, 1e400]\n", "item 1 (line 3) has 'abc' (a word)"),
        ("softmax:\n  shapes:\n    - [1024, 1024]\n    - [0, 0]\n", "item 2 (line 4) has '0' (0)"),
        ("softmax:\n  shapes:\n    - [-1, 4]\n", "has '-1' (-1)"),
        (bomb, "expands to more than 1000000 values"),
        ("softmax: " + "[" * 100000 + "]" * 100000 + "\n", "nests deeper than 64 levels"),
    ]
    for text, needle in cases:
        r = zlb.run("softmax", "--shapes", str(shapes(text)), timeout=60)
        preflight(r, "shape_file")
        assert needle in r.err, r
        assert not zlb.runs.exists()
