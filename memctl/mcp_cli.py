"""``memctl mcp``: the brain's memory tools and resources for an MCP client, over stdio
(wired by :func:`reverie.compose.mcp_stdio`)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from memctl.state import state_of


def _scope_id(scope: str) -> Any:
    return typer.Option(help=f"{scope} id the tools act on (over HTTP: X-Reverie-{scope}).")


def register(app: typer.Typer) -> None:
    """Add ``memctl mcp`` to ``app``."""

    @app.command()
    def mcp(
        ctx: typer.Context,
        token: Annotated[
            str | None,
            typer.Option(
                envvar="MEMCTL_MCP_TOKEN",
                show_envvar=True,
                help="Act as this token (rvt_...); needed once the brain has any.",
            ),
        ] = None,
        user: Annotated[str | None, _scope_id("User")] = None,
        thread: Annotated[str | None, _scope_id("Thread")] = None,
        persona: Annotated[str | None, _scope_id("Persona")] = None,
        organization: Annotated[str | None, _scope_id("Organization")] = None,
    ) -> None:
        """Serve memory to an MCP client over stdio (tools, memory:// resources)."""
        from reverie import compose

        state = state_of(ctx)
        given = {"user": user, "thread": thread, "persona": persona, "organization": organization}
        scope_ids = {scope: value for scope, value in given.items() if value is not None}
        compose.mcp_stdio(state.settings, token, scope_ids)
