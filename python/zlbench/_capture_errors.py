"""How zlbench.timing reads a failed capture: the exact texts it is matched
against (ZLB_CAPTURE_FATAL, ZLB_CAPTURE_POISON) are looked for in the error
and in every error that led to it, and its one-line reason is the first
cause's. Apart from timing.py, which decides what a match means."""

from . import _graph, _io

def _chain(e):
    seen = []
    while e is not None and all(e is not x for x in seen):
        seen.append(e)
        e = e.__cause__ or e.__context__
    return seen


def fatal_text(error, texts):
    """(the first of texts found verbatim in the error or in what led to it,
    the exception holding it), or (None, None)."""
    chain = _chain(error)
    for t in texts:
        for x in chain:
            if t in str(x):
                return t, x
    return None, None


def reason(error):
    """One line: the first non-empty line of the error that started it."""
    if isinstance(error, str):
        return _io.one_line(error)
    return _io.first_line(_graph.first_cause(error))
