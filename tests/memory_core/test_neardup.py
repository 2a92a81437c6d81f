"""Near-duplicate pairs: planted answers, exact checks, scopes, incremental passes."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import pytest

from memory_core.consolidation.neardup import Method, near_duplicate_pairs, plan, tables_for
from memory_core.errors import InvalidArgument

DIM = 384
Matrix = npt.NDArray[np.float32]


def unit_rows(rng: np.random.Generator, n: int, dim: int = DIM) -> Matrix:
    x = rng.standard_normal((n, dim))
    rows: Matrix = (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)
    return rows


def at_cosine(rng: np.random.Generator, x: Matrix, cos: npt.ArrayLike) -> Matrix:
    """Rows at exactly the given cosines with the rows of x (up to float32)."""
    x64 = x.astype(np.float64)
    u = rng.standard_normal(x.shape)
    u -= np.sum(u * x64, axis=1, keepdims=True) * x64
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    c = np.asarray(cos, dtype=np.float64).reshape(-1, 1)
    return (c * x64 + np.sqrt(1.0 - c**2) * u).astype(np.float32)


def planted_corpus(
    seed: int, n_random: int, n_dups: int, low: float = 0.97, high: float = 0.99
) -> tuple[Matrix, set[tuple[int, int]]]:
    """Random rows followed by noisy copies of the first ``n_dups`` of them."""
    rng = np.random.default_rng(seed)
    base = unit_rows(rng, n_random)
    copies = at_cosine(rng, base[:n_dups], rng.uniform(low, high, n_dups))
    planted = {(i, n_random + i) for i in range(n_dups)}
    return np.concatenate([base, copies]), planted


def brute_force(v: Matrix, groups: npt.ArrayLike, threshold: float) -> dict[tuple[int, int], float]:
    sims = v.astype(np.float64) @ v.astype(np.float64).T
    g = np.asarray(groups)
    i, j = np.nonzero(np.triu(sims >= threshold, 1) & (g[:, None] == g[None, :]))
    return {(a, b): float(sims[a, b]) for a, b in zip(i.tolist(), j.tolist(), strict=True)}


def as_set(pairs: list[tuple[int, int, float]]) -> set[tuple[int, int]]:
    return {(i, j) for i, j, _ in pairs}


def test_planted_near_duplicates_are_found_by_lsh() -> None:
    v, planted = planted_corpus(1, 4000, 60)
    pairs = near_duplicate_pairs(v, [0] * len(v), 0.95, method="lsh")
    assert as_set(pairs) == planted


def test_returned_pairs_are_ordered_unique_and_at_or_above_the_threshold() -> None:
    v, _ = planted_corpus(2, 2000, 50, low=0.9, high=0.999)
    pairs = near_duplicate_pairs(v, [0] * len(v), 0.95, method="lsh")
    exact = brute_force(v, [0] * len(v), 0.95)
    assert pairs, "the corpus has pairs above the threshold"
    assert len(as_set(pairs)) == len(pairs)
    assert all(i < j for i, j, _ in pairs)
    for i, j, sim in pairs:
        assert sim == pytest.approx(exact[(i, j)], abs=1e-5)
    assert [s for _, _, s in pairs] == sorted((s for _, _, s in pairs), reverse=True)


def test_pairs_below_the_threshold_are_not_returned() -> None:
    rng = np.random.default_rng(3)
    base = unit_rows(rng, 300)
    below = at_cosine(rng, base[:100], np.full(100, 0.94))
    above = at_cosine(rng, base[100:200], np.full(100, 0.96))
    v = np.concatenate([base, below, above])
    above_pairs = {(100 + i, 400 + i) for i in range(100)}
    exact = as_set(near_duplicate_pairs(v, [0] * len(v), 0.95, method="exact"))
    assert exact == above_pairs
    found = as_set(near_duplicate_pairs(v, [0] * len(v), 0.95, method="lsh"))
    assert found <= above_pairs  # no pair at 0.94 (nor any random pair) slips through
    assert len(found) >= 97  # each pair at 0.96 is missed with probability ~0.003


def test_lsh_finds_nearly_all_pairs_just_above_the_threshold() -> None:
    # the hardest case the recall arithmetic is sized for: cosine 0.951
    rng = np.random.default_rng(4)
    base = unit_rows(rng, 2000)
    v = np.concatenate([base, at_cosine(rng, base[:1000], np.full(1000, 0.951))])
    found = as_set(near_duplicate_pairs(v, [0] * len(v), 0.95, method="lsh"))
    assert len(found & {(i, 2000 + i) for i in range(1000)}) >= 970


def test_lsh_agrees_with_brute_force_on_tight_clusters() -> None:
    # 20 clusters whose members sit at cosines ~0.91-0.98 of each other
    rng = np.random.default_rng(5)
    topic = rng.integers(0, 20, 3000)
    spread = np.sqrt(rng.uniform(0.02, 0.1, 20) / DIM)[topic, None]
    members = unit_rows(rng, 20)[topic] + spread * rng.standard_normal((3000, DIM))
    v = (members / np.linalg.norm(members, axis=1, keepdims=True)).astype(np.float32)
    groups = rng.integers(0, 3, len(v))
    exact = brute_force(v, groups, 0.95)
    found = as_set(near_duplicate_pairs(v, groups, 0.95, method="lsh"))
    assert len(exact) > 10_000
    assert found <= set(exact)
    assert len(found) >= 0.98 * len(exact)


def test_exact_method_matches_brute_force() -> None:
    v, _ = planted_corpus(6, 800, 100, low=0.9, high=1.0)
    groups = np.random.default_rng(6).integers(0, 4, len(v))
    exact = brute_force(v, groups, 0.95)
    found = near_duplicate_pairs(v, groups, 0.95, method="exact")
    assert as_set(found) == set(exact)


@pytest.mark.parametrize("method", ["lsh", "exact"])
def test_rows_of_different_groups_never_pair(method: Method) -> None:
    rng = np.random.default_rng(7)
    row = unit_rows(rng, 1)
    v = np.concatenate([np.repeat(row, 4, axis=0), unit_rows(rng, 200)])
    groups: list[object] = [("user", "a"), ("user", "b"), ("agent", "a"), None]
    groups += ["x"] * 200
    assert near_duplicate_pairs(v, groups, 0.95, method=method) == []
    groups[1] = ("user", "a")
    assert as_set(near_duplicate_pairs(v, groups, 0.95, method=method)) == {(0, 1)}


def test_incremental_mode_returns_only_pairs_touching_a_new_row() -> None:
    v, planted = planted_corpus(8, 3000, 80)
    n = len(v)
    new = np.zeros(n, dtype=bool)
    new[3000:3040] = True  # half of the copies: new against old
    new[[5, 6]] = True  # two old originals marked new: their copies are not
    for method in ("lsh", "exact"):
        found = as_set(near_duplicate_pairs(v, [0] * n, 0.95, new=new, method=method))
        expected = {(i, j) for i, j in planted if new[i] or new[j]}
        assert found == expected, method
        assert all(new[i] or new[j] for i, j in found)


def test_incremental_mode_finds_new_against_new_once_and_accepts_indices() -> None:
    v, _ = planted_corpus(9, 1000, 30)
    n = len(v)
    new_rows = np.array([3, 1003, 4, 1004, 500])  # both ends of two pairs are new
    by_index = near_duplicate_pairs(v, [0] * n, 0.95, new=new_rows, method="lsh")
    mask = np.zeros(n, dtype=bool)
    mask[new_rows] = True
    assert by_index == near_duplicate_pairs(v, [0] * n, 0.95, new=mask, method="lsh")
    assert as_set(by_index) == {(3, 1003), (4, 1004)}
    assert near_duplicate_pairs(v, [0] * n, 0.95, new=np.zeros(n, dtype=bool)) == []


def test_same_seed_gives_the_same_answer_and_other_seeds_find_the_planted_pairs() -> None:
    v, planted = planted_corpus(10, 3000, 50, low=0.955, high=0.99)
    groups = [0] * len(v)
    first = near_duplicate_pairs(v, groups, 0.95, method="lsh", seed=11)
    assert first == near_duplicate_pairs(v, groups, 0.95, method="lsh", seed=11)
    for seed in (11, 12, 13):
        found = as_set(near_duplicate_pairs(v, groups, 0.95, method="lsh", seed=seed))
        assert len(found & planted) >= 48


def test_empty_and_single_row_inputs_give_no_pairs() -> None:
    assert near_duplicate_pairs(np.zeros((0, DIM), np.float32), []) == []
    one = unit_rows(np.random.default_rng(0), 1)
    assert near_duplicate_pairs(one, ["a"]) == []
    assert near_duplicate_pairs(one, ["a"], new=np.array([True]), method="lsh") == []


def test_a_big_bucket_of_identical_rows_is_compared_exactly() -> None:
    rng = np.random.default_rng(14)
    v = np.concatenate([np.repeat(unit_rows(rng, 1), 300, axis=0), unit_rows(rng, 1000)])
    pairs = near_duplicate_pairs(v, [0] * len(v), 0.95, method="lsh", max_bucket=50)
    assert as_set(pairs) == {(i, j) for i in range(300) for j in range(i + 1, 300)}
    assert all(s == pytest.approx(1.0, abs=1e-6) for _, _, s in pairs)
    new = np.zeros(len(v), dtype=bool)
    new[:300:2] = True  # 150 new rows against 300: more work than a bucket of 50 rows
    incremental = near_duplicate_pairs(v, [0] * len(v), new=new, method="lsh", max_bucket=50)
    assert as_set(incremental) == {
        (i, j) for i in range(300) for j in range(i + 1, 300) if new[i] or new[j]
    }
    new[:] = False
    new[299] = True  # one new row: enumerated against its bucket
    incremental = near_duplicate_pairs(v, [0] * len(v), new=new, method="lsh", max_bucket=50)
    assert as_set(incremental) == {(i, 299) for i in range(299)}


def test_zero_rows_pair_with_nothing_and_rows_are_normalised() -> None:
    rng = np.random.default_rng(15)
    v, planted = planted_corpus(15, 500, 10)
    scaled = v * rng.uniform(0.5, 3.0, (len(v), 1)).astype(np.float32)
    scaled = np.concatenate([scaled, np.zeros((3, DIM), np.float32)])
    for method in ("lsh", "exact"):
        assert as_set(near_duplicate_pairs(scaled, [0] * len(scaled), method=method)) == planted


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"threshold": 0.0}, "threshold"),
        ({"threshold": 1.5}, "threshold"),
        ({"groups": [0]}, "one group per vector"),
        ({"new": np.array([7])}, "new"),
        ({"new": np.array([True])}, "new mask"),
    ],
)
def test_malformed_arguments_are_rejected(kwargs: dict[str, object], message: str) -> None:
    v = unit_rows(np.random.default_rng(0), 3)
    args: dict[str, object] = {"groups": [0, 0, 0], **kwargs}
    with pytest.raises(InvalidArgument, match=message):
        near_duplicate_pairs(v, **args)  # type: ignore[arg-type]


def test_non_finite_vectors_are_rejected() -> None:
    v = unit_rows(np.random.default_rng(0), 3)
    v[1, 0] = np.nan
    with pytest.raises(InvalidArgument, match="finite"):
        near_duplicate_pairs(v, [0, 0, 0])


@pytest.mark.parametrize("bits", [8, 12, 16, 20])
def test_tables_give_the_promised_collision_probability_at_the_threshold(bits: int) -> None:
    p = 1.0 - math.acos(0.95) / math.pi
    tables = tables_for(0.95, bits, recall=0.99)
    assert 1.0 - (1.0 - p**bits) ** tables >= 0.991
    assert 1.0 - (1.0 - p**bits) ** (tables - 1) < 0.991  # and no more bands than needed


def test_planner_compares_small_inputs_exactly_and_widens_bands_as_inputs_grow() -> None:
    assert plan(0.95, 100, 100 * 99 / 2) is None
    small = plan(0.95, 10_000, 10_000**2 / 2)
    large = plan(0.95, 1_000_000, 1_000_000**2 / 2)
    assert small is not None
    assert large is not None
    assert large.bits > small.bits
    assert large.recall_at_threshold >= 0.99
