"""graph_plan.json as the timing plugin reads it (zlbench._graph_plan)."""

import json

import pytest

from zlbench import _graph_plan


def entry(**kw):
    e = {"nodeid": "benchmark/test_x.py::test_x", "op_name": "x", "dtype": "torch.float16",
         "shape_detail": "[torch.Size([8])]", "role": "gems", "calls_per_replay": 512,
         "placements": 1}
    e.update(kw)
    return e


def write(tmp_path, doc):
    p = tmp_path / "graph_plan.json"
    p.write_text(json.dumps(doc))
    return str(p)


def plan_doc(*ms, version=2):
    return {"schema_version": version, "kind": "graph_plan", "replay_from": "/r",
            "measurements": list(ms)}


def test_entries_of_one_key_are_taken_in_the_recordings_order(tmp_path):
    plan = _graph_plan.load(write(tmp_path, plan_doc(
        entry(calls_per_replay=256), entry(role="torch", calls_per_replay=64),
        entry(calls_per_replay=128, placements=2))))
    key = ("benchmark/test_x.py::test_x", "x", "torch.float16", "[torch.Size([8])]")
    first = plan.take(*key, "gems")
    second = plan.take(*key, "gems")
    assert (first.k, first.placements, second.k, second.placements) == (256, 1, 128, 2)
    assert plan.take(*key, "gems") is None               # none left
    assert plan.take(*key, "torch").k == 64
    assert plan.take(key[0], "x", "torch.float32", key[3], "torch") is None
    assert plan.size == 3


def test_an_entry_carries_the_recordings_power_duty(tmp_path):
    plan = _graph_plan.load(write(tmp_path, plan_doc(
        entry(power_duty=0.5), entry(power_duty=1), entry(power_duty=None), entry())))
    key = ("benchmark/test_x.py::test_x", "x", "torch.float16", "[torch.Size([8])]", "gems")
    assert [plan.take(*key).power_duty for _ in range(4)] == [0.5, 1.0, None, None]


def test_an_entry_carries_the_k_its_recording_captured_first(tmp_path):
    plan = _graph_plan.load(write(tmp_path, plan_doc(
        entry(calls_first=1024), entry(calls_first=None), entry())))
    key = ("benchmark/test_x.py::test_x", "x", "torch.float16", "[torch.Size([8])]", "gems")
    assert [plan.take(*key).k_first for _ in range(3)] == [1024, None, None]


def test_a_version_1_plan_is_read_without_a_duty(tmp_path):
    # the plan of a zlb before the fields: K and placements, the rest unknown
    plan = _graph_plan.load(write(tmp_path, plan_doc(entry(), version=1)))
    shape = plan.take("benchmark/test_x.py::test_x", "x", "torch.float16",
                      "[torch.Size([8])]", "gems")
    assert (shape.k, shape.placements, shape.power_duty, shape.k_first) == (512, 1, None, None)


@pytest.mark.parametrize("doc,why", [
    ({"schema_version": 3, "kind": "graph_plan", "measurements": []},
     "schema_version 3; this zlbench reads 1 and 2"),
    ({"schema_version": 2, "kind": "other", "measurements": []}, "not a graph plan"),
    ({"schema_version": 2, "kind": "graph_plan"}, "no measurements list"),
    (plan_doc(entry(power_duty=0)), "power_duty 0 "),
    (plan_doc(entry(power_duty=1.5)), "power_duty 1.5 "),
    (plan_doc(entry(power_duty="half")), "power_duty 'half' "),
    (plan_doc(entry(power_duty=True)), "power_duty True "),
    (plan_doc(entry(calls_first=0)), "calls_first 0 "),
    (plan_doc(entry(calls_first=2.5)), "calls_first 2.5 "),
    (plan_doc(entry(calls_first="512")), "calls_first '512' "),
    (plan_doc(entry(calls_per_replay=0)), "both must be >= 1"),
    (plan_doc({"nodeid": "n"}), "lacks a usable"),
    (plan_doc(entry(calls_per_replay="many")), "lacks a usable"),
])
def test_a_plan_that_cannot_be_used_is_refused_with_a_sentence(tmp_path, doc, why):
    with pytest.raises(_graph_plan.PlanError, match=why):
        _graph_plan.load(write(tmp_path, doc))


def test_an_unreadable_plan_stops_the_plugin_at_configure(run_dir, monkeypatch, tmp_path):
    from zlbench import timing

    monkeypatch.setenv("ZLB_TIMER", "graph")
    monkeypatch.setenv("ZLB_GRAPH_PLAN", str(tmp_path / "missing.json"))
    with pytest.raises(pytest.UsageError, match="ZLB_GRAPH_PLAN: .*cannot be read"):
        timing.pytest_configure(None)
    timing.uninstall()
