"""JSON export and import."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import text

import memory_core as mc
from memory_core.auth import SYSTEM
from memory_core.io import export_brain, import_into


def test_json_round_trip_keeps_traces_counts_timestamps_and_vectors(
    filled, other, active, healthy, tmp_path: Path
) -> None:
    path = tmp_path / "brain.json"
    doc = export_brain(filled, "json", path, include_embeddings=True)
    assert doc["traces"] == 6 and doc["edges"] == 1 and doc["embeddings"] == 2
    result = import_into(other, "json", path)
    assert (result.imported, result.skipped, result.errors, result.edges) == (6, 0, [], 1)
    assert active(other, full=True) == active(filled, full=True)
    assert len(result.unembedded_ids) == 3  # 5 live, 2 with vectors
    healthy(other)


def test_json_import_keeps_a_forgotten_trace_forgotten(filled, other, tmp_path: Path) -> None:
    path = tmp_path / "brain.json"
    export_brain(filled, "json", path)
    import_into(other, "json", path)
    mc.add_trace(other, "Something new.", identity=SYSTEM)
    with other.read() as conn:
        row = conn.execute(
            text("SELECT deleted, deleted_reason FROM memory_traces WHERE content = :c"),
            {"c": "An old mistake."},
        ).one()
    assert tuple(row) == (1, "forgotten")


def test_json_import_into_its_own_brain_adds_nothing(filled, digest, count, tmp_path: Path) -> None:
    path = tmp_path / "brain.json"
    export_brain(filled, "json", path, include_embeddings=True)
    before = digest(filled)
    result = import_into(filled, "json", path)
    assert (result.imported, result.skipped, result.errors, result.edges) == (0, 6, [], 0)
    assert digest(filled) == before


def test_json_import_without_dedup_adds_every_record_again(filled, count, tmp_path) -> None:
    path = tmp_path / "brain.json"
    export_brain(filled, "json", path)
    result = import_into(filled, "json", path, dedup=False)
    assert result.imported == 6 and count(filled) == 12


def test_json_import_of_a_forgotten_text_does_not_bring_it_back(filled, other, tmp_path) -> None:
    path = tmp_path / "brain.json"
    export_brain(filled, "json", path)
    import_into(other, "json", path)
    target = (
        mc.search(other, "dark", scope="user", embedder=None, identity=SYSTEM).results[0].trace.id
    )
    mc.delete_trace(other, target, identity=SYSTEM)
    result = import_into(other, "json", path)
    assert result.imported == 0
    assert mc.search(other, "dark", scope="user", embedder=None, identity=SYSTEM).results == []


def test_truncated_json_is_refused_and_changes_nothing(filled, other, digest, tmp_path) -> None:
    path = tmp_path / "brain.json"
    export_brain(filled, "json", path)
    cut = tmp_path / "cut.json"
    cut.write_bytes(path.read_bytes()[:-40])
    before = digest(other)
    with pytest.raises(mc.InvalidArgument, match="not valid JSON"):
        import_into(other, "json", cut)
    assert digest(other) == before


def test_json_import_lists_bad_records_and_imports_the_rest(other, active, tmp_path) -> None:
    path = tmp_path / "rows.json"
    rows = [
        {"content": "Good one.", "tags": ["a"]},
        {"content": "Bad type.", "type": "dream"},
        {"content": "Bad metadata.", "metadata": "{oops"},
        {"content": "   "},
        {"content": "Good two.", "scope": "thread", "scope_id": "t9", "tags": '["b"]'},
    ]
    path.write_text(json.dumps({"traces": rows}))
    result = import_into(other, "json", path)
    assert (result.imported, result.skipped) == (2, 1)
    errors = sorted(result.errors)
    assert len(errors) == 2
    assert errors[0].startswith("traces[1]:") and "type" in errors[0]
    assert errors[1].startswith("traces[2]:") and "metadata" in errors[1]
    assert [r[0] for r in active(other)] == ["Good one.", "Good two."]


def test_json_export_never_overwrites_and_leaves_the_path_alone(filled, tmp_path) -> None:
    path = tmp_path / "taken.json"
    path.write_text("mine")
    with pytest.raises(mc.InvalidArgument, match="already exists"):
        export_brain(filled, "json", path)
    assert path.read_text() == "mine"


def test_json_export_does_not_write_through_a_dangling_link(filled, tmp_path) -> None:
    target = tmp_path / "elsewhere.json"
    link = tmp_path / "link.json"
    link.symlink_to(target)
    with pytest.raises(mc.InvalidArgument, match="already exists"):
        export_brain(filled, "json", link)
    assert not target.exists()


def test_a_failed_json_export_removes_its_file(filled, tmp_path, monkeypatch) -> None:
    from memory_core.io import json_format

    def boom(conn, scope_id):
        yield {"id": "x"}
        raise mc.BrainError("disk full")

    monkeypatch.setattr(json_format, "_trace_rows", boom)
    path = tmp_path / "out.json"
    with pytest.raises(mc.BrainError):
        export_brain(filled, "json", path)
    assert not path.exists()
