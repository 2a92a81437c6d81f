"""The judgement that puts the latest answer first: train it, and measure it.

A question of now is answered among the best few memories a search finds
(:mod:`memory_core.retrieval.latest`); which of them holds the answer at the time
asked is a logistic regression over what search knows of each.  Its examples are
questions of now with the turns that answer them, asked through the real paths:
every labelled turn posted through ``POST /v1/turns`` of the embedded default,
ingested and embedded by the workers, each question sent through
``GET /v1/search`` (with ``as_of`` its time), and the pool of memories the search
judged recorded with the features it computed.  The sets trained on:

* ``nowlife_dev.json``: a scripted life's questions of now at ten points in time;
* ``changes_dev.jsonl``, ``changes_asides_dev.jsonl`` and ``changes_train.jsonl``:
  change chains, each asked now (the last statement answers) and as of each older
  value's time (that one does).

Their held-out and fresh halves are never trained on.

    python -m bench.latest            # cross-validated: folds of whole attributes
    python -m bench.latest --train    # fitted on all, written to the package

The figure: of the questions whose pool holds an answer, how often the judgement
picks one (the end-to-end figures are ``bench.nowlife``'s and ``bench.changes``').
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from fastapi.testclient import TestClient
from sklearn.ensemble import HistGradientBoostingClassifier

from bench import changes, nowlife
from bench.served import embedded, post_turn
from memory_core.retrieval import latest

FOLDS = 5
# The trees: how many, how deep, and each one's share (chosen across folds of
# attributes of the sets trained on).
TREES, DEPTH, RATE = 200, 4, 0.05
# Which way a feature may move the judgement, whatever the others: closer, about the
# one asked, likelier to state what is asked, news -- more likely the answer; closer
# ones or ones stating it said after it, a look back, superseded -- less.
MONOTONE = {
    "similarity_share": 1,
    "closer": -1,
    "vector_share": 1,
    "score_share": 1,
    "position": -1,
    "newer_close": -1,
    "stated": 1,
    "about": 1,
    "superseded": -1,
    "newer": -1,
    "match": 1,
    "likeliest": 1,
    "newer_likeliest": -1,
    "newer_match": -1,
    "looks_back": -1,
    "news": 1,
}


@dataclass(frozen=True)
class Example:
    """A question's pool: what the judgement reads of each memory, and which answer."""

    group: str  # the set and attribute asked: folds never split one
    rows: np.ndarray
    answers: np.ndarray  # of bool, per row
    states: np.ndarray  # of bool, per row: it states what is asked, at some time
    when: np.ndarray  # of each row, when it was said


@contextmanager
def recording() -> Iterator[list[latest.Pool]]:
    """Every pool the searches inside judge, in order."""
    pools: list[latest.Pool] = []
    original = latest.pool_of

    def recorded(*args: Any, **kwargs: Any) -> latest.Pool | None:
        pool = original(*args, **kwargs)
        if pool is not None:
            pools.append(pool)
        return pool

    latest.pool_of = recorded
    try:
        yield pools
    finally:
        latest.pool_of = original


def _epoch(ts: str) -> float:
    return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


def _asked(
    client: TestClient, pools: list[latest.Pool], scope_id: str, question: str, **params: Any
) -> latest.Pool | None:
    """The pool the search judged for ``question``; None when it asked nothing of now."""
    before = len(pools)
    r = client.get("/v1/search", params={"q": question, "scope_id": scope_id, "limit": 5, **params})
    r.raise_for_status()
    return pools[-1] if len(pools) > before else None


def _example(
    group: str, pool: latest.Pool | None, answers: set[str], states: set[str]
) -> Example | None:
    if pool is None:
        return None
    labels = np.array([m in answers for m in pool.memories])
    stating = np.array([m in states for m in pool.memories])
    return Example(group, pool.rows, labels, stating, pool.when)


def life_examples(name: str) -> list[Example]:
    """The scripted life ``name``'s questions of now, each with its pool."""
    life = nowlife.load(name)
    scope_id = life["scope_id"]
    out: list[Example] = []
    with embedded("latest") as (client, served), recording() as pools:
        memory_of = {
            turn["id"]: "turn:" + post_turn(client, scope_id, turn, f"{scope_id}/{turn['id']}")
            for turn in life["turns"]
        }
        served.join(timeout_ms=1_800_000)
        for q in life["questions"]:
            pool = _asked(client, pools, scope_id, q["question"], as_of=_epoch(q["at"]))
            answers = {memory_of[t] for t in q["answer_turns"]}
            states = {memory_of[t["id"]] for t in life["turns"] if q["attribute"] in _attributes(t)}
            group = f"nowlife_{name}:{q['attribute']}"
            if (example := _example(group, pool, answers, states)) is not None:
                out.append(example)
    return out


def _attributes(turn: dict[str, Any]) -> list[str]:
    said = turn.get("attribute") or []
    return [said] if isinstance(said, str) else list(said)


