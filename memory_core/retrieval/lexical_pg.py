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
document length in tokens.  PostgreSQL's own ``ts_rank`` knows no document
frequencies: a word in every trace would count as much as a rare name.  The
document frequencies are counted from the GIN index (:func:`document_frequencies`)
and kept, with the index's size and mean length, by the brain's
:class:`~memory_core.retrieval.lexical.TermCounts` until the brain grows by a
tenth -- as FTS5's are read from its index on SQLite; nothing is written for
them, so a write costs the row and its index entries alone.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from typing import Any

from memory_core.brain.db import raw_cursor

K1 = 1.2
B = 0.75
# Extra ranks fetched when ranking before filtering, to cover deleted traces.
OVERFETCH = 10
_TOKEN = re.compile(r'"[^"]*"?|\(|\)|[^\s()"]+')
_WORD = re.compile(r"\w+")
_OPERATORS = {"AND", "OR", "NOT"}
# What FTS5 reads as a word ("bareword"): ASCII letters, digits and "_", U+001A and
# every character past ASCII.  Anything else outside quotes is no FTS5 syntax (it
# answers "syntax error"), so a query holding it is read as plain language on
# PostgreSQL as it is on SQLite ("Ana's sister", "lives in Lisbon, near the river.").
_BAREWORD = re.compile(r"[A-Za-z0-9_\x1a\u0080-\U0010ffff]+")
# The index's columns, which a column filter ("content:word") may name.
_COLUMNS = {"content", "tags", "context"}


class _Unparsable(ValueError):
    pass


Node = tuple[str, frozenset[str]]  # a tsquery text, and the words every match holds


class _Parser:
    """FTS5's query grammar, to a tsquery text of quoted words.

    query   := or
    or      := and ("OR" and)*
    and     := not (["AND"] not)*
    not     := atom ("NOT" atom)*
    atom    := "(" or ")" | "NEAR(" item+ ["," N] ")" | phrase | word["*"]
               (a column filter "col:" is dropped; NEAR is read as AND)

    Each part also says which words every row it matches must hold (all of an
    AND's, those common to an OR's branches, a NOT's left side): the rarest of
    them is where the matches are looked for.
    """

    def __init__(self, query: str, weight: str) -> None:
        self.tokens = _TOKEN.findall(query)
        self.at = 0
        self.weight = weight
        self.words: list[str] = []

    def parse(self) -> Node:
        if not self.tokens:
            raise _Unparsable("empty")
        found = self._or()
        if self.at != len(self.tokens):
            raise _Unparsable(f"unexpected {self.tokens[self.at]!r}")
        return found

    def _peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def _or(self) -> Node:
        parts = [self._and()]
        while self._peek() == "OR":
            self.at += 1
            parts.append(self._and())
        if len(parts) == 1:
            return parts[0]
        return "(" + " | ".join(p for p, _ in parts) + ")", frozenset.intersection(
            *(r for _, r in parts)
        )

    def _and(self) -> Node:
        parts = [self._not()]
        while (nxt := self._peek()) is not None and nxt not in {"OR", ")", "NOT"}:
            if nxt == "AND":
                self.at += 1
            parts.append(self._not())
        return _all(parts)

    def _not(self) -> Node:
        found, required = self._atom()
        while self._peek() == "NOT":
            self.at += 1
            found = f"({found} & !{self._atom()[0]})"
        return found, required

    def _atom(self) -> Node:
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
            return self._phrase(words)
        if ":" in token:  # a column filter, "content:word": the whole index is searched
            column, token = token.split(":", 1)
            if column.lstrip("-") not in _COLUMNS:
                raise _Unparsable(f"no column {column!r}")
            token = token or self._take_word()
        prefix = token.endswith("*")
        bare = token.removeprefix("^").removesuffix("*")
        if not all(_BAREWORD.fullmatch(part) for part in bare.split("+")):
            raise _Unparsable(f"{token!r} is not a word FTS5 reads")
        words = _WORD.findall(bare)
        if not words:
            raise _Unparsable(f"no word in {token!r}")
        if prefix:
            whole, required = self._phrase(words[:-1]) if len(words) > 1 else ("", frozenset())
            last = f"'{words[-1]}':*{self.weight}"
            return (f"({whole[1:-1]} <-> {last})" if whole else f"({last})"), required
        return self._phrase(words)

    def _phrase(self, words: list[str]) -> Node:
        return "(" + " <-> ".join(self._word(w) for w in words) + ")", frozenset(
            w.lower() for w in words
        )

    def _near(self) -> Node:
        """``NEAR(a b "c d", N)``: every item, as AND (the distance is checked, not kept)."""
        self.at += 1
        items: list[Node] = []
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
            items.extend(self._phrase([w]) for w in words)
        if self._peek() != ")" or not items:
            raise _Unparsable("unbalanced NEAR")
        self.at += 1
        return _all(items)

    def _take_word(self) -> str:
        token = self._peek()
        if token is None:
            raise _Unparsable("column filter without a word")
        self.at += 1
        return token

    def _word(self, word: str) -> str:
        self.words.append(word)
        return f"'{word}'" + (f":{self.weight}" if self.weight else "")


