"""flag_gems.utils of the fake."""

from . import shape_utils  # noqa: F401
