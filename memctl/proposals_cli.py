"""``memctl proposals``: review what dream passes propose to delete or merge.

Each command parses its arguments, calls :mod:`memory_core.proposals` once and
prints.  A refused accept (stale, edited, already decided) prints one line per
proposal on stderr and exits 5; the rest of the request is still carried out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from memctl import output as out
from memory_core import proposals
from memory_core.errors import InvalidArgument

if TYPE_CHECKING:
    from memctl.cli import State

EXIT_REFUSED = 5

app = typer.Typer(
    name="proposals",
    help="Review what dream passes propose to delete or merge: list, show, accept, reject.",
    no_args_is_help=False,
)


def _state(ctx: typer.Context) -> State:
    from memctl.cli import state_of  # at call time: memctl.cli imports this module

    return state_of(ctx)


def _age(seconds: float) -> str:
    seconds = max(seconds, 0.0)
    for unit, size in (("d", 86_400), ("h", 3_600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


@app.callback(invoke_without_command=True)
def list_(
    ctx: typer.Context,
    status: Annotated[
        str, typer.Option(help="Which proposals: pending, accepted, rejected or all.")
    ] = "pending",
) -> None:
    """Review what dream passes propose to delete or merge; alone, list them, oldest first."""
    if ctx.invoked_subcommand is not None:
        return
    state = _state(ctx)
    found = proposals.list_proposals(state.brain(), state.settings, status)
    if state.json:
        out.emit_json({"proposals": [p.to_dict() for p in found]})
        return
    if not found:
        out.console.print(f"no {status} proposals" if status != "all" else "no proposals")
        return
    columns = ["id", "kind", "age", "summary"] + (["status"] if status == "all" else [])
    rows = [[p.id, p.kind, _age(p.age_seconds), out.shorten(p.summary), p.status] for p in found]
    title = f"{len(found)} " + ("" if status == "all" else f"{status} ") + "proposal(s)"
    out.table(title, columns, [r[: len(columns)] for r in rows])


@app.command()
def show(
    ctx: typer.Context,
    proposal_id: Annotated[str, typer.Argument(metavar="ID", help="The proposal's prop_ id.")],
) -> None:
    """Show one proposal in full: its reason, scores and the traces as they were."""
    state = _state(ctx)
    doc = proposals.get_proposal(state.brain(), state.settings, proposal_id)
    if state.json:
        out.emit_json(doc)
        return
    for key in ("id", "kind", "status", "created_at", "pass_id", "summary", "reason", "file"):
        out.console.print(f"[bold]{key}[/bold]: {doc.get(key)}")
    out.console.print(
        "[bold]scores[/bold]: "
        + ", ".join(f"{k} {v:.4g}" for k, v in doc.get("scores", {}).items())
    )
    if doc.get("edited"):
        out.console.print("[red]the file was edited or is missing: accepting it is refused[/red]")
    for t in doc.get("traces", []):
        out.console.print(
            f"- {t['id']} (v{t['version']}, {t['type']}): {out.shorten(t['content'])}"
        )
    if "merged_content" in doc:
        out.console.print(f"[bold]merged content[/bold]: {doc['merged_content']}")


def _ids_or_all(ids: list[str] | None, all_: bool) -> list[str]:
    if all_ and ids:
        raise InvalidArgument("give proposal ids or --all, not both")
    if not all_ and not ids:
        raise InvalidArgument("give proposal ids, or --all for every pending proposal")
    return ids or []


def _report(state: State, decisions: list[proposals.Decision], done: str) -> None:
    """Print the decisions; exit 5 when any proposal was refused."""
    refused = [d for d in decisions if d.outcome not in ("applied", "rejected")]
    if state.json:
        out.emit_json({"decisions": [d.to_dict() for d in decisions]})
    elif not decisions:
        out.console.print("no pending proposals")
    for d in decisions:
        if d in refused:
            out.error_line(f"{d.id} is {d.outcome.replace('_', ' ')}: {d.detail}")
        elif not state.json:
            out.console.print(f"{done} {d.id}: {d.detail}")
    if refused:
        raise typer.Exit(EXIT_REFUSED)


IdsArg = Annotated[
    list[str] | None, typer.Argument(metavar="ID...", help="The proposals' prop_ ids.")
]
AllOpt = Annotated[bool, typer.Option("--all", help="Every pending proposal, oldest first.")]


@app.command("accept")
def accept_(ctx: typer.Context, ids: IdsArg = None, all_: AllOpt = False) -> None:
    """Apply proposals; one whose traces changed since, or whose file was edited, is refused."""
    state = _state(ctx)
    wanted = _ids_or_all(ids, all_)
    brain = state.brain()
    if all_:
        decisions = proposals.accept_all(brain, state.settings)
    else:
        decisions = proposals.accept(brain, state.settings, wanted)
    _report(state, decisions, "accepted")


@app.command("reject")
def reject_(ctx: typer.Context, ids: IdsArg = None, all_: AllOpt = False) -> None:
    """Reject proposals; the same change is not proposed again for the cooldown."""
    state = _state(ctx)
    wanted = _ids_or_all(ids, all_)
    brain = state.brain()
    if all_:
        decisions = proposals.reject_all(brain, state.settings)
    else:
        decisions = proposals.reject(brain, state.settings, wanted)
    _report(state, decisions, "rejected")
