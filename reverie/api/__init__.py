"""The thin HTTP API over memory_core."""
