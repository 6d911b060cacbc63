"""torch.nn of the stub."""

from . import functional  # noqa: F401
