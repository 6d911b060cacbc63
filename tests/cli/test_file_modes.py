"""The modes of what a run writes do not depend on which side wrote it (issue 16
row 18): under umask 000 the C side made 0644/0755 while the plugins made
0666/0777 (Python's defaults), so results.jsonl, events.jsonl, ir/ and
autotune_records/ were writable by anyone."""
import os
import stat


def test_umask_000_leaves_nothing_writable_by_others(zlb):
    old = os.umask(0)
    try:
        r = zlb.run("tuned_scale", "--dtypes", "float16")
    finally:
        os.umask(old)
    assert r.rc == 0, r
    run = r.run_dir
    seen = {p.relative_to(run).parts[0] for p in run.rglob("*")}
    assert {"results.jsonl", "events.jsonl", "ir", "autotune_records",
            "run_identity.json", "run.log"} <= seen, seen
    bad = []
    for p in [run, *run.rglob("*")]:
        st = p.lstat()
        want = 0o755 if stat.S_ISDIR(st.st_mode) else 0o644
        if stat.S_IMODE(st.st_mode) != want:
            bad.append((str(p.relative_to(run)), oct(stat.S_IMODE(st.st_mode))))
    assert not bad, bad
