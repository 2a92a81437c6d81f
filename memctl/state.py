"""One memctl invocation's state: its settings, output mode and the runtime it opens.

Every command module reads it with :func:`state_of`; the root command sets it
(``memctl.cli``) and closes its runtime when the command is done.
"""

from __future__ import annotations

from dataclasses import dataclass

import typer

import memory_core as mc
from memory_core.runtime import Runtime
from reverie import compose


@dataclass
class State:
    """One invocation's settings and output mode, and the runtime its command opens."""

    settings: mc.Settings
    json: bool
    opened: Runtime | None = None

    def runtime(self, *, create: bool = False) -> Runtime:
        """The command's runtime over the brain, opened once (created only with
        ``create``: reading commands never make a brain)."""
        if self.opened is None:
            self.opened = compose.command(self.settings, create=create)
        return self.opened

    def brain(self, *, create: bool = False) -> mc.Brain:
        return self.runtime(create=create).brain

    def close(self) -> None:
        if self.opened is not None:
            self.opened.close()
            self.opened = None


def state_of(ctx: typer.Context) -> State:
    """The root command's state, from any command or sub-command."""
    state = ctx.find_root().obj
    assert isinstance(state, State)
    return state
