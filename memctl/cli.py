"""memctl commands: each parses its options, calls memory_core once, prints.

Errors are one line on stderr and a non-zero exit code (see EXIT_CODES);
never a traceback.  ``--json`` makes every command print one JSON document.
"""

from __future__ import annotations

import logging
import sys
from importlib import metadata
from typing import Annotated, Any

import typer

import memory_core as mc
from memctl import dream_cli, io_cli, mcp_cli, serve_cli, setup_cli
from memctl import output as out
from memctl.proposals_cli import app as proposals_app
from memctl.state import State, state_of
from memctl.token_cli import app as token_app
from memory_core.brain import copy as brain_copy
from memory_core.brain import maintenance
from memory_core.logs import configure_logging

log = logging.getLogger("memctl")

EXIT_CODES: dict[type[mc.ReverieError], int] = {
    mc.InvalidArgument: 2,
    mc.ConfigError: 2,
    mc.BrainNotFound: 3,
    mc.BrainError: 3,
    mc.NotFound: 4,
    mc.Conflict: 5,
    mc.NotEnabled: 6,
    mc.Unauthorized: 7,
    mc.Forbidden: 7,
    mc.AddressUnavailable: 9,
}

app = typer.Typer(
    name="memctl",
    help="Operate a Reverie brain: add, search, inspect and check memory.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(proposals_app, name="proposals")
app.add_typer(token_app, name="token")


def _tags(value: str | None) -> list[str] | None:
    if value is None:
        return None
    return [t.strip() for t in value.split(",") if t.strip()]


def _print_version(wanted: bool) -> None:
    if wanted:
        typer.echo(f"reverie {metadata.version('reverie')}")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    brain: Annotated[
        str | None, typer.Option("--brain", help="Brain URL (default: REVERIE_BRAIN_URL).")
    ] = None,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print one JSON document instead of text.")
    ] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Say which brain is in use, on stderr.")
    ] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version."
        ),
    ] = False,
) -> None:
    """Operate a Reverie brain: add, search, inspect and check memory."""
    settings = mc.load_settings()
    configure_logging(settings)
    if brain:
        settings = settings.model_copy(update={"brain_url": brain})
    if verbose:
        out.note(f"brain {settings.brain_url} (home {settings.home}, from {settings.home_source})")
    elif settings.home_source == "./reverie-data" and not brain:
        out.note(
            f"using the brain in {settings.home} (the former default folder); "
            "set REVERIE_HOME to choose another"
        )
    ctx.obj = State(settings, json_out)
    ctx.call_on_close(ctx.obj.close)


@app.command()
def migrate(ctx: typer.Context) -> None:
    """Create the brain if needed and bring its schema up to date."""
    state = state_of(ctx)
    brain = state.brain(create=True)
    info = {
        "brain": str(brain.path),
        "brain_id": brain.brain_id,
        "revision": maintenance.stats(brain)["schema_revision"],
    }
    if state.json:
        out.emit_json(info)
    else:
        out.console.print(f"brain {info['brain']} at schema revision {info['revision']}")


@app.command()
def add(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(help="The content to remember.")],
    type_: Annotated[
        str,
        typer.Option("--type", help="episodic, semantic, procedural, prospective or relational."),
    ] = "episodic",
    scope: Annotated[str, typer.Option(help="thread, user, persona or organization.")] = "user",
    scope_id: Annotated[str | None, typer.Option("--scope-id", help="Id within the scope.")] = None,
    tags: Annotated[str | None, typer.Option(help="Comma-separated tags.")] = None,
) -> None:
    """Store a memory trace."""
    state = state_of(ctx)
    brain = state.brain(create=True)
    trace_id = mc.add_trace(
        brain,
        text,
        type=type_,
        scope=scope,
        scope_id=scope_id,
        tags=_tags(tags) or [],
        identity=mc.OPEN,
    )
    if state.json:
        out.emit_json({"traceId": trace_id})
    else:
        out.console.print(trace_id)