def _all(parts: list[Node]) -> Node:
    if len(parts) == 1:
        return parts[0]
    return "(" + " & ".join(p for p, _ in parts) + ")", frozenset().union(*(r for _, r in parts))


@dataclass(frozen=True)
class Parsed:
    """An FTS5-syntax query as PostgreSQL takes it."""

    tsquery: str
    words: str  # every word it names, space-separated
    required: frozenset[str]  # lower-cased words every match holds


def tsquery(query: str, *, only_own_words: bool) -> Parsed | None:
    """``query`` (FTS5 syntax) as a tsquery, or None when it is not FTS5 syntax.

    ``only_own_words``: match in the content and tags alone, not the context.
    """
    parser = _Parser(query, "A" if only_own_words else "")
    try:
        text, required = parser.parse()
    except _Unparsable:
        return None
    return Parsed(text, " ".join(parser.words), required)


def any_of(words: list[str], *, only_own_words: bool) -> tuple[str, str]:
    """A tsquery matching any of ``words`` (the natural-language fallback)."""
    weight = ":A" if only_own_words else ""
    plain = [w for word in words for w in _WORD.findall(word)]
    return " | ".join(f"'{w}'{weight}" for w in plain), " ".join(plain)


# BM25 from the postings of the query's lexemes: each row's score is the sum, over
# its postings, of the lexeme's idf times the saturated frequency (a position in the
# previous turn counting search_context_weight).
_SATURATED = (
    "q.idf * p.tf * (:k1 + 1) / (p.tf + :k1 * (1 - :b + :b * p.doclen / CAST(:avgdl AS float8)))"
)
_WEIGHTS = "unnest(CAST(:lexemes AS text[]), CAST(:idfs AS float8[])) AS q(lexeme, idf)"
_TF = "n_own + CAST(:cw AS float8) * n_context AS tf"
# Any of the words: the rows holding any of the lexemes, read in the B-tree by lexeme.
# {own} keeps out rows that hold a word only in their context when its weight is 0.
_ANY_WORD = f"""
SELECT p.seq, sum({_SATURATED}) AS score
FROM (
    SELECT lexeme, seq, doclen, {_TF} FROM memory_traces_postings
    WHERE lexeme = ANY(CAST(:lexemes AS text[])) {{own}} {{within}}
) AS p JOIN {_WEIGHTS} ON q.lexeme = p.lexeme
GROUP BY p.seq
"""
# What an FTS5-syntax query matches, each matched row's postings read by row (0 where
# only a prefix matched).  The rows are looked for among those holding the rarest word
# every match must hold ({among}: its postings), else in the GIN index.
_MATCHES = f"""
SELECT m.rowid AS seq, coalesce(sum({_SATURATED}), 0) AS score
FROM (
    SELECT f.rowid FROM memory_traces_fts f
    WHERE {{among}} {{within}} f.doc @@ to_tsquery('reverie', :tsq)
) AS m
LEFT JOIN LATERAL (
    SELECT lexeme, doclen, {_TF} FROM memory_traces_postings
    WHERE seq = m.rowid AND lexeme = ANY(CAST(:lexemes AS text[]))
) AS p ON true
LEFT JOIN {_WEIGHTS} ON q.lexeme = p.lexeme
GROUP BY m.rowid
"""


def any_word(query: str) -> bool:
    """Whether an FTS5-syntax query is only words, one or several OR-ed: its matches
    are then the postings of its words alone."""
    tokens = _TOKEN.findall(query)
    return (
        bool(tokens)
        and all(
            t == "OR" if i % 2 else bool(_WORD.fullmatch(t)) and t not in _OPERATORS
            for i, t in enumerate(tokens)
        )
        and len(tokens) % 2 == 1
    )


_AMONG_SEED = (
    "f.rowid IN (SELECT seq FROM memory_traces_postings "
    "WHERE lexeme = ANY(CAST(:seed AS text[]))) AND"
)


