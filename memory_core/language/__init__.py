"""What Reverie reads in what people say: the one home of natural language.

Word tables, sentence splitting, the grammar of times and the judgements of what a
statement is all live here; every other module asks this package and holds no word
list or natural-language pattern of its own.
"""

from __future__ import annotations

from memory_core.language.sentences import first_sentence, sentences

__all__ = ["first_sentence", "sentences"]
