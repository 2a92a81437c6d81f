"""Benchmarks for Reverie, with their data loaders."""
