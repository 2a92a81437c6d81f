"""Write-path throughput: HTTP accept rate, end-to-end ingest, embedding keep-up.

Three measurements, each a ratio against a baseline measured in the same
command, on a real Redis (one dedicated database index, flushed before and
after each part) and real SQLite brains in a temporary folder:

1. **http** -- accepted turns/s of ``POST /v1/turns`` on Reverie's API
   (the app ``reverie.compose`` builds with a Redis broker, so the API only writes the
   inbox and enqueues) against a bare FastAPI app whose one POST endpoint
   parses the same JSON body and does nothing.  Both are served by the same
   ``uvicorn.run(...)`` call ``api.app.run`` makes, each in its own process,
   and loaded alternately (Reverie, bare, Reverie, bare) by the same client:
   ``--concurrency`` keep-alive connections driven by a minimal asyncio
   HTTP/1.1 client in a separate process, so that parsing responses never
   competes with the server for its core.  The client's and the server's CPU
   use during each window are reported, as evidence of which side saturates.
2. **e2e** -- ``--turns`` turns accepted with ``memory_core.inbox.accept_turns``
   in groups of 32 (as the API's group commit does under 32 concurrent posts)
   and enqueued with one ``actors.ingest_batch.send`` per group, while two
   worker processes (the dramatiq CLI as ``memctl worker`` starts it) ingest them with the
   offline extractor and no embedder: turns/s from the first post until every
   inbox row is done (the turn's traces are committed with the FTS5 index in
   the same transaction, so done means BM25-searchable), and the per-turn
   lag ``processed_at - created_at``.  The target is 500 turns/s.
3. **embed** -- the local MiniLM model's own batch throughput (sentences/s,
   ``make_embedder(settings).embed`` on batches of ``embed_batch_size``, in
   this process) against the rate at which the two worker processes fill
   ``trace_embeddings`` once ingestion has finished: vectors written after the
   last turn was ingested, divided by the time until the last vector was
   written.  During ingestion the workers share the CPU between ingest and
   embed jobs, so that stretch would understate the embed rate; the time after
   it is pure embedding, like the direct measurement.  Both sides get as many
   onnxruntime threads in total as the machine has cores.

4. **metrics** -- the e2e run again, with metrics off and on alternately
   (off, on, off, on for ``--metrics-rounds 2``): the worker processes with
   ``REVERIE_METRICS_ENABLED=false`` and then with metrics on, their group's
   exporter scraped every ``--scrape-interval`` seconds as Prometheus would.
   Each run gets a fresh brain and the same turns.  Reported: turns/s of each
   run and the ratio of the on runs' rate to the off runs' (target >= 0.95).

Run from the repository root::

    python -m bench.ingest --turns 5000 --concurrency 32 --seconds 10 --json /tmp/ingest.json
    python -m bench.ingest --parts http          # or e2e, embed, metrics, or a comma list
    python -m bench.ingest --parts metrics --turns 3000 --metrics-rounds 2
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import multiprocessing
import os
import platform
import random
import resource
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import text

import memory_core
from bench import brains
from memory_core import Brain, inbox
from memory_core.auth import SYSTEM

log = logging.getLogger(__name__)

REPO_ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/12"
PARTS = ("http", "e2e", "embed", "metrics")
SIDES = ("reverie", "bare")  # A, B: Reverie's API, then the bare app
TARGET_HTTP_RATIO = 0.5
TARGET_E2E_TURNS_PER_S = 500.0
TARGET_EMBED_RATIO = 0.8
# From the first POST to every trace searchable by meaning, against the model alone.
TARGET_MEANING_RATIO = 0.9
TARGET_METRICS_RATIO = 0.95
METRICS_SIDES = ("off", "on")  # alternated in this order
BODY_VARIANTS = 2_000
KEY_MARK = "@@KEY@@"
POLL_S = 0.02
READY_LINE = "Worker process is ready for action."
FORK_READY_LINE = (
    "Fork process 'reverie.observability.workers:serve_worker_metrics' is ready for action."
)

# -- realistic turns -----------------------------------------------------------

NAMES = "Ana Ben Chloe Dara Eli Farah Gus Hana Ivo Jun Kemal Lena Mo Nia Omar Pia".split()
CITIES = "Lisbon Porto Berlin Lyon Kyoto Austin Oslo Quito Nairobi Krakow Seville".split()
ACTIVITIES = (
    "hiking|bouldering|baking sourdough|playing chess|running trails|reading sci-fi|"
    "swimming laps|gardening|learning Japanese|cycling to work|painting watercolors"
).split("|")
PROJECTS = (
    "the billing service|my thesis|a React dashboard|the garden shed|our wedding plans|"
    "a podcast about jazz|the quarterly report|a Rust CLI|the kitchen renovation"
).split("|")
USER_SENTENCES = (
    "I really love {act} on weekends.",
    "My sister {name} is moving to {city} next month.",
    "I want to get better at {act} this year.",
    "Actually, I meant {city}, not {city2}.",
    "Yesterday I went to a concert with {name} and it was great.",
    "Can you remind me to call {name} before Friday?",
    "I'm working on {proj} and the deadline keeps slipping.",
    "Honestly I can't stand cilantro, but {name} loves it.",
    "I feel a bit stressed about {proj} right now.",
    "We should plan a trip to {city} in the spring.",
    "What's a good way to structure {proj}?",
    "I have two cats and a very lazy dog.",
    "How long should I rest between sessions of {act}?",
    "Last week I finally finished the first draft of {proj}.",
    "Do you think {city} is nice in November?",
)
ASSISTANT_SENTENCES = (
    "That sounds like a great plan.",
    "{city} is lovely at that time of year, though it can be rainy.",
    "A good first step is to break {proj} into smaller milestones.",
    "I'll keep that in mind for our next conversations.",
    "Many people find that {act} helps them unwind after work.",
    "Here is a simple schedule: two short sessions during the week and a longer one on Sunday.",
    "It might help to write down what is blocking you and tackle the smallest item first.",
    "{name} will probably appreciate hearing from you.",
    "Sourdough needs a lively starter, so feed it the night before you bake.",
    "Let me know how it goes, and we can adjust the plan together.",
    "The usual advice is to rest at least one full day between hard efforts.",
)


@dataclass(frozen=True)
class TurnText:
    """One generated exchange; ``marker`` is a word found nowhere else."""

    user: str
    assistant: str
    scope_id: str
    conversation_id: str
    timestamp: str
    marker: str


def _fill(rng: random.Random, template: str) -> str:
    city, city2 = rng.sample(CITIES, 2)
    return template.format(
        name=rng.choice(NAMES),
        city=city,
        city2=city2,
        act=rng.choice(ACTIVITIES),
        proj=rng.choice(PROJECTS),
    )


def make_turns(seed: int, n: int) -> list[TurnText]:
    """``n`` exchanges: 1-3 user sentences, 2-5 assistant sentences, 300 users."""
    rng = random.Random(seed)
    base = datetime(2025, 3, 1, tzinfo=UTC).timestamp()
    turns = []
    for i in range(n):
        user = " ".join(_fill(rng, t) for t in rng.sample(USER_SENTENCES, rng.randint(1, 3)))
        reply = [_fill(rng, t) for t in rng.sample(ASSISTANT_SENTENCES, rng.randint(2, 5))]
        marker = "".join(rng.choices("bcdfghjklmnpqrstvwxz", k=10))
        reply.append(f"Saved under reference {marker}.")
        turns.append(
            TurnText(
                user=user,
                assistant=" ".join(reply),
                scope_id=f"user-{rng.randrange(300)}",
                conversation_id=f"conv-{rng.randrange(3_000)}",
                timestamp=datetime.fromtimestamp(base + 60 * i, UTC).isoformat(),
                marker=marker,
            )
        )
    return turns


def http_body_parts(turns: Sequence[TurnText]) -> list[tuple[bytes, bytes]]:
    """Each turn as a JSON body split around its idempotency key (unique per request)."""
    parts = []
    for t in turns:
        body = {
            "user": t.user,
            "assistant": t.assistant,
            "scope": "user",
            "scope_id": t.scope_id,
            "conversation_id": t.conversation_id,
            "timestamp": t.timestamp,
            "metadata": {"channel": "web", "client": "bench"},
            "idempotency_key": KEY_MARK,
        }
        pre, post = json.dumps(body).split(KEY_MARK)
        parts.append((pre.encode(), post.encode()))
    return parts


def as_turn(t: TurnText, key: str) -> inbox.Turn:
    """The same exchange as :class:`memory_core.inbox.Turn`, as the API would build it."""
    return inbox.Turn(
        user=t.user,
        assistant=t.assistant,
        scope="user",
        scope_id=t.scope_id,
        conversation_id=t.conversation_id,
        timestamp=inbox.parse_timestamp(t.timestamp),
        metadata={"channel": "web", "client": "bench"},
        idempotency_key=key,
    )


# -- processes, CPU time, Redis --------------------------------------------------


def cpu_count() -> int:
    """Cores this process may run on."""
    return len(os.sched_getaffinity(0))


def _stat_fields(pid: int | str) -> list[str]:
    """/proc/PID/stat after the command name: state, ppid, pgrp, ..."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
        return fh.read().rsplit(")", 1)[1].split()


