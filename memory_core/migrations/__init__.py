"""Alembic migrations of the brain, run by :func:`memory_core.db.migrate`."""
