"""``memctl setup --host claude-code|codex`` wires an agent host to this brain, and
``memctl hook ...`` is what the host's hooks run (see :mod:`memctl.hosts`)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer

import memory_core as mc
from memctl import hosts
from memctl import output as out
from memctl.jobs import reconcile_now
from memctl.state import state_of
from memory_core import inbox
from memory_core.auth import OPEN
from memory_core.reasoners.host import CHILD_MARK


def register(app: typer.Typer) -> None:
    app.command()(setup)
    hook = typer.Typer(name="hook", help="What an agent host's hooks run.", no_args_is_help=True)
    hook.command("session-start")(session_start)
    hook.command("session-end")(session_end)
    hook.command("codex-turn")(codex_turn)
    app.add_typer(hook, name="hook")


User = Annotated[str, typer.Option("--user", help="The user (scope id) the agent acts for.")]


def setup(
    ctx: typer.Context,
    host: Annotated[str, typer.Option("--host", help="claude-code or codex.")],
    user: Annotated[
        str | None, typer.Option("--user", help="The user the agent acts for (default: $USER).")
    ] = None,
    remove: Annotated[
        bool, typer.Option("--remove", help="Take the wiring out (the files as they were).")
    ] = False,
    home: Annotated[
        Path | None, typer.Option("--home", help="The host's home folder (default: ~).")
    ] = None,
    check: Annotated[
        bool, typer.Option("--check/--no-check", help="End by asking the server for its tools.")
    ] = True,
    reasoner: Annotated[
        str | None,
        typer.Option(
            "--reasoner",
            help="host: the server asks the host's own command line (claude -p, codex exec) "
            "to read turns and judge its passes.",
        ),
    ] = None,
) -> None:
    """Write the host's MCP server entry and lifecycle hooks (merged, idempotent);
    --remove takes them out.  Ends with a readiness check that talks to the server."""
    state = state_of(ctx)
    who = user or os.environ.get("USER") or "me"
    folder = (home or Path.home()).expanduser()
    brain_url = state.settings.brain_url
    env = hosts.reasoner_env(host, reasoner) if host in hosts.HOSTS and not remove else {}
    if not remove:
        state.brain(create=True)  # the server it names must find a brain
    wiring = hosts.apply(host, folder, brain_url, who, remove=remove, env=env)
    for note in wiring.notes:
        out.warn(note)
    cli = env.get("REVERIE_HOST_CLI")
    if cli and shutil.which(cli) is None:
        out.warn(f"{cli} is not on PATH: until it is, the server reads turns offline")
    ready = None
    if check and not remove:
        ready = _ready(hosts.memctl(brain_url, "mcp", "--user", who), env)
    files = [str(p) for p in wiring.files]
    done = {
        "host": host,
        "user": who,
        "removed": remove,
        "files": files,
        "reasoner": env.get("REVERIE_REASONER"),
        "tools": ready,
    }
    if state.json:
        out.emit_json(done)
    else:
        verb = "took out" if remove else "wrote"
        out.console.print(f"{host}: {verb} {', '.join(files)}")
        if ready is not None:
            out.console.print(f"ready: the server answers with {len(ready)} tools")


def _ready(command: list[str], env: dict[str, str]) -> list[str]:
    """The tools the configured server lists, asked over MCP the way the host will (with
    the environment its entry gives it)."""
    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def ask(errors: Any) -> list[str]:
        params = StdioServerParameters(
            command=command[0], args=command[1:], env={**os.environ, **env}
        )
        with anyio.fail_after(60):
            async with (
                stdio_client(params, errlog=errors) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                return [t.name for t in (await session.list_tools()).tools]

    with tempfile.TemporaryFile("w+") as errors:
        try:
            tools = anyio.run(ask, errors)
        except Exception as e:  # a process boundary: whatever stopped it, said in one line
            errors.seek(0)
            said = errors.read().strip().splitlines()[-1:] or [f"{type(e).__name__}: {e}"]
            raise mc.NotEnabled(f"the server did not answer: {said[0]}") from e
    if "memory_search" not in tools:
        raise mc.NotEnabled(f"the server answers, but without memory tools: {tools}")
    return tools


def _answering_reverie() -> bool:
    """Whether this hook runs in a session the host reasoner started to answer Reverie:
    its question is no session of the user's, to be given memories or posted."""
    return bool(os.environ.get(CHILD_MARK))


