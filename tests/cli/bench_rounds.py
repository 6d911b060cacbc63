"""What the tests of the bench/ scripts that read rounds share: a round
(batch directory) written by hand, one row record at a time, where the
scripts find them (ROUND/main/OP/results.jsonl)."""
import json


def write_row(root, op, sides, shape="[1024]", dtype="torch.float16"):
    """Append one row of op to the round at root, sides {side: measurement
    dict}; returns root."""
    d = root / "main" / op
    d.mkdir(parents=True, exist_ok=True)
    rec = {"kind": "row", "op": op, "shape_detail": shape, "dtype": dtype, **sides}
    with open(d / "results.jsonl", "a") as f:
        f.write(json.dumps(rec) + "\n")
    return root