def process_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process (all its threads), from /proc."""
    fields = _stat_fields(pid)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def group_cpu_s(pgid: int) -> float:
    """CPU seconds of every live process in a process group (a worker group)."""
    total = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            fields = _stat_fields(entry.name)
        except OSError:  # exited meanwhile
            continue
        if int(fields[2]) == pgid:
            total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def self_cpu_s() -> float:
    """CPU seconds of this process, all threads."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def loadavg() -> float:
    """The 1-minute load average: other work on the machine skews every figure here."""
    return os.getloadavg()[0]


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        port: int = s.getsockname()[1]
        return port


def wait_for_port(port: int, alive: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive():
            raise RuntimeError(f"the server for port {port} exited during start-up")
        try:
            socket.create_connection((HOST, port), timeout=1.0).close()
            return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"nothing listening on {HOST}:{port} after {timeout:.0f} s")


def flush_redis(url: str) -> None:
    """Empty the bench's own database index (FLUSHDB, never FLUSHALL)."""
    import redis

    client = redis.Redis.from_url(url)
    try:
        client.flushdb()
    finally:
        client.close()


def worker_env(brain_url: str, redis_url: str, **settings: str) -> dict[str, str]:
    """This environment without any REVERIE_* variable, plus the worker settings."""
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("REVERIE_")}
    env.update(
        REVERIE_BRAIN_URL=brain_url,
        REVERIE_REDIS_URL=redis_url,
        REVERIE_LOG_LEVEL="INFO",  # for dramatiq's "ready for action" line
    )
    env.update({f"REVERIE_{k.upper()}": v for k, v in settings.items()})
    return env


