"""The cost model of the fake tuned kernels (see __init__.py)."""

import math
import os


def biased():
    """$FAKE_TUNE_BIAS set (and not 0): live tuning prefers other configs."""
    return os.environ.get("FAKE_TUNE_BIAS", "") not in ("", "0")


def penalty(block, ideal):
    """Extra ns of a launch with BLOCK=block when ideal is the best block."""
    return 300 * abs(int(math.log2(block)) - int(math.log2(ideal)))
