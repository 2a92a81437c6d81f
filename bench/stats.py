"""Small statistics for benchmark reports: percentiles and bootstrap intervals.

The bootstrap is what tells a real difference between two configurations from
the noise of which questions happen to be in the set: resample the per-question
differences with replacement, and see whether the middle 95% of the resampled
means stays on one side of zero.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_CONFIDENCE = 0.95
BOOTSTRAP_SEED = 20_240_601
# Resampled indices held in memory at once; bounds memory for large samples.
_CHUNK_CELLS = 2_000_000


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100), linear between closest ranks; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


@dataclass(frozen=True)
class Interval:
    """A sample mean with a bootstrap confidence interval around it."""

    n: int
    mean: float
    low: float
    high: float

    @property
    def excludes_zero(self) -> bool:
        """True when the whole interval lies on one side of zero."""
        return self.low > 0.0 or self.high < 0.0


def bootstrap_mean(
    values: Sequence[float],
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    confidence: float = BOOTSTRAP_CONFIDENCE,
    seed: int = BOOTSTRAP_SEED,
) -> Interval | None:
    """Mean of ``values`` with a percentile bootstrap interval; None for no values.

    Each resample draws ``len(values)`` values with replacement; the interval
    is the central ``confidence`` share of the resampled means.  The generator
    is seeded, so the same values always give the same interval.
    """
    sample = np.asarray(values, dtype=np.float64)
    n = len(sample)
    if n == 0:
        return None
    rng = np.random.default_rng(seed)
    means = np.empty(resamples, dtype=np.float64)
    rows = max(1, _CHUNK_CELLS // n)
    for start in range(0, resamples, rows):
        stop = min(start + rows, resamples)
        picks = rng.integers(0, n, size=(stop - start, n), dtype=np.int64)
        means[start:stop] = sample[picks].mean(axis=1)
    tail = 100.0 * (1.0 - confidence) / 2.0
    low, high = np.percentile(means, [tail, 100.0 - tail])
    return Interval(n=n, mean=float(sample.mean()), low=float(low), high=float(high))