@contextmanager
def worker_group(
    env: dict[str, str], processes: int, threads: int, log_path: Path, timeout: float = 120.0
) -> Iterator[subprocess.Popen[bytes]]:
    """The dramatiq CLI as ``memctl worker`` runs it, in its own session, ready; stopped on
    exit."""
    from reverie.compose import WORKER_BROKER

    cmd = [sys.executable, "-m", "dramatiq", WORKER_BROKER, "--processes", str(processes)]
    cmd += ["--threads", str(threads), "--queues", "ingest", "embed", "maintenance"]
    with log_path.open("wb") as out:
        proc = subprocess.Popen(
            cmd,
            env=env,
            cwd=REPO_ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + timeout
        while not _group_ready(log_path.read_text(errors="replace"), processes, env):
            if proc.poll() is not None or time.monotonic() > deadline:
                tail = log_path.read_text(errors="replace")[-2_000:]
                raise RuntimeError(f"workers did not start (rc {proc.poll()}):\n{tail}")
            time.sleep(0.1)
        log.info("  %d worker processes x %d threads ready", processes, threads)
        yield proc
    finally:
        stop_group(proc)


def _group_ready(log_text: str, processes: int, env: dict[str, str]) -> bool:
    """Every worker process ready and, with metrics on, the exporter process too
    (still importing, it would charge its start-up to the first timed run)."""
    exporter = env.get("REVERIE_METRICS_ENABLED", "true").lower() not in ("false", "0")
    if exporter and FORK_READY_LINE not in log_text:
        return False
    return log_text.count(READY_LINE) >= processes


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with suppress(ProcessLookupError):  # the whole group has already exited
        os.killpg(pgid, sig)


def stop_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the process group; SIGKILL whatever is left of it after 20 s."""
    _signal_group(proc.pid, signal.SIGTERM)
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        log.warning("workers still running 20 s after SIGTERM; killing them")
    _signal_group(proc.pid, signal.SIGKILL)  # also any worker its master left behind
    proc.wait(10)


def wait_until(predicate: Callable[[], bool], timeout: float, what: str) -> float:
    """Poll every POLL_S until true; returns the wall-clock time it became true."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(POLL_S)
    return time.time()


def scalar(brain: Brain, sql: str) -> Any:
    with brain.read() as conn:
        return conn.execute(text(sql)).scalar_one()


# -- part 1: HTTP accept rate ------------------------------------------------------


def bare_app() -> Any:
    """FastAPI with one POST route that parses a JSON body and does nothing.

    The handler is a plain ``def`` like Reverie's (FastAPI runs it in its
    thread pool), so the ratio measures Reverie's work, not the thread hop.
    """
    from fastapi import FastAPI

    app = FastAPI(title="bare")

    @app.post("/v1/turns", status_code=202)
    def accept(body: dict[str, Any]) -> dict[str, Any]:
        return {"accepted": True}

    return app


def serve(kind: str, port: int, brain_url: str, redis_url: str, brain: dict[str, str]) -> None:
    """Server process: Reverie's API (enqueue only) or the bare app, under uvicorn."""
    import uvicorn

    logging.basicConfig(level=logging.WARNING)
    if kind == "reverie":
        from reverie import compose

        settings = memory_core.load_settings(
            brain_url=brain_url, redis_url=redis_url, embedder="none", **brain
        )
        app = compose.app(compose.process(settings, run_workers=False))
    else:
        app = bare_app()
    # The very call api.app.run makes, for both apps.
    uvicorn.run(app, host=HOST, port=port, log_level="warning")


@dataclass(frozen=True)
class LoadConfig:
    """One load run: where to send, what, how hard and for how long."""

    port: int
    server_pid: int
    bodies: list[tuple[bytes, bytes]]
    concurrency: int
    warmup_s: float
    seconds: float
    run: str


@dataclass
class LoadStats:
    ok: int = 0
    errors: int = 0
    latencies: list[float] = field(default_factory=list)


async def _read_response(reader: asyncio.StreamReader) -> int:
    """One HTTP/1.1 response off a keep-alive connection; returns its status."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    if length:
        await reader.readexactly(length)
    return int(head[9:12])


async def _connection(
    cfg: LoadConfig, index: int, start: float, end: float, stats: LoadStats
) -> None:
    """One keep-alive client: post, read the answer, repeat until ``end``."""
    reader, writer = await asyncio.open_connection(HOST, cfg.port)
    head = b"POST /v1/turns HTTP/1.1\r\nhost: %s\r\ncontent-type: application/json\r\n"
    head = head % HOST.encode() + b"content-length: %d\r\n\r\n"
    n = 0
    try:
        while (sent := time.perf_counter()) < end:
            pre, post = cfg.bodies[(index + n * cfg.concurrency) % len(cfg.bodies)]
            body = pre + f"{cfg.run}-{index}-{n}".encode() + post
            writer.write(head % len(body) + body)
            status = await _read_response(reader)
            done = time.perf_counter()
            n += 1
            if start <= done < end:
                if status in (200, 202):
                    stats.ok += 1
                    stats.latencies.append(done - sent)
                else:
                    stats.errors += 1
    finally:
        writer.close()


async def _drive(cfg: LoadConfig) -> dict[str, Any]:
    start = time.perf_counter() + cfg.warmup_s
    end = start + cfg.seconds
    stats = LoadStats()
    tasks = [
        asyncio.create_task(_connection(cfg, i, start, end, stats)) for i in range(cfg.concurrency)
    ]
    await asyncio.sleep(start - time.perf_counter())
    server0, client0 = process_cpu_s(cfg.server_pid), self_cpu_s()
    await asyncio.sleep(end - time.perf_counter())
    server1, client1 = process_cpu_s(cfg.server_pid), self_cpu_s()
    await asyncio.gather(*tasks)
    lat_ms = np.asarray(stats.latencies or [0.0]) * 1e3
    return {
        "accepted": stats.ok,
        "errors": stats.errors,
        "accepted_per_s": round(stats.ok / cfg.seconds, 1),
        "p50_ms": round(float(np.percentile(lat_ms, 50)), 2),
        "p99_ms": round(float(np.percentile(lat_ms, 99)), 2),
        "server_cpu": round((server1 - server0) / cfg.seconds, 2),
        "client_cpu": round((client1 - client0) / cfg.seconds, 2),
        "loadavg": round(loadavg(), 2),
    }


def run_load(cfg: LoadConfig) -> dict[str, Any]:
    """Load-generator process: ``cfg.concurrency`` connections for the window."""
    return asyncio.run(_drive(cfg))


def _noop() -> None:
    """Run once in the load-generator process so its imports happen before timing."""


@contextmanager
def server(
    kind: str, brain_url: str, redis_url: str, brain: dict[str, str]
) -> Iterator[tuple[int, int]]:
    """A server process for ``kind`` on a free port; yields (port, pid), stops it on exit."""
    port = free_port()
    proc = multiprocessing.get_context("spawn").Process(
        target=serve,
        args=(kind, port, brain_url, redis_url, brain),
        name=f"serve-{kind}",
        daemon=True,  # never outlives this process
    )
    proc.start()
    try:
        wait_for_port(port, proc.is_alive)
        assert proc.pid is not None
        log.info("  %s server on port %d (pid %d)", kind, port, proc.pid)
        yield port, proc.pid
    finally:
        proc.terminate()
        proc.join(15)
        if proc.is_alive():
            proc.kill()
            proc.join(5)


def http_part(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    """Alternate load on Reverie's API and the bare app; accepted turns/s of each (and,
    with ``--brain``, the same on a PostgreSQL brain)."""
    with brains.brain_url(tmp, "http") as brain_url:
        result = http_run(args, brain_url)
    if args.brain_server:
        with brains.brain_url(tmp, "http", args.brain_server) as brain_url:
            result["postgresql"] = http_run(args, brain_url)
    return result


def http_run(args: argparse.Namespace, brain_url: str) -> dict[str, Any]:
    """One alternating HTTP run on the brain at ``brain_url``."""
    flush_redis(args.redis_url)
    _count_inbox(brain_url)  # creates and migrates the brain before either server starts
    bodies = http_body_parts(make_turns(args.seed, BODY_VARIANTS))
    runs: list[dict[str, Any]] = []
    with ExitStack() as stack:
        servers = {
            k: stack.enter_context(server(k, brain_url, args.redis_url, args.brain)) for k in SIDES
        }
        pool = stack.enter_context(
            ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
        )
        pool.submit(_noop).result()
        for r in range(args.rounds):
            for kind in SIDES:
                port, pid = servers[kind]
                cfg = LoadConfig(
                    port, pid, bodies, args.concurrency, args.warmup, args.seconds, f"{kind}{r}"
                )
                log.info("  round %d: %s for %.0f s", r + 1, kind, args.seconds)
                result = pool.submit(run_load, cfg).result()
                runs.append({"side": kind, "round": r + 1, **result})
    inbox = _count_inbox(brain_url)
    flush_redis(args.redis_url)
    return _http_summary(runs, inbox, args)


def _count_inbox(brain_url: str) -> int:
    brain = memory_core.open_brain(memory_core.load_settings(brain_url=brain_url))
    try:
        return int(scalar(brain, "SELECT count(*) FROM inbox_turns"))
    finally:
        brain.close()


def _http_summary(
    runs: list[dict[str, Any]], inbox: int, args: argparse.Namespace
) -> dict[str, Any]:
    rate = {
        side: sum(r["accepted"] for r in runs if r["side"] == side) / (args.seconds * args.rounds)
        for side in SIDES
    }
    ratio = rate["reverie"] / rate["bare"] if rate["bare"] else 0.0
    return {
        "concurrency": args.concurrency,
        "seconds": args.seconds,
        "rounds": args.rounds,
        "runs": runs,
        "reverie_per_s": round(rate["reverie"], 1),
        "bare_per_s": round(rate["bare"], 1),
        "ratio": round(ratio, 3),
        "inbox_rows": inbox,
        "target": TARGET_HTTP_RATIO,
        "pass": ratio >= TARGET_HTTP_RATIO,
    }


# -- parts 2 and 3: worker processes ------------------------------------------------


@dataclass
class Posted:
    """Turns this process accepted and enqueued."""

    t0: float  # wall clock, just before the first post
    t_posted: float
    cpu_s: float  # this process's CPU time while posting
    turn_ids: list[str]
    markers: list[str]

    @property
    def seconds(self) -> float:
        return self.t_posted - self.t0


POST_BATCH = 32


def post_turns(brain: Brain, actors: Any, turns: Sequence[TurnText], run: str) -> Posted:
    """accept_turns then one ingest_batch.send per committed group of POST_BATCH turns:
    what the API's group commit does with that many concurrent posts."""
    ids: list[str] = []
    t0, cpu0 = time.time(), self_cpu_s()
    for start in range(0, len(turns), POST_BATCH):
        chunk = turns[start : start + POST_BATCH]
        accepted = inbox.accept_turns(
            brain, [as_turn(t, f"{run}-{start + k}") for k, t in enumerate(chunk)], identity=SYSTEM
        )
        batch = [a.turn_id for a in accepted]
        actors.ingest_batch.send(batch)
        ids.extend(batch)
    return Posted(t0, time.time(), self_cpu_s() - cpu0, ids, [t.marker for t in turns])


