"""memctl dream and memctl dreams."""

from __future__ import annotations

from typing import Annotated

import typer

import memory_core as mc
from memctl import output as out


def register(app: typer.Typer, state_of: object) -> None:
    """Add the dream commands to ``app``; ``state_of(ctx)`` gives memctl's State."""

    @app.command("dream")
    def dream_cmd(
        ctx: typer.Context,
        dry_run: Annotated[
            bool, typer.Option("--dry-run", help="Plan only: change nothing.")
        ] = False,
        if_due: Annotated[bool, typer.Option("--if-due", help="Only when a pass is due.")] = False,
        enqueue: Annotated[
            bool, typer.Option("--enqueue", help="Send it to the workers (needs Redis).")
        ] = False,
    ) -> None:
        """Run a dream pass: prune, merge, strengthen, derive, compact, re-index."""
        from memory_core.consolidation.dream import dream
        from memory_core.embedders import make_embedder
        from memory_core.schedule import is_due

        state = state_of(ctx)  # type: ignore[operator]
        brain = state.brain()
        settings = state.settings
        if if_due:
            check = is_due(brain, settings)
            if not check.due:
                _emit(
                    state.json,
                    {"status": "not_due", "reason": check.reason},
                    f"not due: {check.reason}",
                )
                return
        if enqueue:
            if not settings.redis_url:
                raise mc.ConfigError(
                    "--enqueue needs REVERIE_REDIS_URL; without it the pass runs here"
                )
            from workers import setup

            setup(settings).actors.dream.send("manual")
            _emit(state.json, {"status": "enqueued"}, "dream pass enqueued")
            return
        report = dream(brain, settings, dry_run=dry_run, embedder=make_embedder(settings))
        doc = report.to_dict()
        if state.json:
            out.emit_json(doc)
            return
        if report.status == "already_running":
            out.console.print("a dream pass is already running; nothing done")
            return
        out.table(
            f"dream pass {report.pass_id} ({report.status}, {doc['duration_s']} s)",
            ["step", "counts", "s"],
            [[s.name, s.counts, f"{s.duration_s:.2f}"] for s in report.steps],
        )
        if report.report_path:
            out.console.print(f"report: {report.report_path}")
        proposals = sum(len(s.proposals) for s in report.steps)
        if proposals:
            out.console.print(f"{proposals} new proposal(s): memctl proposals")

    _register_dreams(app, state_of)


def _register_dreams(app: typer.Typer, state_of: object) -> None:
    """``memctl dreams``: list past passes, and ``dreams undo PASS_ID``."""
    dreams = typer.Typer(
        name="dreams",
        help="Past dream passes; undo what one did unattended.",
        no_args_is_help=False,
    )
    app.add_typer(dreams, name="dreams")

    @dreams.callback(invoke_without_command=True)
    def dreams_cmd(
        ctx: typer.Context,
        limit: Annotated[int, typer.Option(help="How many passes, newest first.")] = 20,
    ) -> None:
        """Past dream passes; alone, list them, newest first."""
        if ctx.invoked_subcommand is not None:
            return
        from memory_core.consolidation.dream import list_passes

        state = state_of(ctx)  # type: ignore[operator]
        passes = list_passes(state.brain(), limit)
        if state.json:
            out.emit_json({"passes": passes})
            return
        if not passes:
            out.console.print("no dream passes yet")
            return
        out.table(
            None,
            ["pass", "started", "status", "s", "counts"],
            [
                [
                    p["pass_id"],
                    out.when(p["started_at"]),
                    p["status"] + (" (undone)" if p.get("undone") else ""),
                    p["duration_s"],
                    _short(p["counts"]),
                ]
                for p in passes
            ],
        )

    @dreams.command("undo")
    def undo_cmd(
        ctx: typer.Context,
        pass_id: Annotated[str, typer.Argument(metavar="PASS_ID", help="The pass's dream_ id.")],
    ) -> None:
        """Reverse what a pass did unattended (exact merges, compaction, insights) as one unit."""
        from memory_core.consolidation.dream import undo_pass

        state = state_of(ctx)  # type: ignore[operator]
        result = undo_pass(state.brain(), pass_id)
        if state.json:
            out.emit_json(result.to_dict())
            return
        out.console.print(
            f"undid {pass_id}: restored {len(result.restored)} trace(s), "
            f"removed {len(result.removed)} it created"
        )


def _short(counts: dict[str, dict[str, int]]) -> str:
    return ", ".join(f"{step}: {c}" for step, c in counts.items() if any(c.values()))


def _emit(as_json: bool, doc: dict[str, str], line: str) -> None:
    if as_json:
        out.emit_json(doc)
    else:
        out.console.print(line)
