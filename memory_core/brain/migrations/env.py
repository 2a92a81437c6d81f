"""Alembic environment: always runs on the connection memory_core hands it.

memory_core opens the connection (with its pragmas and an IMMEDIATE
transaction, so two processes opening a new brain at once migrate it once) and
passes it in ``config.attributes["connection"]``.
"""

from __future__ import annotations

from alembic import context

connection = context.config.attributes.get("connection")
if connection is None:  # pragma: no cover - only reachable from the alembic CLI
    raise RuntimeError("run migrations through `memctl migrate`, not the alembic CLI")

context.configure(connection=connection, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