def chain_examples(name: str) -> list[Example]:
    """The change chains ``name``'s questions, now and as of each older value."""
    chains = changes.load(name)
    out: list[Example] = []
    with embedded("latest") as (client, served), recording() as pools:
        posted = {chain["id"]: changes.post_chain(client, chain) for chain in chains}
        served.join(timeout_ms=600_000)
        for chain in chains:
            ids = posted[chain["id"]]
            told = [k for k, t in enumerate(chain["conversation"]) if t["kind"] == "statement"]
            group = f"changes_{name}:{chain['attribute']}"
            asked: list[tuple[str, int, dict[str, float]]] = [
                (chain["now"]["question"], told[-1], {})
            ]
            for then in chain["then"]:
                k, following = told[then["state"]], told[then["state"] + 1]
                conversation = chain["conversation"]
                when = (_epoch(conversation[k]["ts"]) + _epoch(conversation[following]["ts"])) / 2
                asked.append((then["question"], k, {"as_of": when}))
            for question, k, params in asked:
                pool = _asked(client, pools, chain["id"], question, **params)
                states = {f"turn:{ids[j]}" for j in told}
                if (example := _example(group, pool, {f"turn:{ids[k]}"}, states)) is not None:
                    out.append(example)
    return out


SETS: dict[str, Callable[[], list[Example]]] = {
    "nowlife_dev": lambda: life_examples("dev"),
    "changes_dev": lambda: chain_examples("dev"),
    "changes_asides_dev": lambda: chain_examples("asides_dev"),
    "changes_train": lambda: chain_examples("train"),
}


def fit(examples: Sequence[Example]) -> latest.Chooser:
    """The judgement fitted on ``examples``: each row a memory, answering or not.  Each
    set weighs as much as any other, however many questions it holds: a scripted life
    asks many, a set of change chains few, and each teaches its own."""
    rows = np.vstack([e.rows for e in examples])
    answers = np.concatenate([e.answers for e in examples])
    sets = Counter(e.group.split(":")[0] for e in examples)
    weight = np.concatenate(
        [np.full(len(e.answers), 1.0 / sets[e.group.split(":")[0]]) for e in examples]
    )
    model = HistGradientBoostingClassifier(
        max_iter=TREES,
        max_depth=DEPTH,
        learning_rate=RATE,
        monotonic_cst=[MONOTONE.get(f, 0) for f in latest.FEATURES],
        early_stopping=False,
        random_state=0,
    ).fit(rows, answers, sample_weight=weight * len(rows) / weight.sum())
    trees = tuple(_tree(predictor.nodes) for (predictor,) in model._predictors)
    judged = model.decision_function(rows)
    unbiased = latest.Chooser(trees, 0.0).scores(rows)
    judge = latest.Chooser(trees, float(np.mean(judged - unbiased)))
    # The trees as shipped judge as the library does.
    if not np.allclose(judge.scores(rows), judged):
        raise RuntimeError("the exported trees do not judge as the fitted model")
    return judge


def _tree(nodes: Any) -> latest.Tree:
    """A tree of the library's, its leaves marked by a negative feature."""
    return latest.Tree(
        np.where(nodes["is_leaf"], -1, nodes["feature_idx"]).astype(np.int64),
        np.asarray(nodes["num_threshold"], dtype=np.float64),
        np.asarray(nodes["left"], dtype=np.int64),
        np.asarray(nodes["right"], dtype=np.int64),
        np.asarray(nodes["value"], dtype=np.float64),
    )


def picked(judge: latest.Chooser, examples: Sequence[Example]) -> int:
    """How many of ``examples`` the judgement picks an answer of."""
    return sum(bool(e.answers[judge.pick(e.rows) or 0]) for e in examples)


def cross_validated(examples: Sequence[Example]) -> dict[str, Any]:
    """Each fold of whole attributes judged by a fit on the others."""
    groups = sorted({e.group for e in examples})
    right: Counter[str] = Counter()
    for fold in range(FOLDS):
        held = set(groups[fold::FOLDS])
        judge = fit([e for e in examples if e.group not in held])
        for e in examples:
            if e.group in held:
                right[e.group.split(":")[0]] += picked(judge, [e])
    answerable = sum(bool(e.answers.any()) for e in examples)
    first = sum(bool(e.answers[0]) for e in examples)
    return {
        "questions": len(examples),
        "answer_in_pool": answerable,
        "ranked_first": first,
        "picked": sum(right.values()),
        "picked_by_set": dict(right),
    }


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    p.add_argument("--train", action="store_true", help="fit on every set and ship it")
    args = p.parse_args(argv)
    examples: list[Example] = []
    for name, make in SETS.items():
        made = make()
        print(f"{name}: {len(made)} questions of now")
        examples += made
    if args.train:
        judge = fit(examples)
        latest.WEIGHTS.parent.mkdir(parents=True, exist_ok=True)
        saved = {**judge.to_json(), "trained_on": list(SETS), "questions": len(examples)}
        latest.WEIGHTS.write_text(json.dumps(saved, indent=1) + "\n")
        print(f"written: {latest.WEIGHTS} ({picked(judge, examples)} of {len(examples)} picked)")
        return 0
    got = cross_validated(examples)
    print(
        f"of {got['questions']} questions of now, {got['answer_in_pool']} hold an answer among "
        f"the best {latest.POOL}; ranked first {got['ranked_first']}, picked (cross-validated "
        f"by attribute) {got['picked']} ({got['picked_by_set']})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
