"""Test helpers that ship with the package so tests and benchmarks share them (stdlib only)."""
