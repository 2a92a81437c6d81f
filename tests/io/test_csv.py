"""CSV import."""

from __future__ import annotations

from pathlib import Path

import pytest

import memory_core as mc
from memory_core.auth import SYSTEM
from memory_core.io import import_into


def _write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "in.csv"
    path.write_text(body, encoding="utf-8")
    return path


def test_csv_import_maps_every_column(brain, healthy, tmp_path) -> None:
    path = _write(
        tmp_path,
        "content,id,type,scope,scope_id,tags,metadata,created_at\n"
        '"User prefers dark mode, always",mt_a,semantic,user,u1,"ui,pref","{""k"": 1}",1700000000\n'
        'Deploy with compose,,procedural,organization,acme,"[""ops"", ""docker""]",,'
        "2024-01-02T03:04:05Z\n"
        "Plain line,,,,,a|b,,\n",
    )
    result = import_into(brain, "csv", path)
    assert (result.imported, result.skipped, result.errors) == (3, 0, [])
    a = mc.get_trace(brain, "mt_a", identity=SYSTEM)
    assert (a.type, a.scope, a.scope_id, a.tags, a.metadata) == (
        "semantic",
        "user",
        "u1",
        ["ui", "pref"],
        {"k": 1},
    )
    assert a.created_at == a.occurred_at == 1_700_000_000.0
    b = mc.search(brain, "compose", embedder=None, identity=SYSTEM).results[0].trace
    assert (b.scope, b.scope_id, b.tags, b.created_at) == (
        "organization",
        "acme",
        ["ops", "docker"],
        1704164645.0,
    )
    c = mc.search(brain, "plain", embedder=None, identity=SYSTEM).results[0].trace
    assert (c.type, c.scope, c.scope_id, c.tags) == ("episodic", "user", None, ["a", "b"])
    assert sorted(result.unembedded_ids) == sorted(["mt_a", b.id, c.id])
    healthy(brain)


def test_csv_without_a_content_column_is_refused_and_changes_nothing(brain, digest, tmp_path):
    path = _write(tmp_path, "text,tags\nhello,a\n")
    before = digest(brain)
    with pytest.raises(mc.InvalidArgument, match="'content' column"):
        import_into(brain, "csv", path)
    assert digest(brain) == before


def test_csv_row_with_invalid_metadata_is_an_error_and_the_rest_imports(brain, tmp_path):
    mc.add_trace(brain, "Second row.", identity=SYSTEM)
    path = _write(
        tmp_path,
        'content,metadata\nFirst row.,{"ok": true}\nSecond row.,{broken\nThird row.,[1]\n'
        "Fourth row.,\n",
    )
    result = import_into(brain, "csv", path)
    assert result.imported == 2
    assert len(result.errors) == 2
    assert result.errors[0].startswith("line 3: metadata is not valid JSON")
    assert result.errors[1].startswith("line 4: metadata must be a JSON object")


def test_csv_reimport_and_blank_content_are_skipped(brain, count, tmp_path) -> None:
    path = _write(tmp_path, "content,scope_id\nSame text,a\nSame text,b\nSame text,a\n  ,a\n")
    first = import_into(brain, "csv", path)
    assert (first.imported, first.skipped) == (2, 2)
    again = import_into(brain, "csv", path)
    assert (again.imported, again.skipped) == (0, 4)
    assert count(brain) == 2
    assert import_into(brain, "csv", path, dedup=False).imported == 3


def test_csv_import_never_brings_back_a_forgotten_trace(brain, tmp_path) -> None:
    trace_id = mc.add_trace(brain, "Forget me.", identity=SYSTEM)
    mc.delete_trace(brain, trace_id, identity=SYSTEM)
    result = import_into(brain, "csv", _write(tmp_path, "content\nForget me.\n"))
    assert (result.imported, result.skipped) == (0, 1)
    assert mc.search(brain, "forget", embedder=None, identity=SYSTEM).results == []


def test_csv_import_commits_in_batches_and_keeps_the_index_consistent(
    brain, healthy, tmp_path, monkeypatch
) -> None:
    from memory_core.io import csv_format, records

    monkeypatch.setattr(records, "BATCH_SIZE", 100)
    rows = "".join(f"Fact number {i},t{i % 3}\n" for i in range(250))
    path = _write(tmp_path, "content,tags\n" + rows)
    seen: list[int] = []
    result = csv_format.import_csv(brain, path, progress=seen.append)
    assert result.imported == 250 and seen == [100, 100, 50]
    assert (
        len(
            mc.search(brain, "fact", tags=["t1"], limit=100, embedder=None, identity=SYSTEM).results
        )
        == 83
    )
    healthy(brain)
