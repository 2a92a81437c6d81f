"""Scripts written without spaces between words, cut into units a word index can match.

Chinese and Japanese (and Korean, whose spaced units carry their particles: "서울에")
run a sentence's words together, so a word index that splits on spaces holds
"我对花生过敏" as one token and never matches "过敏" (allergic) inside it.  Such a
run is indexed as its overlapping pairs of characters ("我对 对花 花生 生过 过敏"),
as CJK analysers of full-text engines do: a word of two characters is then one
token, a longer one the pairs it is made of, matched in a row, and a query is cut
the same way.  A single character between other text stands alone.

:func:`segmented` is what the brain's full-text index reads, on SQLite (a function
registered on each connection) and on PostgreSQL (:data:`POSTGRESQL`, the same cut
written in PL/pgSQL); the two must agree character for character.  An index holds
what the cut gave when each text was written, and a delete must name exactly that:
a change to the cut comes with a migration that rebuilds the index.
"""

from __future__ import annotations

import re

# Hiragana, katakana (with the prolonged sound mark), CJK ideographs (extension A, the
# unified block, compatibility ideographs, the supplementary planes' extensions),
# Hangul syllables and half-width katakana.
_RANGES = (
    ("3040", "30FF"),
    ("31F0", "31FF"),
    ("3400", "4DBF"),
    ("4E00", "9FFF"),
    ("AC00", "D7AF"),
    ("F900", "FAFF"),
    ("FF66", "FF9F"),
    ("20000", "2FA1F"),
)
_CLASS = "".join(f"{chr(int(a, 16))}-{chr(int(b, 16))}" for a, b in _RANGES)
_RUN = re.compile(f"[{_CLASS}]+")


def _pairs(m: re.Match[str]) -> str:
    run = m.group(0)
    if len(run) == 1:
        return f" {run} "
    return " " + " ".join(run[i : i + 2] for i in range(len(run) - 1)) + " "


def segmented(text: str | None) -> str | None:
    """``text`` with each run of unspaced script cut into its pairs of characters,
    set off by spaces; the rest as it is (None stays None)."""
    if not text or _RUN.search(text) is None:
        return text
    return _RUN.sub(_pairs, text)


def _escape(code: str) -> str:
    return f"\\u{code}" if len(code) == 4 else f"\\U{int(code, 16):08X}"


# The same ranges in PostgreSQL's regular expressions.
_PG_CLASS = "".join(f"{_escape(a)}-{_escape(b)}" for a, b in _RANGES)


# The same cut for a PostgreSQL brain's index (its migration creates it).
POSTGRESQL = f"""
CREATE OR REPLACE FUNCTION reverie_segmented(t text) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    out text := '';
    piece text[];
    n integer;
BEGIN
    IF t !~ '[{_PG_CLASS}]' THEN
        RETURN t;
    END IF;
    FOR piece IN SELECT regexp_matches(t, '([{_PG_CLASS}]+)|([^{_PG_CLASS}]+)', 'g') LOOP
        IF piece[1] IS NULL THEN
            out := out || piece[2];
        ELSE
            n := char_length(piece[1]);
            IF n = 1 THEN
                out := out || ' ' || piece[1] || ' ';
            ELSE
                out := out || ' ' || substr(piece[1], 1, 2);
                FOR i IN 2 .. n - 1 LOOP
                    out := out || ' ' || substr(piece[1], i, 2);
                END LOOP;
                out := out || ' ';
            END IF;
        END IF;
    END LOOP;
    RETURN out;
END $$
"""
