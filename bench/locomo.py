"""LoCoMo retrieval yardstick: does search find the turns a question is about?

Each LoCoMo conversation goes into a fresh brain, one episodic trace per turn,
through memory_core's public API.  Every question of categories 1-4 is then
asked through :func:`memory_core.search`, and the dia_ids of the hits are
compared with the question's evidence turns: Recall@1/5/10/20, MRR and All@10
(every evidence turn in the top 10), overall and per category, plus search
latency.  Category 5 (adversarial, unanswerable) has no evidence to find.

A *configuration* is a named set of settings overrides and search options
(:data:`CONFIGS`); several can be run in one go and are reported side by side.
The baseline (plain BM25) is always run, and every other configuration is
compared with it question by question: the mean paired difference of each
metric with a 95% bootstrap interval, so a gain can be told from noise.

    python -m bench.locomo [--config NAME|all ...] [--conversations 26,30]
                           [--data DIR] [--json OUT]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import memory_core
from bench import brains, locomo_month, locomo_real
from bench.locomo_report import format_report
from bench.locomo_scoring import (
    QuestionResult,
    compare_results,
    scored,
    summarise_group,
)
from bench.stats import BOOTSTRAP_CONFIDENCE, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, percentile
from memory_core.auth import SYSTEM
from memory_core.embedders import make_embedder
from memory_core.embeddings import store_vectors
from memory_core.retrieval.query_embedding import SearchEmbedder, query_embedder_for
from memory_core.textutil import content_hash

log = logging.getLogger(__name__)

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO_ROOT.parent / "shared" / "data" / "locomo"
SEARCH_LIMIT = 100
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
SESSION_KEY = re.compile(r"session_(\d+)")
DATE_FORMAT = "%I:%M %p on %d %B, %Y"  # "1:56 pm on 8 May, 2023"
_EVIDENCE_SPLIT = re.compile(r"[\s,;]+")
# "D1:3", and the malformed "D:11:26" seen in the data.
_DIA_ID = re.compile(r"D:?(\d+):(\d+)", re.IGNORECASE)


@dataclass(frozen=True)
class SearchConfig:
    """One way of searching: settings overrides and extra ``search`` keyword arguments."""

    name: str
    description: str
    settings: dict[str, Any] = field(default_factory=dict)
    search: dict[str, Any] = field(default_factory=dict)
    # Store each session's turns as one stream (linked, with previous-turn context).
    streams: bool = True
    # Store each turn as a plain memory_add with content alone ("Caroline: ..."): no
    # speaker, session or time beyond what the words say.
    content_only: bool = False
    # A PostgreSQL server to keep each conversation's brain on (None: a SQLite file).
    brain_server: str | None = None


# Every extra of memory_core's search switched off: what FTS5's BM25 alone gives.
PLAIN_BM25 = {
    "embedder": "none",
    "search_context_weight": 0.0,
    "search_speaker_boost": 0.0,
    "search_time_boost": 0.0,
    "search_strength_weight": 0.0,
    "search_recency_weight": 0.0,
    "search_importance_weight": 0.0,
}


def _config(name: str, description: str, streams: bool = True, **settings: Any) -> SearchConfig:
    return SearchConfig(name, description, settings, streams=streams)


CONFIGS: dict[str, SearchConfig] = {
    c.name: c
    for c in (
        _config("bm25", "FTS5 BM25 over turn text alone", streams=False, **PLAIN_BM25),
        _config("default", "memory_core's defaults: hybrid search, every adjustment on"),
        _config("lexical", "defaults without the vector channel", embedder="none"),
        _config("rrf", "defaults, fused by reciprocal rank", search_fusion="rrf"),
        _config("no-context", "defaults without the previous-turn column", search_context_weight=0),
        _config("no-speaker", "defaults without the speaker boost", search_speaker_boost=0),
        _config("no-time", "defaults without the time boost", search_time_boost=0),
        _config(
            "no-smoothing", "defaults without neighbour smoothing", search_neighbour_smoothing=0
        ),
        _config(
            "no-floor",
            "defaults without the vector channel's similarity floor",
            search_vector_min_similarity=-1.0,
        ),
        SearchConfig(
            "content-only",
            "defaults, each turn added with its content alone (no speaker, session or time)",
            streams=False,
            content_only=True,
        ),
        _config(
            "dense",
            "the vector channel alone (neighbour smoothing on)",
            **{**PLAIN_BM25, "embedder": "minilm"},
            search_vector_weight=1.0,
        ),
        _config("e5", "defaults with the multilingual embedder", embedder="e5"),
        _config(
            "dense-e5",
            "the vector channel alone, the multilingual embedder",
            **{**PLAIN_BM25, "embedder": "e5"},
            search_vector_weight=1.0,
        ),
    )
}
# Always run, and the configuration every other one is compared with.
BASELINE = "bm25"
# The path a user takes (``--path real``): the defaults, but turns posted through the
# API with extraction on and questions asked through the search it serves.  It is
# compared with "default" too, the same defaults on turns added directly.
REAL = SearchConfig(
    "real", "turns posted through POST /v1/turns, extraction on; asked through GET /v1/search"
)
DIRECT = "default"


@dataclass(frozen=True)
class Question:
    """A question with its evidence dia_ids, normalised but not yet checked against turns."""

    text: str
    category: int
    evidence: tuple[str, ...]
    index: int  # position in the file's "qa" list: with the conversation, its identity


@dataclass(frozen=True)
class Conversation:
    """One LoCoMo file: its turns as traces to store and its questions."""

    name: str
    traces: list[memory_core.NewTrace]
    questions: list[Question]
    no_evidence: int  # category 1-4 questions that list no evidence at all


@dataclass
class ConfigRun:
    """Everything measured for one configuration."""

    config: SearchConfig
    results: list[QuestionResult] = field(default_factory=list)
    no_evidence: int = 0
    skipped: int = 0  # evidence names no stored turn
    partial: int = 0  # some evidence ids name no stored turn; the rest were used
    ingest_seconds: float = 0.0
    search_seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)  # figures one path adds


# -- loading -----------------------------------------------------------------


def parse_session_date(value: str) -> datetime:
    """A LoCoMo session stamp ("1:56 pm on 8 May, 2023") as a UTC datetime."""
    return datetime.strptime(value.strip(), DATE_FORMAT).replace(tzinfo=UTC)


def turn_content(turn: dict[str, Any]) -> str:
    """'Speaker: text', with the shared image's caption appended when there is one."""
    content = f"{turn['speaker']}: {turn['text']}"
    caption = turn.get("blip_caption")
    if isinstance(caption, str) and caption.strip():
        content += f" [shares a photo: {caption.strip()}]"
    return content


