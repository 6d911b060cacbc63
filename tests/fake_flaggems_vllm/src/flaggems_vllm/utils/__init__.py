"""flaggems_vllm.utils of the fake."""

from . import shape_utils  # noqa: F401
