"""ChatGPT conversations.json import, on a fixture built from the public export format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import memory_core as mc
from memory_core.auth import SYSTEM
from memory_core.io import import_into


def _node(
    nid: str,
    parent: str | None,
    children: list[str],
    role: str | None = None,
    text: str = "",
    at: float | None = None,
) -> dict[str, Any]:
    message = None
    if role is not None:
        message = {
            "id": nid,
            "author": {"role": role, "name": None, "metadata": {}},
            "create_time": at,
            "update_time": None,
            "content": {"content_type": "text", "parts": [text]},
            "status": "finished_successfully",
            "end_turn": True,
            "weight": 1.0,
            "metadata": {},
            "recipient": "all",
        }
    return {"id": nid, "message": message, "parent": parent, "children": children}


def _conversation() -> dict[str, Any]:
    nodes = [
        _node("root", None, ["sys"]),
        _node("sys", "root", ["u1"], "system", ""),
        _node("u1", "sys", ["a1"], "user", "What is a good name for a cat?", 1700000000.5),
        _node("a1", "u1", ["u2-old", "u2"], "assistant", "Try Miso.", 1700000001.0),
        _node("u2-old", "a1", ["a2-old"], "user", "An edited-away question", 1700000002.0),
        _node("a2-old", "u2-old", [], "assistant", "An answer on a dead branch", 1700000003.0),
        _node("u2", "a1", ["t2"], "user", "Check the weather in Paris", 1700000010.0),
        _node("t2", "u2", ["a2"], "tool", '{"temp": 21}', 1700000011.0),
        _node("a2", "t2", ["u3"], "assistant", "It is 21 °C in Paris.", 1700000012.0),
        _node("u3", "a2", [], "user", "Thanks!", 1700000020.0),
    ]
    return {
        "title": "Cat names",
        "create_time": 1699999999.0,
        "update_time": 1700000020.0,
        "mapping": {n["id"]: n for n in nodes},
        "moderation_results": [],
        "current_node": "u3",
        "plugin_ids": None,
        "conversation_id": "c0ffee00-0000-4000-8000-000000000001",
        "conversation_template_id": None,
        "id": "c0ffee00-0000-4000-8000-000000000001",
    }


@pytest.fixture
def export_file(tmp_path: Path) -> Path:
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([_conversation(), {"title": "broken"}]))
    return path


def test_chatgpt_pairs_become_episodic_traces_at_the_message_time(
    brain, export_file, healthy
) -> None:
    result = import_into(brain, "chatgpt", export_file)
    assert (result.imported, result.skipped) == (2, 1)  # "Thanks!" is unanswered
    assert result.errors == ["conversations[1]: no 'mapping' object"]
    hits = {
        h.trace.content: h.trace
        for h in mc.search(brain, "paris OR cat", embedder=None, identity=SYSTEM).results
    }
    cat = hits["User: What is a good name for a cat?\nAssistant: Try Miso."]
    assert (cat.type, cat.created_at, cat.occurred_at) == ("episodic", 1700000000.5, 1700000000.5)
    assert cat.metadata["title"] == "Cat names"
    paris = hits["User: Check the weather in Paris\nAssistant: It is 21 °C in Paris."]
    assert paris.created_at == 1700000010.0
    assert mc.search(brain, "edited", embedder=None, identity=SYSTEM).results == []
    assert mc.search(brain, "temp", embedder=None, identity=SYSTEM).results == []
    healthy(brain)


def test_a_reimported_chatgpt_conversation_adds_nothing(brain, export_file, digest) -> None:
    import_into(brain, "chatgpt", export_file)
    before = digest(brain)
    again = import_into(brain, "chatgpt", export_file)
    assert (again.imported, again.skipped) == (0, 3)
    assert digest(brain) == before


def test_truncated_chatgpt_export_changes_nothing(brain, export_file, digest) -> None:
    export_file.write_bytes(export_file.read_bytes()[:500])
    before = digest(brain)
    with pytest.raises(mc.InvalidArgument, match="not valid JSON"):
        import_into(brain, "chatgpt", export_file)
    assert digest(brain) == before


def test_a_chatgpt_import_for_a_user_is_found_by_that_user_alone(
    brain, export_file, tmp_path: Path
) -> None:
    import subprocess
    import sys

    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "memctl",
            "--brain",
            brain.url,
            "import",
            "chatgpt",
            str(export_file),
            "--scope-id",
            "alice",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={"PATH": "/usr/bin:/bin", "REVERIE_EMBEDDER": "none", "HOME": str(tmp_path)},
    )
    assert r.returncode == 8, r.stderr  # one conversation failed; the rest came in
    assert json.loads(r.stdout)["imported"] == 2
    mine = mc.search(
        brain, "cat", embedder=None, identity=SYSTEM.acting_as(frozenset({"alice"}))
    ).results
    assert [h.trace.content for h in mine] == [
        "User: What is a good name for a cat?\nAssistant: Try Miso."
    ]
    assert all(
        h.trace.scope_id == "alice"
        for h in mc.search(brain, "paris OR cat", embedder=None, identity=SYSTEM).results
    )
    assert (
        mc.search(
            brain, "cat", embedder=None, identity=SYSTEM.acting_as(frozenset({"bob"}))
        ).results
        == []
    )


def _said(tmp_path: Path) -> Path:
    nodes = [
        _node("root", None, ["u1"]),
        _node("u1", "root", ["a1"], "user", "I'm allergic to penicillin.", 1700000000.0),
        _node("a1", "u1", [], "assistant", "Noted. I am a language model.", 1700000001.0),
    ]
    conv = {**_conversation(), "mapping": {n["id"]: n for n in nodes}, "current_node": "a1"}
    path = tmp_path / "said.json"
    path.write_text(json.dumps([conv]))
    return path


def test_an_import_with_extract_mines_what_the_user_said(brain, tmp_path: Path) -> None:
    from memory_core.extraction import make_extract

    path = _said(tmp_path)
    extract = make_extract(mc.load_settings(embedder="none"))
    result = import_into(brain, "chatgpt", path, owner=("user", "ana"), extract=extract)
    assert (result.imported, result.facts) == (1, 1)
    traces = mc.list_traces(brain, scope_id="ana", identity=SYSTEM).traces
    [episode] = [t for t in traces if "chatgpt" in t.tags]
    [fact] = [t for t in traces if "auto_ingest" in t.tags]
    assert "penicillin" in fact.content and "language model" not in fact.content
    assert fact.sources == [{"trace": episode.id}] and fact.occurred_at == episode.occurred_at
    # Imported again: the episode is known, so nothing is mined twice.
    again = import_into(brain, "chatgpt", path, owner=("user", "ana"), extract=extract)
    assert (again.imported, again.facts) == (0, 0)
    # Without extraction an import stores the exchanges alone.
    plain = import_into(brain, "chatgpt", path, owner=("user", "bo"))
    assert plain.facts == 0
    assert [t.tags for t in mc.list_traces(brain, scope_id="bo", identity=SYSTEM).traces] == [
        ["chatgpt"]
    ]


def test_memctl_import_extract_says_the_facts_and_refuses_other_formats(
    brain, tmp_path: Path
) -> None:
    import subprocess
    import sys

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "memctl", "--brain", brain.url, "--json", "import", *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            env={"PATH": "/usr/bin:/bin", "REVERIE_EMBEDDER": "none", "HOME": str(tmp_path)},
        )

    done = run("chatgpt", str(_said(tmp_path)), "--scope-id", "ana", "--extract")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["facts"] == 1
    other = tmp_path / "t.json"
    other.write_text('{"traces": []}')
    refused = run("json", str(other), "--extract")
    assert refused.returncode == 2 and "conversations" in refused.stderr
