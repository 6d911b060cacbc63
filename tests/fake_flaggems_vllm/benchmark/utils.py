"""Helpers shared by fake benchmark modules (upstream has benchmark/utils.py)."""

from .base import generate_tensor_input  # noqa: F401
