"""``memctl proposals``: review what dream passes propose to delete or merge.

Each command parses its arguments, calls :mod:`memory_core.proposals` once and
prints.  A refused accept or undo (stale, edited, already decided) prints one
line per proposal on stderr and exits 5; the rest of the request is still
carried out.  ``accept --all`` asks first on a terminal (``--yes`` skips it).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from memctl import output as out
from memctl.state import state_of
from memory_core import proposals
from memory_core.auth import OPEN
from memory_core.errors import InvalidArgument

if TYPE_CHECKING:
    from memctl.state import State

EXIT_REFUSED = 5
DAY = 86_400.0

app = typer.Typer(
    name="proposals",
    help="Review what dream passes propose to delete or merge: list, show, accept, reject, undo.",
    no_args_is_help=False,
)


def _age(seconds: float) -> str:
    seconds = max(seconds, 0.0)
    for unit, size in (("d", 86_400), ("h", 3_600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


KindOpt = Annotated[
    str | None,
    typer.Option("--kind", help="Only proposals of this kind: prune, merge, conflict or rewrite."),
]


@app.callback(invoke_without_command=True)
def list_(
    ctx: typer.Context,
    status: Annotated[
        str,
        typer.Option(help="Which proposals: pending, accepted, rejected, undone, expired or all."),
    ] = "pending",
    kind: KindOpt = None,
) -> None:
    """Review what dream passes propose; alone, list them with their texts, oldest first."""
    if ctx.invoked_subcommand is not None:
        return
    state = state_of(ctx)
    found = proposals.review(state.brain(), state.settings, status, kind=kind, identity=OPEN)
    if state.json:
        out.emit_json({"proposals": found})
        return
    what = "" if status == "all" else f"{status} "
    if not found:
        out.console.print(f"no {what}{kind or ''} proposals".replace("  ", " "))
        return
    counts = {k: sum(1 for p in found if p["kind"] == k) for k in proposals.KINDS}
    out.console.print(
        f"{len(found)} {what}proposal(s): " + ", ".join(f"{n} {k}" for k, n in counts.items() if n)
    )
    for item in found:
        _print_item(item, status == "all")


def _print_item(item: dict[str, Any], with_status: bool) -> None:
    head = f"\n[bold]{item['id']}[/bold]  {item['kind']}  {_age(item['age_seconds'])} old"
    if with_status:
        head += f"  [{item['status']}]"
    out.console.print(head, markup=True)
    traces = item["traces"]
    if item["kind"] == "merge" and len(traces) >= 2:
        ordered = sorted(traces, key=lambda t: t.get("occurred_at") or 0.0)
        for label, t in zip(("older", "newer"), ordered[:2], strict=True):
            out.console.print(f"  {label}  {t['id']}: {t['content']}", markup=False)
        out.console.print(f"  result: {item.get('merged_content')}", markup=False)
    if item["kind"] == "conflict" and len(traces) == 2:
        for label, t in zip(("earlier", "later"), traces, strict=True):
            out.console.print(f"  {label}  {t['id']}: {t['content']}", markup=False)
        out.console.print("  accepting marks the earlier superseded by the later", markup=False)
    if item["kind"] == "rewrite" and traces:
        out.console.print(f"  now      {traces[0]['id']}: {traces[0]['content']}", markup=False)
        out.console.print(f"  rewrite: {item.get('rewritten_content')}", markup=False)
    for t in traces if item["kind"] == "prune" else []:
        scores = item.get("scores", {})
        days = scores.get("days_since_use")
        used = f", unused {days:.0f} days" if isinstance(days, int | float) else ""
        out.console.print(
            f"  {t['id']} ({t['type']}, importance {float(t.get('importance') or 0.5):.2f}"
            f"{used}): {t['content']}",
            markup=False,
        )
    out.console.print(f"  why: {item.get('reason')}", markup=False)
    if item.get("edited"):
        out.console.print("  the file was edited or is missing: accepting it is refused")


@app.command()
def show(
    ctx: typer.Context,
    proposal_id: Annotated[str, typer.Argument(metavar="ID", help="The proposal's prop_ id.")],
) -> None:
    """Show one proposal in full: its reason, scores and the traces as they were."""
    state = state_of(ctx)
    doc = proposals.get_proposal(state.brain(), state.settings, proposal_id)
    if state.json:
        out.emit_json(doc)
        return
    for key in ("id", "kind", "status", "created_at", "pass_id", "summary", "reason"):
        out.console.print(f"[bold]{key}[/bold]: {doc.get(key)}")
    out.console.print(f"[bold]file[/bold]: {state.settings.data_dir / doc['file']}")
    out.console.print(
        "[bold]scores[/bold]: "
        + ", ".join(f"{k} {v:.4g}" for k, v in doc.get("scores", {}).items())
    )
    if doc.get("edited"):
        out.console.print("[red]the file was edited or is missing: accepting it is refused[/red]")
    for t in doc.get("traces", []):
        out.console.print(
            f"- {t['id']} (v{t['version']}, {t['type']}): {t['content']}", markup=False
        )
    if "merged_content" in doc:
        out.console.print(f"merged content: {doc['merged_content']}", markup=False)
    if "rewritten_content" in doc:
        out.console.print(f"rewritten content: {doc['rewritten_content']}", markup=False)


def _ids_or_all(ids: list[str] | None, all_: bool, kind: str | None) -> list[str]:
    if all_ and ids:
        raise InvalidArgument("give proposal ids or --all, not both")
    if not all_ and not ids:
        raise InvalidArgument("give proposal ids, or --all for every pending proposal")
    if kind is not None and not all_:
        raise InvalidArgument("--kind goes with --all")
    return ids or []


def _report(state: State, decisions: list[proposals.Decision], done: str) -> None:
    """Print the decisions; exit 5 when any proposal was refused."""
    refused = [d for d in decisions if d.outcome not in ("applied", "rejected", "undone")]
    if state.json:
        out.emit_json({"decisions": [d.to_dict() for d in decisions]})
    elif not decisions:
        out.console.print("no pending proposals")
    for d in decisions:
        if d in refused:
            out.error_line(f"{d.id} is {d.outcome.replace('_', ' ')}: {d.detail}")
        elif not state.json:
            out.console.print(f"{done} {d.id}: {d.detail}", markup=False)
    if refused:
        raise typer.Exit(EXIT_REFUSED)


def _confirm(state: State, ids: list[str], yes: bool) -> bool:
    """On a terminal, say how many of what would be applied and ask; elsewhere, go on."""
    if yes or state.json or not sys.stdin.isatty() or not ids:
        return True
    found = {p["id"]: p for p in proposals.review(state.brain(), state.settings, identity=OPEN)}
    prunes = sum(1 for i in ids if found.get(i, {}).get("kind") == "prune")
    merges = sum(1 for i in ids if found.get(i, {}).get("kind") == "merge")
    question = (
        f"Accept {len(ids)} proposal(s): {prunes} prune (soft-deletes {prunes} trace(s)), "
        f"{merges} merge (rewrites {merges} and soft-deletes {merges})? "
        "Each can be undone with memctl proposals undo."
    )
    return typer.confirm(question, default=False)


IdsArg = Annotated[
    list[str] | None, typer.Argument(metavar="ID...", help="The proposals' prop_ ids.")
]
AllOpt = Annotated[bool, typer.Option("--all", help="Every pending proposal, oldest first.")]
YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")]


@app.command("accept")
def accept_(
    ctx: typer.Context,
    ids: IdsArg = None,
    all_: AllOpt = False,
    kind: KindOpt = None,
    yes: YesOpt = False,
) -> None:
    """Apply proposals; one whose traces changed since, or whose file was edited, is refused."""
    state = state_of(ctx)
    wanted = _ids_or_all(ids, all_, kind)
    brain = state.brain()
    if all_:
        wanted = proposals.pending_ids(brain, state.settings, kind)
        if not _confirm(state, wanted, yes):
            out.console.print("nothing accepted")
            raise typer.Exit(1)
    decisions = proposals.accept(brain, state.settings, wanted)
    _report(state, decisions, "accepted")


@app.command("reject")
def reject_(
    ctx: typer.Context, ids: IdsArg = None, all_: AllOpt = False, kind: KindOpt = None
) -> None:
    """Reject proposals; the same change is not proposed again while its traces are unchanged."""
    state = state_of(ctx)
    wanted = _ids_or_all(ids, all_, kind)
    brain = state.brain()
    if all_:
        decisions = proposals.reject_all(brain, state.settings, kind=kind)
    else:
        decisions = proposals.reject(brain, state.settings, wanted)
    _report(state, decisions, "rejected")


@app.command("undo")
def undo_(
    ctx: typer.Context,
    ids: Annotated[
        list[str], typer.Argument(metavar="ID...", help="Accepted proposals' prop_ ids.")
    ],
) -> None:
    """Reverse accepted proposals: traces, vectors, index entries and tags as they were."""
    state = state_of(ctx)
    decisions = proposals.undo(state.brain(), state.settings, ids)
    _report(state, decisions, "undone")