@app.command()
def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="FTS5 syntax or plain words.")],
    type_: Annotated[str | None, typer.Option("--type", help="Only this type.")] = None,
    scope: Annotated[str | None, typer.Option(help="Only this scope.")] = None,
    scope_id: Annotated[str | None, typer.Option("--scope-id", help="Only this scope id.")] = None,
    tags: Annotated[str | None, typer.Option(help="Only traces with all these tags.")] = None,
    tags_expr: Annotated[
        str | None,
        typer.Option(
            "--tags-expr",
            help="Only traces passing this tag expression: a & (b | /^c/) & !d, key=value, "
            "mutex(a, b), @named.",
        ),
    ] = None,
    limit: Annotated[int, typer.Option(help="How many results, 1 to 100.")] = 10,
    min_score: Annotated[
        float | None,
        typer.Option("--min-score", help="Leave out hits of lower relevance (0 to 1)."),
    ] = None,
    as_of: Annotated[
        str | None,
        typer.Option("--as-of", help="What was valid then (ISO 8601 time or epoch seconds)."),
    ] = None,
) -> None:
    """Search memory, best match first."""
    state = state_of(ctx)
    runtime = state.runtime()
    response = mc.search(
        runtime.brain,
        query,
        type=type_,
        scope=scope,
        scope_id=scope_id,
        tags=_tags(tags),
        limit=limit,
        min_score=min_score,
        as_of=mc.parse_time(as_of, "--as-of"),
        identity=mc.OPEN,
        embedder=runtime.query_embedder,
        reranker=runtime.reranker(),
        tags_expr=tags_expr,
    )
    for channel in response.degraded:
        out.warn(f"searched without {channel}: it did not answer")
    if state.json:
        out.emit_json(response.to_dict())
        return
    if not response.results:
        out.console.print("no matches")
        return
    out.table(
        f"{len(response.results)} result(s) ({response.mode} query: {response.fts_query})",
        ["#", "id", "score", "type", "scope", "content"],
        [
            [
                i,
                h.trace.id,
                f"{h.score:.3f}",
                h.trace.type,
                h.trace.scope,
                out.shorten(h.trace.content),
            ]
            for i, h in enumerate(response.results, 1)
        ],
    )


@app.command()
def show(ctx: typer.Context, trace_id: Annotated[str, typer.Argument(metavar="ID")]) -> None:
    """Show one trace in full (deleted ones too, marked as such)."""
    state = state_of(ctx)
    trace = mc.get_trace(state.brain(), trace_id, include_deleted=True, identity=mc.OPEN)
    doc = trace.to_dict()
    if state.json:
        out.emit_json(doc)
        return
    for key, value in doc.items():
        shown = out.when(value) if key.endswith("_at") or key == "last_accessed" else value
        out.console.print(f"[bold]{key}[/bold]: {shown}")


@app.command()
def update(
    ctx: typer.Context,
    trace_id: Annotated[str, typer.Argument(metavar="ID")],
    content: Annotated[str | None, typer.Option(help="New content.")] = None,
    tags: Annotated[str | None, typer.Option(help="New comma-separated tags.")] = None,
) -> None:
    """Replace a trace's content and/or tags."""
    state = state_of(ctx)
    if content is None and tags is None:
        raise mc.InvalidArgument("nothing to update: give --content and/or --tags")
    trace = mc.update_trace(
        state.brain(), trace_id, content=content, tags=_tags(tags), identity=mc.OPEN
    )
    if state.json:
        out.emit_json({"updated": True, "trace": trace.to_dict()})
    else:
        out.console.print(f"updated {trace_id}")


@app.command()
def delete(ctx: typer.Context, trace_id: Annotated[str, typer.Argument(metavar="ID")]) -> None:
    """Soft-delete a trace (kept for audit, never shown by search)."""
    state = state_of(ctx)
    mc.delete_trace(state.brain(), trace_id, identity=mc.OPEN)
    if state.json:
        out.emit_json({"deleted": True, "traceId": trace_id})
    else:
        out.console.print(f"deleted {trace_id}")


@app.command("undo-supersession")
def undo_supersession(
    ctx: typer.Context, trace_id: Annotated[str, typer.Argument(metavar="ID")]
) -> None:
    """Make a memory a later one superseded wrongly current again; the same later one
    never supersedes it again."""
    state = state_of(ctx)
    trace = mc.undo_supersession(state.brain(), trace_id, identity=mc.OPEN)
    if state.json:
        out.emit_json({"undone": True, "trace": trace.to_dict()})
    else:
        out.console.print(f"current again: {trace_id}")


