"""Small learned judgements of short texts: linear heads over a text's character and
word n-grams, and over its sentence vector when one is at hand.

A judgement that can be learned from labelled examples (what a statement is about,
which attribute it states, whether it is small talk) is made here, not by a word
list: ``python -m bench.language --train`` fits one logistic regression per head
(scikit-learn) on the labelled sets in ``bench/data/`` and writes the features'
weights to ``memory_core/language/data/``.  Reading a text costs microseconds: its
n-grams (:func:`ngrams`, the very function the training counted with) are looked up
in the model's vocabulary, weighed as the training weighed them (sublinear term
frequency times inverse document frequency, the row scaled to unit length) and
multiplied by each head's weights.  No model is downloaded or fitted at run time.

The n-grams are those of any script: a model trained on other languages' examples
reads them the same way.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

DATA = Path(__file__).resolve().parent / "data"
_WORD = re.compile(r"\w+")
_SHORTEST, _LONGEST = 2, 5  # character n-grams, within each word padded by a space
_KNOWN_WORDS = 50_000  # words whose n-grams a model remembers, before it starts afresh


def ngrams(text: str) -> list[str]:
    """The features of ``text``: character 2- to 5-grams of each whitespace-separated
    word padded with spaces (``c:``), and its words and word pairs (``w:``), lower-cased."""
    low = _lower(text)
    out: list[str] = []
    for token in low.split():
        out += _characters(token)
    return out + _words(low)


def _lower(text: str) -> str:
    return text.lower().replace("\u2019", "'")


def _characters(token: str) -> list[str]:
    """A lower-cased token's character n-grams, padded with spaces."""
    padded = f" {token} "
    size = len(padded)
    out: list[str] = []
    for n in range(_SHORTEST, min(_LONGEST, size) + 1):
        out += ["c:" + padded[i : i + n] for i in range(size - n + 1)]
    return out


def _words(low: str) -> list[str]:
    """A lower-cased text's words and word pairs."""
    words = _WORD.findall(low)
    return ["w:" + w for w in words] + [f"w:{a} {b}" for a, b in pairwise(words)]


# A text's n-gram features: the vocabulary indexes it holds and their weights.
Sparse = tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]


@dataclass(frozen=True)
class Head:
    """One judgement: its classes and, per class, a weight per feature and a bias (a
    yes-or-no head has one column, for its second class)."""

    name: str
    classes: tuple[str, ...]
    weights: npt.NDArray[np.float32]  # (features, columns): a feature's weight per class
    bias: npt.NDArray[np.float32]  # (columns,)


def _softmax(logits: npt.NDArray[np.float64], classes: int) -> npt.NDArray[np.float64]:
    """Probabilities from a head's logits (a yes-or-no head has one: its yes)."""
    if classes == 2 and logits.shape[1] == 1:
        yes = 1.0 / (1.0 + np.exp(-logits[:, 0]))
        return np.stack([1.0 - yes, yes], axis=1)
    shifted = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    return np.asarray(e / e.sum(axis=1, keepdims=True), dtype=np.float64)


