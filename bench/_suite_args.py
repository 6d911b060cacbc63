"""The arguments every bench that runs zlb over real FlagGems operators takes
(worker_mode.py, tune_rule.py): which zlb, which checkout, which operators
and dtypes, and where the bench keeps its state."""
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def add_suite_args(ap, work):
    """Add --zlb, --flaggems-dir, --ops, --dtypes and --work (default work) to ap."""
    ap.add_argument("--zlb", default=str(REPO / "build" / "zlb"))
    ap.add_argument("--flaggems-dir", required=True)
    ap.add_argument("--ops", nargs="+", required=True)
    ap.add_argument("--dtypes", default="float16")
    ap.add_argument("--work", default=work)
