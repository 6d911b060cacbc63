"""The cost model of the fake tuned kernels (see __init__.py)."""

import math
import os
import signal
import time


def card():
    """The card this process sees (CUDA_VISIBLE_DEVICES as zlb set it), or None."""
    return os.environ.get("CUDA_VISIBLE_DEVICES")


def biased():
    """$FAKE_TUNE_BIAS set (and not 0), or $FAKE_TUNE_BIAS_CARD naming the card
    this process sees (a neighbour's heat on that card only): live tuning
    prefers other configs. On the card $FAKE_BROKEN_CARD names, the process
    dies of SIGSEGV at its first launch; $FAKE_TUNE_SLEEP=<s> makes every
    launch take s seconds of wall time (something to interrupt)."""
    if card() is not None and card() == os.environ.get("FAKE_BROKEN_CARD"):
        os.kill(os.getpid(), signal.SIGSEGV)
    if os.environ.get("FAKE_TUNE_SLEEP"):
        time.sleep(float(os.environ["FAKE_TUNE_SLEEP"]))
    if card() is not None and card() == os.environ.get("FAKE_TUNE_BIAS_CARD"):
        return True
    return os.environ.get("FAKE_TUNE_BIAS", "") not in ("", "0")


def penalty(block, ideal):
    """Extra ns of a launch with BLOCK=block when ideal is the best block."""
    return 300 * abs(int(math.log2(block)) - int(math.log2(ideal)))
