"""A memory read at the depth an agent needs: one line, an outline, the whole, its sources.

A search answers each memory by its abstract (a stored summary, or its first
sentence) and a snippet around what matched, so an agent scans many in few
tokens; it then reads the one it needs at the level it needs
(:data:`LEVELS`).  Pure functions of a trace's text: nothing here reads the brain.
"""

from __future__ import annotations

import re

from memory_core import language
from memory_core.textutil import content_words, stem, words
from memory_core.traces.model import Trace

LEVELS = ("abstract", "outline", "full", "sources")
# How long a line of a search hit, or of an outline, may run.
LINE = 200

# A turn's paragraphs open with who spoke: "User: ", "User (Ana): ", "Assistant: ".
_SPEAKER = re.compile(r"^(User|Assistant)( \([^)]*\))?: ")


def line(text: str, limit: int = LINE) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def sentences(text: str) -> list[str]:
    """The sentences of a text, each paragraph apart (a turn's speakers never join)."""
    out: list[str] = []
    for paragraph in text.split("\n\n"):
        out += language.sentences(paragraph)
    return out


def abstract(trace: Trace) -> str:
    """One line saying what the memory is: its stored summary, or its first sentence
    (a turn's: what the user said first, with who said it)."""
    summary = trace.metadata.get("summary")
    if isinstance(summary, str) and summary.strip():
        return line(summary)
    first = sentences(trace.content)
    return line(first[0] if first else trace.content)


def outline(trace: Trace) -> list[str]:
    """A line per paragraph: its first sentence, and how many more it has."""
    lines = []
    for paragraph in trace.content.split("\n\n"):
        said = sentences(paragraph)
        if not said:
            continue
        more = f" (+{len(said) - 1} more)" if len(said) > 1 else ""
        lines.append(line(said[0], LINE - len(more)) + more)
    return lines


def snippet(content: str, query: str, width: int = LINE) -> str:
    """The passage of ``content`` that holds most of the query's words (as stems, the
    way the full-text index matches them), cut to ``width`` around the first of them;
    the opening when none is there."""
    wanted = {stem(w) for w in content_words(query)}
    best, best_score = "", 0
    for sentence in sentences(content):
        found = {stem(w) for w in words(sentence)} & wanted
        if len(found) > best_score:
            best, best_score = sentence, len(found)
    if not best_score:
        return line(_SPEAKER.sub("", content.split("\n\n", maxsplit=1)[0]), width)
    flat = " ".join(best.split())
    if len(flat) <= width:
        return flat
    first = min(
        (m.start() for m in re.finditer(r"\w+", flat) if stem(m.group().lower()) in wanted),
        default=0,
    )
    start = max(0, min(first - width // 3, len(flat) - width))
    cut = flat[start : start + width - 2].strip()
    return ("…" if start > 0 else "") + cut + ("…" if start + width - 2 < len(flat) else "")
