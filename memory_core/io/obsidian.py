"""Obsidian: Markdown notes plus a #tag line and a Related: list of [[wikilinks]].

The export adds, after a trace's content, a blank line and its tags as
``#tag`` words (whitespace inside a tag written as ``-``), then a blank line
and ``**Related:**`` with one ``- [[id|first words]]`` line per trace the
co-activation graph links it to, strongest first; each link names the other
trace's note file, so Obsidian resolves it.  The import strips a trailing
Related list and tag line from the content, makes every ``#tag`` in the body
a tag, and every ``[[wikilink]]`` (not ``![[embeds]]``) a co-activation edge
to the note (by file name or id) or brain trace (by id) it names.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, text

from memory_core.brain.db import Brain
from memory_core.io.markdown import export_notes, read_notes
from memory_core.io.records import ImportResult, Owner, Progress, TraceWriter, write_edges

RELATED = "**Related:**"
ALIAS_CHARS = 40
_LINK = re.compile(r"(?<!!)\[\[([^\[\]\n]+)\]\]")
_TAG = re.compile(r"(?<![^\s(])#([^\s#\[\]()!,;]+)")
_TAG_LINE = re.compile(r"^(?:#[^\s#]+)(?:[ \t]+#[^\s#]+)*$")
_LINK_LINE = re.compile(r"^- \[\[[^\[\]\n]+\]\]$")
_RELATED_EDGES = text(
    "SELECT e.a, e.b, ta.content, tb.content FROM coactivation_edges e "
    "JOIN memory_traces ta ON ta.id = e.a AND ta.deleted = 0 "
    "JOIN memory_traces tb ON tb.id = e.b AND tb.deleted = 0 "
    "ORDER BY e.weight DESC, e.a, e.b"
)


def _alias(content: str) -> str:
    words = " ".join(content.split())
    for bad in "[]|#^":
        words = words.replace(bad, " ")
    words = " ".join(words.split())
    return words if len(words) <= ALIAS_CHARS else words[: ALIAS_CHARS - 1].rstrip() + "…"


class ObsidianExtras:
    """The tag line and Related list of an Obsidian note (:class:`NoteExtras`)."""

    def related(self, conn: Connection) -> dict[str, list[tuple[str, str]]]:
        return related_traces(conn)

    def render(self, tags: list[str], related: list[tuple[str, str]]) -> str:
        return render_extras(tags, related)


def export_obsidian(
    brain: Brain,
    path: Path,
    *,
    progress: Progress | None = None,
    scope_id: str | None = None,
) -> dict[str, Any]:
    """Export the brain as an Obsidian vault: one note per trace, with tags and links."""
    return export_notes(brain, path, extras=ObsidianExtras(), progress=progress, scope_id=scope_id)


def related_traces(conn: Connection) -> dict[str, list[tuple[str, str]]]:
    """For each active trace, the (id, alias) of the active traces it is linked to."""
    related: dict[str, list[tuple[str, str]]] = {}
    for a, b, content_a, content_b in conn.execute(_RELATED_EDGES):
        related.setdefault(a, []).append((b, _alias(content_b)))
        related.setdefault(b, []).append((a, _alias(content_a)))
    return related


def render_extras(tags: list[str], related: list[tuple[str, str]]) -> str:
    """What the Obsidian export writes after a trace's content."""
    extra = ""
    if tags:
        extra += "\n\n" + " ".join("#" + "-".join(t.split()) for t in tags)
    if related:
        links = "\n".join(
            f"- [[{tid}|{alias}]]" if alias else f"- [[{tid}]]" for tid, alias in related
        )
        extra += f"\n\n{RELATED}\n{links}"
    return extra


def _split_tail(body: str) -> tuple[str, str]:
    """The body without a trailing Related list and tag line, and that tail."""
    blocks = body.replace("\r\n", "\n").replace("\r", "\n").strip().split("\n\n")
    tail: list[str] = []
    last = blocks[-1].split("\n")
    if (
        len(blocks) > 1
        and last[0].strip() == RELATED
        and all(_LINK_LINE.match(line.strip()) for line in last[1:])
    ):
        tail.insert(0, blocks.pop())
    if len(blocks) > 1 and _TAG_LINE.match(blocks[-1].strip()):
        tail.insert(0, blocks.pop())
    return "\n\n".join(blocks).strip(), "\n\n".join(tail)


def parse_body(body: str) -> tuple[str, list[str], list[str]]:
    """An Obsidian note's content, #tags and wikilink targets."""
    content, tail = _split_tail(body)
    whole = f"{content}\n{tail}"
    tags = list(dict.fromkeys(m.group(1) for m in _TAG.finditer(whole)))
    targets = []
    for m in _LINK.finditer(whole):
        target = m.group(1).split("|", 1)[0].split("#", 1)[0].strip()
        target = target.removesuffix(".md").rsplit("/", 1)[-1]
        if target:
            targets.append(target)
    return content, tags, list(dict.fromkeys(targets))


def _edges(
    brain: Brain, result: ImportResult, stems: dict[str, str], links: list[tuple[str, str]]
) -> list[dict[str, Any]]:
    """Links as edges between source keys; a target naming a brain trace maps to it."""
    edges = []
    with brain.read() as conn:
        for key, target in links:
            target_key = stems.get(target.lower(), target)
            if target_key not in result.id_map:
                found = conn.execute(
                    text("SELECT id FROM memory_traces WHERE id = :id AND deleted = 0"),
                    {"id": target},
                ).first()
                if found is None:
                    continue
                result.id_map[target] = target
            edges.append({"a": key, "b": target_key, "weight": 1.0, "count": 1})
    return edges


def import_obsidian(
    brain: Brain,
    path: Path,
    *,
    dedup: bool = True,
    progress: Progress | None = None,
    owner: Owner = None,
) -> ImportResult:
    """Import an Obsidian vault: notes as traces, #tags as tags, wikilinks as edges."""
    writer = TraceWriter(brain, dedup=dedup, progress=progress, owner=owner)
    stems, links = read_notes(path, writer, parse_body)
    result = writer.finish()
    write_edges(brain, result, _edges(brain, result, stems, links), writer.now)
    return result