def normalise_evidence(raw: Iterable[Any]) -> tuple[str, ...]:
    """Evidence dia_ids split on whitespace, commas and semicolons; canonical and distinct.

    Tokens that do not look like a dia_id are kept as given (stripped): they
    will match no turn and be counted, not silently dropped.
    """
    ids: list[str] = []
    for item in raw:
        for token in _EVIDENCE_SPLIT.split(str(item)):
            if not token:
                continue
            m = _DIA_ID.fullmatch(token)
            ids.append(f"D{int(m[1])}:{int(m[2])}" if m else token)
    return tuple(dict.fromkeys(ids))


def conversation_traces(name: str, data: dict[str, Any]) -> list[memory_core.NewTrace]:
    """One episodic trace per turn, sessions in order; date keys without turns are skipped."""
    sessions = sorted(
        (int(m[1]), key) for key in data if (m := SESSION_KEY.fullmatch(key)) and data[key]
    )
    traces = []
    for number, key in sessions:
        when = parse_session_date(data[f"{key}_date_time"])
        for turn in data[key]:
            dia_id = str(turn["dia_id"]).strip()
            traces.append(
                memory_core.NewTrace(
                    content=turn_content(turn),
                    type="episodic",
                    scope="thread",
                    scope_id=name,
                    metadata={
                        "dia_id": dia_id,
                        "session": number,
                        "session_date": when.isoformat(),
                        "speaker": turn["speaker"],
                    },
                    occurred_at=when.timestamp(),
                    id=f"locomo-{name}-{dia_id}",
                    # Each session is one conversation between the two speakers.
                    stream=f"locomo-{name}:{key}",
                )
            )
    return traces