def scored_sql(
    *, any_word: bool, own_words_only: bool, seeded: bool = False, where: str | None = None
) -> str:
    """The (seq, score) rows of a query: any of its words (from the postings alone),
    or what its FTS5-syntax tsquery matches (``seeded``: among the rows holding one
    word all matches hold); ``where``: only traces ``t`` it holds for, narrowed before
    anything is scored (a user's scope id among a hundred thousand traces)."""
    if any_word:
        within = f"AND seq IN (SELECT t.seq FROM memory_traces t WHERE {where})" if where else ""
        return _ANY_WORD.format(own="AND n_own > 0" if own_words_only else "", within=within)
    within = f"f.rowid IN (SELECT t.seq FROM memory_traces t WHERE {where}) AND" if where else ""
    return _MATCHES.format(among=_AMONG_SEED if seeded else "", within=within)


def idf(df: int, docs: int) -> float:
    """FTS5's inverse document frequency (floored at 1e-6, as bm25() does)."""
    return max(math.log((docs - df + 0.5) / (df + 0.5)), 1e-6)


def index_size(conn: Any) -> tuple[int, float]:
    """Documents in the index and their mean length in tokens."""
    with raw_cursor(conn) as cursor:
        docs, mean = cursor.execute(
            "SELECT count(*), coalesce(avg(doclen), 0) FROM memory_traces_fts"
        ).fetchone()
    return int(docs), float(mean)


def document_frequencies(conn: Any, terms: list[str]) -> dict[str, tuple[int, list[str]]]:
    """How many indexed traces hold each of ``terms`` (words, stemmed as the index
    stems them: their postings, counted in the B-tree), and the term's lexemes."""
    if not terms:
        return {}
    with raw_cursor(conn) as cursor:
        rows = cursor.execute(
            "SELECT x.term, (SELECT count(*) FROM memory_traces_postings p WHERE p.lexeme = "
            "ANY(l.lexemes)), l.lexemes FROM unnest(CAST(:terms AS text[])) AS x(term), "
            "LATERAL (SELECT tsvector_to_array(to_tsvector('reverie', x.term)) AS lexemes) AS l",
            {"terms": terms},
        ).fetchall()
    return {str(t): (int(n), list(lexemes)) for t, n, lexemes in rows}


def run(
    conn: Any,
    tsq: str,
    idfs: dict[str, float],
    lexemes_of: dict[str, list[str]],
    avgdl: float,
    where: str | None,
    params: dict[str, Any],
    depth: int,
    context_weight: float,
    columns: str,
    *,
    any_word: bool,
    seed: str | None = None,
) -> list[Any]:
    """The ``depth`` best rows (``columns`` of ``t`` then the score) the query matches:
    any of the words ``idfs`` weighs (``any_word``; ``lexemes_of`` each word's, as the
    index stems it), or the tsquery ``tsq`` (``seed``: a word every match holds, looked
    for first).  ``where`` None: active traces."""
    with raw_cursor(conn) as cursor:
        weight: dict[str, float] = {}
        for word, word_idf in idfs.items():
            for lexeme in lexemes_of.get(word, []):
                weight[lexeme] = max(weight.get(lexeme, 0.0), word_idf)
        seed_lexemes = lexemes_of.get(seed, []) if seed is not None else []
        if any_word and not weight:
            return []
        values = {
            **params,
            "tsq": tsq,
            "lexemes": list(weight),
            "idfs": list(weight.values()),
            "avgdl": max(avgdl, 1.0),
            "k1": K1,
            "b": B,
            "cw": float(context_weight),
            "seed": seed_lexemes,
        }
        shape = functools.partial(
            scored_sql,
            any_word=any_word,
            own_words_only=context_weight <= 0,
            seeded=bool(seed_lexemes),
        )
        if where is not None:
            sql = (
                f"SELECT {columns}, r.score FROM ({shape(where=where)}) AS r "
                "JOIN memory_traces t ON t.seq = r.seq "
                "ORDER BY r.score DESC, r.seq DESC LIMIT :limit"
            )
            return list(cursor.execute(sql, {**values, "limit": depth}).fetchall())
        return _rank_active(cursor, shape(), values, depth, columns)


def _rank_active(
    cursor: Any, scored: str, values: dict[str, Any], depth: int, columns: str
) -> list[Any]:
    """Rank in the index alone and read the best rows in the same statement, widening
    until ``depth`` active ones are found or the matches run out (soft-deleted traces
    stay indexed)."""
    ranked_sql = (
        f"WITH r AS (SELECT r.seq, r.score FROM ({scored}) AS r "
        "ORDER BY 2 DESC, 1 DESC LIMIT :limit) "
        f"SELECT {columns}, r.score, t.deleted FROM r JOIN memory_traces t ON t.seq = r.seq "
        "ORDER BY r.score DESC, r.seq DESC"
    )
    want = depth + OVERFETCH
    while True:
        ranked = cursor.execute(ranked_sql, {**values, "limit": want}).fetchall()
        active = [row[:-1] for row in ranked if not row[-1]]
        if len(active) >= depth or len(ranked) < want:
            return active[:depth]
        want *= 4
