"""Markdown and Obsidian export and import."""

from __future__ import annotations

import os

import pytest
from sqlalchemy import text

import memory_core as mc
from memory_core.auth import SYSTEM
from memory_core.io import export_brain, import_into


def _plain(rows):
    return [r[:5] for r in rows]


@pytest.mark.parametrize("fmt", ["markdown", "obsidian"])
def test_notes_round_trip_gives_the_same_active_traces(
    fmt, filled, other, active, healthy, tmp_path
) -> None:
    folder = tmp_path / "notes"
    doc = export_brain(filled, fmt, folder)
    assert (doc["traces"], doc["refused"]) == (5, [])
    result = import_into(other, fmt, folder)
    assert (result.imported, result.skipped, result.errors) == (5, 0, [])
    assert result.edges == (1 if fmt == "obsidian" else 0)  # the Related: link
    assert active(other) == active(filled)
    healthy(other)


@pytest.mark.parametrize("fmt", ["markdown", "obsidian"])
def test_notes_imported_into_their_own_brain_add_nothing(fmt, filled, digest, tmp_path) -> None:
    folder = tmp_path / "notes"
    export_brain(filled, fmt, folder)
    before = digest(filled)
    result = import_into(filled, fmt, folder)
    assert (result.imported, result.skipped, result.errors, result.edges) == (0, 5, [], 0)
    assert digest(filled) == before


def test_markdown_export_files_notes_under_scope_and_type(filled, tmp_path) -> None:
    folder = tmp_path / "notes"
    export_brain(filled, "markdown", folder)
    files = sorted(str(p.relative_to(folder).parent) for p in folder.rglob("*.md"))
    assert files == [
        "organization/episodic",
        "thread/episodic",
        "user/procedural",
        "user/relational",
        "user/semantic",
    ]
    note = next((folder / "user" / "semantic").glob("*.md")).read_text()
    assert note.startswith("---\nid: mt_") and "tags:\n- ui\n- pref\n" in note
    assert note.endswith("---\nUser prefers dark mode.\n")


def test_obsidian_export_writes_tags_and_related_links(filled, tmp_path) -> None:
    folder = tmp_path / "vault"
    export_brain(filled, "obsidian", folder)
    note = next((folder / "user" / "semantic").glob("*.md")).read_text()
    assert "User prefers dark mode.\n\n#ui #pref\n\n**Related:**\n- [[mt_" in note
    assert "|Deploy with docker compose up.]]" in note


def test_obsidian_import_makes_wikilinks_edges_and_hashtags_tags(brain, healthy, tmp_path) -> None:
    vault = tmp_path / "vault"
    (vault / "people").mkdir(parents=True)
    (vault / "people" / "Ana.md").write_text("Ana runs the #design team. See [[Bob|her brother]].")
    (vault / "Bob.md").write_text("---\ntags: [family]\n---\nBob is Ana's brother.\n![[pic.png]]")
    (vault / "Empty.md").write_text("---\nid: x\n---\n   \n")
    result = import_into(brain, "obsidian", vault)
    assert (result.imported, result.skipped, result.errors, result.edges) == (2, 1, [], 1)
    ana = mc.search(brain, "design", embedder=None, identity=SYSTEM).results[0].trace
    bob = (
        mc.search(brain, "brother", tags=["family"], embedder=None, identity=SYSTEM)
        .results[0]
        .trace
    )
    assert ana.tags == ["design"]
    with brain.read() as conn:
        edge = conn.execute(text("SELECT a, b FROM coactivation_edges")).one()
    assert set(edge) == {ana.id, bob.id}
    healthy(brain)


def test_a_note_with_broken_front_matter_is_an_error_and_the_rest_imports(brain, tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("---\ntype: semantic\n---\nGood note.\n")
    (folder / "b.md").write_text("---\ntags: [unclosed\n---\nBroken YAML.\n")
    (folder / "c.md").write_text("---\ntype: semantic\nNever closed.\n")
    (folder / "d.md").write_text("---\n!!python/object/apply:os.system ['echo hi']\n---\nEvil.\n")
    result = import_into(brain, "markdown", folder)
    assert result.imported == 1
    assert [e.split(":")[0] for e in result.errors] == ["b.md", "c.md", "d.md"]
    assert "not valid YAML" in result.errors[0]
    assert "no closing" in result.errors[1]


def test_notes_export_refuses_unsafe_names_and_never_overwrites(brain, tmp_path) -> None:
    mc.add_trace(brain, "Fine.", id="mt_ok", identity=SYSTEM)
    mc.add_trace(brain, "Escapes.", id="../../evil", identity=SYSTEM)
    mc.add_trace(brain, "Case twin.", id="MT_OK", identity=SYSTEM)
    folder = tmp_path / "notes"
    doc = export_brain(brain, "markdown", folder)
    assert doc["traces"] == 1
    assert {(r["id"], r["problem"]) for r in doc["refused"]} == {
        ("../../evil", "unsafe character"),
        ("MT_OK", "collision"),
    }
    # Nothing but the notes was written beside the brain.
    assert [n for n in sorted(os.listdir(tmp_path)) if not n.startswith("brain.sqlite")] == [
        "notes"
    ]
    with pytest.raises(mc.InvalidArgument, match="already exists"):
        export_brain(brain, "markdown", folder)


def test_a_failed_notes_export_removes_its_folder(filled, tmp_path, monkeypatch) -> None:
    from memory_core.io import markdown

    calls = []

    def fail_second(row, related, obsidian):
        calls.append(row.id)
        if len(calls) == 2:
            raise mc.BrainError("disk full")
        return b"x"

    monkeypatch.setattr(markdown, "_note", fail_second)
    folder = tmp_path / "notes"
    with pytest.raises(mc.BrainError):
        export_brain(filled, "markdown", folder)
    assert not folder.exists()
