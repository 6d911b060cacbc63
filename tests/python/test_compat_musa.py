"""zlbench.compat_musa in a real pytest session (subprocess) over a small
benchmark tree: the pinned guards of pinned files drop on musa with
flag_gems on the mthreads vendor, and nothing else moves."""

import textwrap

from conftest import events, run_pytest

GUARD = "@pytest.mark.skipif(not torch.cuda.is_available(), reason=%r)"

FILES = {
    # pinned file, pinned reason: measured on mthreads
    "test_fft.py": """
        import pytest, torch
        import flag_gems

        %s
        def test_perf_fft():
            assert flag_gems.device
    """ % (GUARD % "CUDA is not available"),
    # pinned file, module-level guard with the pinned reason
    "test_scaled_dot_product_attention_math.py": """
        import pytest, torch
        pytestmark = pytest.mark.skipif(not torch.cuda.is_available(),
                                        reason="CUDA is not available")

        def test_scaled_dot_product_attention_math():
            pass
    """,
    # not pinned: the same guard stays
    "test_top_k_per_row_prefill.py": """
        import pytest, torch

        %s
        def test_top_k_per_row_prefill():
            pass
    """ % (GUARD % "CUDA is not available"),
}


def _tree(tmp_path, files=FILES):
    d = tmp_path / "bench"
    d.mkdir()
    for name, text in files.items():
        (d / name).write_text(textwrap.dedent(text))
    return d


def _run(tmp_path, tree, run_dir, **env):
    base = {"ZLB_RUN_DIR": str(run_dir), "ZLB_BACKEND": "musa", "GEMS_VENDOR": "mthreads",
            "STUB_TORCH_CUDA": "0"}
    base.update(env)
    base = {k: v for k, v in base.items() if v is not None}
    # run_pytest puts the stubs and the fake flag_gems on PYTHONPATH.
    return run_pytest(["-p", "zlbench.compat_musa", "-p", "zlbench.results", "-rs", "-v",
                       str(tree)], env_extra=base)


def _outcomes(run_dir):
    return {e["nodeid"].split("::")[-1]: e["outcome"]
            for e in events(run_dir, "TEST_OUTCOME") if e["when"] in ("call", "setup")
            and (e["outcome"] != "passed" or e["when"] == "call")}


def test_pinned_guards_drop_on_mthreads(tmp_path, run_dir):
    tree = _tree(tmp_path)
    proc = _run(tmp_path, tree, run_dir)
    out = _outcomes(run_dir)
    assert out["test_perf_fft"] == "passed", proc.stdout + proc.stderr
    assert out["test_scaled_dot_product_attention_math"] == "passed"
    assert out["test_top_k_per_row_prefill"] == "skipped"
    dropped = events(run_dir, "COMPAT_UNSKIP")
    assert sorted(e["file"] for e in dropped) == [
        "test_fft.py", "test_scaled_dot_product_attention_math.py"]
    assert all(e["reason"] == "CUDA is not available" for e in dropped)
    (p,) = [e for e in events(run_dir, "PLUGIN") if e["name"] == "zlbench.compat_musa"]
    assert p["status"] == "ready" and "2 skip guard(s) dropped" in p["detail"]


def test_other_vendor_or_backend_touches_nothing(tmp_path, run_dir):
    tree = _tree(tmp_path)
    for env, why in (({"GEMS_VENDOR": "nvidia"}, "vendor nvidia, not mthreads"),
                     ({"ZLB_BACKEND": "cuda"}, "backend cuda, not musa")):
        for f in run_dir.iterdir():
            f.unlink()
        _run(tmp_path, tree, run_dir, **env)
        out = _outcomes(run_dir)
        assert set(out.values()) == {"skipped"}, (env, out)
        assert events(run_dir, "COMPAT_UNSKIP") == []
        (p,) = [e for e in events(run_dir, "PLUGIN") if e["name"] == "zlbench.compat_musa"]
        assert p["status"] == "inactive" and why in p["detail"]


def test_another_reason_in_a_pinned_file_stays_and_is_said(tmp_path, run_dir):
    files = {"test_fft.py": """
        import pytest, torch
        import flag_gems  # noqa: F401  (upstream's conftest imports it for every file)

        @pytest.mark.skipif(not torch.cuda.is_available(), reason="needs cuFFT")
        def test_perf_fft():
            pass
    """}
    tree = _tree(tmp_path, files)
    _run(tmp_path, tree, run_dir)
    assert _outcomes(run_dir) == {"test_perf_fft": "skipped"}
    (w,) = events(run_dir, "WARNING")
    assert "test_fft.py" in w["message"] and "review the pin" in w["message"]
