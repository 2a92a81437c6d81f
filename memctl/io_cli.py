"""memctl export and memctl import."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from memctl import output as out
from memctl.state import state_of
from memory_core.io import (
    EXPORT_FORMATS,
    IMPORT_FORMATS,
    export_brain,
    export_size,
    import_into,
)
from memory_core.runtime import Runtime

MAX_SHOWN_ERRORS = 20


EXIT_PARTLY_IMPORTED = 8  # some rows failed; the rest were imported


def _print_import(doc: dict[str, Any]) -> None:
    facts = f", facts {doc['facts']}" if doc["facts"] else ""
    out.console.print(
        f"imported {doc['imported']}, skipped {doc['skipped']}, "
        f"{len(doc['errors'])} error(s); edges {doc['edges']}{facts}"
    )
    for message in doc["errors"][:MAX_SHOWN_ERRORS]:
        out.console.print(f"[red]error[/red] {message}")
    if len(doc["errors"]) > MAX_SHOWN_ERRORS:
        out.console.print(f"... {len(doc['errors']) - MAX_SHOWN_ERRORS} more (--json lists all)")
    if doc["unembedded"] and doc["embed_enqueued"]:
        out.console.print(f"{doc['unembedded']} imported trace(s) queued for embedding")
    elif doc["unembedded"]:
        out.console.print(
            f"{doc['unembedded']} imported trace(s) lack vectors: a running `memctl up` "
            "embeds them at its next reconcile, or run `memctl embed-backfill`"
        )


def _enqueue_embedding(runtime: Runtime, trace_ids: list[str]) -> bool:
    """With Redis, queue the new traces for the embed workers; embedded mode's
    reconcile (or embed-backfill) picks them up otherwise."""
    settings = runtime.settings
    if not trace_ids or not settings.redis_url or settings.embedder == "none":
        return False
    from reverie import compose

    workers = compose.queue_for(runtime)  # the runtime's jobs go to Redis from now on
    try:
        return runtime.jobs.embed(trace_ids)  # in batches; False when Redis refused them
    finally:
        workers.stop()


def register(app: typer.Typer) -> None:
    """Add the export and import commands to ``app``."""

    @app.command("export")
    def export_cmd(
        ctx: typer.Context,
        fmt: Annotated[str, typer.Argument(metavar="FORMAT", help=", ".join(EXPORT_FORMATS))],
        path: Annotated[Path, typer.Argument(help="A new file (or folder); never overwritten.")],
        include_embeddings: Annotated[
            bool, typer.Option("--include-embeddings", help="JSON: include the vectors.")
        ] = False,
        scope_id: Annotated[
            str | None,
            typer.Option("--scope-id", help="Export this one's memories only (not sqlite)."),
        ] = None,
    ) -> None:
        """Export the brain (or one scope id's memories) to a new file or folder."""
        state = state_of(ctx)
        brain = state.brain()
        total = export_size(brain, fmt, scope_id)
        with out.progress(f"export {fmt}", not state.json, total) as progress:
            doc = export_brain(
                brain,
                fmt,
                path,
                include_embeddings=include_embeddings,
                progress=progress,
                scope_id=scope_id,
            )
        if state.json:
            out.emit_json(doc)
            return
        counts = ", ".join(f"{k} {v}" for k, v in doc.items() if isinstance(v, int))
        out.console.print(f"exported to {doc['path']}: {counts}")
        for r in doc["refused"]:
            out.console.print(f"[yellow]refused[/yellow] {r['id']} ({r['field']}: {r['problem']})")

    @app.command("import")
    def import_cmd(
        ctx: typer.Context,
        fmt: Annotated[str, typer.Argument(metavar="FORMAT", help=", ".join(IMPORT_FORMATS))],
        path: Annotated[Path, typer.Argument(help="The file (or folder) to import.")],
        no_dedup: Annotated[
            bool, typer.Option("--no-dedup", help="Import texts the brain already holds.")
        ] = False,
        scope: Annotated[
            str, typer.Option("--scope", help="With --scope-id: the scope it is of.")
        ] = "user",
        scope_id: Annotated[
            str | None,
            typer.Option("--scope-id", help="Whose the import is: every record goes to it."),
        ] = None,
        extract: Annotated[
            bool,
            typer.Option(
                "--extract", help="Mine the facts of imported conversations, as for posted turns."
            ),
        ] = False,
    ) -> None:
        """Import traces from a file or folder; duplicates are skipped by default.  Rows
        that fail are reported and the rest imported; the exit code then says so (8)."""
        state = state_of(ctx)
        runtime = state.runtime(create=True)
        brain = runtime.brain
        owner = (scope, scope_id) if scope_id is not None else None
        miner = runtime.extract if extract else None
        with out.progress(f"import {fmt}", not state.json) as progress:
            result = import_into(
                brain,
                fmt,
                path,
                dedup=not no_dedup,
                progress=progress,
                owner=owner,
                extract=miner,
            )
        doc = result.to_dict()
        unembedded = doc.pop("unembedded_ids")
        doc["unembedded"] = len(unembedded)
        doc["embed_enqueued"] = _enqueue_embedding(runtime, unembedded)
        if state.json:
            out.emit_json(doc)
        else:
            _print_import(doc)
        if result.errors:
            raise typer.Exit(EXIT_PARTLY_IMPORTED)