def load_conversation(path: Path) -> Conversation:
    """Read one LoCoMo file into the traces to store and the category 1-4 questions."""
    data = json.loads(path.read_text(encoding="utf-8"))
    questions, no_evidence = [], 0
    for index, qa in enumerate(data["qa"]):
        if qa.get("category") not in CATEGORIES:
            continue
        evidence = normalise_evidence(qa.get("evidence") or [])
        if not evidence:
            no_evidence += 1
            continue
        questions.append(Question(str(qa["question"]), int(qa["category"]), evidence, index))
    return Conversation(path.stem, conversation_traces(path.stem, data), questions, no_evidence)


def load_conversations(folder: Path, stems: Sequence[str] | None = None) -> list[Conversation]:
    """The ``*.json`` conversations in ``folder`` in name order; only ``stems`` if given."""
    paths = sorted(folder.glob("*.json"))
    if not paths:
        raise FileNotFoundError(f"no LoCoMo *.json files in {folder}")
    if stems is not None:
        missing = sorted(set(stems) - {p.stem for p in paths})
        if missing:
            raise FileNotFoundError(f"no conversation {', '.join(missing)} in {folder}")
        paths = [p for p in paths if p.stem in stems]
    return [load_conversation(p) for p in paths]


# -- measuring ---------------------------------------------------------------


def ask(
    brain: memory_core.Brain,
    conv: Conversation,
    question: Question,
    config: SearchConfig,
    embedder: SearchEmbedder,
) -> QuestionResult:
    """Run one (already checked) question through search and score the hits."""
    start = time.perf_counter()
    response = memory_core.search(
        brain,
        question.text,
        limit=SEARCH_LIMIT,
        **config.search,
        embedder=embedder,
        identity=SYSTEM,
    )
    latency_ms = (time.perf_counter() - start) * 1000.0
    hit_ids = [str(h.trace.metadata.get("dia_id")) for h in response.results]
    return scored(conv.name, question, hit_ids, latency_ms, response.mode)


_vectors: dict[tuple[str, str], Any] = {}  # (model, text) -> vector, across configs
# One query embedder per embedder setting, as a process holds one: its model loads once.
_query_embedders: dict[tuple[Any, ...], SearchEmbedder] = {}


def query_embedder(settings: memory_core.Settings) -> SearchEmbedder:
    """What searches under ``settings`` embed their queries with, made once per process."""
    key = (settings.embedder, settings.embed_model, settings.embed_dim, settings.embed_threads)
    if key not in _query_embedders:
        _query_embedders[key] = query_embedder_for(settings, make_embedder(settings))
    return _query_embedders[key]


def embed_all(
    brain: memory_core.Brain, settings: memory_core.Settings, traces: Sequence[Any]
) -> None:
    """Store a vector for every trace with the configured embedder, if any.

    Vectors are computed once per text and model in this process, so the
    configurations of one run share them.
    """
    embedder = make_embedder(settings)
    if embedder is None:
        return
    todo = list(
        dict.fromkeys(t.content for t in traces if (embedder.name, t.content) not in _vectors)
    )
    for lo in range(0, len(todo), settings.embed_batch_size):
        batch = todo[lo : lo + settings.embed_batch_size]
        for text, vector in zip(batch, embedder.embed(batch), strict=True):
            _vectors[(embedder.name, text)] = vector
    store_vectors(
        brain,
        embedder.name,
        [t.id for t in traces],
        [_vectors[(embedder.name, t.content)] for t in traces],
        content_hashes=[content_hash(t.content) for t in traces],
    )


def checked_questions(conv: Conversation, run: ConfigRun) -> list[Question]:
    """The questions of ``conv`` with their evidence cut to the turns it has; those
    whose evidence names none are skipped, and both are counted in ``run``."""
    stored = {str(t.metadata["dia_id"]) for t in conv.traces}
    run.no_evidence += conv.no_evidence
    checked = []
    for q in conv.questions:
        evidence = tuple(e for e in q.evidence if e in stored)
        if not evidence:
            log.info("%s: skipped, no evidence turn among %s: %r", conv.name, q.evidence, q.text)
            run.skipped += 1
            continue
        if len(evidence) < len(q.evidence):
            log.info("%s: evidence %s partly unknown: %r", conv.name, q.evidence, q.text)
            run.partial += 1
        checked.append(Question(q.text, q.category, evidence, q.index))
    return checked


