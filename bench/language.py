"""The learned judgements of what people say: train them, and measure them.

Two models (:mod:`memory_core.language.textmodel`), each a set of logistic
regressions over a text's character and word n-grams:

* ``statements`` reads a sentence someone said: whom it is ``about`` (the speaker,
  someone else, no one), which ``attribute`` of a person it states, whether it is
  ``durable`` (worth keeping for months), ``smalltalk``, and whether the speaker
  asked for it to be kept (``keep``);
* ``questions`` reads a question asked of memory: the ``attribute`` it asks about and
  whether it asks how things are ``now``.

The labelled sets are in ``bench/data/``: ``statements_train_*.jsonl`` and
``questions_train*.jsonl`` to train on, ``*_dev.jsonl`` to choose by, and
``*_heldout.jsonl``, measured only once a method is settled.  Small talk also learns
from the phatic sets' turns (``phatic_train.jsonl``: a content-free turn is small
talk).

    python -m bench.language                 # trained on train, measured on dev
    python -m bench.language --train         # trained on train + dev, written to the package
    python -m bench.language --heldout       # the shipped models on the held-out halves
    python -m bench.language --fresh         # ... on sets written after the method was set

Targets on the held-out halves: attribute accuracy >= 0.9; small talk precision
>= 0.99 at recall >= 0.8 (small talk is judged at ``reading.SMALL_TALK``, the
threshold chosen on the dev half).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memory_core.language import textmodel
from memory_core.language.reading import SMALL_TALK
from memory_core.language.textmodel import DATA as MODELS
from memory_core.language.textmodel import Head, TextModel, ngrams

DATA = Path(__file__).resolve().parent / "data"
# A group chat's line opens with who says it: "Priya: ...".
_SPEAKER = re.compile(r"^(?:[A-Z][\w'-]*(?: [A-Z][\w'-]*)?: )")

STATEMENT_HEADS = ("about", "attribute", "durable", "smalltalk", "keep")
QUESTION_HEADS = ("attribute", "now")


def rows(pattern: str) -> list[dict[str, Any]]:
    """Every labelled row of the files ``bench/data/<pattern>`` names, in name order."""
    found: list[dict[str, Any]] = []
    for path in sorted(DATA.glob(pattern)):
        found += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return found


def said(text: str) -> str:
    """What a labelled line says, without the group chat's speaker label."""
    return _SPEAKER.sub("", text)


def phatic_rows() -> list[dict[str, Any]]:
    """The phatic turns as small-talk labels (a turn's text; content-free or not)."""
    return [
        {"text": r["text"], "smalltalk": r["label"] == "content_free"}
        for r in rows("phatic_train.jsonl")
    ]


def fit(
    labelled: dict[str, list[dict[str, Any]]], heads: Sequence[str], c: float = 10.0
) -> TextModel:
    """One model: the vocabulary of every row's n-grams, then a head per label."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    every = [said(r["text"]) for head in heads for r in labelled[head]]
    vectorizer = TfidfVectorizer(
        analyzer=ngrams, sublinear_tf=True, min_df=2, max_features=40_000, dtype=np.float32
    ).fit(every)
    fitted: dict[str, Head] = {}
    for head in heads:
        texts = [said(r["text"]) for r in labelled[head]]
        labels = [str(r[head]).lower() for r in labelled[head]]
        x = vectorizer.transform(texts)
        model = LogisticRegression(C=c, max_iter=5000, class_weight="balanced").fit(x, labels)
        fitted[head] = Head(
            head,
            tuple(str(k) for k in model.classes_),
            np.ascontiguousarray(np.asarray(model.coef_, dtype=np.float32).T),
            np.asarray(model.intercept_, dtype=np.float32),
        )
    return TextModel(
        vocabulary={str(g): int(k) for g, k in vectorizer.vocabulary_.items()},
        idf=np.asarray(vectorizer.idf_, dtype=np.float32),
        heads=fitted,
    )


def measure(
    model: TextModel, labelled: list[dict[str, Any]], heads: Sequence[str]
) -> dict[str, Any]:
    """Each head's accuracy on ``labelled``; for yes-or-no heads, precision and recall of yes."""
    texts = [said(r["text"]) for r in labelled]
    judged = model.judge(texts)
    out: dict[str, Any] = {}
    for head in heads:
        truth = [str(r[head]).lower() for r in labelled]
        guess = [j[head][0] for j in judged]
        if head == "smalltalk":  # as the readers take it: at the small-talk threshold
            odds = model.probability(head, "true", texts)
            guess = ["true" if p >= SMALL_TALK else "false" for p in odds]
        figures: dict[str, Any] = {
            "accuracy": round(
                sum(t == g for t, g in zip(truth, guess, strict=True)) / len(truth), 3
            )
        }
        if set(truth) <= {"true", "false"}:
            tp = sum(t == g == "true" for t, g in zip(truth, guess, strict=True))
            fp = sum(t == "false" and g == "true" for t, g in zip(truth, guess, strict=True))
            fn = sum(t == "true" and g == "false" for t, g in zip(truth, guess, strict=True))
            figures["precision"] = round(tp / (tp + fp), 3) if tp + fp else None
            figures["recall"] = round(tp / (tp + fn), 3) if tp + fn else None
        out[head] = figures
    return out


def statements_model(extra: list[dict[str, Any]]) -> TextModel:
    train = rows("statements_train_*.jsonl") + extra
    labelled = {h: train for h in STATEMENT_HEADS}
    labelled["smalltalk"] = train + phatic_rows()
    return fit(labelled, STATEMENT_HEADS)


def questions_model(extra: list[dict[str, Any]]) -> TextModel:
    train = rows("questions_train*.jsonl") + extra
    return fit({h: train for h in QUESTION_HEADS}, QUESTION_HEADS)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--train", action="store_true", help="train on train + dev and ship")
    p.add_argument("--heldout", action="store_true", help="measure the shipped models")
    p.add_argument(
        "--fresh", action="store_true", help="measure the shipped models on the fresh sets"
    )
    p.add_argument("--json", type=Path, help="write the figures here")
    args = p.parse_args(argv)
    report: dict[str, Any] = {}
    for name, make, heads in (
        ("statements", statements_model, STATEMENT_HEADS),
        ("questions", questions_model, QUESTION_HEADS),
    ):
        if args.heldout or args.fresh:
            model = textmodel.shipped(name)
            if model is None:
                print(f"{name}: no shipped model (python -m bench.language --train)")
                return 1
            half = "fresh" if args.fresh else "heldout"
            report[name] = measure(model, rows(f"{name}_{half}.jsonl"), heads)
        elif args.train:
            started = time.perf_counter()
            model = make(rows(f"{name}_dev.jsonl"))
            MODELS.mkdir(exist_ok=True)
            (MODELS / f"{name}.npz").write_bytes(model.to_bytes())
            print(f"{name}: trained in {time.perf_counter() - started:.1f} s, written")
            continue
        else:
            report[name] = measure(make([]), rows(f"{name}_dev.jsonl"), heads)
        for head, figures in report[name].items():
            print(f"{name} {head}: " + ", ".join(f"{k} {v}" for k, v in figures.items()))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