def session_start(
    ctx: typer.Context,
    user: User,
    budget: Annotated[int, typer.Option("--budget", help="Tokens at most.")] = 800,
) -> None:
    """Print what is known of the user (a SessionStart hook's output opens the session)."""
    from memory_core.retrieval.context import known_of

    if _answering_reverie():
        return
    state = state_of(ctx)
    block = known_of(state.brain(create=True), user, identity=OPEN, budget_tokens=budget)
    if block:
        out.console.print(block, markup=False, highlight=False, soft_wrap=True)


def _text(content: Any) -> str:
    """What a transcript message says in words: its text blocks (no tool calls, no
    tool results, no thinking)."""
    if isinstance(content, str):
        return content.strip()
    if isinstance(content, list):
        return "\n".join(
            b["text"].strip()
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and str(b.get("text", "")).strip()
        )
    return ""


def transcript_turns(path: Path) -> list[tuple[str, str]]:
    """A Claude Code transcript's exchanges: each user message with the assistant's
    words after it, in order (lines that are not messages are skipped)."""
    turns: list[tuple[str, str]] = []
    user: str | None = None
    said: list[str] = []
    for raw in path.read_text().splitlines():
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        message = line.get("message") if isinstance(line, dict) else None
        if not isinstance(message, dict) or line.get("isMeta"):
            continue
        words = _text(message.get("content"))
        if not words:
            continue
        if message.get("role") == "user":
            if user is not None:
                turns.append((user, "\n\n".join(said)))
            user, said = words, []
        elif message.get("role") == "assistant" and user is not None:
            said.append(words)
    if user is not None:
        turns.append((user, "\n\n".join(said)))
    return turns


def _post(
    ctx: typer.Context, user: str, conversation: str, turns: list[tuple[str, str, str]]
) -> None:
    """Accept the turns (each once, by its key) and have them ingested."""
    state = state_of(ctx)
    runtime = state.runtime(create=True)
    posted = [
        inbox.Turn(
            user=u,
            assistant=a,
            scope="user",
            scope_id=user,
            conversation_id=conversation,
            idempotency_key=key,
        )
        for u, a, key in turns
    ]
    accepted = inbox.accept_turns(runtime.brain, posted, identity=OPEN) if posted else []
    reconcile_now(runtime)
    fresh = sum(1 for a in accepted if not a.duplicate)
    out.note(f"posted {fresh} turn(s) of {conversation} for {user}")


def _json_object(raw: str, what: str) -> dict[str, Any]:
    try:
        doc = json.loads(raw)
    except ValueError as e:
        raise mc.InvalidArgument(f"{what} is not JSON: {e}") from e
    if not isinstance(doc, dict):
        raise mc.InvalidArgument(f"{what} is not a JSON object")
    return doc


def session_end(ctx: typer.Context, user: User) -> None:
    """Post a finished Claude Code session's turns (its hook input names the transcript)."""
    if _answering_reverie():
        return
    payload = _json_object(sys.stdin.read() or "{}", "the hook's input")
    session = str(payload.get("session_id") or "session")
    path = payload.get("transcript_path")
    if not path or not Path(path).exists():
        out.note("no transcript to post")
        return
    turns = transcript_turns(Path(path))
    keyed = [(u, a, f"claude-code/{session}/{k}") for k, (u, a) in enumerate(turns)]
    _post(ctx, user, session, keyed)


def codex_turn(
    ctx: typer.Context,
    user: User,
    payload: Annotated[str, typer.Argument(help="The turn, as Codex's notify passes it.")],
) -> None:
    """Post the turn Codex just finished (its notify program's JSON argument)."""
    if _answering_reverie():
        return
    event = _json_object(payload, "PAYLOAD")
    if event.get("type") != "agent-turn-complete":
        return
    said = "\n\n".join(str(m) for m in event.get("input-messages") or [] if str(m).strip())
    answer = str(event.get("last-assistant-message") or "")
    if not said.strip() and not answer.strip():
        return
    turn_id = str(event.get("turn-id") or "")
    conversation = str(event.get("thread-id") or event.get("session-id") or "codex")
    said_hash = hashlib.sha256(f"{said}\0{answer}".encode()).hexdigest()[:16]
    key = f"codex/{conversation}/{turn_id or said_hash}"
    _post(ctx, user, conversation, [(said, answer, key)])
