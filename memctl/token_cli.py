"""``memctl token``: make, list, revoke and reset the tokens of the API and MCP.

memctl itself acts on the brain file directly, as whoever may read and
write it, so it needs no token.  A made (or reset) token is printed once;
only its hash is kept.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from memctl import output as out
from memctl.state import state_of
from memory_core import auth
from memory_core.errors import InvalidArgument

if TYPE_CHECKING:
    from memctl.state import State

app = typer.Typer(
    name="token",
    help="Tokens for the API and MCP: create, list, revoke, reset; and token-less access.",
    no_args_is_help=True,
)


def _show_new(state: State, info: auth.TokenInfo, token: str, what: str) -> None:
    if state.json:
        out.emit_json({**info.to_dict(), "token": token})
        return
    out.console.print(token)
    pinned = f", pinned to {', '.join(info.scope_ids)}" if info.scope_ids else ""
    out.warn(
        f"{what} token {info.name} ({', '.join(info.capabilities)}{pinned}): "
        "shown this once, only its hash is kept"
    )


@app.command()
def create(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="A name for who uses it, e.g. support-bot.")],
    can: Annotated[
        str,
        typer.Option("--can", help="Comma-separated capabilities: read,write,delete,dream,admin."),
    ],
    scope_id: Annotated[
        list[str] | None,
        typer.Option("--scope-id", help="Pin to this scope id (repeatable): it sees only these."),
    ] = None,
) -> None:
    """Make a token and print it, once."""
    state = state_of(ctx)
    info, token = auth.create_token(
        state.brain(create=True), name, can.split(","), scope_id or None, identity=auth.OPEN
    )
    _show_new(state, info, token, "made")


@app.command("list")
def list_(ctx: typer.Context) -> None:
    """Every token, revoked ones too (no secrets: none are kept)."""
    state = state_of(ctx)
    tokens = auth.list_tokens(state.brain(), identity=auth.OPEN)
    if state.json:
        out.emit_json({"tokens": [t.to_dict() for t in tokens]})
        return
    if not tokens:
        out.console.print("no tokens: the API answers without auth, on loopback only")
        return
    out.table(
        None,
        ["name", "can", "scope ids", "created", "revoked"],
        [
            [
                t.name,
                ",".join(t.capabilities),
                ",".join(t.scope_ids) if t.scope_ids else "any",
                out.when(t.created_at),
                out.when(t.revoked_at),
            ]
            for t in tokens
        ],
    )


@app.command()
def revoke(ctx: typer.Context, name: Annotated[str, typer.Argument()]) -> None:
    """Revoke a token: it never works again, and cannot be reset."""
    state = state_of(ctx)
    info = auth.revoke_token(state.brain(), name, identity=auth.OPEN)
    if state.json:
        out.emit_json(info.to_dict())
    else:
        out.console.print(f"revoked {info.name}")


@app.command()
def reset(ctx: typer.Context, name: Annotated[str, typer.Argument()]) -> None:
    """A new secret for an active token, printed once (a revoked one stays revoked)."""
    state = state_of(ctx)
    info, token = auth.reset_token(state.brain(), name, identity=auth.OPEN)
    _show_new(state, info, token, "reset")


@app.command()
def anonymous(
    ctx: typer.Context,
    can: Annotated[
        str | None,
        typer.Option(
            "--can",
            help="Comma-separated capabilities requests without a token get: read,write,delete,"
            "dream (never admin).",
        ),
    ] = None,
    scope_id: Annotated[
        list[str] | None,
        typer.Option("--scope-id", help="Pin them to this scope id (repeatable)."),
    ] = None,
    off: Annotated[bool, typer.Option("--off", help="End the grant: no token, no access.")] = False,
) -> None:
    """Grant capabilities to requests without a token (off by default), or end the grant."""
    state = state_of(ctx)
    if off == (can is not None):
        raise InvalidArgument("give --can CAPABILITIES, or --off")
    if off:
        info = auth.revoke_token(state.brain(), auth.ANONYMOUS_NAME, identity=auth.OPEN)
        if state.json:
            out.emit_json(info.to_dict())
        else:
            out.console.print("requests without a token are refused again")
        return
    assert can is not None
    info = auth.grant_anonymous(
        state.brain(create=True), can.split(","), scope_id or None, identity=auth.OPEN
    )
    if state.json:
        out.emit_json(info.to_dict())
        return
    pinned = f", pinned to {', '.join(info.scope_ids)}" if info.scope_ids else ""
    out.console.print(
        f"requests without a token may {', '.join(info.capabilities)}{pinned} "
        "(memctl token anonymous --off to end it)"
    )
