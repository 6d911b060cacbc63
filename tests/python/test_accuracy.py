"""bench/accuracy.py's arithmetic: the accuracy check and the drift table
(the GPU part runs on the H200 only)."""

import importlib.util
import os
import sys

import pytest

from conftest import REPO

sys.path.insert(0, os.path.join(REPO, "bench"))
_spec = importlib.util.spec_from_file_location("accuracy", os.path.join(REPO, "bench",
                                                                         "accuracy.py"))
acc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(acc)

MB = 1 << 20


def cell(shape, side, zlbt, p1, cg=None, nbytes=MB, family="binary", memory_bound=True):
    ms = {"zlbt": zlbt, "zlbt_p1": p1}
    if cg is not None:
        ms["cudagraph_fg"] = cg
    return {"family": family, "shape": list(shape), "side": side, "bytes": nbytes,
            "memory_bound": memory_bound, "ms": ms}


def test_the_worst_process_decides_a_cell_and_the_goal_is_three_tenths_of_a_percent():
    procs = [[cell((8,), "torch", 1.0020, 1.0, cg=1.01)],
             [cell((8,), "torch", 0.9960, 1.0)]]
    (row,) = acc.accuracy_rows(procs)
    assert row["centre_vs_one_graph"] == pytest.approx(-0.004)    # the worse of +0.2%, -0.4%
    assert row["ok"] is False
    assert row["centre_vs_cudagraph"] == pytest.approx(1.0020 / 1.01 - 1)
    (row,) = acc.accuracy_rows(procs[:1])
    assert row["centre_vs_one_graph"] == pytest.approx(0.002) and row["ok"] is True
    # Exactly at the goal passes; a cell without a reference is not "ok".
    (row,) = acc.accuracy_rows([[cell((8,), "gems", 1.003, 1.0)]])
    assert row["ok"] is True
    (row,) = acc.accuracy_rows([[cell((8,), "gems", 1.0, None)]])
    assert row["centre_vs_one_graph"] is None and row["ok"] is False


def test_bandwidth_only_for_memory_bound_cells_larger_than_the_l2():
    best = 4e12
    small = cell((1,), "torch", 0.1, 0.1, nbytes=10 * MB)
    big = cell((2,), "torch", 0.1, 0.1, nbytes=400 * MB)
    mm = cell((3,), "torch", 0.1, 0.1, nbytes=400 * MB, family="matmul", memory_bound=False)
    rows = acc.accuracy_rows([[small, big, mm]], l2_bytes=50 * MB, best_bps=best)
    assert [r["of_best_copy"] for r in rows][0] is None and rows[2]["of_best_copy"] is None
    assert rows[1]["of_best_copy"] == pytest.approx(400 * MB / 1e-4 / best)


def test_drift_rows_use_the_engine_column_and_the_class_of_its_time():
    procs = [[cell((8,), "torch", 0.0010, 1), cell((9,), "torch", 0.0100, 1)],
             [cell((8,), "torch", 0.00102, 1), cell((9,), "torch", 0.01006, 1)]]
    small, big = acc.drift_rows(procs)
    assert small["cls"] == "1us" and small["worst"] == pytest.approx(0.02)
    assert small["ok"] is False                    # 2% > 1% worst at ~1 us
    assert big["cls"] == "5us" and big["median"] == pytest.approx(0.006)
    assert big["ok"] is False                      # 0.6% > 0.5% worst
    procs[1][1]["ms"]["zlbt"] = 0.010005
    assert acc.drift_rows(procs)[1]["ok"] is True
    assert acc.drift_rows(procs[:1]) == []         # one process: no drift


def test_pointwise_footprints_span_the_l2():
    fams = {f: acc.cells(f) for f in acc.FAMILIES}
    unary = [b for _, b, _ in fams["unary"]]
    assert min(unary) <= 64 * 1024 and max(unary) >= 500 * MB
    assert sum(1 for b in unary if MB <= b <= 40 * MB) >= 3
    shapes = [s for s, _, _ in fams["binary"]]
    assert (50000,) in shapes and (1536, 1536) in shapes and (8192, 3000) in shapes


def test_render_says_how_many_cells_met_the_goal():
    rows = acc.accuracy_rows([[cell((8,), "torch", 1.0, 1.0, cg=1.0),
                               cell((9,), "gems", 1.1, 1.0)]])
    text = acc.render(rows, [], None, 1)
    assert "accuracy: 1 of 2 cells within the goal" in text and "FAIL" in text
