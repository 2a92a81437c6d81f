"""Tag expressions: a boolean algebra over a memory's tags, applied as a hard filter.

    project=nmmt & (rust | /^topic\\./) & !archived
    mutex(draft, final) & @reviewed

* ``name`` -- the memory carries the tag ``name``;
* ``key=value`` -- it carries ``key:value``; a number matches canonically
  (``priority=2`` matches ``priority:2``, ``priority:2.0`` and ``priority:02``);
* ``/regex/`` -- one of its tags matches the regular expression (searched, not
  anchored: write ``^`` and ``$`` for a whole tag);
* ``&``, ``|``, ``!`` and parentheses, in that order of binding (``!`` tightest); two
  terms side by side are joined by ``&`` (``rust !archived``);
* ``mutex(a, b, ...)`` -- at most one of them holds;
* ``@name`` -- a named predicate stored in the brain (:func:`save_predicate`).

The parser is a grammar (lark's LALR); the expression becomes one SQL condition
over ``t`` (memory_traces), run before ranking on both channels as any filter.  A
tag or key no memory carries is not found (:class:`NotFound`), naming the nearest
that one does; an expression that does not parse is :class:`InvalidArgument`.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass
from typing import Any

from lark import Lark, Token, Tree
from lark.exceptions import LarkError, UnexpectedInput
from rapidfuzz import process
from sqlalchemy import Connection, text

from memory_core.auth import ADMIN, Identity, acting
from memory_core.brain.db import Brain
from memory_core.errors import InvalidArgument, NotFound

MAX_LENGTH = 1000
# What an expression may hold: no control characters, and something to read.
PATTERN = r"^[^\x00-\x1f\x7f]*[^\x00-\x20\x7f][^\x00-\x1f\x7f]*$"
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
MAX_DEPTH = 8  # named predicates within named predicates

GRAMMAR = r"""
?start: or_
?or_: and_ ("|" and_)*
?and_: not_ ("&"? not_)*
?not_: "!" not_ -> neg
     | atom
?atom: "(" or_ ")"
     | "mutex" "(" or_ ("," or_)+ ")" -> mutex
     | REGEX -> regex
     | "@" NAME -> named
     | WORD "=" WORD -> pair
     | WORD -> tag
