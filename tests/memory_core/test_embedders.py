"""Embedders: the registry, the stub, the local MiniLM model and the OpenAI client.

The MiniLM tests run the real model shipped by the pinned package.  The
OpenAI client talks to small HTTP servers started here on 127.0.0.1.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import memory_core as mc
from memory_core.embedders import Embedder, make_embedder
from memory_core.embedders.minilm import MiniLMEmbedder, default_model_path
from memory_core.embedders.openai import OpenAIEmbedder
from memory_core.embedders.stub import StubEmbedder
from memory_core.errors import ConfigError, EmbedderError


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


# -- registry ------------------------------------------------------------------


def test_registry_builds_each_embedder_by_name(tmp_path: Path) -> None:
    def make(**kw: Any) -> Embedder | None:
        return make_embedder(mc.load_settings(brain_url=f"sqlite:///{tmp_path}/b.db", **kw))

    assert make(embedder="none") is None
    assert isinstance(make(embedder="stub"), StubEmbedder)
    minilm = make(embedder="minilm", embed_batch_size=8, embed_threads=1)
    assert isinstance(minilm, MiniLMEmbedder)
    assert (minilm.batch_size, minilm.threads) == (8, 1)
    remote = make(embedder="openai", embed_endpoints=["http://127.0.0.1:9/v1"])
    assert isinstance(remote, OpenAIEmbedder)
    assert (remote.name, remote.dim) == ("openai:text-embedding-3-small", 1536)
    for embedder in (StubEmbedder(), minilm, remote):
        assert isinstance(embedder, Embedder)


def test_openai_without_endpoints_or_known_dimension_is_a_config_error(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/b.db"
    with pytest.raises(ConfigError, match="embed_endpoints"):
        make_embedder(mc.load_settings(brain_url=url, embedder="openai"))
    with pytest.raises(ConfigError, match="embed_dim"):
        make_embedder(
            mc.load_settings(
                brain_url=url,
                embedder="openai",
                embed_endpoints=["http://127.0.0.1:9"],
                embed_model="nomic-embed-text",
            )
        )


def test_choosing_an_embedder_loads_no_model_and_stub_never_imports_onnxruntime() -> None:
    code = (
        "import sys, memory_core as mc\n"
        "from memory_core.embedders import make_embedder\n"
        "s = mc.load_settings(brain_url='sqlite:///x.db', embedder='stub')\n"
        "make_embedder(s).embed(['hello'])\n"
        "assert 'onnxruntime' not in sys.modules, 'stub imported onnxruntime'\n"
        "e = make_embedder(mc.load_settings(brain_url='sqlite:///x.db'))\n"
        "assert e._loaded is None and 'onnxruntime' not in sys.modules, 'constructing loaded'\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


# -- stub ----------------------------------------------------------------------


def test_stub_is_deterministic_normalised_and_counts_calls() -> None:
    stub = StubEmbedder()
    a = stub.embed(["the cat sat on the mat", ""])
    b = StubEmbedder().embed(["the cat sat on the mat", ""])
    assert a.dtype == np.float32 and a.shape == (2, stub.dim)
    assert np.array_equal(a, b)
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-6)
    assert (stub.calls, stub.texts_embedded) == (1, 2)
    assert stub.embed([]).shape == (0, stub.dim)


def test_stub_scores_shared_words_above_unrelated_text() -> None:
    v = StubEmbedder().embed(
        [
            "the user likes green tea in the morning",
            "user likes green tea",
            "quarterly revenue fell sharply in europe",
        ]
    )
    assert cos(v[0], v[1]) > 0.4
    assert cos(v[0], v[1]) > cos(v[0], v[2]) + 0.3


# -- MiniLM (the real model) --------------------------------------------------------


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder(batch_size=4, threads=2)


def test_minilm_gives_normalised_384_float32_rows_in_input_order(minilm: MiniLMEmbedder) -> None:
    texts = ["a much longer sentence about the weather in spring", "hi", "", "medium text here"]
    v = minilm.embed(texts)
    assert (minilm.name, minilm.dim) == ("all-MiniLM-L6-v2-int8", 384)
    assert v.shape == (4, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    # Batched with others (and reordered by length inside) or alone: the same row.
    for i, text in enumerate(texts):
        assert np.allclose(minilm.embed([text])[0], v[i], atol=1e-5)
    assert minilm.embed([]).shape == (0, 384)


def test_minilm_scores_paraphrases_far_above_unrelated_sentences(minilm: MiniLMEmbedder) -> None:
    v = minilm.embed(
        [
            "The user's favourite drink is green tea.",
            "The user likes drinking green tea most of all.",
            "My laptop battery died during the meeting.",
            "A man is playing a guitar.",
            "Someone is strumming a guitar.",
            "The stock market fell sharply today.",
        ]
    )
    assert cos(v[0], v[1]) > 0.8
    assert cos(v[3], v[4]) > 0.6
    for unrelated in (cos(v[0], v[2]), cos(v[0], v[5]), cos(v[3], v[5]), cos(v[1], v[3])):
        assert unrelated < 0.2
    # Reference values of sentence-transformers' fp32 model, from its model card.
    h = minilm.embed(["That is a happy person", "That is a happy dog", "Today is a sunny day"])
    assert cos(h[0], h[1]) == pytest.approx(0.695, abs=0.02)
    assert cos(h[0], h[2]) == pytest.approx(0.257, abs=0.02)


def test_minilm_truncates_texts_longer_than_its_window(minilm: MiniLMEmbedder) -> None:
    long_text = "memory " * 3000  # ~3000 tokens; the model has 512 positions
    head = "memory " * 300
    v = minilm.embed([long_text, head])
    assert np.allclose(v[0], v[1], atol=1e-5)  # both cut to the same 256 tokens


def test_minilm_first_embeds_from_many_threads_load_once_and_agree(tmp_path: Path) -> None:
    embedder = MiniLMEmbedder(threads=1)
    results: list[np.ndarray] = []
    sessions: list[object] = []

    def work() -> None:
        results.append(embedder.embed(["concurrent first call"]))
        sessions.append(embedder._loaded)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4 and all(np.array_equal(r, results[0]) for r in results)
    assert all(s is sessions[0] for s in sessions)


def test_minilm_refuses_a_model_file_whose_hash_does_not_match(tmp_path: Path) -> None:
    tampered = tmp_path / "model.onnx"
    shutil.copyfile(default_model_path(), tampered)
    with tampered.open("r+b") as fh:
        fh.seek(1_000_000)
        byte = fh.read(1)
        fh.seek(1_000_000)
        fh.write(bytes([byte[0] ^ 0xFF]))
    embedder = MiniLMEmbedder(model_path=tampered)  # construction does not look
    with pytest.raises(EmbedderError, match="sha256"):
        embedder.embed(["hello"])
    assert embedder._loaded is None


def test_minilm_refuses_a_missing_or_altered_tokenizer(tmp_path: Path) -> None:
    with pytest.raises(EmbedderError, match="cannot read"):
        MiniLMEmbedder(tokenizer_path=tmp_path / "nope.json").embed(["x"])
    altered = tmp_path / "tokenizer.json"
    altered.write_text("{}")
    with pytest.raises(EmbedderError, match="sha256"):
        MiniLMEmbedder(tokenizer_path=altered).embed(["x"])


# -- OpenAI-compatible client against local servers ----------------------------------


@dataclass
class FakeEndpoint:
    """One local HTTP server; ``behave(body) -> (status, payload)`` decides answers."""

    behave: Callable[[dict[str, Any]], tuple[int, Any]]
    requests: list[tuple[str, dict[str, str], dict[str, Any]]] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"


def good_answer(dim: int, *, reverse: bool = False) -> Callable[[dict[str, Any]], tuple[int, Any]]:
    """Vector i is (len(text_i), 1, 0, ...), unnormalised, items optionally reversed."""

    def behave(body: dict[str, Any]) -> tuple[int, Any]:
        data = []
        for i, text in enumerate(body["input"]):
            vec = [0.0] * dim
            vec[0], vec[1] = float(len(text)), 1.0
            data.append({"object": "embedding", "index": i, "embedding": vec})
        if reverse:
            data.reverse()
        return 200, {"object": "list", "data": data, "model": body["model"]}

    return behave


@pytest.fixture
def serve() -> Iterator[Callable[..., FakeEndpoint]]:
    started: list[ThreadingHTTPServer] = []

    def start(behave: Callable[[dict[str, Any]], tuple[int, Any]]) -> FakeEndpoint:
        endpoint = FakeEndpoint(behave)

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                endpoint.requests.append((self.path, dict(self.headers), body))
                status, payload = endpoint.behave(body)
                raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(raw)))
                    self.end_headers()
                    self.wfile.write(raw)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and hung up first

            def log_message(self, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        started.append(server)
        endpoint.server = server
        return endpoint

    yield start
    for server in started:
        server.shutdown()
        server.server_close()


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def client(*urls: str, dim: int = 8, **kw: Any) -> OpenAIEmbedder:
    kw.setdefault("timeout_s", 5.0)
    return OpenAIEmbedder(list(urls), "test-model", dimensions=dim, **kw)


def test_openai_client_posts_the_request_and_normalises_answers_in_index_order(serve) -> None:
    ep = serve(good_answer(8, reverse=True))
    embedder = client(ep.url, api_key="sk-test", batch_size=2)
    v = embedder.embed(["a", "bbb", "cc"])
    assert embedder.name == "openai:test-model"
    assert v.shape == (3, 8) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-6)
    expected = np.array([[1, 1], [3, 1], [2, 1]], dtype=np.float64)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert np.allclose(v[:, :2], expected, atol=1e-6)
    assert [r[2]["input"] for r in ep.requests] == [["a", "bbb"], ["cc"]]
    path, headers, body = ep.requests[0]
    assert path == "/v1/embeddings"
    assert headers["Authorization"] == "Bearer sk-test"
    assert body["model"] == "test-model" and body["dimensions"] == 8


def test_openai_client_fails_over_from_dead_and_failing_endpoints(serve) -> None:
    failing = serve(lambda body: (500, {"error": "boom"}))
    limited = serve(lambda body: (429, {"error": "slow down"}))
    good = serve(good_answer(8))
    embedder = client(closed_port_url(), failing.url, limited.url, good.url, batch_size=1)
    v = embedder.embed(["one", "two"])
    assert v.shape == (2, 8)
    # The first batch tried every endpoint; the second went straight to the good one.
    assert (len(failing.requests), len(limited.requests), len(good.requests)) == (1, 1, 2)
    # A new call starts at the first endpoint again.
    embedder.embed(["three"])
    assert len(failing.requests) == 2


def test_openai_client_raises_when_every_endpoint_fails(serve) -> None:
    failing = serve(lambda body: (503, {"error": "down"}))
    embedder = client(closed_port_url(), failing.url)
    with pytest.raises(EmbedderError, match="every embedding endpoint failed") as info:
        embedder.embed(["x"])
    assert "HTTP 503" in str(info.value) and "Connect" in str(info.value)


def test_openai_client_does_not_fail_over_a_refused_request(serve) -> None:
    refusing = serve(lambda body: (400, {"error": "input too long"}))
    missing = serve(lambda body: (404, {"error": "no such model"}))
    good = serve(good_answer(8))
    with pytest.raises(EmbedderError, match="HTTP 400"):
        client(refusing.url, good.url).embed(["x"])
    assert good.requests == []
    # A 404 is this endpoint's problem (wrong URL or model): the next one is tried.
    assert client(missing.url, good.url).embed(["x"]).shape == (1, 8)


@pytest.mark.parametrize(
    "answer",
    [
        b"<html>proxy error</html>",
        {"data": "nope"},
        {"data": [{"index": 0, "embedding": [1.0] * 7}]},  # wrong dimension
        {"data": []},  # wrong count
        {"data": [{"index": 0, "embedding": ["a"] * 8}]},
        {"data": [{"index": 0, "embedding": [0.0] * 8}]},
        {"data": [{"index": 5, "embedding": [1.0] * 8}]},
    ],
)
def test_openai_client_refuses_an_invalid_answer(serve, answer: Any) -> None:
    bad = serve(lambda body: (200, answer))
    with pytest.raises(EmbedderError):
        client(bad.url).embed(["x"])


def test_openai_client_fails_over_from_an_endpoint_with_the_wrong_dimension(serve) -> None:
    wrong = serve(good_answer(4))
    good = serve(good_answer(8))
    assert client(wrong.url, good.url).embed(["x"]).shape == (1, 8)


def test_openai_client_honours_the_timeout(serve) -> None:
    release = threading.Event()

    def hung(body: dict[str, Any]) -> tuple[int, Any]:
        release.wait(30)
        return good_answer(8)(body)

    hung_ep = serve(hung)
    good = serve(good_answer(8))
    try:
        started = time.monotonic()
        with pytest.raises(EmbedderError, match="timed out"):
            client(hung_ep.url, timeout_s=0.3).embed(["x"])
        assert time.monotonic() - started < 15  # not the 30 s the endpoint hangs
        started = time.monotonic()
        assert client(hung_ep.url, good.url, timeout_s=0.3).embed(["x"]).shape == (1, 8)
        assert time.monotonic() - started < 15
    finally:
        release.set()


def test_a_batch_is_cut_by_count_and_by_padded_length() -> None:
    from memory_core.embedders.minilm import BATCH_CHARS_PER_THREAD, _batches

    budget = BATCH_CHARS_PER_THREAD  # one thread
    short, long = 10, budget // 2 + 1
    lengths = [short] * 5 + [long] * 3 + [budget * 3]
    order = list(range(len(lengths)))  # already by length
    batches = list(_batches(order, lengths, 4, threads=1))
    # Four short ones (the count), one short; one long at a time (two would pad past the
    # budget); the longest alone.
    assert batches == [[0, 1, 2, 3], [4], [5], [6], [7], [8]]
    # Two threads may pad twice as much: the last short one and two long ones together.
    assert list(_batches(order, lengths, 4, threads=2))[1:] == [[4, 5, 6], [7], [8]]
    assert [i for b in batches for i in b] == order
