"""Phatic turns: a judgement of whether a turn says anything beyond being sociable.

Word rules (:func:`~memory_core.consolidation.salience.is_smalltalk`) catch
short greetings and thanks; the long, warm, generic replies of a friendly
chat ("Your support means a lot. Knowing I've got people like you cheering
me on makes this journey way easier.") need a judgement of meaning.  A
logistic regression over sentence embeddings makes it, one sentence at a
time: a turn is content-free only when *every* sentence is ("Thanks, Gina.
Still working on opening a dance studio." is not, whatever its first
sentence says).  It is trained by ``python -m bench.phatic --train`` on the
labelled turns in ``bench/data/phatic_train.jsonl`` and shipped as weights in
``data/phatic.json``, for the one embedding model it was trained on.

It is asked only about verbatim turns that the word rules found ordinary (no
durable cue, no name, no number; see
:func:`~memory_core.consolidation.salience.may_be_phatic`), and only its
confident "content-free" answer counts: a turn it judges phatic decays as
small talk does, nothing more.  Judgements are kept per trace and content
hash (``trace_judgements``), so a pass judges each turn once.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import numpy.typing as npt

from memory_core.consolidation.salience import sentences
from memory_core.language import reading, textmodel

WEIGHTS = Path(__file__).resolve().parent / "data" / "phatic.json"
Embed = Callable[[list[str]], npt.NDArray[np.float32]]


@dataclass(frozen=True)
class PhaticModel:
    """Weights of the content-free judgement for one embedding model."""

    embedder: str
    weights: npt.NDArray[np.float32]
    bias: float
    threshold: float  # the probability at or above which a turn counts as content-free
    digest: str = ""  # of the weights: a judgement made with others is made again

    @property
    def name(self) -> str:
        # The statements model judges with it: a judgement made with another one is
        # made again.
        statements = textmodel.shipped("statements")
        second = f":{statements.digest[:8]}" if statements is not None else ""
        return f"phatic:{self.embedder}:{self.digest[:12]}{second}"

    def probability(self, vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
        """Probability that each row's sentence is content-free."""
        logits = vectors.astype(np.float64) @ self.weights.astype(np.float64) + self.bias
        return np.asarray(1.0 / (1.0 + np.exp(-logits)), dtype=np.float64)

    def judge(self, texts: Sequence[str], embed: Embed) -> list[float]:
        """Each turn's probability of being content-free: its least phatic sentence's,
        a sentence the statements model does not read as small talk counting as
        contentful (0)."""
        split = [sentences(t) for t in texts]
        flat = [s for group in split for s in group]
        if not flat:
            return [0.0 for _ in texts]
        p = self.probability(embed(flat))
        # Two judgements must agree that a sentence is only sociable: this one, of its
        # meaning, and the statements model's, of its words, at its own threshold.
        # Either alone let turns that say something decay ("Thanks, Nate! It's a mix
        # of drama and romance!", the genre asked of later): on the labelled LoCoMo
        # turns, 80 contentful turns and 10 question evidence turns taken for small
        # talk with this one alone, 33 and 5 with both (held-out turns: precision
        # 0.996 -> 1.0, recall 0.756 -> 0.539).
        sociable = reading.surely_sociable(flat)
        if sociable is not None:
            p = np.where(sociable, p, 0.0)
        out, at = [], 0
        for group in split:
            out.append(float(p[at : at + len(group)].min()))
            at += len(group)
        return out

    def to_json(self, **about: object) -> str:
        return json.dumps(
            {
                "embedder": self.embedder,
                "bias": self.bias,
                "threshold": self.threshold,
                "weights": [round(float(w), 7) for w in self.weights],
                **about,
            },
            indent=1,
        )


@lru_cache(maxsize=4)
def model_for(embedder: str | None, path: Path = WEIGHTS) -> PhaticModel | None:
    """The shipped judgement for this embedding model, or None (another model, no file)."""
    if embedder is None or not path.exists():
        return None
    data = path.read_bytes()
    raw = json.loads(data)
    if raw.get("embedder") != embedder:
        return None
    return PhaticModel(
        embedder=embedder,
        weights=np.asarray(raw["weights"], dtype=np.float32),
        bias=float(raw["bias"]),
        threshold=float(raw["threshold"]),
        digest=hashlib.sha256(data).hexdigest(),
    )