def run_conversation(conv: Conversation, run: ConfigRun) -> None:
    """Store one conversation in a fresh brain and ask all its questions; adds to ``run``."""
    questions = checked_questions(conv, run)
    if run.config.name == REAL.name:
        locomo_real.run_conversation(conv, questions, run, SEARCH_LIMIT)
        return
    with (
        tempfile.TemporaryDirectory(prefix=f"locomo-{conv.name}-") as tmp,
        brains.brain_url(Path(tmp), f"locomo_{conv.name}", run.config.brain_server) as url,
    ):
        settings = memory_core.load_settings(**run.config.settings)
        brain = memory_core.open_brain(settings, url=url)
        embedder = query_embedder(settings)
        try:
            start = time.perf_counter()
            traces = conv.traces
            if not run.config.streams:
                traces = [dataclasses.replace(t, stream=None) for t in traces]
            if run.config.content_only:
                traces = [
                    dataclasses.replace(
                        t, metadata={"dia_id": t.metadata["dia_id"]}, occurred_at=None
                    )
                    for t in traces
                ]
            memory_core.add_traces(brain, traces, identity=SYSTEM)
            embed_all(brain, settings, traces)
            run.ingest_seconds += time.perf_counter() - start
            start = time.perf_counter()
            for q in questions:
                run.results.append(ask(brain, conv, q, run.config, embedder))
            run.search_seconds += time.perf_counter() - start
        finally:
            # Release the engine's file handles before the folder is removed.
            brain.close()


def run_month(conversations: Sequence[Conversation]) -> dict[str, ConfigRun]:
    """Every conversation built once, used, given a month of passes and scored under
    each month configuration (:mod:`bench.locomo_month`)."""
    runs = {
        name: ConfigRun(SearchConfig(name, locomo_month.DESCRIPTIONS[name]))
        for name in locomo_month.NAMES
    }
    for conv in conversations:
        log.info(
            "month: %s, %d turns, %d questions", conv.name, len(conv.traces), len(conv.questions)
        )
        questions = checked_questions(conv, runs[locomo_month.FRESH])
        locomo_month.run_conversation(conv, questions, runs, SEARCH_LIMIT)
    return runs


def scored_half(conv: Conversation) -> Conversation:
    """``conv`` with only the questions the month path scores (the others are its use)."""
    return dataclasses.replace(
        conv, questions=[q for q in conv.questions if not locomo_month.is_use(q)]
    )


def run_config(config: SearchConfig, conversations: Sequence[Conversation]) -> ConfigRun:
    """Every conversation under one configuration."""
    run = ConfigRun(config)
    for conv in conversations:
        log.info(
            "%s: %s, %d turns, %d questions",
            config.name,
            conv.name,
            len(conv.traces),
            len(conv.questions),
        )
        run_conversation(conv, run)
    return run


# -- summarising -------------------------------------------------------------


def summarise(run: ConfigRun) -> dict[str, Any]:
    """The figures reported for one configuration (what ``--json`` writes)."""
    results = run.results
    cat1 = [r for r in results if r.category == 1]
    multi = [r for r in results if len(r.evidence) >= 2]
    latencies = [r.latency_ms for r in results]
    return {
        "description": run.config.description,
        "settings": run.config.settings,
        "search_options": run.config.search,
        "questions": len(results),
        "skipped_no_matching_evidence": run.skipped,
        "partial_evidence": run.partial,
        "no_evidence": run.no_evidence,
        "overall": summarise_group(results),
        "by_category": {
            name: summarise_group([r for r in results if r.category == cat])
            for cat, name in CATEGORIES.items()
        },
        "multi_hop_all_at_10": {
            "category_1": {"n": len(cat1), "All@10": summarise_group(cat1)["All@10"]},
            "evidence_2_plus": {"n": len(multi), "All@10": summarise_group(multi)["All@10"]},
        },
        "latency_ms": {
            "p50": round(percentile(latencies, 50), 2),
            "p95": round(percentile(latencies, 95), 2),
        },
        "search_modes": dict(sorted(Counter(r.mode for r in results).items())),
        "mean_results": round(sum(r.n_results for r in results) / len(results), 1)
        if results
        else 0.0,
        "ingest_seconds": round(run.ingest_seconds, 2),
        "search_seconds": round(run.search_seconds, 2),
        **run.extra,
    }


# -- pairing with the baseline ----------------------------------------------


