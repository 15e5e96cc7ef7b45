"""Fakes for tests and benchmarks: local servers that speak real protocols, and in-memory ports."""
