"""TimerLib.graph_repeat and graph_repeat_release (libzlbtimer ABI 5)
against the real library on the fake driver, where a captured CUgraph's
value counts its kernel nodes (bits 0-15), each replays in
$FAKE_CUDA_KERNEL_NS, and an exec's value is its replay time in ns
(tests/fakes/fake_libcuda.c). Skipped without $ZLB_TIMER_LIB and
$ZLB_FAKECUDA."""

import ctypes

import pytest

from conftest import FAKECUDA, TIMER_LIB, need_timer

from zlbench import _timerlib


@pytest.fixture
def fake(monkeypatch):
    """The fake driver, as the library's driver (its counters reset)."""
    need_timer()
    monkeypatch.setenv("ZLB_LIBCUDA", FAKECUDA)
    fake = ctypes.CDLL(FAKECUDA)
    fake.fake_cuda_reset()
    fake.fake_cuda_live_graphs.restype = ctypes.c_long
    fake.fake_cuda_live_execs.restype = ctypes.c_long
    fake.fake_cuda_graph_is_chain.restype = ctypes.c_int
    fake.fake_cuda_graph_is_chain.argtypes = [ctypes.c_uint64]
    yield fake
    assert (fake.fake_cuda_live_graphs(), fake.fake_cuda_live_execs()) == (0, 0)


@pytest.fixture
def lib(fake):
    lib, why = _timerlib.timer_lib(TIMER_LIB)
    assert lib is not None, why
    return lib


def test_repeat_builds_times_and_releases(lib, fake, monkeypatch):
    monkeypatch.setenv("FAKE_CUDA_KERNEL_NS", "2500")
    assert lib.abi_version() >= 5 and lib.has_graph_repeat
    exec_, graph = lib.graph_repeat(4, 8)       # T = 4 one-kernel calls, 8 copies
    assert exec_ == 8 * 4 * 2500
    assert fake.fake_cuda_graph_is_chain(graph) == 1
    assert lib.graph_info(graph) == ({"nodes": 8, "kernels": 0, "memcpys": 0,
                                      "memsets": 0, "others": 8}, None)
    rc, stats, samples, err = lib.time_graph(exec_, 0, 32, 10, 100, 0.0, 1000.0)
    assert (rc, err) == (_timerlib.ZLBT_OK, "")
    assert stats["n"] == 10 and stats["median_ms"] == pytest.approx(0.0025, rel=1e-6)
    lib.graph_repeat_release(exec_, graph)
    assert fake.fake_cuda_live_graphs() == 0


def test_repeat_refusals_carry_the_sentence(lib, fake, monkeypatch):
    with pytest.raises(RuntimeError, match=r"ZLBT_EINVAL: copies is 0"):
        lib.graph_repeat(4, 0)
    with pytest.raises(RuntimeError, match=r"ZLBT_EINVAL: graph is 0"):
        lib.graph_repeat(0, 2)
    monkeypatch.setenv("FAKE_CUDA_CHILD_FAIL_AFTER", "2")
    with pytest.raises(RuntimeError, match=r"ZLBT_EDRIVER: cuGraphAddChildGraphNode "
                                           r"\(copy 3 of 5\) failed: CUDA_ERROR_OUT_OF_MEMORY"):
        lib.graph_repeat(4, 5)
    assert fake.fake_cuda_live_graphs() == 0


def test_release_refusal_carries_the_sentence(lib, fake):
    exec_, graph = lib.graph_repeat(1, 2)
    lib.graph_repeat_release(exec_, graph)
    with pytest.raises(RuntimeError, match=r"ZLBT_EDRIVER: cuGraphExecDestroy failed"):
        lib.graph_repeat_release(exec_, 0)
    lib.graph_repeat_release(0, 0)


def test_an_older_abi_has_no_repeat(fake):
    """Capped at ABI 4 the library is driven as version 4 was: no repeat."""
    lib = _timerlib.TimerLib(TIMER_LIB, max_abi=4)
    assert lib.abi == 4 and lib.lib_abi >= 5
    assert lib.v4 and lib.has_graph_info and not lib.has_graph_repeat
    with pytest.raises(RuntimeError, match="ABI 4 has no zlbt_graph_repeat"):
        lib.graph_repeat(4, 2)


_CDLL = ctypes.CDLL


class _WithoutRepeat:
    """The real library, claiming ABI 5 or later but lacking the repeat entry points."""

    def __init__(self, path):
        self._lib = _CDLL(path)

    def __getattr__(self, name):
        if name.startswith("zlbt_graph_repeat"):
            raise AttributeError(name)
        return getattr(self._lib, name)


def test_a_library_lacking_the_entry_points_is_version_4(fake, monkeypatch):
    monkeypatch.setattr(_timerlib.ctypes, "CDLL", _WithoutRepeat)
    lib = _timerlib.TimerLib(TIMER_LIB)
    assert (lib.abi, lib.v4, lib.has_graph_repeat) == (4, True, False) and lib.lib_abi >= 5
