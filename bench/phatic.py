"""The phatic judgement: train it, and measure what it adds to the word rules.

``--train`` fits a logistic regression (scikit-learn) on the MiniLM vectors of
the sentences of the labelled turns in ``bench/data/phatic_train.jsonl`` (a
content-free turn's sentences are content-free; a one-sentence contentful
turn's sentence is contentful), picks the probability threshold at which the
out-of-fold judgement (a turn: its least phatic sentence) of the turns the
word rules leave ordinary reaches ``--precision`` for "content-free", and
writes the weights to ``memory_core/consolidation/data/phatic.json``.

Without ``--train`` it reports, for the held-out turns
(``bench/data/phatic_heldout.jsonl``, never used in training) and for the
shared LoCoMo conversations' labelled content-free turns
(``bench/data/locomo_content_free.json``), how many content-free turns are
recognised and how many contentful ones are mistaken for content-free: by the
word rules alone and with the judgement; for LoCoMo also how many question
evidence turns each would let decay as small talk.

Run from the repository root::

    python -m bench.phatic --train
    python -m bench.phatic
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

import memory_core as mc
from bench.locomo import DEFAULT_DATA, load_conversations, turn_content
from memory_core.consolidation.phatic import WEIGHTS, PhaticModel, model_for
from memory_core.consolidation.salience import may_be_phatic, salience, sentences
from memory_core.embedders import make_embedder
from memory_core.episodes import episode_text

DATA = Path(__file__).resolve().parent / "data"
TRAIN = DATA / "phatic_train.jsonl"
HELDOUT = DATA / "phatic_heldout.jsonl"
CONTENT_FREE = "content_free"


def load(path: Path) -> tuple[list[str], npt.NDArray[np.bool_]]:
    """Each labelled turn as the turn path stores it, and whether it is content-free."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return (
        [episode_text(r["text"], "") for r in rows],
        np.array([r["label"] == CONTENT_FREE for r in rows], dtype=np.bool_),
    )


def _embed(texts: Sequence[str]) -> npt.NDArray[np.float32]:
    embedder = make_embedder(mc.load_settings(embedder="minilm"))
    assert embedder is not None
    return embedder.embed(list(texts))


def _instances(texts: Sequence[str], labels: npt.NDArray[np.bool_]) -> tuple[list[str], list[int]]:
    """Sentences to learn from: every sentence of a content-free turn is content-free;
    a contentful turn of one sentence is that sentence (which sentence of a longer
    one holds the content is not known, so it teaches nothing here)."""
    xs: list[str] = []
    ys: list[int] = []
    for text, label in zip(texts, labels, strict=True):
        parts = sentences(text)
        if label:
            xs += parts
            ys += [1] * len(parts)
        elif len(parts) == 1:
            xs += parts
            ys.append(0)
    return xs, ys


def _fit(texts: Sequence[str], labels: npt.NDArray[np.bool_], vectors: dict[str, Any]) -> Any:
    from sklearn.linear_model import LogisticRegression

    xs, ys = _instances(texts, labels)
    fit = LogisticRegression(C=4.0, class_weight="balanced", max_iter=5000)
    return fit.fit(np.stack([vectors[x] for x in xs]), np.array(ys))


def train(precision: float, folds: int, seed: int) -> dict[str, Any]:
    from sklearn.model_selection import StratifiedKFold

    texts, labels = load(TRAIN)
    every = sorted({s for t in texts for s in sentences(t)})
    vectors = dict(zip(every, _embed(every), strict=True))
    embed = lambda batch: np.stack([vectors[x] for x in batch])  # noqa: E731
    out_of_fold = np.zeros(len(texts))
    for fold_train, fold_test in StratifiedKFold(folds, shuffle=True, random_state=seed).split(
        texts, labels
    ):
        fit = _fit([texts[i] for i in fold_train], labels[fold_train], vectors)
        model = PhaticModel("fold", fit.coef_[0].astype(np.float32), float(fit.intercept_[0]), 0.5)
        out_of_fold[fold_test] = model.judge([texts[i] for i in fold_test], embed)
    # The threshold is chosen where it matters: turns the word rules leave to it.
    asked = np.array([may_be_phatic(t) for t in texts], dtype=np.bool_)
    threshold, reached = _threshold(out_of_fold[asked], labels[asked], precision)
    fit = _fit(texts, labels, vectors)
    embedder = make_embedder(mc.load_settings(embedder="minilm"))
    assert embedder is not None
    model = PhaticModel(
        embedder=embedder.name,
        weights=fit.coef_[0].astype(np.float32),
        bias=float(fit.intercept_[0]),
        threshold=threshold,
    )
    about = {
        "trained_on": TRAIN.relative_to(DATA.parent.parent).as_posix(),
        "sha256": hashlib.sha256(TRAIN.read_bytes()).hexdigest(),
        "examples": len(texts),
        "out_of_fold": {"asked": int(asked.sum()), "precision_wanted": precision, **reached},
    }
    WEIGHTS.parent.mkdir(parents=True, exist_ok=True)
    WEIGHTS.write_text(model.to_json(**about) + "\n")
    model_for.cache_clear()
    return {"threshold": threshold, **about}


