"""Alembic migrations of the brain, run by :func:`memory_core.brain.db.migrate`."""