@app.command()
def forget(
    ctx: typer.Context,
    scope_id: Annotated[str, typer.Option("--scope-id", help="The scope id to forget.")],
    scope: Annotated[
        str | None, typer.Option("--scope", help="Only traces of this scope (default: any).")
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
) -> None:
    """Forget everything of one scope id for good: not undoable (a right-to-be-forgotten
    request).  Asks first on a terminal; elsewhere (a script, --json) only --yes confirms
    it."""
    from memory_core.forget import forget_scope_id

    state = state_of(ctx)
    if not yes and (state.json or not sys.stdin.isatty()):
        raise mc.InvalidArgument(
            "forgetting cannot be undone: add --yes to confirm (there is no terminal to ask on)"
        )
    brain = state.brain()
    if not yes:
        page = mc.list_traces(brain, scope=scope, scope_id=scope_id, limit=1, identity=mc.OPEN)
        held = "some memories" if page.traces else "no active memory"
        question = (
            f"Forget everything of scope id {scope_id!r} ({held}, deleted ones and turns too)? "
            "This cannot be undone."
        )
        if not typer.confirm(question, default=False):
            raise typer.Exit(1)
    forgotten = forget_scope_id(brain, state.settings, scope_id, scope=scope, identity=mc.OPEN)
    if state.json:
        out.emit_json(forgotten.to_dict())
    else:
        out.console.print(
            f"forgot {scope_id}: {forgotten.traces} traces, {forgotten.vectors} vectors, "
            f"{forgotten.turns} turns, {forgotten.edges} edges, {forgotten.proposals} proposals"
        )


@app.command()
def restore(ctx: typer.Context, trace_id: Annotated[str, typer.Argument(metavar="ID")]) -> None:
    """Undelete one trace (pruned, merged away or deleted), its vectors back with it."""
    from memory_core.traces.undo import restore_trace

    state = state_of(ctx)
    restore_trace(state.brain(), trace_id)
    if state.json:
        out.emit_json({"restored": True, "traceId": trace_id})
    else:
        out.console.print(f"restored {trace_id}")


@app.command()
def merge(
    ctx: typer.Context,
    trace_ids: Annotated[list[str], typer.Argument(metavar="ID ID...")],
    content: Annotated[str | None, typer.Option(help="Content of the merged trace.")] = None,
) -> None:
    """Merge traces into the most-retrieved one; the others are soft-deleted."""
    state = state_of(ctx)
    result = mc.merge_traces(state.brain(), trace_ids, merged_content=content, identity=mc.OPEN)
    if state.json:
        out.emit_json({"survivorId": result.survivor_id, "deletedIds": result.deleted_ids})
    else:
        out.console.print(
            f"merged into {result.survivor_id}; deleted {', '.join(result.deleted_ids)}"
        )


@app.command()
def stats(ctx: typer.Context) -> None:
    """Counts by type, scope and deletion; file sizes."""
    state = state_of(ctx)
    doc = maintenance.stats(state.brain())
    if state.json:
        out.emit_json(doc)
        return
    t = doc["traces"]
    out.console.print(f"brain {doc['brain']} ({doc['brain_id']}), schema {doc['schema_revision']}")
    out.console.print(f"traces: {t['active']} active, {t['deleted']} deleted")
    out.table("by type", ["type", "traces"], [[k, v] for k, v in t["by_type"].items()])
    out.table("by scope", ["scope", "traces"], [[k, v] for k, v in t["by_scope"].items()])
    out.console.print(
        f"embedded: {doc['embeddings']['active_traces_embedded']}; inbox: {doc['inbox'] or 'empty'}"
    )
    out.console.print("files: " + ", ".join(f"{k} {v:,} B" for k, v in doc["files"].items()))


@app.command()
def doctor(ctx: typer.Context) -> None:
    """Check integrity, index consistency and orphan rows; exit 1 on any problem."""
    state = state_of(ctx)
    problems = maintenance.doctor(state.brain())
    if state.json:
        out.emit_json({"ok": not problems, "problems": [p.to_dict() for p in problems]})
    elif problems:
        for p in problems:
            out.console.print(f"[red]problem[/red] {p.check}: {p.detail}")
    else:
        out.console.print("brain is healthy")
    if problems:
        raise typer.Exit(1)


@app.command("copy")
def copy_cmd(
    ctx: typer.Context,
    source: Annotated[str, typer.Argument(metavar="SOURCE_URL", help="The brain to copy.")],
    target: Annotated[
        str, typer.Argument(metavar="TARGET_URL", help="An empty brain, made when missing.")
    ],
) -> None:
    """Copy a brain to another backend (sqlite:///FILE, postgresql+psycopg://HOST/DB):
    traces, vectors, edges, proposals' ledger, tokens and history.  Cut off, run it
    again to go on where it stopped."""
    state = state_of(ctx)
    src = mc.open_brain(state.settings, url=source, create=False)
    try:
        dst = mc.open_brain(state.settings, url=target, create=True)
        try:
            total = sum(brain_copy.sizes(src).values())
            seen: dict[str, int] = {}
            with out.progress("copy", not state.json, total) as advance:

                def step(table: str, done: int, _rows: int) -> None:
                    if advance is not None:
                        advance(done - seen.get(table, 0))
                    seen[table] = done

                result = brain_copy.copy_brain(src, dst, progress=step)
        finally:
            dst.close()
    finally:
        src.close()
    doc = {
        "source": result.source,
        "target": result.target,
        "resumed": result.resumed,
        "copied": result.rows,
        "brain_id": src.brain_id,
    }
    if state.json:
        out.emit_json(doc)
        return
    moved = sum(result.rows.values())
    again = " (resumed)" if result.resumed else ""
    out.console.print(f"copied {moved} rows{again} from {result.source} to {result.target}")


@app.command()
def reindex(ctx: typer.Context) -> None:
    """Rebuild the full-text index from the traces."""
    state = state_of(ctx)
    maintenance.rebuild_fts(state.brain())
    if state.json:
        out.emit_json({"reindexed": True})
    else:
        out.console.print("full-text index rebuilt")


@app.command("settings")
def show_settings(ctx: typer.Context) -> None:
    """Every setting: its environment name, current value and meaning (keys redacted)."""
    state = state_of(ctx)
    rows = []
    for name, field in mc.Settings.model_fields.items():
        value = getattr(state.settings, name)
        if name.endswith("api_key") and value:
            value = "***"
        rows.append(
            {
                "env": f"REVERIE_{name.upper()}",
                "value": value,
                "description": field.description or "",
            }
        )
    if state.json:
        out.emit_json({"settings": rows})
    else:
        out.table(
            None,
            ["setting", "value", "meaning"],
            [[r["env"], r["value"], r["description"]] for r in rows],
        )


@app.command()
def demo(ctx: typer.Context) -> None:
    """An offline tour on a temporary brain: adds, searches, merges."""
    from memctl.demo import run_demo

    state = state_of(ctx)
    run_demo(state.settings, as_json=state.json)


dream_cli.register(app)
serve_cli.register(app)
io_cli.register(app)
mcp_cli.register(app)
setup_cli.register(app)


def json_anywhere(args: list[str]) -> list[str]:
    """``--json`` is memctl's own option wherever it is written (``memctl search x --json``):
    moved before the command, unless it follows ``--`` (then it is an argument)."""
    stop = args.index("--") if "--" in args else len(args)
    if "--json" not in args[:stop]:
        return args
    return ["--json", *(a for a in args[:stop] if a != "--json"), *args[stop:]]


def main(argv: list[str] | None = None) -> Any:
    """Console entry point: maps every error to one line and an exit code."""
    try:
        return app(args=json_anywhere(sys.argv[1:] if argv is None else argv), standalone_mode=True)
    except mc.ReverieError as e:
        out.error_line(str(e))
        sys.exit(next((c for k, c in EXIT_CODES.items() if isinstance(e, k)), 1))
    except KeyboardInterrupt:
        out.error_line("interrupted")
        sys.exit(130)
    except Exception as e:  # process boundary: one line, traceback to the debug log
        log.debug("unexpected error", exc_info=True)
        out.error_line(f"unexpected {type(e).__name__}: {e} (REVERIE_LOG_LEVEL=DEBUG shows more)")
        sys.exit(1)
