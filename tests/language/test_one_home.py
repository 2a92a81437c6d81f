"""Natural language has one home: word tables and natural-language patterns live in
``memory_core/language/`` and nowhere else.

The scan reads every module of memory_core as code (its AST): a literal list, tuple,
set or dict of six or more lower-case words, or the words of a ``"...".split()``, is a
word table; a pattern handed to ``re.compile`` (or a helper compiling patterns) that
names two words or more is a natural-language pattern.  What is still to move is
listed below by file with its count, and the list only shrinks: a file holding more
than it is allowed fails, and so does one holding less, so that the allowance is
lowered as each table moves.  A vocabulary of the product itself (statuses, field
names, formats, the query syntax's keywords) is no natural language: those are
listed apart.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "memory_core"
HOME = ROOT / "language"
_WORD = re.compile(r"^[a-z][a-z'-]+$")
_COMPILERS = {"compile", "cue", "_any"}
TABLE_SIZE = 6

# What still reads natural language outside its home, to move into memory_core/language/:
# nothing.  A file listed here may hold no more than its count, and no less.
TO_MOVE: dict[str, int] = {}
# The product's own vocabularies, which the scan cannot tell from words.
NOT_LANGUAGE = {
    "consolidation/dream.py": 2,  # a pass report's fields
    "consolidation/salience.py": 1,  # a turn's speaker labels
    "embeddings.py": 1,  # a vector's fields
    "io/__init__.py": 1,  # export formats
    "io/records.py": 1,  # an import's counts
    "proposals/__init__.py": 1,  # exported names
    "proposals/base.py": 2,  # a proposal's fields and statuses
    "proposals/create.py": 1,  # a proposal file's fields
    "retrieval/approximate.py": 1,  # a saved graph's header
    "retrieval/lexical.py": 1,  # FTS5's operators
    "retrieval/latest.py": 1,  # the names of a learned judgement's features
    "retrieval/lexical_pg.py": 1,  # a search's parameters
    "retrieval/relevance.py": 1,  # FTS5's operators
    "retrieval/results.py": 1,  # a hit's fields
    "tools/handlers.py": 1,  # a hit's fields
    "tools/schemas.py": 1,  # a turn's fields
    "traces/history.py": 1,  # a history's fields
    "traces/journal.py": 1,  # a journal entry's fields
    "traces/levels.py": 1,  # a turn's speaker labels
    "traces/stated.py": 1,  # message roles
}


def _pattern_words(pattern: str) -> list[str]:
    bare = re.sub(r"\\[A-Za-z]|\(\?[A-Za-z:<=!P]+", "", pattern)
    return re.findall(r"[A-Za-z]{3,}", bare)


def _is_table(words: list[str]) -> bool:
    return len(words) >= TABLE_SIZE and sum(bool(_WORD.match(w)) for w in words) >= TABLE_SIZE


def findings(path: Path) -> list[tuple[str, int]]:
    """The word tables and natural-language patterns of one module, with their lines."""
    found: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "attr", getattr(node.func, "id", None))
            if name in _COMPILERS:
                texts = [
                    n.value
                    for a in node.args
                    for n in ast.walk(a)
                    if isinstance(n, ast.Constant) and isinstance(n.value, str)
                ]
                if any(len(_pattern_words(t)) >= 2 for t in texts):
                    found.append(("pattern", node.lineno))
            split = node.func
            if (
                isinstance(split, ast.Attribute)
                and split.attr == "split"
                and isinstance(split.value, ast.Constant)
                and isinstance(split.value.value, str)
                and _is_table(split.value.value.split())
            ):
                found.append(("table", node.lineno))
        if isinstance(node, ast.Set | ast.List | ast.Tuple | ast.Dict):
            elements = node.keys if isinstance(node, ast.Dict) else node.elts
            words = [e.value for e in elements if isinstance(e, ast.Constant)]
            words = [w for w in words if isinstance(w, str)]
            if _is_table(words):
                found.append(("table", node.lineno))
    return found


def test_word_tables_and_language_patterns_live_in_the_language_package() -> None:
    held = {
        str(p.relative_to(ROOT)): len(f)
        for p in sorted(ROOT.rglob("*.py"))
        if HOME not in p.parents and (f := findings(p))
    }
    allowed = TO_MOVE | NOT_LANGUAGE
    new = {f: n for f, n in held.items() if n > allowed.get(f, 0)}
    assert not new, f"word tables or language patterns outside memory_core/language/: {new}"
    moved = {f: (held.get(f, 0), n) for f, n in allowed.items() if held.get(f, 0) < n}
    assert not moved, f"fewer than allowed now (held, allowed): lower the allowance: {moved}"


def test_the_scan_finds_a_word_table_and_a_language_pattern(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        'import re\nMONTHS = ("january", "february", "march", "april", "may", "june")\n'
        'ASKS = re.compile(r"\\b(?:where do i live|what is my job)\\b")\n'
        'FIELDS = ("id", "content")\nPLAIN = re.compile(r"\\d+")\n'
    )
    assert findings(module) == [("table", 2), ("pattern", 3)]
