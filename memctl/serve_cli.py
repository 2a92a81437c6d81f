"""memctl's long-running and maintenance commands: up, api, worker, scheduler,
reconcile, embed-backfill."""

from __future__ import annotations

from typing import Annotated

import typer

from memctl import output as out
from memctl.state import state_of
from reverie import compose

Host = Annotated[str | None, typer.Option(help="Address to bind (default 127.0.0.1).")]
Port = Annotated[int | None, typer.Option(help="Port to bind (default 8420).")]


def register(app: typer.Typer) -> None:
    """Add the commands to ``app``."""

    @app.command()
    def up(
        ctx: typer.Context,
        host: Host = None,
        port: Port = None,
    ) -> None:
        """Run Reverie: API, workers and scheduler in one process (with Redis: the API only)."""
        state = state_of(ctx)
        settings = state.settings
        compose.up(settings, host or settings.api_host, port or settings.api_port)

    @app.command()
    def api(
        ctx: typer.Context,
        host: Host = None,
        port: Port = None,
    ) -> None:
        """Run the HTTP API alone (needs REVERIE_REDIS_URL; workers run separately)."""
        state = state_of(ctx)
        settings = state.settings
        compose.api(settings, host or settings.api_host, port or settings.api_port)

    @app.command()
    def worker(
        ctx: typer.Context,
        processes: Annotated[int, typer.Option(help="Worker processes.")] = 2,
        threads: Annotated[int, typer.Option(help="Threads per process.")] = 4,
    ) -> None:
        """Run dramatiq worker processes on Redis (supervise them: a dead one stops the group)."""
        state = state_of(ctx)
        compose.worker(state.settings, processes, threads)

    @app.command()
    def scheduler(ctx: typer.Context) -> None:
        """Fire dream passes and reconcile sweeps on Redis workers until SIGTERM (one per brain)."""
        state = state_of(ctx)
        compose.scheduler(state.settings)

    @app.command()
    def reconcile(ctx: typer.Context) -> None:
        """Re-enqueue pending turns and traces lacking embeddings (embedded: do them now)."""
        from memctl import jobs

        state = state_of(ctx)
        doc = jobs.reconcile_now(state.runtime())
        if state.json:
            out.emit_json(doc)
        else:
            out.console.print(", ".join(f"{k}: {v}" for k, v in doc.items()))

    @app.command("embed-backfill")
    def embed_backfill(ctx: typer.Context) -> None:
        """Embed every active trace that lacks a vector for the configured model."""
        from memctl import jobs

        state = state_of(ctx)
        doc = jobs.embed_backfill(state.runtime(), show_progress=not state.json)
        if state.json:
            out.emit_json(doc)
        else:
            out.console.print(f"embedded {doc['embedded']} traces with {doc['model']}")
