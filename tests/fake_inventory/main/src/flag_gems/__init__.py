"""Fake flag_gems package (only its presence matters)."""
