#!/usr/bin/env python3
"""Write the seed corpora of tests/fuzz/corpus/<harness>/ from real files.

Seeds are cut from files zlb meets in practice: the examples/ runs recorded
on an H200, tests/data, the fake checkouts, and FlagGems' own output in
../shared/gpu/samples (copied into the corpus, since a clean clone has no
../shared). Each seed is at most MAX bytes, cut at a line boundary, so
libFuzzer's default input length stays small and its runs fast. Added to
them: the inputs of issue 16's reproducers, which must stay harmless.

    tests/fuzz/make_seeds.py [--samples DIR] [--zlb build/zlb]   (rewrites tests/fuzz/corpus/)

With --zlb, the inventory CSVs zlb writes for tests/fake_inventory are seeds
too, and the Size Detail texts of the examples' rows seed the pyrepr harness.

The corpus is committed; run this again when the formats change.
"""
import argparse
import glob
import hashlib
import json
import os
import shutil
import subprocess
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(REPO, "tests", "fuzz", "corpus")
MAX = 8192

SOURCES = {
    "shapefile": ["examples/shapes/*.yaml", "tests/fake_flaggems*/benchmark/core_shapes.yaml",
                  "examples/ab/*/A/r1/*/shapes.yaml", "@samples/shapes.yaml"],
    "results": ["examples/ab/*/A/r1/*/results.jsonl", "examples/ab/*/B/r1/*/events.jsonl",
                "tests/data/summary/batch/main/*/results.jsonl",
                "tests/data/summary/batch/main/*/events.jsonl",
                "tests/data/summary/old_batch/*/*/results.jsonl"],
    "identity": ["examples/ab/*/A/r1/*/run_identity.json",
                 "tests/data/summary/batch/main/*/run_identity.json",
                 "tests/data/summary/old_batch/*/*/run_identity.json"],
    "autotune_record": ["examples/ab/*/A/r1/*/autotune_records/*.json"],
    "table": ["@samples/*.log", "examples/ab/*/A/r1/*/run.log", "tests/data/table/*"],
    "ir_index": ["examples/ab/*/A/r1/*/ttgir/index.tsv", "tests/data/ir/**/index.tsv"],
    "ops_csv": ["tests/data/summary/*/ops_status.csv", "examples/ab/*/compare.csv",
                "tests/fake_inventory/**/*.csv"],
    "opspec": ["tests/fake_inventory/**/*.txt"],
    "dismiss": ["tests/fake_inventory/**/*dismiss*"],
    "scanner": ["tests/fake_flaggems/benchmark/test_*.py", "tests/fake_flaggems_batch/*.py",
                "tests/fake_inventory/**/test_*.py"],
    "pyrepr": [],
}

# What no file holds but a harness must see: issue 16's reproducers, and
# the small cases of each syntax.
EXTRA = {
    "shapefile": {
        "merge_bomb.yaml": "m0: &m0 {x: 1}\n" + "".join(
            "m%d: &m%d\n  <<: [%s]\n" % (k, k, ", ".join(["*m%d" % (k - 1)] * 20))
            for k in range(1, 9)) + "softmax:\n  <<: *m8\n  shapes: [[1]]\n",
        "deep.yaml": "softmax: " + "[" * 3000 + "]" * 3000 + "\n",
        "dup.yaml": "softmax:\n  shapes: [[1]]\nsoftmax:\n  shapes: [[2]]\n",
        "docs.yaml": "softmax:\n  shapes: [[1]]\n---\nmm: {shapes: [[1]]}\n",
        "tag.yaml": "softmax:\n  shapes: !!python/tuple [[1]]\n",
        "dims.yaml": "softmax:\n  shapes: [[abc, 1e400], [0, 0], [-1, 4], [010, 0x10, 1:30]]\n",
        "recursive.yaml": "a: &a [*a]\n",
    },
    "results": {"cut.jsonl": '{"kind": "row", "op": "softmax", "gems": {"samples_ms": [1.0, 2'},
    "autotune_record": {
        "deep.json": '{"schema_version": 1, "kernels": [' + "[" * 500 + "]" * 500 + "]}"},
    "ir_index": {"escape.tsv": "shape\tkernel\tvariant\tdtype\tlaunches\thash\tsweep_loser\t"
                 "files\n1x1\tk\tw4s3\tfp16\t1\tabc\tno\t../../../../etc/passwd.ttgir\n"},
    "opspec": {"long.txt": "a" * 120 + "@" + "b" * 100, "ops.txt": "# ops\nsoftmax\n"
               "vllm:fused_marlin_moe\nnextafter_@nextafter_\nmm@blas/test-mm\n"},
    "dismiss": {"dismiss.txt": "# known\nb_hang  hangs until killed\nvllm:mm@mm  slow\n"},
    "scanner": {"def_benchmark.py": "def test_fooBenchmark():\n    pass\n"},
    "pyrepr": {"size.txt": "[torch.Size([1024, 1024]), 1]",
               "dict.txt": "{'dim': 1, 'keepdim': True, 'out': (torch.Size([4]),)}",
               "nested.txt": "[[32, 384, 128], 1, False]", "str.txt": "'a, \\'b\\''"},
}


def cut(data):
    if len(data) <= MAX:
        return data
    nl = data.rfind(b"\n", 0, MAX)
    return data[:nl + 1] if nl > 0 else data[:MAX]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", default=os.path.join(REPO, "..", "shared", "gpu", "samples"))
    ap.add_argument("--zlb", help="a built zlb, for the inventory seeds")
    args = ap.parse_args()
    shutil.rmtree(OUT, ignore_errors=True)
    for name, patterns in SOURCES.items():
        d = os.path.join(OUT, name)
        os.makedirs(d)
        for pat in patterns:
            pat = pat.replace("@samples", args.samples) if pat.startswith("@") else \
                os.path.join(REPO, pat)
            for path in sorted(glob.glob(pat, recursive=True)):
                data = cut(open(path, "rb").read())
                seed = hashlib.sha1(data).hexdigest()[:12] + "-" + os.path.basename(path)
                open(os.path.join(d, seed), "wb").write(data)
        if name == "pyrepr":
            details = set()
            for path in glob.glob(os.path.join(REPO, "examples/ab/*/*/r1/*/results.jsonl")):
                for line in open(path):
                    try:
                        details.add(json.loads(line).get("shape_detail") or "")
                    except ValueError:
                        pass
            for text in sorted(details - {""})[:24]:
                data = text.encode()
                open(os.path.join(d, hashlib.sha1(data).hexdigest()[:12] + "-detail"),
                     "wb").write(data)
        if name == "ops_csv" and args.zlb:
            with tempfile.TemporaryDirectory() as tmp:
                subprocess.run([args.zlb, "inventory", "--no-verify", "--flaggems-dir",
                                os.path.join(REPO, "tests/fake_inventory/main"), "--out", tmp],
                               check=True, capture_output=True)
                for path in sorted(glob.glob(os.path.join(tmp, "*.csv"))):
                    data = cut(open(path, "rb").read())
                    open(os.path.join(d, "zlb-" + os.path.basename(path)), "wb").write(data)
        for seed, text in EXTRA.get(name, {}).items():
            open(os.path.join(d, "issue16-" + seed), "wb").write(text.encode())
        print(name, len(os.listdir(d)))


if __name__ == "__main__":
    main()