REGEX: /\/(\\.|[^\/\\])+\//
NAME: /[A-Za-z0-9][A-Za-z0-9._-]*/
WORD: /[^\s&|!(),=@\/"][^\s&|!(),=]*/ | /"(\\.|[^"\\])*"/
%import common.WS
%ignore WS
"""

_PARSER = Lark(GRAMMAR, parser="lalr", maybe_placeholders=False)
_NUMBER = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")
_PREDICATE = re.compile(NAME_PATTERN)


def parse(expression: str) -> Tree[Token]:
    """The expression's syntax tree; :class:`InvalidArgument` saying where it is wrong."""
    if not isinstance(expression, str) or not expression.strip():
        raise InvalidArgument("tags_expr: an empty expression")
    if len(expression) > MAX_LENGTH:
        raise InvalidArgument(f"tags_expr: longer than {MAX_LENGTH} characters")
    if not re.match(PATTERN, expression):
        raise InvalidArgument("tags_expr: control characters are not part of an expression")
    try:
        return _PARSER.parse(expression)
    except UnexpectedInput as e:
        raise InvalidArgument(
            f"tags_expr: unexpected {str(e.token) if hasattr(e, 'token') else 'text'!r} "
            f"at column {e.column}: {expression!r}"
        ) from e
    except LarkError as e:
        raise InvalidArgument(f"tags_expr: {e}") from e


def _word(token: Token | Tree[Token]) -> str:
    value = str(token)
    if value.startswith('"'):
        return re.sub(r"\\(.)", r"\1", value[1:-1])
    return value


@dataclass
class Compiled:
    """An expression as an SQL condition over ``t`` and its parameters."""

    sql: str
    params: dict[str, Any]


class _Compiler:
    def __init__(self, conn: Connection, vocabulary: Vocabulary) -> None:
        self.conn = conn
        self.vocabulary = vocabulary
        self.params: dict[str, Any] = {}
        self.depth = 0

    def _param(self, value: Any) -> str:
        name = f"x_{len(self.params)}"
        self.params[name] = value
        return f":{name}"

    def _exists(self, condition: str) -> str:
        return f"EXISTS (SELECT 1 FROM json_each(t.tags) AS j WHERE {condition})"

    def compile(self, tree: Tree[Token] | Token) -> str:
        assert isinstance(tree, Tree)
        kind, kids = tree.data, tree.children
        if kind == "or_":
            return "(" + " OR ".join(self.compile(k) for k in kids) + ")"
        if kind == "and_":
            return "(" + " AND ".join(self.compile(k) for k in kids) + ")"
        if kind == "neg":
            return f"NOT {self.compile(kids[0])}"
        if kind == "mutex":
            held = " + ".join(f"(CASE WHEN {self.compile(k)} THEN 1 ELSE 0 END)" for k in kids)
            return f"(({held}) <= 1)"
        if kind == "tag":
            name = self.vocabulary.known(self.conn, _word(kids[0]))
            return self._exists(f"j.value = {self._param(name)}")
        if kind == "pair":
            key, value = _word(kids[0]), _word(kids[1])
            self.vocabulary.known_key(self.conn, key)
            prefix = f"{key}:"
            if _NUMBER.match(value):
                rest = f"substr(j.value, {len(prefix) + 1})"
                return self._exists(
                    f"substr(j.value, 1, {len(prefix)}) = {self._param(prefix)} "
                    f"AND reverie_number({rest}) = {self._param(float(value))}"
                )
            return self._exists(f"j.value = {self._param(prefix + value)}")
        if kind == "regex":
            pattern = str(kids[0])[1:-1].replace("\\/", "/")
            try:
                re.compile(pattern)
            except re.error as e:
                raise InvalidArgument(
                    f"tags_expr: /{pattern}/ is no regular expression: {e}"
                ) from e
            return self._exists(f"reverie_matches(j.value, {self._param(pattern)})")
        if kind == "named":
            return self._named(str(kids[0]))
        raise InvalidArgument(f"tags_expr: cannot read {kind}")  # the grammar has no other

    def _named(self, name: str) -> str:
        row = self.conn.execute(
            text("SELECT expression FROM tag_predicates WHERE name = :n"), {"n": name}
        ).first()
        if row is None:
            raise NotFound(f"tags_expr: no named predicate @{name}")
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise InvalidArgument(f"tags_expr: @{name} names itself, or nests past {MAX_DEPTH}")
        try:
            return self.compile(parse(row.expression))
        finally:
            self.depth -= 1


class Vocabulary:
    """The tags the brain's memories carry, read once and again when a name is missing
    from it (so a tag added since is found; one that went lingers harmlessly)."""

    def __init__(self) -> None:
        self._tags: frozenset[str] = frozenset()
        self._keys: frozenset[str] = frozenset()
        self._lock = threading.Lock()
        self.read_at = 0.0

    def _read(self, conn: Connection) -> None:
        rows = conn.execute(
            text("SELECT DISTINCT j.value FROM memory_traces AS t, json_each(t.tags) AS j")
        ).scalars()
        tags = frozenset(str(r) for r in rows)
        with self._lock:
            self._tags = tags
            self._keys = frozenset(t.split(":", 1)[0] for t in tags if ":" in t)
            self.read_at = time.monotonic()

    def known(self, conn: Connection, tag: str) -> str:
        if tag not in self._tags:
            self._read(conn)
        if tag not in self._tags:
            raise NotFound(f"tags_expr: no memory has the tag {tag!r}{self._nearest(tag)}")
        return tag

    def known_key(self, conn: Connection, key: str) -> None:
        if key not in self._keys:
            self._read(conn)
        if key not in self._keys:
            raise NotFound(
                f"tags_expr: no memory has a {key}:... tag{self._nearest(key, self._keys)}"
            )

    def _nearest(self, name: str, among: frozenset[str] | None = None) -> str:
        found = process.extractOne(name, sorted(among if among is not None else self._tags))
        return f" (the nearest: {found[0]!r})" if found else ""


def compile_expression(brain: Brain, conn: Connection, expression: str) -> Compiled:
    """The expression as an SQL condition over ``t``, names checked against the brain."""
    compiler = _Compiler(conn, brain.state(Vocabulary))
    sql = compiler.compile(parse(expression))
    return Compiled(sql, compiler.params)


def save_predicate(brain: Brain, name: str, expression: str, *, identity: Identity) -> None:
    """Store (or replace) the named predicate ``@name`` (admins only)."""
    acting(identity, ADMIN)
    if not isinstance(name, str) or not _PREDICATE.match(name):
        raise InvalidArgument("name: 1 to 64 letters, digits, '.', '_' or '-'")
    parse(expression)  # refused before anything is written when it does not parse
    with brain.transaction() as conn:
        conn.execute(text("DELETE FROM tag_predicates WHERE name = :n"), {"n": name})
        conn.execute(
            text("INSERT INTO tag_predicates (name, expression, created_at) VALUES (:n, :e, :at)"),
            {"n": name, "e": expression, "at": time.time()},
        )
        # Compiled as stored: refused (and rolled back) for an unknown tag, or a loop.
        compile_expression(brain, conn, f"@{name}")


def list_predicates(brain: Brain, *, identity: Identity) -> dict[str, str]:
    acting(identity)
    with brain.read() as conn:
        rows = conn.execute(text("SELECT name, expression FROM tag_predicates ORDER BY name"))
        return {r.name: r.expression for r in rows}


def delete_predicate(brain: Brain, name: str, *, identity: Identity) -> None:
    acting(identity, ADMIN)
    with brain.transaction() as conn:
        gone = conn.execute(text("DELETE FROM tag_predicates WHERE name = :n"), {"n": name})
    if gone.rowcount != 1:
        raise NotFound(f"no named predicate @{name}")
