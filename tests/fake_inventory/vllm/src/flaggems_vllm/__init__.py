"""Fake flaggems_vllm package (only its presence matters)."""
