"""Tag expressions: a boolean algebra over a memory's tags, applied as a hard filter.

    project=nmmt & (rust | /^topic\\./) & !archived
    mutex(draft, final) & @reviewed

* ``name`` -- the memory carries the tag ``name``;
* ``key=value`` -- it carries ``key:value``; a number matches canonically
  (``priority=2`` matches ``priority:2``, ``priority:2.0`` and ``priority:02``);
* ``/regex/`` -- one of its tags matches the regular expression, in RE2's syntax
  (searched, not anchored: write ``^`` and ``$`` for a whole tag);
* ``&``, ``|``, ``!`` and parentheses, in that order of binding (``!`` tightest); two
  terms side by side are joined by ``&`` (``rust !archived``);
* ``mutex(a, b, ...)`` -- at most one of them holds;
* ``@name`` -- a named predicate stored in the brain (:func:`save_predicate`).

The parser is a grammar (lark's LALR); the expression becomes one SQL condition
over ``t`` (memory_traces), run before ranking on both channels as any filter.  A
tag is compared by equality, and a regex is matched beforehand against the tags of
the caller's own memories (:mod:`memory_core.retrieval.tagvocab`), so no database
runs a regex and a tag no memory of the caller carries -- another tenant's, or
nobody's -- simply matches nothing: the answer never tells which.  An expression is
bounded before it is compiled (:data:`MAX_LENGTH` characters, :data:`MAX_NESTING`
levels, :data:`MAX_TERMS` terms, :data:`MAX_REGEXES` regexes, named predicates
counted in); one that does not parse or passes a bound is :class:`InvalidArgument`.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from typing import Any

from lark import Lark, Token, Tree
from lark.exceptions import LarkError, UnexpectedInput
from sqlalchemy import Connection, text

from memory_core.auth import ADMIN, Identity, acting
from memory_core.brain.db import Brain
from memory_core.errors import Forbidden, InvalidArgument, NotFound
from memory_core.retrieval.tagvocab import TagVocabulary, regex

MAX_LENGTH = 1000
# What an expression may hold: no control characters, and something to read.
PATTERN = r"^[^\x00-\x1f\x7f]*[^\x00-\x20\x7f][^\x00-\x1f\x7f]*$"
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
# Bounds of one expression, the named predicates it uses counted in: how deep its
# operators nest (``!!a`` is 3 deep), and how many terms and regexes it holds.
MAX_NESTING = 12
MAX_TERMS = 64
MAX_REGEXES = 8

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
_NOTHING = "(1 = 0)"


def parse(expression: str) -> Tree[Token]:
    """The expression's syntax tree, within the bounds; :class:`InvalidArgument`
    saying where it is wrong or which bound it passes."""
    if not isinstance(expression, str) or not expression.strip():
        raise InvalidArgument("tags_expr: an empty expression")
    if len(expression) > MAX_LENGTH:
        raise InvalidArgument(f"tags_expr: longer than {MAX_LENGTH} characters")
    if not re.match(PATTERN, expression):
        raise InvalidArgument("tags_expr: control characters are not part of an expression")
    try:
        tree = _PARSER.parse(expression)
    except UnexpectedInput as e:
        raise InvalidArgument(
            f"tags_expr: unexpected {str(e.token) if hasattr(e, 'token') else 'text'!r} "
            f"at column {e.column}: {expression!r}"
        ) from e
    except LarkError as e:
        raise InvalidArgument(f"tags_expr: {e}") from e
    _Bounds().check(tree)
    return tree


class _Bounds:
    """What an expression holds so far, refused past a bound (walked without recursion,
    so no depth of nesting can exhaust the stack)."""

    def __init__(self) -> None:
        self.terms = 0
        self.regexes = 0

    def check(self, tree: Tree[Token], depth: int = 0) -> None:
        stack = [(tree, depth + 1)]
        while stack:
            node, level = stack.pop()
            if level > MAX_NESTING:
                raise InvalidArgument(f"tags_expr: nests deeper than {MAX_NESTING} levels")
            if node.data in ("tag", "pair", "regex", "named"):
                self.count(node.data)
            else:
                stack.extend((k, level + 1) for k in node.children if isinstance(k, Tree))

    def count(self, kind: str) -> None:
        self.terms += kind != "named"
        self.regexes += kind == "regex"
        if self.terms > MAX_TERMS:
            raise InvalidArgument(f"tags_expr: more than {MAX_TERMS} terms")
        if self.regexes > MAX_REGEXES:
            raise InvalidArgument(f"tags_expr: more than {MAX_REGEXES} regular expressions")


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
    """An expression's tree to SQL.  ``vocabulary`` None only checks the expression
    (a regex is compiled, matched against nothing)."""

    def __init__(
        self, conn: Connection, vocabulary: TagVocabulary | None, identity: Identity
    ) -> None:
        self.conn = conn
        self.vocabulary = vocabulary
        self.identity = identity
        self.params: dict[str, Any] = {}
        self.bounds = _Bounds()
        self.named: list[str] = []  # the predicates being compiled, outermost first

    def _param(self, value: Any) -> str:
        name = f"x_{len(self.params)}"
        self.params[name] = value
        return f":{name}"

    def _exists(self, condition: str) -> str:
        return f"EXISTS (SELECT 1 FROM json_each(t.tags) AS j WHERE {condition})"

    def compile(self, tree: Tree[Token] | Token, depth: int = 1) -> str:
        assert isinstance(tree, Tree)
        kind, kids = tree.data, tree.children
        if depth > MAX_NESTING:  # predicates within predicates
            raise InvalidArgument(f"tags_expr: nests deeper than {MAX_NESTING} levels")
        if kind in ("tag", "pair", "regex"):
            self.bounds.count(kind)
        if kind == "or_":
            return "(" + " OR ".join(self.compile(k, depth + 1) for k in kids) + ")"
        if kind == "and_":
            return "(" + " AND ".join(self.compile(k, depth + 1) for k in kids) + ")"
        if kind == "neg":
            return f"NOT {self.compile(kids[0], depth + 1)}"
        if kind == "mutex":
            held = " + ".join(
                f"(CASE WHEN {self.compile(k, depth + 1)} THEN 1 ELSE 0 END)" for k in kids
            )
            return f"(({held}) <= 1)"
        if kind == "tag":
            return self._exists(f"j.value = {self._param(_word(kids[0]))}")
        if kind == "pair":
            key, value = _word(kids[0]), _word(kids[1])
            prefix = f"{key}:"
            if _NUMBER.match(value):
                rest = f"substr(j.value, {len(prefix) + 1})"
                return self._exists(
                    f"substr(j.value, 1, {len(prefix)}) = {self._param(prefix)} "
                    f"AND reverie_number({rest}) = {self._param(float(value))}"
                )
            return self._exists(f"j.value = {self._param(prefix + value)}")
        if kind == "regex":
            return self._regex(str(kids[0])[1:-1].replace("\\/", "/"))
        if kind == "named":
            return self._named(str(kids[0]), depth)
        raise InvalidArgument(f"tags_expr: cannot read {kind}")  # the grammar has no other

    def _regex(self, pattern: str) -> str:
        if self.vocabulary is None:
            regex(pattern)
            return _NOTHING
        tags = self.vocabulary.matching(self.conn, self.identity.within, pattern)
        if not tags:
            return _NOTHING
        listed = self._param(json.dumps(tags))
        return self._exists(f"j.value IN (SELECT m.value FROM json_each({listed}) AS m)")

    def _named(self, name: str, depth: int) -> str:
        row = self.conn.execute(
            text("SELECT expression FROM tag_predicates WHERE name = :n"), {"n": name}
        ).first()
        if row is None:
            raise NotFound(f"tags_expr: no named predicate @{name}")
        if name in self.named:
            raise InvalidArgument(f"tags_expr: @{name} names itself")
        self.named.append(name)
        try:
            return self.compile(parse(row.expression), depth)
        except InvalidArgument as e:
            if self.identity.within is not None and len(self.named) == 1:
                # Its text may name any tenant's tags: a confined caller is told no more.
                raise InvalidArgument(f"tags_expr: @{name} does not compile") from e
            raise
        finally:
            self.named.pop()


def compile_expression(
    brain: Brain, conn: Connection, expression: str, *, identity: Identity
) -> Compiled:
    """The expression as an SQL condition over ``t``, its regexes matched against the
    tags of the traces ``identity`` sees."""
    compiler = _Compiler(conn, brain.state(TagVocabulary), identity)
    sql = compiler.compile(parse(expression))
    return Compiled(sql, compiler.params)


def _managing(identity: Identity) -> None:
    """Named predicates are the whole brain's: managed by an admin that is confined to
    no scope ids, since their text may name any tenant's tags."""
    acting(identity, ADMIN)
    if identity.within is not None:
        raise Forbidden(
            f"{identity.name} acts for scope ids only; named predicates are the whole "
            "brain's, managed by an admin confined to none"
        )