def _threshold(
    probability: npt.NDArray[np.float64], labels: npt.NDArray[np.bool_], precision: float
) -> tuple[float, dict[str, float]]:
    """The lowest threshold whose content-free precision is at least ``precision``."""
    best = 1.0
    reached = {"precision": 1.0, "recall": 0.0}
    for t in sorted(set(probability.tolist()), reverse=True):
        said = probability >= t
        tp = int((said & labels).sum())
        p = tp / int(said.sum())
        if p < precision:
            break
        best = float(t)
        reached = {"precision": round(p, 3), "recall": round(tp / max(int(labels.sum()), 1), 3)}
    return best, reached


def judged(
    texts: Sequence[str], previous: Sequence[str | None] | None = None
) -> dict[str, npt.NDArray[np.bool_]]:
    """What the word rules alone and the rules with the judgement call content-free
    (``previous``: the turn before each in its conversation, where there is one)."""
    before = list(previous) if previous is not None else [None] * len(texts)
    embedder = make_embedder(mc.load_settings(embedder="minilm"))
    assert embedder is not None
    model = model_for(embedder.name)
    rules = np.array([salience(t).smalltalk for t in texts], dtype=np.bool_)
    asked = np.array(
        [may_be_phatic(t, b) for t, b in zip(texts, before, strict=True)], dtype=np.bool_
    )
    said = np.zeros(len(texts), dtype=np.bool_)
    if model is not None:
        ids = np.flatnonzero(asked)
        p = model.judge([texts[i] for i in ids], embedder.embed)
        said[ids] = np.array(p) >= model.threshold
    return {"rules": rules, "with judgement": rules | said}


def _score(said: np.ndarray, labels: np.ndarray) -> dict[str, Any]:
    tp = int((said & labels).sum())
    return {
        "content_free": int(labels.sum()),
        "recognised": tp,
        "recall": round(tp / max(int(labels.sum()), 1), 3),
        "mistaken": int((said & ~labels).sum()),
        "of_content": int((~labels).sum()),
        "precision": round(tp / max(int(said.sum()), 1), 3),
    }


def evaluate() -> dict[str, Any]:
    out: dict[str, Any] = {}
    texts, labels = load(HELDOUT)
    out["heldout"] = {k: _score(v, labels) for k, v in judged(texts).items()}
    marks = json.loads((DATA / "locomo_content_free.json").read_text())["conversations"]
    texts, flags, evidence = [], [], []
    previous: list[str | None] = []
    for conv in load_conversations(DEFAULT_DATA, None):
        data = json.loads((DEFAULT_DATA / f"{conv.name}.json").read_text())
        wanted = {e for q in conv.questions for e in q.evidence}
        free = set(marks.get(conv.name, []))
        for key in sorted(k for k in data if k.startswith("session_") and k.count("_") == 1):
            for k, turn in enumerate(data[key] or []):
                previous.append(texts[-1] if k else None)
                texts.append(episode_text(turn_content(turn), ""))
                flags.append(turn["dia_id"] in free)
                evidence.append(turn["dia_id"] in wanted)
    labels, is_evidence = np.array(flags), np.array(evidence)
    out["locomo"] = {}
    for k, said in judged(texts, previous).items():
        evidence_turns = int((said & is_evidence).sum())
        out["locomo"][k] = {**_score(said, labels), "evidence_turns": evidence_turns}
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", action="store_true", help="fit and write the weights")
    parser.add_argument("--precision", type=float, default=0.98)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    if args.train:
        print(json.dumps(train(args.precision, args.folds, args.seed), indent=2))
    result = evaluate()
    for part, rows in result.items():
        print(part)
        for name, r in rows.items():
            print(f"  {name:<16}" + "  ".join(f"{k} {v}" for k, v in r.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
