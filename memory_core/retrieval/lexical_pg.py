"""The BM25 channel on a PostgreSQL brain: FTS5's query language, BM25 in SQL.

The index is ``memory_traces_fts``'s stored ``tsvector`` (content and tags
weighted A, the previous turn B) under a GIN index; the brain's migration 0012
describes it.  A query in FTS5's syntax (AND, OR, NOT, "phrase", prefix*,
parentheses) is parsed by :class:`_Parser`, a recursive-descent parser of
FTS5's grammar, into a ``tsquery``; what it cannot parse is ``None``, and the
caller falls back to plain words as on SQLite.

Matches are ranked by Okapi BM25 exactly as FTS5's ``bm25()`` computes it --
k1 1.2, b 0.75, idf ``ln((N - n + 0.5) / (n + 0.5))`` floored at 1e-6, term
frequencies weighted by column (the context's ``search_context_weight``),
document length in tokens -- with N, n and the mean length read from the
vocabulary table a trigger keeps (``memory_traces_vocab``).  PostgreSQL's own
``ts_rank`` knows no document frequencies: a word in every trace would count as
much as a rare name.
"""

from __future__ import annotations

import re
from typing import Any

from memory_core.brain.db import raw_cursor

K1 = 1.2
B = 0.75
_TOKEN = re.compile(r'"[^"]*"?|\(|\)|[^\s()"]+')
_WORD = re.compile(r"\w+")
_OPERATORS = {"AND", "OR", "NOT"}


class _Unparsable(ValueError):
    pass


class _Parser:
    """FTS5's query grammar, to a tsquery text of quoted words.

    query   := or
    or      := and ("OR" and)*
    and     := not (["AND"] not)*
    not     := atom ("NOT" atom)*
    atom    := "(" or ")" | "NEAR(" item+ ["," N] ")" | phrase | word["*"]
               (a column filter "col:" is dropped; NEAR is read as AND)
    """

    def __init__(self, query: str, weight: str) -> None:
        self.tokens = _TOKEN.findall(query)
        self.at = 0
        self.weight = weight
        self.words: list[str] = []

    def parse(self) -> str:
        if not self.tokens:
            raise _Unparsable("empty")
        found = self._or()
        if self.at != len(self.tokens):
            raise _Unparsable(f"unexpected {self.tokens[self.at]!r}")
        return found

    def _peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def _or(self) -> str:
        parts = [self._and()]
        while self._peek() == "OR":
            self.at += 1
            parts.append(self._and())
        return parts[0] if len(parts) == 1 else "(" + " | ".join(parts) + ")"

    def _and(self) -> str:
        parts = [self._not()]
        while (nxt := self._peek()) is not None and nxt not in {"OR", ")", "NOT"}:
            if nxt == "AND":
                self.at += 1
            parts.append(self._not())
        return parts[0] if len(parts) == 1 else "(" + " & ".join(parts) + ")"

    def _not(self) -> str:
        found = self._atom()
        while self._peek() == "NOT":
            self.at += 1
            found = f"({found} & !{self._atom()})"
        return found

    def _atom(self) -> str:
        token = self._peek()
        if token is None or token in _OPERATORS or token == ")":
            raise _Unparsable(f"expected a word, got {token!r}")
        self.at += 1
        if token == "NEAR" and self._peek() == "(":
            return self._near()
        if token == "(":
            inner = self._or()
            if self._peek() != ")":
                raise _Unparsable("unbalanced parenthesis")
            self.at += 1
            return inner
        if token.startswith('"'):
            if len(token) < 2 or not token.endswith('"'):
                raise _Unparsable("unterminated string")
            words = _WORD.findall(token[1:-1])
            if not words:
                raise _Unparsable("empty phrase")
            return "(" + " <-> ".join(self._word(w) for w in words) + ")"
        if ":" in token:  # a column filter, "content:word": the whole index is searched
            token = token.split(":", 1)[1] or self._take_word()
        prefix = token.endswith("*")
        words = _WORD.findall(token.lstrip("^+"))
        if not words:
            raise _Unparsable(f"no word in {token!r}")
        if prefix:
            return (
                "("
                + " <-> ".join(self._word(w) for w in words[:-1])
                + (" <-> " if len(words) > 1 else "")
                + f"'{words[-1]}':*{self.weight})"
            )
        return "(" + " <-> ".join(self._word(w) for w in words) + ")"

    def _near(self) -> str:
        """``NEAR(a b "c d", N)``: every item, as AND (the distance is checked, not kept)."""
        self.at += 1
        items: list[str] = []
        while (token := self._peek()) not in (None, ")"):
            self.at += 1
            distance = None
            if token.startswith(","):
                distance = token[1:] or self._take_word()
            elif token.endswith(","):
                token, distance = token[:-1], self._take_word()
            if distance is not None:
                if not distance.isdigit() or self._peek() != ")":
                    raise _Unparsable("NEAR takes a whole number of tokens")
                if token.startswith(","):
                    continue
            if token.startswith('"'):
                self.at -= 1
                self.tokens[self.at] = token
                items.append(self._atom())
                continue
            words = _WORD.findall(token)
            if not words:
                raise _Unparsable(f"no word in {token!r}")
            items.extend(self._word(w) for w in words)
        if self._peek() != ")" or not items:
            raise _Unparsable("unbalanced NEAR")
        self.at += 1
        return "(" + " & ".join(items) + ")"

    def _take_word(self) -> str:
        token = self._peek()
        if token is None:
            raise _Unparsable("column filter without a word")
        self.at += 1
        return token

    def _word(self, word: str) -> str:
        self.words.append(word)
        return f"'{word}'" + (f":{self.weight}" if self.weight else "")