def save_predicate(brain: Brain, name: str, expression: str, *, identity: Identity) -> None:
    """Store (or replace) the named predicate ``@name`` (admins confined to no scope ids)."""
    _managing(identity)
    if not isinstance(name, str) or not _PREDICATE.match(name):
        raise InvalidArgument("name: 1 to 64 letters, digits, '.', '_' or '-'")
    parse(expression)  # refused before anything is written when it does not parse
    with brain.transaction() as conn:
        conn.execute(text("DELETE FROM tag_predicates WHERE name = :n"), {"n": name})
        conn.execute(
            text("INSERT INTO tag_predicates (name, expression, created_at) VALUES (:n, :e, :at)"),
            {"n": name, "e": expression, "at": time.time()},
        )
        # Checked as stored: refused (and rolled back) for a loop, a bound or a regex.
        _Compiler(conn, None, identity).compile(parse(f"@{name}"))


def list_predicates(brain: Brain, *, identity: Identity) -> dict[str, str | None]:
    """Each named predicate's expression; to a caller confined to scope ids, the names
    alone (None for each text: it may name other tenants' tags).  Such a caller uses
    ``@name`` all the same, applied to its own memories."""
    acting(identity)
    with brain.read() as conn:
        rows = conn.execute(text("SELECT name, expression FROM tag_predicates ORDER BY name"))
        confined = identity.within is not None
        return {r.name: None if confined else r.expression for r in rows}


def delete_predicate(brain: Brain, name: str, *, identity: Identity) -> None:
    _managing(identity)
    with brain.transaction() as conn:
        gone = conn.execute(text("DELETE FROM tag_predicates WHERE name = :n"), {"n": name})
    if gone.rowcount != 1:
        raise NotFound(f"no named predicate @{name}")
