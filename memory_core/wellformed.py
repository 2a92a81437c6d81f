"""Text a caller may hand Reverie: well-formed Unicode without NUL characters.

JSON can carry what no UTF-8 encoder takes: the escape ``"\\ud800"`` decodes to a
lone surrogate, which neither brain can store, no embedder can encode and no LLM
can be sent.  Such text must be refused where it enters, with the field at
fault named, before it is queued or shared with anyone else's work: a turn
committed with others, a query embedded on a shared pool.  NUL (U+0000) is
refused too: no person's words hold one, and a PostgreSQL brain cannot store
it.

:func:`check_text` is that one check.  The HTTP API's request bodies and query
strings, every tool call (REST's ``/v1/tools``, MCP) and the library's own
entry points (a turn, a trace, a search) all ask it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, TypeVar

from memory_core.errors import InvalidArgument

T = TypeVar("T")

_MAX_KEY_SHOWN = 40


def fault(text: str) -> str | None:
    """What makes ``text`` unacceptable (a NUL, a lone surrogate), or None."""
    if "\x00" in text:
        return "NUL (U+0000) characters"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        return f"a lone surrogate (U+{ord(text[e.start]):04X}): it is not well-formed Unicode"
    return None


def check_text(value: T, name: str = "") -> T:
    """``value`` unless some text in it -- itself, or at any depth of a list or an
    object, keys included -- holds a NUL or a lone surrogate.

    Raises :class:`InvalidArgument` naming where (``metadata.where[2]``, ``tags[0]``).
    """
    for where, problem in _faults(value, name):
        raise InvalidArgument(f"{where or 'body'}: text may not hold {problem}")
    return value


def _faults(value: Any, where: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        problem = fault(value)
        if problem is not None:
            yield where, problem
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str):
                problem = fault(key)
                if problem is not None:
                    yield where, f"a key with {problem}"
                    continue
            yield from _faults(item, _key(where, key))
    elif isinstance(value, list | tuple):
        for k, item in enumerate(value):
            yield from _faults(item, f"{where}[{k}]")


def _key(where: str, key: Any) -> str:
    shown = str(key)
    if len(shown) > _MAX_KEY_SHOWN:
        shown = shown[: _MAX_KEY_SHOWN - 1] + "…"
    return f"{where}.{shown}" if where else shown


def cleaned(text: str) -> str:
    """``text`` without what no brain stores or person writes: lone surrogates, NUL and
    the other control characters (tabs and line breaks are kept).  For text Reverie
    did not take from a caller but got from elsewhere -- an LLM's answer, an error
    message -- where refusing would lose the rest."""
    if not _UNWANTED.search(text):
        return text
    return _UNWANTED.sub("", text)


_UNWANTED = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