def done_count(brain: Brain) -> int:
    return int(scalar(brain, "SELECT count(*) FROM inbox_turns WHERE status = 'done'"))


def wait_ingested(brain: Brain, n: int, timeout: float) -> float:
    """Wall time at which all ``n`` turns are done; fails fast on a failed turn."""

    def finished() -> bool:
        if scalar(brain, "SELECT count(*) FROM inbox_turns WHERE status = 'failed'"):
            raise RuntimeError("a turn failed to ingest; see the worker log")
        return done_count(brain) >= n

    return wait_until(finished, timeout, f"{n} turns ingested")


def lag_stats(brain: Brain) -> dict[str, float]:
    """Per-turn post-to-searchable lag from the inbox: processed_at - created_at."""
    with brain.read() as conn:
        lags = [
            r[0]
            for r in conn.execute(
                text("SELECT processed_at - created_at FROM inbox_turns WHERE status = 'done'")
            )
        ]
    p50, p95, p100 = (float(v) for v in np.percentile(np.asarray(lags) * 1e3, [50, 95, 100]))
    return {"p50_ms": round(p50, 1), "p95_ms": round(p95, 1), "max_ms": round(p100, 1)}


def search_check(brain: Brain, markers: Sequence[str], sample: int = 50) -> tuple[int, int]:
    """(found, asked): how many of a sample of turns BM25 finds by their unique word."""
    picked = markers[:: max(len(markers) // sample, 1)][:sample]
    found = 0
    for marker in picked:
        hits = memory_core.search(brain, marker, limit=3, embedder=None, identity=SYSTEM).results
        found += any(marker in h.trace.content for h in hits)
    return found, len(picked)


@contextmanager
def sender(brain_url: str, redis_url: str, brain: dict[str, str]) -> Iterator[tuple[Brain, Any]]:
    """This process's brain and Redis-backed actors (to send); closed on exit."""
    from reverie import compose

    settings = memory_core.load_settings(
        brain_url=brain_url, redis_url=redis_url, embedder="none", **brain
    )
    served = compose.process(settings, run_workers=False)
    try:
        yield served.runtime.brain, served.actors
    finally:
        served.stop()


def e2e_part(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    """Post ``--turns`` turns with two worker processes ingesting; time until all done
    (with ``--brain``, on a PostgreSQL brain too)."""
    result = e2e_run(args, tmp, "e2e")
    if args.brain_server:
        result["postgresql"] = e2e_run(args, tmp, "e2e_pg", server=args.brain_server)
    return result


def e2e_run(
    args: argparse.Namespace,
    tmp: Path,
    name: str,
    scrape_s: float | None = None,
    server: str | None = None,
    **worker: str,
) -> dict[str, Any]:
    """One end-to-end run on a fresh brain, with extra ``worker`` settings.

    ``scrape_s``: fetch the worker group's exporter (``worker["metrics_port"]``)
    that often while the run lasts, as Prometheus would.
    """
    with brains.brain_url(tmp, name, server) as brain_url:
        return _e2e_on(args, tmp, name, brain_url, scrape_s, worker)


def _e2e_on(
    args: argparse.Namespace,
    tmp: Path,
    name: str,
    brain_url: str,
    scrape_s: float | None,
    worker: dict[str, str],
) -> dict[str, Any]:
    flush_redis(args.redis_url)
    turns = make_turns(args.seed + 1, args.turns)
    env = worker_env(brain_url, args.redis_url, embedder="none", **args.brain, **worker)
    load0 = loadavg()
    with sender(brain_url, args.redis_url, args.brain) as (brain, actors):
        group = worker_group(env, args.worker_processes, args.worker_threads, tmp / f"{name}.log")
        with group as proc, scraping(worker.get("metrics_port"), scrape_s) as scrapes:
            workers_cpu0 = group_cpu_s(proc.pid)
            log.info("  posting %d turns", len(turns))
            posted = post_turns(brain, actors, turns, name)
            log.info("  posted in %.2f s; waiting for ingestion", posted.seconds)
            t_done = wait_ingested(brain, len(turns), args.timeout)
            workers_cpu = group_cpu_s(proc.pid) - workers_cpu0
        result = _e2e_summary(brain, posted, t_done, workers_cpu)
    result["scrapes"] = scrapes[0]
    result["loadavg"] = [round(load0, 2), round(loadavg(), 2)]
    flush_redis(args.redis_url)
    return result


@contextmanager
def scraping(port: str | None, every_s: float | None) -> Iterator[list[int]]:
    """GET http://HOST:port/metrics every ``every_s`` in a thread; yields [scrapes done]."""
    done = [0]
    if port is None or every_s is None:
        yield done
        return
    import threading

    import httpx

    stop = threading.Event()

    def scrape() -> None:
        with httpx.Client(timeout=5) as http:
            while not stop.wait(every_s):
                r = http.get(f"http://{HOST}:{port}/metrics")
                r.raise_for_status()
                done[0] += 1

    thread = threading.Thread(target=scrape, name="scraper", daemon=True)
    thread.start()
    try:
        yield done
    finally:
        stop.set()
        thread.join(10)


# -- part 4: what metrics cost --------------------------------------------------------


def metrics_part(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    """End to end with metrics off and on, alternately; the on/off rate ratio."""
    runs: list[dict[str, Any]] = []
    for r in range(args.metrics_rounds):
        for side in METRICS_SIDES:
            port = free_port()
            worker = {
                "metrics_enabled": "true" if side == "on" else "false",
                "metrics_port": str(port),
                "metrics_multiproc_dir": str(tmp / f"metrics-{side}{r}-samples"),
            }
            log.info("  round %d: metrics %s", r + 1, side)
            scrape_s = args.scrape_interval if side == "on" else None
            run = e2e_run(args, tmp, f"metrics-{side}{r}", scrape_s, **worker)
            runs.append({"side": side, "round": r + 1, **run})
    rate = {
        side: sum(x["turns"] for x in runs if x["side"] == side)
        / sum(x["elapsed_s"] for x in runs if x["side"] == side)
        for side in METRICS_SIDES
    }
    ratio = rate["on"] / rate["off"]
    # Each round's on/off pair ran back to back: its ratio shrugs off slower drifts.
    paired = [
        on["turns_per_s"] / off["turns_per_s"]
        for off, on in zip(runs[::2], runs[1::2], strict=True)
    ]
    cpu = {  # CPU per turn: less sensitive than the rate to other work on the machine
        side: sum(x["workers_cpu_ms_per_turn"] for x in runs if x["side"] == side)
        / args.metrics_rounds
        for side in METRICS_SIDES
    }
    return {
        "turns": args.turns,
        "rounds": args.metrics_rounds,
        "scrape_interval_s": args.scrape_interval,
        "runs": runs,
        "off_per_s": round(rate["off"], 1),
        "on_per_s": round(rate["on"], 1),
        "ratio": round(ratio, 3),
        "paired_ratios": [round(r, 3) for r in paired],
        "median_paired_ratio": round(float(np.median(paired)), 3),
        "off_cpu_ms_per_turn": round(cpu["off"], 3),
        "on_cpu_ms_per_turn": round(cpu["on"], 3),
        "target": TARGET_METRICS_RATIO,
        "pass": ratio >= TARGET_METRICS_RATIO,
    }


def _e2e_summary(brain: Brain, posted: Posted, t_done: float, workers_cpu: float) -> dict[str, Any]:
    n = len(posted.turn_ids)
    elapsed = t_done - posted.t0
    rate = n / elapsed
    found, asked = search_check(brain, posted.markers)
    return {
        "turns": n,
        "posted_via": "accept_turns + ingest_batch.send, groups of 32 (one thread)",
        "post_s": round(posted.seconds, 2),
        "post_per_s": round(n / posted.seconds, 1),
        "post_cpu": round(posted.cpu_s / posted.seconds, 2),
        "elapsed_s": round(elapsed, 2),
        "turns_per_s": round(rate, 1),
        "workers_cpu": round(workers_cpu / elapsed, 2),
        "workers_cpu_ms_per_turn": round(workers_cpu / n * 1e3, 3),
        "lag": lag_stats(brain),
        "traces": int(scalar(brain, "SELECT count(*) FROM memory_traces")),
        "search_found": found,
        "search_sample": asked,
        "target": TARGET_E2E_TURNS_PER_S,
        "pass": rate >= TARGET_E2E_TURNS_PER_S,
    }


# -- part 3: embedding keep-up ---------------------------------------------------------


def embeddings_count(brain: Brain) -> int:
    return int(scalar(brain, "SELECT count(*) FROM trace_embeddings"))


@dataclass
class EmbedRun:
    """Timestamps and counters of the workers' embedding run."""

    posted: Posted
    traces: int
    t_ingested: float
    at_ingested: int
    t_embedded: float
    tail_cpu_s: float  # worker processes' CPU time between t_ingested and t_embedded


def run_embed_workers(args: argparse.Namespace, tmp: Path, brain_url: str) -> EmbedRun:
    """Post turns to workers that ingest and embed; wait for the last vector."""
    turns = make_turns(args.seed + 2, args.embed_turns)
    env = worker_env(
        brain_url,
        args.redis_url,
        embedder="minilm",
        embed_threads=str(args.worker_embed_threads),
        embed_batch_size=str(args.embed_batch),
        **args.brain,
    )
    group = worker_group(env, args.worker_processes, args.worker_threads, tmp / "embed.log")
    with sender(brain_url, args.redis_url, args.brain) as (brain, actors), group as proc:
        posted = post_turns(brain, actors, turns, "embed")
        t_ingested = wait_ingested(brain, len(turns), args.timeout)
        cpu0 = group_cpu_s(proc.pid)
        at_ingested = embeddings_count(brain)
        traces = int(scalar(brain, "SELECT count(*) FROM memory_traces WHERE deleted = 0"))
        log.info("  ingested; %d of %d traces embedded so far", at_ingested, traces)
        t_embedded = wait_until(
            lambda: embeddings_count(brain) >= traces, args.timeout, f"{traces} vectors"
        )
        tail_cpu = group_cpu_s(proc.pid) - cpu0
    return EmbedRun(posted, traces, t_ingested, at_ingested, t_embedded, tail_cpu)


def workers_embed(args: argparse.Namespace, tmp: Path, brain_url: str) -> dict[str, Any]:
    """Vectors/s the workers write once ingestion has finished (pure embedding)."""
    run = run_embed_workers(args, tmp, brain_url)
    after = run.traces - run.at_ingested
    tail_s = run.t_embedded - run.t_ingested
    total_s = run.t_embedded - run.posted.t0
    # Next to nothing left once ingestion finished: embedding kept pace with it, and the
    # tail is too short to time, so the rate is taken over the whole run instead.
    kept_pace = after < args.embed_batch or tail_s < 1.0
    rate = run.traces / total_s if kept_pace else after / tail_s
    return {
        "turns": len(run.posted.turn_ids),
        "traces": run.traces,
        "ingest_s": round(run.t_ingested - run.posted.t0, 2),
        "vectors_at_ingest_done": run.at_ingested,
        "tail_s": round(tail_s, 2),
        "total_s": round(total_s, 2),
        "kept_pace_with_ingest": kept_pace,
        "overall_vectors_per_s": round(run.traces / total_s, 1),
        "vectors_per_s": round(rate, 1),
        "tail_cpu": round(run.tail_cpu_s / tail_s, 2) if tail_s > 0 else None,
        "vectors_per_cpu_s": round(after / run.tail_cpu_s, 2) if run.tail_cpu_s else None,
    }


def trace_texts(brain_url: str) -> list[str]:
    """Every trace's content, in insertion order (the order the workers embedded them)."""
    brain = memory_core.open_brain(memory_core.load_settings(brain_url=brain_url, embedder="none"))
    try:
        with brain.read() as conn:
            rows = conn.execute(text("SELECT content FROM memory_traces ORDER BY seq"))
            return [r[0] for r in rows]
    finally:
        brain.close()


def direct_embed(texts: Sequence[str], threads: int, batch: int) -> dict[str, Any]:
    """The model alone: ``texts`` embedded in batches of ``batch``, in this process."""
    from memory_core.embedders import make_embedder

    settings = memory_core.load_settings(
        embedder="minilm", embed_threads=threads, embed_batch_size=batch
    )
    embedder = make_embedder(settings)
    assert embedder is not None
    embedder.embed(texts[:batch])  # loads the model; not timed
    start, cpu0 = time.perf_counter(), self_cpu_s()
    for lo in range(0, len(texts), batch):
        embedder.embed(texts[lo : lo + batch])
    seconds, cpu = time.perf_counter() - start, self_cpu_s() - cpu0
    return {
        "sentences": len(texts),
        "seconds": round(seconds, 2),
        "sentences_per_s": round(len(texts) / seconds, 1),
        "cpu": round(cpu / seconds, 2),
        "sentences_per_cpu_s": round(len(texts) / cpu, 2),
    }


def embed_part(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    """Workers' vectors/s against the model's own sentences/s on the same texts."""
    flush_redis(args.redis_url)
    brain_url = f"sqlite:///{tmp / 'embed.sqlite'}"
    load0 = loadavg()
    log.info("  workers: %d turns with REVERIE_EMBEDDER=minilm", args.embed_turns)
    workers = workers_embed(args, tmp, brain_url)
    flush_redis(args.redis_url)
    texts = trace_texts(brain_url)
    log.info("  direct: embedding the same %d texts in this process", len(texts))
    direct = direct_embed(texts, args.embed_threads, args.embed_batch)
    ratio = workers["vectors_per_s"] / direct["sentences_per_s"]
    meaning = workers["overall_vectors_per_s"] / direct["sentences_per_s"]
    cpu_ratio = (workers["vectors_per_cpu_s"] or 0.0) / direct["sentences_per_cpu_s"]
    return {
        "batch_size": args.embed_batch,
        "direct_threads": args.embed_threads,
        "worker_processes": args.worker_processes,
        "worker_threads": args.worker_threads,
        "worker_embed_threads": args.worker_embed_threads,
        "direct": direct,
        "workers": workers,
        "ratio": round(ratio, 3),
        "cpu_ratio": round(cpu_ratio, 3),
        "loadavg": [round(load0, 2), round(loadavg(), 2)],
        "target": TARGET_EMBED_RATIO,
        "pass": ratio >= TARGET_EMBED_RATIO,
        "meaning_ratio": round(meaning, 3),
        "meaning_target": TARGET_MEANING_RATIO,
        "meaning_pass": meaning >= TARGET_MEANING_RATIO,
    }


# -- report and driver -------------------------------------------------------------------


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def _report_http(h: dict[str, Any]) -> None:
    print(
        f"1. HTTP accept: POST /v1/turns, {h['concurrency']} keep-alive clients in a separate "
        f"process, {h['seconds']:.0f} s windows, alternating"
    )
    row = "   {:<8} {:>5} {:>11} {:>8} {:>8} {:>6} {:>10} {:>10} {:>6}"
    head = ("side", "round", "accepted/s", "p50 ms", "p99 ms", "errors", "server CPU")
    print(row.format(*head, "client CPU", "load"))
    for r in h["runs"]:
        print(
            row.format(
                r["side"],
                r["round"],
                f"{r['accepted_per_s']:.1f}",
                f"{r['p50_ms']:.2f}",
                f"{r['p99_ms']:.2f}",
                r["errors"],
                f"{r['server_cpu']:.2f}",
                f"{r['client_cpu']:.2f}",
                f"{r['loadavg']:.1f}",
            )
        )
    print(
        f"   Reverie {h['reverie_per_s']:.1f}/s, bare {h['bare_per_s']:.1f}/s: ratio "
        f"{h['ratio']:.3f} (target >= {h['target']}: {_verdict(h['pass'])}); "
        f"{h['inbox_rows']} inbox rows written\n   (CPU: cores each process used during the "
        "window; load: the machine's 1-minute load average at its end)\n"
    )
    pg = h.get("postgresql")
    if pg:
        print(
            f"   PostgreSQL brain: Reverie {pg['reverie_per_s']:.1f}/s, bare {pg['bare_per_s']:.1f}"
            f"/s; Reverie on PostgreSQL / on SQLite: "
            f"{pg['reverie_per_s'] / h['reverie_per_s']:.3f}\n"
        )


def _report_e2e(e: dict[str, Any]) -> None:
    lag = e["lag"]
    print(f"2. End to end: {e['turns']} turns posted via {e['posted_via']}")
    print(
        f"   posted in {e['post_s']:.2f} s ({e['post_per_s']:.1f} turns/s, "
        f"poster CPU {e['post_cpu']:.2f})"
    )
    print(
        f"   all searchable after {e['elapsed_s']:.2f} s: {e['turns_per_s']:.1f} turns/s "
        f"(target >= {e['target']:.0f}: {_verdict(e['pass'])}); worker processes' CPU "
        f"{e['workers_cpu']:.2f}"
    )
    print(
        f"   post-to-searchable lag p50 {lag['p50_ms']:.1f} ms, p95 {lag['p95_ms']:.1f} ms, "
        f"max {lag['max_ms']:.1f} ms; {e['traces']} traces; BM25 found "
        f"{e['search_found']}/{e['search_sample']} sampled turns by their unique word"
    )
    print(f"   load average before/after: {e['loadavg'][0]} / {e['loadavg'][1]}\n")
    pg = e.get("postgresql")
    if pg:
        print(
            f"   PostgreSQL brain: all searchable after {pg['elapsed_s']:.2f} s: "
            f"{pg['turns_per_s']:.1f} turns/s, {pg['turns_per_s'] / e['turns_per_s']:.3f} of the "
            f"SQLite brain's; posted at {pg['post_per_s']:.1f} turns/s; lag p50 "
            f"{pg['lag']['p50_ms']:.1f} ms; BM25 found {pg['search_found']}/{pg['search_sample']}\n"
        )


def _report_embed(m: dict[str, Any]) -> None:
    d, w = m["direct"], m["workers"]
    print(f"3. Embedding keep-up (MiniLM int8, batches of {m['batch_size']})")
    print(
        f"   direct, this process, {m['direct_threads']} onnxruntime threads: "
        f"{d['sentences']} sentences in {d['seconds']:.2f} s = {d['sentences_per_s']:.1f}/s "
        f"(CPU {d['cpu']:.2f}, {d['sentences_per_cpu_s']:.2f} per CPU-s)"
    )
    print(
        f"   workers, {m['worker_processes']} processes x {m['worker_threads']} threads, "
        f"{m['worker_embed_threads']} onnxruntime thread(s) each: {w['turns']} turns -> "
        f"{w['traces']} traces, ingested in {w['ingest_s']:.2f} s with "
        f"{w['vectors_at_ingest_done']} embedded"
    )
    basis = "whole run (kept pace)" if w["kept_pace_with_ingest"] else "after ingest finished"
    print(
        f"   remaining vectors written in {w['tail_s']:.2f} s: {w['vectors_per_s']:.1f}/s "
        f"({basis}; CPU {w['tail_cpu']}, {w['vectors_per_cpu_s']} per CPU-s); "
        f"whole run {w['overall_vectors_per_s']:.1f}/s over {w['total_s']:.2f} s"
    )
    print(
        f"   ratio workers / direct {m['ratio']:.3f} "
        f"(target >= {m['target']}: {_verdict(m['pass'])}); per CPU-second {m['cpu_ratio']:.3f}"
    )
    print(
        f"   first POST to every trace searchable by meaning: "
        f"{w['overall_vectors_per_s']:.1f} vectors/s, {m['meaning_ratio']:.3f} of the model "
        f"alone (target >= {m['meaning_target']}: {_verdict(m['meaning_pass'])})"
    )
    print(f"   load average before/after: {m['loadavg'][0]} / {m['loadavg'][1]}\n")


def _report_metrics(m: dict[str, Any]) -> None:
    print(
        f"4. Metrics cost: end to end, {m['turns']} turns per run, metrics off and on "
        f"alternately; exporter scraped every {m['scrape_interval_s']:g} s while on"
    )
    row = "   {:<4} {:>5} {:>10} {:>9} {:>12} {:>13} {:>8} {:>8} {:>6}"
    print(
        row.format(
            "side",
            "round",
            "elapsed s",
            "turns/s",
            "workers CPU",
            "CPU ms/turn",
            "p95 ms",
            "scrapes",
            "load",
        )
    )
    for r in m["runs"]:
        print(
            row.format(
                r["side"],
                r["round"],
                f"{r['elapsed_s']:.2f}",
                f"{r['turns_per_s']:.1f}",
                f"{r['workers_cpu']:.2f}",
                f"{r['workers_cpu_ms_per_turn']:.3f}",
                f"{r['lag']['p95_ms']:.1f}",
                r["scrapes"],
                f"{r['loadavg'][1]:.1f}",
            )
        )
    print(
        f"   metrics on {m['on_per_s']:.1f} turns/s, off {m['off_per_s']:.1f} turns/s: ratio "
        f"{m['ratio']:.3f} (target >= {m['target']}: {_verdict(m['pass'])})\n"
        f"   per round (on / off, back to back): {m['paired_ratios']}, median "
        f"{m['median_paired_ratio']:.3f}; worker CPU per turn {m['on_cpu_ms_per_turn']:.3f} ms "
        f"on, {m['off_cpu_ms_per_turn']:.3f} ms off\n"
    )


def report(result: dict[str, Any]) -> None:
    """Print every part that ran and the verdicts."""
    meta = result["meta"]
    print(
        f"Reverie ingest bench -- {meta['cpus']} CPUs, Python {meta['python']}, SQLite "
        f"{meta['sqlite']}, synchronous={meta['synchronous']}, brains in {meta['tmp']}, "
        f"load average {meta['loadavg'][0]} at start\n"
    )
    if "http" in result:
        _report_http(result["http"])
    if "e2e" in result:
        _report_e2e(result["e2e"])
    if "embed" in result:
        _report_embed(result["embed"])
    if "metrics" in result:
        _report_metrics(result["metrics"])
    print(f"Total wall time: {meta['wall_s']:.1f} s")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line; ``--parts`` becomes a list."""
    cpus = cpu_count()
    p = argparse.ArgumentParser(
        prog="python -m bench.ingest",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--parts", default="http,e2e,embed", help="comma list of http, e2e, embed, metrics"
    )
    p.add_argument("--turns", type=int, default=5000, help="turns for the end-to-end part")
    p.add_argument("--concurrency", type=int, default=32, help="HTTP clients")
    p.add_argument("--seconds", type=float, default=10.0, help="HTTP window per run")
    p.add_argument("--rounds", type=int, default=2, help="HTTP runs per side, alternating")
    p.add_argument("--warmup", type=float, default=1.0, help="untimed seconds before a window")
    p.add_argument(
        "--embed-turns", type=int, default=300, help="turns for the embed part (MiniLM is slow)"
    )
    p.add_argument("--embed-batch", type=int, default=64, help="texts per embedding batch")
    p.add_argument("--embed-threads", type=int, default=cpus, help="onnxruntime threads, direct")
    p.add_argument(
        "--worker-embed-threads",
        type=int,
        default=None,
        help="onnxruntime threads per worker process (default: cores / worker processes)",
    )
    p.add_argument(
        "--metrics-rounds", type=int, default=2, help="metrics part: off/on pairs, alternating"
    )
    p.add_argument(
        "--scrape-interval", type=float, default=1.0, help="metrics part: seconds between scrapes"
    )
    p.add_argument("--worker-processes", type=int, default=2)
    p.add_argument("--worker-threads", type=int, default=4)
    p.add_argument("--timeout", type=float, default=900.0, help="seconds to wait for workers")
    p.add_argument("--redis-url", default=DEFAULT_REDIS_URL, help="a database index of its own")
    p.add_argument("--tmpdir", type=Path, default=None, help="where the brains go")
    p.add_argument(
        "--brain",
        dest="brain_server",
        type=brains.server,
        metavar="URL",
        help="also run http and e2e on brains of this PostgreSQL server "
        "(postgresql+psycopg://USER@HOST/NAME; NAME prefixes the databases made and dropped)",
    )
    p.add_argument(
        "--synchronous",
        choices=("NORMAL", "FULL", "EXTRA"),
        default=None,
        help="sqlite_synchronous for every process (default: the settings' default, FULL)",
    )
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--json", type=Path, default=None, help="also write results here")
    args = p.parse_args(argv)
    args.parts = [s.strip() for s in args.parts.split(",") if s.strip()]
    if unknown := sorted(set(args.parts) - set(PARTS)):
        p.error(f"unknown part(s): {', '.join(unknown)}")
    # Brain settings every process gets: API server, this process, workers.
    args.brain = {"sqlite_synchronous": args.synchronous} if args.synchronous else {}
    if args.worker_embed_threads is None:
        args.worker_embed_threads = max(1, cpus // args.worker_processes)
    return args


def run_parts(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    parts: dict[str, Callable[[argparse.Namespace, Path], dict[str, Any]]] = {
        "http": http_part,
        "e2e": e2e_part,
        "embed": embed_part,
        "metrics": metrics_part,
    }
    result: dict[str, Any] = {}
    for name in args.parts:
        log.info("part %s", name)
        started = time.perf_counter()
        result[name] = parts[name](args, tmp)
        result[name]["wall_s"] = round(time.perf_counter() - started, 1)
    return result


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point: run the chosen parts, print the report, optionally write JSON."""
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(message)s")
    log.setLevel(logging.INFO)
    args = parse_args(argv)
    start, load0 = time.perf_counter(), loadavg()
    settings = memory_core.load_settings(**args.brain)
    with tempfile.TemporaryDirectory(prefix="reverie-ingest-", dir=args.tmpdir) as tmp:
        try:
            result = run_parts(args, Path(tmp))
        finally:
            flush_redis(args.redis_url)
    result["meta"] = {
        "cpus": cpu_count(),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "synchronous": settings.sqlite_synchronous,
        "tmp": str(Path(tmp).parent),
        "redis_url": args.redis_url,
        "seed": args.seed,
        "loadavg": [round(load0, 2), round(loadavg(), 2)],
        "wall_s": round(time.perf_counter() - start, 1),
    }
    report(result)
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        log.info("wrote %s", args.json)


if __name__ == "__main__":
    main()
