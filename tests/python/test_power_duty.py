"""libzlbtimer's duty (ABI 7): below 1 the GPU idles after each round of
replays for (1 / duty - 1) times its GPU time, its warm-up replays (ABI 8:
one before each round) counted as GPU time. Against the real library on
the fake driver, where an exec's value is its replay time in ns and
nothing waits for it (tests/fakes/fake_libcuda.c): the wall time a
measurement takes is then the library's own sleeping. Skipped without
$ZLB_TIMER_LIB and $ZLB_FAKECUDA."""

import ctypes

import pytest

from conftest import FAKECUDA, TIMER_LIB, need_timer

from zlbench import _timerlib

REPLAY_NS = 2_000_000       # 2 ms, as zlb sizes a replay


@pytest.fixture
def lib(monkeypatch):
    need_timer()
    monkeypatch.setenv("ZLB_LIBCUDA", FAKECUDA)
    ctypes.CDLL(FAKECUDA).fake_cuda_reset()
    lib, why = _timerlib.timer_lib(TIMER_LIB)
    assert lib is not None, why
    return lib


def launches():
    return ctypes.CDLL(FAKECUDA).fake_cuda_launch_count()


def test_a_duty_leaves_the_gpu_idle_between_replays(lib):
    rc, back, _, err = lib.time_graph(REPLAY_NS, 0, 1, 10, 10, 0.0, 10000.0, warmup_replays=1)
    assert (rc, err) == (_timerlib.ZLBT_OK, "") and back["n"] == 10
    # back to back: one warm-up, then the ten timed replays
    assert launches() == 11
    rc, idle, _, err = lib.time_graph(REPLAY_NS, 0, 1, 10, 10, 0.0, 10000.0, warmup_replays=1,
                                      duty=0.25)
    assert (rc, err) == (_timerlib.ZLBT_OK, "") and idle["n"] == 10
    assert idle["median_ms"] == back["median_ms"] == pytest.approx(2.0)
    # ABI 8: each timed replay after a pause has a warm-up of its own
    assert launches() == 11 + 20
    # each 2 ms replay and its 2 ms warm-up followed by 12 ms idle: 120 ms
    # asleep at least, twice what the timed replays alone would ask
    assert idle["wall_ms"] >= 6 * idle["total_gpu_ms"] * 0.99
    assert back["wall_ms"] < idle["total_gpu_ms"]


def test_a_duty_warms_each_batch_up_even_when_the_request_asks_no_warm_up(lib):
    rc, idle, _, err = lib.time_graph(REPLAY_NS, 0, 1, 4, 4, 0.0, 10000.0, duty=0.5)
    assert (rc, err) == (_timerlib.ZLBT_OK, "") and idle["n"] == 4
    assert launches() == 8
    assert idle["wall_ms"] >= 2 * idle["total_gpu_ms"] * 0.99


def test_the_sleeps_count_towards_the_wall_limit(lib):
    rc, st, _, err = lib.time_graph(REPLAY_NS, 0, 1, 1000, 1000, 0.0, 50.0, duty=0.2)
    assert rc == _timerlib.ZLBT_ETIMEOUT
    assert 1 <= st["n"] <= 8 and "wall-clock limit of 50 ms" in err


@pytest.mark.parametrize("duty", [1.5, -0.5, float("nan")])
def test_a_duty_outside_0_1_is_refused(lib, duty):
    rc, _, _, err = lib.time_graph(REPLAY_NS, 0, 1, 10, 10, 0.0, 1000.0, duty=duty)
    assert rc == _timerlib.ZLBT_EINVAL and "is not a fraction in [0, 1]" in err


def test_an_older_library_cannot_idle(lib):
    old = _timerlib.TimerLib(TIMER_LIB, max_abi=6)
    assert old.v6 and not old.v7
    with pytest.raises(ValueError, match="ABI 6 cannot leave the GPU idle"):
        old.time_graph(REPLAY_NS, 0, 1, 10, 10, 0.0, 1000.0, duty=0.5)
    rc, st, _, err = old.time_graph(REPLAY_NS, 0, 1, 10, 10, 0.0, 1000.0)
    assert rc == _timerlib.ZLBT_OK and st["n"] == 10