def compare_with_baseline(runs: dict[str, ConfigRun]) -> dict[str, Any]:
    """Every run but the baseline's compared with it (the ``paired`` part of the report)."""
    base = runs[BASELINE]
    return {
        "baseline": BASELINE,
        "confidence": BOOTSTRAP_CONFIDENCE,
        "resamples": BOOTSTRAP_RESAMPLES,
        "seed": BOOTSTRAP_SEED,
        "configs": {
            n: compare_results(base.results, run.results)
            for n, run in runs.items()
            if n != BASELINE
        },
    }


# -- entry point -------------------------------------------------------------


# What a run without --config compares with the baseline: the product's defaults.
DEFAULT_CONFIGS = ("default",)


def select_configs(requested: Sequence[str] | None, path: str = "direct") -> list[str]:
    """Config names to run: the baseline first, then those asked for.

    None asks for :data:`DEFAULT_CONFIGS` (those registered); "all" for every one.
    The real path (``path="real"``) runs last, after the direct defaults it is
    compared with.
    """
    if not requested:
        requested = [name for name in DEFAULT_CONFIGS if name in CONFIGS]
    elif "all" in requested:
        requested = list(CONFIGS)
    if path == "real":
        requested = [*requested, DIRECT, REAL.name]
    return list(dict.fromkeys([BASELINE, *requested]))


def _stems(value: str) -> list[str]:
    stems = [s.strip() for s in value.split(",") if s.strip()]
    if not stems:
        raise argparse.ArgumentTypeError("expected conversation names, e.g. 26,30")
    return stems


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.locomo", description="LoCoMo retrieval benchmark for Reverie."
    )
    parser.add_argument(
        "--data", type=Path, default=DEFAULT_DATA, help=f"LoCoMo folder (default {DEFAULT_DATA})"
    )
    parser.add_argument(
        "--config",
        action="append",
        choices=[*sorted(CONFIGS), "all"],
        help=f"configuration to run, repeatable, or 'all' (default: {', '.join(DEFAULT_CONFIGS)}); "
        f"{BASELINE} always runs",
    )
    parser.add_argument(
        "--conversations",
        type=_stems,
        metavar="NAMES",
        help="comma list of conversation file stems to run, e.g. 26,30 (default all)",
    )
    parser.add_argument(
        "--path",
        choices=["direct", "real", "month"],
        default="direct",
        help="direct: turns added through memory_core (default); real: also post them "
        "through the API's turn path and ask through its search, compared with direct; "
        "month: also ask half the questions as use, run four weekly passes accepting "
        "every proposal and score the other half (with insights, co-activation on and off)",
    )
    parser.add_argument(
        "--brain",
        type=brains.server,
        metavar="URL",
        help="also run each configuration with its brains on this PostgreSQL server "
        "(postgresql+psycopg://USER@HOST/NAME; NAME prefixes the databases made and dropped)",
    )
    parser.add_argument("--json", type=Path, metavar="OUT", help="also write the figures as JSON")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the chosen configurations, print the report and optionally write it as JSON."""
    args = parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        stream=sys.stderr,
        format="%(levelname)s %(name)s: %(message)s",
    )
    logging.getLogger("alembic").setLevel(logging.WARNING)
    start = time.perf_counter()
    try:
        conversations = load_conversations(args.data, args.conversations)
    except FileNotFoundError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    configs = {**CONFIGS, REAL.name: REAL}
    asked = conversations
    if args.path == "month":
        asked = [scored_half(c) for c in conversations]
    chosen = select_configs(args.config, "direct" if args.path == "month" else args.path)
    runs = {n: run_config(configs[n], asked) for n in chosen}
    if args.brain:  # the same configurations on PostgreSQL brains, paired with SQLite's
        for n in chosen:
            if n != REAL.name:
                on_pg = dataclasses.replace(
                    configs[n], name=f"{n}@postgresql", brain_server=args.brain
                )
                runs[on_pg.name] = run_config(on_pg, asked)
    if args.path == "month":
        runs.update(run_month(conversations))
    report = {
        "benchmark": "locomo",
        "data": str(args.data),
        "conversations": [c.name for c in conversations],
        "search_limit": SEARCH_LIMIT,
        "configs": {n: summarise(run) for n, run in runs.items()},
        "paired": compare_with_baseline(runs),
    }
    if REAL.name in runs:
        report["real_vs_direct"] = compare_results(runs[DIRECT].results, runs[REAL.name].results)
    report["elapsed_seconds"] = round(time.perf_counter() - start, 2)
    print(format_report(report))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
