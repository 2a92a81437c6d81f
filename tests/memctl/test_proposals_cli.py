"""``memctl proposals`` as a person runs it: real processes, output, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable

import pytest
import typer

import memory_core as mc
from memctl.cli import app, main
from memory_core import proposals as p
from memory_core.auth import SYSTEM
from tests.conftest import memctl_in_process

Digest = Callable[[mc.Brain], str]


@pytest.fixture
def run(settings: mc.Settings) -> Callable[..., subprocess.CompletedProcess[str]]:
    """``run(*args)``: memctl on the test brain and data folder."""

    def memctl(*args: str) -> subprocess.CompletedProcess[str]:
        env = {"REVERIE_DATA_DIR": str(settings.data_dir)}
        return memctl_in_process(["--brain", settings.brain_url, *args], env=env)

    return memctl


def one_line_error(r: subprocess.CompletedProcess[str], code: int) -> str:
    assert r.returncode == code, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("memctl: error: "), r.stderr
    assert "Traceback" not in r.stdout + r.stderr
    return lines[0]


def draft(kind: str, *ids: str) -> p.ProposalDraft:
    return p.ProposalDraft(kind, list(ids), "test", {"score": 0.5}, f"{kind} {' '.join(ids)}")


def test_list_show_accept_and_reject_round_trip(
    brain: mc.Brain, settings: mc.Settings, run: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    a, b, c = (mc.add_trace(brain, f"trace {i}", identity=SYSTEM) for i in range(3))
    merge_id, prune_id = p.create_proposals(
        brain, settings, [draft("merge", a, b), draft("prune", c)], "pass_1"
    )
    r = run("proposals")
    assert r.returncode == 0 and "2 pending proposal(s)" in r.stdout, r.stderr
    assert r.stdout.index(merge_id) < r.stdout.index(prune_id)  # oldest first
    shown = json.loads(run("--json", "proposals", "show", merge_id).stdout)
    assert shown["status"] == "pending" and [t["id"] for t in shown["traces"]] == [a, b]
    r = run("--json", "proposals", "accept", merge_id)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["decisions"][0]["outcome"] == "applied"
    r = run("proposals", "reject", "--all")
    assert r.returncode == 0 and f"rejected {prune_id}" in r.stdout
    assert mc.get_trace(brain, b, include_deleted=True, identity=SYSTEM).deleted
    assert not mc.get_trace(brain, c, identity=SYSTEM).deleted
    assert p.list_proposals(brain, settings, identity=SYSTEM) == []
    assert (settings.data_dir / "proposals" / "accepted" / f"{merge_id}.json").exists()
    assert (settings.data_dir / "proposals" / "rejected" / f"{prune_id}.json").exists()


def test_a_stale_accept_says_why_on_one_line_exits_5_and_applies_the_rest(
    brain: mc.Brain,
    settings: mc.Settings,
    digest: Digest,
    run: Callable[..., subprocess.CompletedProcess[str]],
) -> None:
    a, b = (
        mc.add_trace(brain, "changes", identity=SYSTEM),
        mc.add_trace(brain, "stays", identity=SYSTEM),
    )
    stale_id, fine_id = p.create_proposals(
        brain, settings, [draft("prune", a), draft("prune", b)], None
    )
    mc.update_trace(brain, a, content="changed since", identity=SYSTEM)
    r = run("--json", "proposals", "accept", stale_id, fine_id)
    line = one_line_error(r, 5)
    assert line == (
        f"memctl: error: {stale_id} is stale: "
        f"trace {a} changed since it was proposed (content hash differs)"
    )
    outcomes = [d["outcome"] for d in json.loads(r.stdout)["decisions"]]
    assert outcomes == ["stale", "applied"]
    assert (
        not mc.get_trace(brain, a, identity=SYSTEM).deleted
        and mc.get_trace(brain, b, include_deleted=True, identity=SYSTEM).deleted
    )
    before = digest(brain)
    assert "is not pending: already accepted" in one_line_error(
        run("proposals", "accept", fine_id), 5
    )
    assert digest(brain) == before


@pytest.mark.parametrize(
    ("args", "code", "needle"),
    [
        (["accept", "prop_nope"], 4, "no proposal prop_nope"),
        (["reject"], 2, "give proposal ids, or --all"),
        (["accept", "prop_x", "--all"], 2, "not both"),
        (["show", "prop_nope"], 4, "prop_nope"),
        (["--status", "maybe"], 2, "status must be"),
    ],
)
def test_refusals_are_one_line_with_exit_codes(
    brain: mc.Brain,
    settings: mc.Settings,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    code: int,
    needle: str,
) -> None:
    """In-process through memctl's entry point, which maps errors to exit codes."""
    [pid] = p.create_proposals(
        brain, settings, [draft("prune", mc.add_trace(brain, "x", identity=SYSTEM))], None
    )
    monkeypatch.setenv("REVERIE_DATA_DIR", str(settings.data_dir))
    with pytest.raises(SystemExit) as exit_:
        main(["--brain", settings.brain_url, "proposals", *args])
    assert exit_.value.code == code
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("memctl: error: ") and needle in err[0], err
    assert p.get_proposal(brain, settings, pid)["status"] == "pending"


def test_every_proposals_command_and_option_has_help_text() -> None:
    group = typer.main.get_command(app).commands["proposals"]  # type: ignore[attr-defined]
    assert group.help and group.help.strip()
    assert set(group.commands) == {"show", "accept", "reject", "undo"}
    for sub in [group, *group.commands.values()]:
        assert sub.help and sub.help.strip(), sub.name
        for param in sub.params:
            if getattr(param, "param_type_name", "") == "option":
                assert param.help, f"{sub.name} {param.name}"


def _on_a_terminal(settings: mc.Settings, args: list[str], answer: bytes) -> tuple[int, str]:
    """Run memctl with a pseudo-terminal as its standard input, answering a prompt."""
    import pty
    import select

    controller, terminal = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.startswith("REVERIE_")}
    env["REVERIE_DATA_DIR"] = str(settings.data_dir)
    proc = subprocess.Popen(
        [sys.executable, "-m", "memctl", "--brain", settings.brain_url, *args],
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        env=env,
    )
    os.close(terminal)
    seen = b""
    answered = False
    while proc.poll() is None or select.select([controller], [], [], 0.1)[0]:
        ready, _, _ = select.select([controller], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(controller, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        if not answered and b"[y/N]" in seen:
            os.write(controller, answer)
            answered = True
    os.close(controller)
    return proc.wait(timeout=60), seen.decode(errors="replace")


def test_accept_all_asks_first_on_a_terminal_and_yes_skips_it(
    brain: mc.Brain, settings: mc.Settings, digest: Digest
) -> None:
    a, b = mc.add_trace(brain, "one", identity=SYSTEM), mc.add_trace(brain, "two", identity=SYSTEM)
    p.create_proposals(brain, settings, [draft("prune", a), draft("prune", b)], None)
    before = digest(brain)
    code, shown = _on_a_terminal(settings, ["proposals", "accept", "--all"], b"n\n")
    assert code == 1 and "Accept 2 proposal(s): 2 prune" in shown and "nothing accepted" in shown
    assert digest(brain) == before and len(p.list_proposals(brain, settings, identity=SYSTEM)) == 2
    code, shown = _on_a_terminal(settings, ["proposals", "accept", "--all", "--yes"], b"")
    assert code == 0 and "[y/N]" not in shown
    assert p.list_proposals(brain, settings, identity=SYSTEM) == []
