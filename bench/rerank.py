"""What the rerank stage's plumbing costs a search: the same searches with and without a
rerank endpoint, interleaved query by query on one brain.

No cross-encoder ships in a registry package that runs offline here, so the endpoint
is a local server that scores each document by the share of the query's words it holds
(answering at once): the figure is the stage's own cost -- wider candidate reads, the
HTTP round trip with 30 documents, merging -- not a model's.  Run from the repository
root::

    python -m bench.rerank --size 10000 --queries 300
"""

from __future__ import annotations

import argparse
import json
import tempfile
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import memory_core as mc
from bench.search_latency import fill_brain, make_queries, make_traces, make_vocab
from bench.stats import percentile
from memory_core.auth import SYSTEM
from memory_core.retrieval.rerank import Reranker


class _WordOverlap(BaseHTTPRequestHandler):
    """A ``/rerank`` endpoint scoring a document by the query words it holds."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        asked = set(body["query"].lower().split())
        results = [
            {"index": k, "relevance_score": len(asked & set(d.lower().split())) / len(asked)}
            for k, d in enumerate(body["documents"])
        ]
        raw = json.dumps({"results": results}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def run(size: int, queries: int, seed: int) -> dict[str, Any]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _WordOverlap)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/rerank"
    with tempfile.TemporaryDirectory() as tmp:
        settings = mc.load_settings(
            brain_url=f"sqlite:///{Path(tmp) / 'brain.sqlite'}",
            data_dir=Path(tmp),
            embedder="none",
            rerank_endpoints=[url],
        )
        brain = mc.open_brain(settings)
        vocab = make_vocab(seed)
        fill_brain(brain, make_traces(seed, vocab, size))
        reranker = Reranker(settings)
        asked = make_queries(seed + 1, vocab, queries)
        plain: list[float] = []
        staged: list[float] = []
        for q in asked[:20]:  # warm both paths
            mc.search(brain, q, identity=SYSTEM, embedder=None, reranker=reranker)
        for q in asked:
            for times, stage in ((plain, None), (staged, reranker)):
                start = time.perf_counter()
                mc.search(brain, q, identity=SYSTEM, embedder=None, reranker=stage)
                times.append((time.perf_counter() - start) * 1000)
        reranker.close()
        brain.close()
    server.shutdown()
    return {
        "traces": size,
        "queries": queries,
        "fused_p50_ms": round(percentile(plain, 50), 2),
        "reranked_p50_ms": round(percentile(staged, 50), 2),
        "fused_p95_ms": round(percentile(plain, 95), 2),
        "reranked_p95_ms": round(percentile(staged, 95), 2),
        "p50_ratio": round(percentile(staged, 50) / percentile(plain, 50), 3),
    }


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=10_000)
    p.add_argument("--queries", type=int, default=300)
    p.add_argument("--seed", type=int, default=7)
    args = p.parse_args(argv)
    print(json.dumps(run(args.size, args.queries, args.seed), indent=2))


if __name__ == "__main__":
    main()
