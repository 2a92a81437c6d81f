"""memctl dream and memctl dreams."""

from __future__ import annotations

from typing import Annotated

import typer

import memory_core as mc
from memctl import output as out
from memctl.state import state_of


def register(app: typer.Typer) -> None:
    """Add the dream commands to ``app``."""

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
        """Run a dream pass: prune, merge, resolve, strengthen, derive, compact, re-index."""
        from memory_core.consolidation.dream import dream
        from memory_core.consolidation.due import is_due

        state = state_of(ctx)
        runtime = state.runtime()
        brain, settings = runtime.brain, runtime.settings
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
            from reverie import compose

            workers = compose.queue_for(runtime)
            try:
                workers.sender().dream("manual", None)
            finally:
                workers.stop()
            _emit(state.json, {"status": "enqueued"}, "dream pass enqueued")
            return
        from memory_core.consolidation.dream import STEPS

        with out.progress("dream pass", not state.json, len(STEPS)) as advance:
            report = dream(
                brain,
                settings,
                dry_run=dry_run,
                embedder=runtime.embedder(),
                on_step=(lambda _: advance(1)) if advance is not None else None,
            )
        doc = report.to_dict()
        if state.json:
            out.emit_json(doc)
            return
        if report.status == "already_running":
            out.console.print("a dream pass is already running; nothing done")
            return
        out.table(
            f"dream pass {report.pass_id} ({report.status}, {doc['duration_s']} s)",
            ["step", "what it did", "took"],
            [[s.name, _said(s.counts), f"{s.duration_s:.2f}s"] for s in report.steps],
            numeric=(2,),
        )
        if report.report_path:
            out.console.print(f"report: {settings.data_dir / report.report_path}")
        proposals = sum(len(s.proposals) for s in report.steps)
        if proposals:
            out.console.print(f"{proposals} new proposal(s): memctl proposals")

    _register_dreams(app)


def _register_dreams(app: typer.Typer) -> None:
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

        state = state_of(ctx)
        passes = list_passes(state.brain(), limit, identity=mc.OPEN)
        if state.json:
            out.emit_json({"passes": passes})
            return
        if not passes:
            out.console.print("no dream passes yet")
            return
        out.table(
            None,
            ["pass", "status", "took", *(name for name, _ in _COLUMNS)],
            [
                [
                    p["pass_id"],
                    p["status"] + (" (undone)" if p.get("undone") else ""),
                    f"{p['duration_s']:.2f}s",
                    *(_count(p["counts"], keys) for _, keys in _COLUMNS),
                ]
                for p in passes
            ],
            numeric=range(2, 3 + len(_COLUMNS)),
            whole=(0,),
            dense=True,
        )

    @dreams.command("undo")
    def undo_cmd(
        ctx: typer.Context,
        pass_id: Annotated[str, typer.Argument(metavar="PASS_ID", help="The pass's dream_ id.")],
    ) -> None:
        """Reverse what a pass did unattended (exact merges, compaction, insights) as one unit."""
        from memory_core.consolidation.dream import undo_pass

        state = state_of(ctx)
        result = undo_pass(state.brain(), pass_id, identity=mc.OPEN)
        if state.json:
            out.emit_json(result.to_dict())
            return
        out.console.print(
            f"undid {pass_id}: restored {len(result.restored)} trace(s), "
            f"removed {len(result.removed)} it created"
        )


# The columns of `memctl dreams`: what a pass did, each the sum of these counts.
_COLUMNS = (
    ("proposed", (("prune", "proposed"), ("merge", "proposed"), ("resolve", "proposed"))),
    ("merged", (("merge", "merged"),)),
    ("superseded", (("resolve", "superseded"),)),
    ("linked", (("strengthen", "edges"),)),
    ("derived", (("derive", "derived"),)),
    ("compacted", (("compact", "compacted"),)),
)


def _said(counts: dict[str, int]) -> str:
    """A step's counts as words, the zeros left out: "merged 2, proposed 1"."""
    done = [f"{name.replace('_', ' ')} {n}" for name, n in counts.items() if n]
    return ", ".join(done) or "-"


def _count(counts: dict[str, dict[str, int]], keys: tuple[tuple[str, str], ...]) -> str:
    total = sum(int(counts.get(step, {}).get(name, 0)) for step, name in keys)
    return str(total) if total else "-"


def _emit(as_json: bool, doc: dict[str, str], line: str) -> None:
    if as_json:
        out.emit_json(doc)
    else:
        out.console.print(line)
