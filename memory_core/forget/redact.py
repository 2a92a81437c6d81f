"""Redacting a pass report: what it said of forgotten traces goes, the rest stays.

A pass report (the JSON the brain keeps in ``consolidation_log.report`` and the
file under ``dream-reports/``) names traces by id in each step's items, and many
items quote their texts (an insight, a merge's result, a compacted statement).
An item that names a forgotten trace or proposal is dropped whole -- its text
may be a digest of the forgotten words, so no part of it is kept -- and the step
counts how many went (``items_forgotten``); notes, proposal lists and the error
lose what names them too.  The counts stay: they are numbers, not words.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

# What an id is made of: a trace's (mt_<uuid4>), a proposal's (prop_<uuid4>).
_TOKEN = re.compile(r"[A-Za-z0-9_-]+")
FORGOTTEN_NOTE = "(forgotten)"


def names_any(value: Any, ids: Collection[str]) -> bool:
    """Whether ``value`` (any JSON value) names one of ``ids``, whole or inside a text."""
    if isinstance(value, str):
        return value in ids or any(t in ids for t in _TOKEN.findall(value))
    if isinstance(value, dict):
        return any(names_any(v, ids) for v in value.values())
    if isinstance(value, list):
        return any(names_any(v, ids) for v in value)
    return False


def redact_report(doc: dict[str, Any], ids: Collection[str]) -> bool:
    """Drop from a pass report (in place) what names ``ids`` (trace and proposal ids);
    True when anything went."""
    changed = False
    for step in doc.get("steps") or []:
        items = step.get("items")
        if isinstance(items, list):
            kept = [item for item in items if not names_any(item, ids)]
            if len(kept) < len(items):
                step["items"] = kept
                step["items_forgotten"] = step.get("items_forgotten", 0) + len(items) - len(kept)
                changed = True
        for key in ("notes", "proposals"):
            listed = step.get(key)
            if isinstance(listed, list):
                kept = [v for v in listed if not names_any(v, ids)]
                if len(kept) < len(listed):
                    step[key], changed = kept, True
    if names_any(doc.get("error"), ids):
        doc["error"], changed = FORGOTTEN_NOTE, True
    return changed


def redact_lines(markdown: str, ids: Collection[str]) -> str:
    """A Markdown report without its lines naming ``ids`` (for one whose JSON is gone)."""
    return "".join(line for line in markdown.splitlines(keepends=True) if not names_any(line, ids))
