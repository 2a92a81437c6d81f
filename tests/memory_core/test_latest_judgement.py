"""The learned judgement that picks, among a question of now's best memories, the one
holding the answer: the shipped trees, how they are walked, and which memories may
be picked at all."""

from __future__ import annotations

import numpy as np

from memory_core.retrieval import latest
from memory_core.retrieval.latest import FEATURES, Chooser, Tree


def _stump(feature: str, threshold: float, low: float, high: float) -> Tree:
    """A tree of one split: ``low`` where the feature is at most ``threshold``."""
    return Tree(
        np.array([FEATURES.index(feature), -1, -1]),
        np.array([threshold, 0.0, 0.0]),
        np.array([1, 0, 0]),
        np.array([2, 0, 0]),
        np.array([0.0, low, high]),
    )


def _rows(**columns: list[float]) -> np.ndarray:
    n = len(next(iter(columns.values())))
    rows = np.zeros((n, len(FEATURES)))
    for name, values in columns.items():
        rows[:, FEATURES.index(name)] = values
    return rows


def test_the_shipped_judgement_reads_the_features_search_computes() -> None:
    judge = latest.chooser()
    assert judge is not None
    assert len(judge.trees) > 0
    saved = judge.to_json()
    assert saved["features"] == list(FEATURES)


def test_every_tree_is_walked_to_its_leaf_and_the_leaves_summed() -> None:
    deeper = Tree(  # news <= 0.5 ? (age <= 2 ? 1 : 2) : 3
        np.array([FEATURES.index("news"), FEATURES.index("age"), -1, -1, -1]),
        np.array([0.5, 2.0, 0.0, 0.0, 0.0]),
        np.array([1, 2, 0, 0, 0]),
        np.array([4, 3, 0, 0, 0]),
        np.array([0.0, 0.0, 1.0, 2.0, 3.0]),
    )
    judge = Chooser((_stump("match", 0.5, -1.0, 1.0), deeper), prior=0.25)
    rows = _rows(match=[0.2, 0.9, 0.9], news=[0.0, 0.0, 2.0], age=[1.0, 5.0, 1.0])
    assert judge.scores(rows).tolist() == [0.25 - 1 + 1, 0.25 + 1 + 2, 0.25 + 1 + 3]


def test_only_a_statement_about_the_one_asked_is_picked() -> None:
    judge = Chooser((_stump("match", 0.5, 0.0, 5.0),), prior=0.0)
    # The likeliest by the trees is someone else's; the next asks a question.
    rows = _rows(
        match=[0.9, 0.8, 0.3, 0.1],
        about=[0.0, 1.0, 1.0, 1.0],
        stated=[1.0, 0.0, 1.0, 1.0],
    )
    assert judge.pick(rows) == 2
    assert judge.pick(_rows(match=[0.9, 0.1], about=[0.0, 0.0], stated=[1.0, 1.0])) is None