def tsquery(query: str, *, only_own_words: bool) -> tuple[str, str] | None:
    """``query`` (FTS5 syntax) as a tsquery text and the words it names, or None.

    ``only_own_words``: match in the content and tags alone, not the context.
    """
    parser = _Parser(query, "A" if only_own_words else "")
    try:
        return parser.parse(), " ".join(parser.words)
    except _Unparsable:
        return None


def any_of(words: list[str], *, only_own_words: bool) -> tuple[str, str]:
    """A tsquery matching any of ``words`` (the natural-language fallback)."""
    weight = ":A" if only_own_words else ""
    plain = [w for word in words for w in _WORD.findall(word)]
    return " | ".join(f"'{w}'{weight}" for w in plain), " ".join(plain)


# BM25 over the matches of one tsquery.  The vocabulary's empty term holds the
# index's document count and total tokens.
_RANK_SQL = """
WITH q AS (
    SELECT to_tsquery('reverie', :tsq) AS tsq,
           tsvector_to_array(to_tsvector('reverie', :words)) AS lexemes
), n AS (
    SELECT greatest(doc, 1)::float8 AS docs, greatest(cnt, 1)::float8 / greatest(doc, 1) AS avgdl
    FROM memory_traces_vocab WHERE term = ''
), idf AS (
    SELECT v.term, greatest(ln((n.docs - v.doc + 0.5) / (v.doc + 0.5)), 1e-6) AS idf
    FROM memory_traces_vocab v, q, n WHERE v.term = ANY(q.lexemes) AND v.term <> ''
), ranked AS (
    SELECT f.rowid AS seq, coalesce(sum(idf.idf * m.tf * (:k1 + 1)
        / (m.tf + :k1 * (1 - :b + :b * f.doclen / n.avgdl))), 0) AS score
    FROM q, n, memory_traces_fts f
    JOIN memory_traces t ON t.seq = f.rowid
    LEFT JOIN LATERAL (
        SELECT u.lexeme, (SELECT sum(CASE WHEN w = 'B' THEN CAST(:cw AS float8) ELSE 1.0 END)
                          FROM unnest(u.weights) AS w) AS tf
        FROM unnest(f.doc) AS u WHERE u.lexeme = ANY(q.lexemes)
    ) AS m ON true
    LEFT JOIN idf ON idf.term = m.lexeme
    WHERE f.doc @@ q.tsq AND {where}
    GROUP BY f.rowid
    ORDER BY score DESC, f.rowid DESC
    LIMIT :limit
)
SELECT {columns}, ranked.score FROM ranked JOIN memory_traces t ON t.seq = ranked.seq
ORDER BY ranked.score DESC, ranked.seq DESC
"""


def run(
    conn: Any,
    tsq: str,
    words: str,
    where: str | None,
    params: dict[str, Any],
    depth: int,
    context_weight: float,
    columns: str,
) -> list[Any]:
    """The ``depth`` best rows (``columns`` of ``t`` then the score) matching ``tsq``."""
    sql = _RANK_SQL.format(where=where or "t.deleted = 0", columns=columns)
    values = {
        **params,
        "tsq": tsq,
        "words": words,
        "k1": K1,
        "b": B,
        "cw": float(context_weight),
        "limit": depth,
    }
    with raw_cursor(conn) as cursor:
        return list(cursor.execute(sql, values).fetchall())
