"""The multilingual embedder's centre: the mean of its vectors over texts of our own.

multilingual-e5-small places every text in a narrow cone: two unrelated sentences
have a cosine near 0.8, so a similarity floor, a duplicate threshold or a relevance
written for MiniLM's spread (unrelated near 0) would take everything for related.
:class:`memory_core.embedders.e5.E5Embedder` subtracts the mean of the vectors of
stored texts (and, apart, of questions) and scales the rest to unit length: unrelated
statements then meet near 0, and what is close stays close.  The means are taken over
the labelled statements and questions of ``bench/data/`` (what people tell an
assistant and what they ask of it) and shipped as
``memory_core/embedders/data/e5_centre.npz``.

    python -m bench.e5_centre            # the spread before and after, on held-out texts
    python -m bench.e5_centre --write    # compute the centre and ship it
    python -m bench.e5_centre --cost     # CPU time per text against MiniLM, same texts
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

import numpy as np

from bench.language import rows, said
from memory_core.embedders.e5 import CENTRE, E5Embedder


def _texts() -> tuple[list[str], list[str]]:
    statements = [said(r["text"]) for r in rows("statements_train_*.jsonl")]
    questions = [r["text"] for r in rows("questions_train*.jsonl")]
    return statements, questions


def _spread(e5: E5Embedder, label: str) -> None:
    """Cosines of held-out statements with each other, and of questions with them."""
    statements = [said(r["text"]) for r in rows("statements_heldout.jsonl")]
    questions = [r["text"] for r in rows("questions_heldout.jsonl")]
    p, q = e5.embed(statements), e5.embed_queries(questions)
    pairs = p[: len(p) // 2] @ p[len(p) // 2 :].T
    asked = q @ p.T
    print(
        f"{label}: statement pairs median {np.median(pairs):.3f}, 99th percentile "
        f"{np.quantile(pairs, 0.99):.3f}; question and statement median "
        f"{np.median(asked):.3f}, a question's closest, mean {asked.max(axis=1).mean():.3f}"
    )


def _cost() -> None:
    """CPU seconds per stored text, each model on the same held-out statements in this
    process (both warmed up first), and their ratio."""
    from memory_core.embedders.minilm import MiniLMEmbedder

    texts = [said(r["text"]) for r in rows("statements_heldout.jsonl")]
    spent = {}
    for name, model in (("minilm", MiniLMEmbedder()), ("e5", E5Embedder())):
        model.embed(texts[:8])
        started = time.process_time()
        model.embed(texts)
        spent[name] = (time.process_time() - started) / len(texts)
        print(f"{name}: {spent[name] * 1000:.2f} ms of CPU a text ({len(texts)} texts)")
    print(f"e5 / minilm: {spent['e5'] / spent['minilm']:.1f}x")


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--write", action="store_true", help="compute the centre and ship it")
    p.add_argument("--cost", action="store_true", help="CPU time per text against MiniLM")
    args = p.parse_args(argv)
    if args.cost:
        _cost()
        return 0
    if args.write:
        statements, questions = _texts()
        raw = E5Embedder(centred=False)
        passages = raw.embed(statements).mean(axis=0)
        queries = raw.embed_queries(questions).mean(axis=0)
        CENTRE.parent.mkdir(exist_ok=True)
        np.savez(CENTRE, passage=passages.astype(np.float32), query=queries.astype(np.float32))
        print(f"written {CENTRE} from {len(statements)} statements and {len(questions)} questions")
        return 0
    _spread(E5Embedder(centred=False), "as the model gives them")
    _spread(E5Embedder(), "centred")
    return 0


if __name__ == "__main__":
    sys.exit(main())