@dataclass(frozen=True)
class TextModel:
    """Heads over the same features: n-grams of a vocabulary, and perhaps a vector.

    ``embedder``: the embedding model whose sentence vectors the heads also read
    (None: n-grams alone); its vectors are scaled by ``vector_weight`` and weighed
    after the n-grams.
    """

    vocabulary: dict[str, int]
    idf: npt.NDArray[np.float32]
    heads: dict[str, Head]
    embedder: str | None = None
    vector_weight: float = 1.0
    digest: str = ""

    def sparse(self, text: str) -> Sparse:
        """The n-gram features of ``text``, weighed as the training weighed them.

        The same as looking up each of :func:`ngrams`, but a word's character n-grams
        are looked up once and remembered: words recur, and looking up a text's
        thousand n-grams one by one was most of the time a judgement took."""
        vocabulary, known = self.vocabulary, self._known
        low = _lower(text)
        parts: list[npt.NDArray[np.int64]] = []
        for token in low.split():
            found = known.get(token)
            if found is None:
                if len(known) >= _KNOWN_WORDS:
                    known.clear()
                grams = [vocabulary[g] for g in _characters(token) if g in vocabulary]
                found = known[token] = np.asarray(grams, dtype=np.int64)
            parts.append(found)
        parts.append(
            np.asarray([vocabulary[g] for g in _words(low) if g in vocabulary], dtype=np.int64)
        )
        index, counts = np.unique(np.concatenate(parts), return_counts=True)
        values = ((1.0 + np.log(counts)) * self.idf[index]).astype(np.float32)
        norm = float(np.linalg.norm(values))
        return index, values / norm if norm else values

    def _vectors(self, vectors: npt.NDArray[np.float32] | None) -> npt.NDArray[np.float32] | None:
        if self.embedder is None:
            return None
        if vectors is None:
            raise ValueError(f"this model reads {self.embedder} vectors too")
        return vectors * self.vector_weight

    def judge(
        self,
        texts: Sequence[str],
        vectors: npt.NDArray[np.float32] | None = None,
    ) -> list[dict[str, tuple[str, float]]]:
        """For each text, each head's most likely class and its probability."""
        if not texts:
            return []
        p = self._probabilities(texts, vectors)
        out: list[dict[str, tuple[str, float]]] = [{} for _ in texts]
        for name, head in self.heads.items():
            best = p[name].argmax(axis=1)
            for r, k in enumerate(best):
                out[r][name] = (head.classes[int(k)], float(p[name][r, k]))
        return out

    def _probabilities(
        self, texts: Sequence[str], vectors: npt.NDArray[np.float32] | None
    ) -> dict[str, npt.NDArray[np.float64]]:
        """Every head's probabilities of each text, from one product of all their weights."""
        weights, bias, spans = self._joined
        logits = np.empty((len(texts), weights.shape[1]), dtype=np.float64)
        for r, text in enumerate(texts):
            index, values = self.sparse(text)
            logits[r] = values @ weights[index] if len(index) else 0.0
        scaled = self._vectors(vectors)
        if scaled is not None:
            at = len(self.vocabulary)
            logits += scaled.astype(np.float64) @ weights[at:].astype(np.float64)
        logits += bias
        return {
            name: _softmax(logits[:, a:b], len(self.heads[name].classes))
            for name, (a, b) in spans.items()
        }

    @cached_property
    def _known(self) -> dict[str, npt.NDArray[np.int64]]:
        """Each word met so far: the vocabulary indexes of its character n-grams."""
        return {}

    @cached_property
    def _joined(
        self,
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], dict[str, tuple[int, int]]]:
        spans, at = {}, 0
        for name, head in self.heads.items():
            spans[name] = (at, at + head.weights.shape[1])
            at += head.weights.shape[1]
        weights = np.ascontiguousarray(np.hstack([h.weights for h in self.heads.values()]))
        bias = np.concatenate([h.bias for h in self.heads.values()])
        return weights, bias, spans

    def probabilities(
        self,
        head: str,
        texts: Sequence[str],
        vectors: npt.NDArray[np.float32] | None = None,
    ) -> npt.NDArray[np.float64]:
        """Each text's probability of each of ``head``'s classes (a row per text)."""
        return self._probabilities(texts, vectors)[head]

    def probability(
        self,
        head: str,
        label: str,
        texts: Sequence[str],
        vectors: npt.NDArray[np.float32] | None = None,
    ) -> npt.NDArray[np.float64]:
        """Each text's probability that ``head`` says ``label``."""
        return self.probabilities(head, texts, vectors)[:, self.heads[head].classes.index(label)]

    def to_bytes(self, **about: object) -> bytes:
        """The model as one compressed file (numpy's .npz): arrays and a JSON header."""
        header = {
            "embedder": self.embedder,
            "vector_weight": self.vector_weight,
            "vocabulary": sorted(self.vocabulary, key=self.vocabulary.__getitem__),
            "heads": {n: list(h.classes) for n, h in self.heads.items()},
            **about,
        }
        arrays: dict[str, npt.NDArray[Any]] = {"idf": self.idf.astype(np.float32)}
        for name, head in self.heads.items():
            arrays[f"{name}.weights"] = head.weights.astype(np.float16)
            arrays[f"{name}.bias"] = head.bias.astype(np.float32)
        buffer = io.BytesIO()
        raw_header = np.frombuffer(json.dumps(header).encode(), np.uint8)
        save: Any = np.savez_compressed  # numpy's stubs take no arrays by keyword
        save(buffer, header=raw_header, **arrays)
        return buffer.getvalue()


def from_bytes(data: bytes) -> TextModel:
    with np.load(io.BytesIO(data)) as npz:
        header = json.loads(bytes(npz["header"]).decode())
        heads = {
            name: Head(
                name,
                tuple(classes),
                np.ascontiguousarray(npz[f"{name}.weights"], dtype=np.float32),
                npz[f"{name}.bias"].astype(np.float32),
            )
            for name, classes in header["heads"].items()
        }
        return TextModel(
            vocabulary={g: k for k, g in enumerate(header["vocabulary"])},
            idf=npz["idf"].astype(np.float32),
            heads=heads,
            embedder=header["embedder"],
            vector_weight=float(header["vector_weight"]),
            digest=hashlib.sha256(data).hexdigest(),
        )


@lru_cache(maxsize=8)
def shipped(name: str) -> TextModel | None:
    """The shipped model ``name`` (``data/<name>.npz``), or None when there is none."""
    path = DATA / f"{name}.npz"
    return from_bytes(path.read_bytes()) if path.exists() else None
