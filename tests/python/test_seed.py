"""zlbench.seed: same seed, same inputs."""

import random

import pytest

from zlbench import seed


def inputs(fake_bench, torch):
    """What FlagGems would build for two shapes, lazily, as run() does."""
    b = fake_bench.BinaryPointwiseBenchmark(op_name="add", torch_op=torch.add)
    b.shapes = [(64, 64), (1024,)]
    out = []
    for dtype in (torch.float16, torch.int32):
        for a, c in b.get_input_iter(dtype):
            out.append((a, c))
    return out


def fingerprints(pairs):
    return [(a._fp, c._fp) for a, c in pairs]


def test_same_seed_same_inputs(fake_bench, stub_torch, run_dir, monkeypatch):
    torch = stub_torch
    monkeypatch.setenv("ZLB_SEED", "1234")
    seed.pytest_runtest_call(None)
    first = inputs(fake_bench, torch)
    r1 = random.random()
    torch.randn(3, device="cuda")              # the run moves the generators on
    seed.pytest_runtest_call(None)
    second = inputs(fake_bench, torch)
    assert random.random() == r1
    assert all(torch.equal(a, b) and torch.equal(c, d)
               for (a, c), (b, d) in zip(first, second))
    assert len(set(fingerprints(first))) == len(first)     # inputs differ among themselves
    monkeypatch.setenv("ZLB_SEED", "1235")
    seed.pytest_runtest_call(None)
    third = inputs(fake_bench, torch)
    assert fingerprints(third) != fingerprints(first)


def test_seeds_every_generator_there_is(stub_torch):
    done = seed.seed_all(7)
    assert done[0] == "random" and "torch" in done and "torch.cuda" in done
    assert stub_torch.cuda.default_generators[0].initial_seed() == 7
    assert stub_torch.default_generator.initial_seed() == 7


def test_without_run_dir_the_hook_does_nothing(stub_torch):
    stub_torch.manual_seed(99)
    seed.pytest_runtest_call(None)
    assert stub_torch.default_generator.initial_seed() == 99


def test_a_poisoned_cuda_generator_fails_loudly(stub_torch, run_dir):
    stub_torch.cuda.default_generators[0]._state.capturing = True   # left by a bad capture
    with pytest.raises(RuntimeError, match="Offset increment outside graph capture"):
        seed.pytest_runtest_call(None)
