"""Reverie's one settings class.

Precedence, highest first: values passed to :func:`load_settings`, environment
variables (``REVERIE_*``), the TOML file named by ``REVERIE_CONFIG`` (or passed
as ``config_file``), then the defaults below.  An unknown key in any source is
refused with a :class:`~memory_core.errors.ConfigError` that names it, so a typo
never silently falls back to a default.

Settings are built once at an entrypoint and passed down; nothing else in
memory_core reads the environment.
"""

from __future__ import annotations

import os
import shlex
import tomllib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal

import platformdirs
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from memory_core.errors import ConfigError

ENV_PREFIX = "REVERIE_"
CONFIG_ENV = ENV_PREFIX + "CONFIG"

_toml_values: ContextVar[dict[str, Any] | None] = ContextVar("_toml_values", default=None)


class RerankEndpoint(BaseModel):
    """One rerank endpoint: its URL, and the model and bearer key it may need."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str = Field(pattern=r"^https?://")
    model: str | None = None
    api_key: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _a_url_alone(cls, value: Any) -> Any:
        return {"url": value} if isinstance(value, str) else value


class _TomlSource(PydanticBaseSettingsSource):
    """Feeds the already-parsed TOML file in below the environment."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return (_toml_values.get() or {}).get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return dict(_toml_values.get() or {})


class Settings(BaseSettings):
    """Every knob of Reverie; defaults run everything on one machine, no services."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        extra="forbid",
        case_sensitive=False,
        validate_default=True,
    )

    # -- the brain ---------------------------------------------------------
    home: Path = Field(
        Path(),
        description="Folder of the brain and its data (default: the platform's user-data "
        "folder, ~/.local/share/reverie on Linux; ./reverie-data when that exists).",
    )
    brain_url: str = Field(
        "", description="SQLAlchemy URL of the brain (default: brain.sqlite in the home)."
    )
    data_dir: Path = Field(
        Path(),
        description="Folder for proposals, dream reports and exports (default: the home).",
    )
    sqlite_busy_timeout_ms: int = Field(
        30_000, ge=0, description="How long a writer waits for the lock."
    )
    sqlite_synchronous: Literal["NORMAL", "FULL", "EXTRA"] = Field(
        "FULL",
        description="FULL: a committed write survives power loss; NORMAL trades that for speed.",
    )

    # -- queue and workers ----------------------------------------------------
    redis_url: str | None = Field(None, description="Unset: embedded mode (in-process broker).")
    redis_heartbeat_timeout_ms: int = Field(
        15_000,
        ge=1_000,
        description="A worker silent this long is dead and its unacked jobs are redelivered.",
    )
    redis_maintenance_chance: int = Field(
        50_000,
        ge=1,
        le=1_000_000,
        description="Per million broker calls, how many look for dead workers' jobs.",
    )
    worker_threads: int = Field(4, ge=1, le=64, description="Threads per worker process.")
    ingest_batch: int = Field(
        0,
        ge=0,
        le=1_000,
        description="Other pending turns one ingest job may take along (the API already "
        "sends one job per committed batch).",
    )
    ingest_max_attempts: int = Field(
        6, ge=1, description="Failed attempts after which a turn is marked failed."
    )
    ingest_failed_retries: int = Field(
        3,
        ge=0,
        description="Times reconcile tries a failed turn again, alone, one attempt each.",
    )
    ingest_failed_retry_s: float = Field(
        300.0,
        gt=0,
        description="Seconds after failing that reconcile first tries a failed turn again; "
        "the wait doubles each time.",
    )
    reconcile_after_s: float = Field(
        60.0, gt=0, description="Pending turns older than this are re-enqueued by reconcile."
    )

    # -- api ----------------------------------------------------------------
    api_host: str = Field("127.0.0.1", description="Address the API binds.")
    api_port: int = Field(8420, ge=1, le=65_535, description="Port the API binds.")
    api_cors_origins: list[str] = Field(
        default_factory=list,
        description='Browser origins (a JSON list, e.g. ["https://app.example"]) that may '
        "call the API across sites; any other Origin is refused.",
    )
    api_max_body_bytes: int = Field(
        1_048_576, ge=1_024, description="Larger request bodies are refused with 413."
    )

    # -- search -----------------------------------------------------------
    search_max_term_share: float = Field(
        0.05,
        gt=0,
        le=1,
        description="Natural-language queries drop words found in more than this share of traces.",
    )
    search_term_share_min_docs: int = Field(
        5_000,
        ge=0,
        description="The frequent-word rule applies only to brains with at least this many traces.",
    )
    search_candidates: int = Field(
        100, ge=1, le=10_000, description="How deep each channel ranks before fusion."
    )
    search_fusion: Literal["minmax", "rrf"] = Field(
        "minmax",
        description="minmax: convex mix of each channel's min-max scaled score; "
        "rrf: reciprocal rank fusion.",
    )
    search_vector_weight: float = Field(
        0.5, ge=0, le=1, description="Share of the vector channel in the fused score; 0: off."
    )
    feedback_window_s: float = Field(
        1800.0,
        ge=0,
        description="The same search (query, filters, caller) repeated within this many "
        "seconds counts as one retrieval of its results.",
    )
    search_min_score: float = Field(
        0.15,
        ge=0,
        le=1,
        description="Hits of lower relevance (the larger of cosine similarity and idf-weighted "
        "share of the query's words) are left out; 0: none is.  0.15 is the highest floor "
        "that cost no Recall@10 in bench.relevance_floor.",
    )
    search_vector_min_similarity: float = Field(
        0.15,
        ge=-1,
        le=1,
        description="A trace the vector channel alone finds needs at least this cosine; "
        "below it, nothing related was found.",
    )
    search_rrf_k: float = Field(60.0, gt=0, description="RRF's rank offset k.")
    search_context_weight: float = Field(
        0.5,
        ge=0,
        description="BM25 weight of a turn's previous turn (its context column) against its own "
        "text's 1; 0: off.",
    )
    search_neighbour_smoothing: float = Field(
        0.5,
        ge=0,
        description="Weight of a turn's stream neighbours in its vector similarity; 0: off.",
    )
    rerank_endpoints: list[RerankEndpoint] = Field(
        default_factory=list,
        description="Rerank endpoints tried in order (a JSON list of URLs or of "
        '{"url", "model", "api_key"}; Cohere-style /rerank); empty: no second stage.',
    )
    rerank_timeout_s: float = Field(
        2.0, gt=0, description="What the rerank stage may take at most, every endpoint tried."
    )
    rerank_weight: float = Field(
        0.5, ge=0, le=1, description="Share of the rerank score in a hit's final score."
    )
    rerank_candidates: int = Field(
        30, ge=1, le=200, description="How many of the fused best the reranker reorders."
    )
    search_approximate_from: int = Field(
        250_000,
        ge=0,
        description="From this many vectors of one model, the vector channel searches an "
        "approximate nearest-neighbour graph (8-bit: about 0.96 GB resident a million 384-d "
        "vectors; built in the background and saved in the data folder) and rescores its "
        "candidates exactly, instead of multiplying every vector (2.3 GB a million, in every "
        "searching process); 0: always exact.",
    )
    search_speaker_boost: float = Field(
        0.5,
        ge=0,
        description="A query naming exactly one speaker lifts that speaker's turns by this "
        "factor (+50%); 0: off.",
    )
    search_time_boost: float = Field(
        0.5,
        ge=0,
        description="A query naming a time lifts traces that happened then by this factor; 0: off.",
    )
    search_coactivation_weight: float = Field(
        0.3,
        ge=0,
        le=1,
        description="A neighbour of a strong hit (used with it, or what it cites) ranks at "
        "least this share of the hit's score, times the link's strength; 0: off.",
    )
    search_strength_weight: float = Field(
        0.2, ge=0, le=1, description="How much decayed strength scales the score; 0: off."
    )
    search_recency_weight: float = Field(
        0.1, ge=0, description="Lift of a trace that happened just now; 0: off."
    )
    search_recency_half_life_days: float = Field(
        30.0, gt=0, description="Days for the recency lift to halve."
    )
    search_importance_weight: float = Field(
        0.2, ge=0, le=2, description="How much importance (0..1, 0.5 neutral) scales the score."
    )
    search_superseded_factor: float = Field(
        0.8,
        ge=0,
        le=1,
        description="Score factor of a statement a later one of the same thing superseded "
        "(by the search's time); 1: ranked as if current.",
    )
    search_fact_factor: float = Field(
        0.7,
        ge=0,
        le=1,
        description="Score factor of a fact drawn from a turn: it stands for its turn, and "
        "its few words match more easily than the turn's, so it goes ahead of other turns "
        "only when it matches clearly better; 1: ranked by its words alone.",
    )
    search_asked_boost: float = Field(
        0.5,
        ge=0,
        le=5,
        description="Lift of a statement holding now of what the query asks (its subject "
        "and attribute: 'where do I live' lifts where the user lives); 0: off.",
    )
    search_latest_first: bool = Field(
        True,
        description="A question of how things are now ('where do I live these days') puts "
        "the most recent of the statements answering it among the best few first.",
    )
    search_embed_timeout_s: float = Field(
        5.0,
        gt=0,
        description="A search waits this long for the query's embedding, then answers without "
        "the vector channel.",
    )
    search_embed_retry_s: float = Field(
        30.0,
        ge=0,
        description="After the embedder fails, searches skip the vector channel this long.",
    )

    # -- decay (Ebbinghaus) ------------------------------------------------
    decay_base_stability_days: float = Field(
        7.0, gt=0, description="Days for an untouched trace's strength to fall to 1/e."
    )
    decay_stability_growth: float = Field(
        1.0, ge=0, description="How much each doubling of retrievals stretches stability."
    )

    # -- embeddings -------------------------------------------------------------
    embedder: Literal["minilm", "e5", "openai", "stub", "none"] = Field(
        "minilm",
        description="minilm: local ONNX all-MiniLM-L6-v2 (offline, English); e5: local "
        "multilingual-e5-small (offline, about a hundred languages, several times the CPU); "
        "openai: an OpenAI-compatible /embeddings endpoint; stub: deterministic test "
        "vectors; none.",
    )
    embed_endpoints: list[str] = Field(
        default_factory=list,
        description="Base URLs of OpenAI-compatible embedding endpoints, tried in order.",
    )
    embed_model: str = Field("text-embedding-3-small", description="Remote embedding model.")
    embed_api_key: str | None = Field(None, description="Bearer key for the embedding endpoints.")
    embed_dim: int | None = Field(None, ge=1, description="Requested dimensions (remote only).")
    embed_timeout_s: float = Field(30.0, gt=0, description="Per-request timeout, remote embedder.")
    embed_batch_size: int = Field(
        64,
        ge=1,
        le=2048,
        description="Texts per embedding batch at most (the local model also keeps a "
        "batch's padded length small, so long texts go in smaller batches).",
    )
    embed_threads: int = Field(2, ge=1, description="Threads the local model may use.")

    # -- fact extraction ----------------------------------------------------------
    llm_base_url: str | None = Field(
        None, description="OpenAI-compatible chat endpoint; unset: the offline extractor."
    )
    llm_model: str = Field("gpt-4o-mini", description="Chat model for fact extraction.")
    llm_api_key: str | None = Field(None, description="Bearer key for the chat endpoint.")
    llm_timeout_s: float = Field(
        20.0, gt=0, description="What one LLM call may take at most, retries included."
    )
    llm_max_retries: int = Field(
        2, ge=0, le=10, description="Retries after a failed LLM call, within its timeout."
    )
    llm_breaker_failures: int = Field(
        3, ge=1, description="Failed LLM calls in a row that open the breaker (then offline)."
    )
    llm_breaker_probe_s: float = Field(
        30.0, gt=0, description="How long an open LLM breaker waits before a probe call."
    )
    reasoner: Literal["auto", "chat", "host", "offline"] = Field(
        "auto",
        description="Who reads turns and judges for the dream pass: chat (the endpoint at "
        "llm_base_url), host (the host agent's command line, host_cli), offline (no one: "
        "the offline readings); auto: chat when llm_base_url is set, else offline.",
    )
    host_cli: Literal["claude", "codex", "command"] = Field(
        "claude",
        description="The host reasoner's command line: claude (claude -p), codex (codex "
        "exec), or command (host_command).",
    )
    host_command: list[str] | None = Field(
        None,
        description="The command host_cli=command runs (an argv list, or a string split "
        "as a shell would, never run by one); it reads the prompt on stdin.",
    )
    host_answer: Literal["text", "claude-json", "codex-jsonl"] = Field(
        "text",
        description="How host_command's output is read: text (all of stdout), claude-json "
        "(claude -p --output-format json) or codex-jsonl (codex exec --json).",
    )
    host_model: str | None = Field(
        None, description="Model the host command line is asked to use (unset: its default)."
    )
    host_timeout_s: float = Field(
        60.0,
        gt=0,
        description="What one host command may take by the wall clock; its process group "
        "is killed then.",
    )
    host_concurrency: int = Field(
        2, ge=1, le=16, description="Host commands a process runs at once at most."
    )
    judge_cache_days: float = Field(
        90.0,
        ge=0,
        description="Days a reasoner's validated judgement is kept and reused for the same "
        "question; 0: none is kept.",
    )
    judge_cache_max: int = Field(
        50_000, ge=0, description="Judgements kept at most (the re-index step trims the oldest)."
    )
    extract_importance_threshold: float = Field(
        0.4, ge=0, le=1, description="Facts below this boosted importance are not stored."
    )
    extract_max_per_turn: int = Field(3, ge=0, le=20, description="Facts kept per turn at most.")
    personality_honesty: float = Field(0.5, ge=0, le=1, description="HEXACO H trait, 0..1.")
    personality_emotionality: float = Field(0.5, ge=0, le=1, description="HEXACO E trait, 0..1.")
    personality_extraversion: float = Field(0.5, ge=0, le=1, description="HEXACO X trait, 0..1.")
    personality_agreeableness: float = Field(0.5, ge=0, le=1, description="HEXACO A trait.")
    personality_conscientiousness: float = Field(0.5, ge=0, le=1, description="HEXACO C trait.")
    personality_openness: float = Field(0.5, ge=0, le=1, description="HEXACO O trait, 0..1.")

    # -- dream passes -------------------------------------------------------------
    dream_prune_threshold: float = Field(
        0.05,
        ge=0,
        le=1,
        description="Traces whose decayed strength is below this are proposed for pruning.",
    )
    dream_max_proposals: int = Field(
        100, ge=0, description="Prune and merge proposals one pass may make, each."
    )
    dream_max_pending: int = Field(
        300,
        ge=0,
        description="Pending proposals at most: a pass stops proposing beyond it (what it "
        "could not propose waits for the next pass).",
    )
    dream_merge_threshold: float = Field(
        0.6,
        gt=0,
        le=1,
        description="Cosine at or above which two traces are merge candidates; the verifier "
        "then decides whether they are one fact.",
    )
    dream_merge_slice: int = Field(
        5_000,
        ge=1,
        description="Traces a pass compares exactly at the merge threshold (new ones first "
        "in the order stored); a larger backlog is worked through by the next passes.",
    )
    dream_merge_verify_max: int = Field(
        20_000,
        ge=0,
        description="Candidate pairs one pass verifies at most, the most similar first; the "
        "rest wait for the next pass.",
    )
    dream_protect_importance: float = Field(
        0.7,
        ge=0,
        le=1,
        description="Traces of at least this importance are never proposed for pruning by decay.",
    )
    dream_smalltalk_horizon: float = Field(
        0.5,
        gt=0,
        description="Decay horizon of greetings, thanks and small talk, against an ordinary "
        "trace's 1: below 1 they go first.",
    )
    dream_phatic_max: int = Field(
        2_000,
        ge=0,
        description="Turns a pass asks the phatic judgement about at most (each is judged "
        "once; the rest wait for the next pass); 0 turns it off.",
    )
    dream_episode_horizon: float = Field(
        8.0,
        gt=0,
        description="Decay horizon of an ordinary episode or fact with content, in multiples "
        "of the base stability (importance stretches or shortens it).",
    )
    dream_max_judge_calls: int = Field(
        200,
        ge=0,
        description="Questions one pass asks the reasoner at most (cached answers are "
        "free); past it the pass keeps its offline verdicts.",
    )
    dream_derive_max: int = Field(5, ge=0, description="Insight traces one pass may derive.")
    dream_derive_min_cluster: int = Field(
        3, ge=2, description="Related traces needed for an insight."
    )
    dream_derive_similarity: float = Field(
        0.6, gt=0, lt=1, description="Average cosine within a cluster that makes traces related."
    )
    dream_derive_window: int = Field(
        2_000, ge=10, description="Most recent traces considered for insights."
    )
    dream_compact_after_days: float = Field(
        30.0, ge=0, description="Episodic traces older than this may become semantic..."
    )
    dream_compact_min_retrievals: int = Field(
        3, ge=1, description="...when retrieved at least this often."
    )
    dream_backfill_max: int = Field(
        2_000, ge=0, description="Traces a pass embeds itself; the rest are left to the queue."
    )
    dream_lease_ttl_s: float = Field(
        120.0, ge=5, description="A pass's lease; renewed while it runs, expires if it dies."
    )

    # -- proposals ----------------------------------------------------------
    proposal_reject_cooldown_days: float = Field(
        30.0,
        ge=0,
        description="A rejected prune or merge is not proposed again while its traces are "
        "unchanged, and for this many days after the rejection once they changed.",
    )
    proposal_expire_days: float = Field(
        30.0,
        gt=0,
        description="Pending proposals older than this expire: moved aside, never applied.",
    )

    # -- schedule -----------------------------------------------------------
    dream_cron: str = Field(
        "30 3 * * *",
        description="Crontab (minute hour day month weekday, local time) of the nightly pass.",
    )
    dream_due_check_minutes: float = Field(
        10.0, gt=0, description="How often the scheduler checks whether a dream pass is due."
    )
    dream_due_after_hours: float = Field(
        24.0, ge=0, description="A pass is due once this long has passed since the last one..."
    )
    dream_due_min_new_traces: int = Field(
        200, ge=0, description="...and at least this many traces were added since it."
    )
    dream_misfire_grace_s: int = Field(
        3_600,
        ge=1,
        description="A cron pass missed by more than this (machine off) is skipped, not run late.",
    )
    reconcile_every_s: float = Field(
        60.0, gt=0, description="How often the scheduler sends the reconcile sweep."
    )
    scheduler_lease_ttl_s: float = Field(
        30.0,
        gt=0,
        description="The scheduler's lease on the brain; a dead scheduler's expires after this.",
    )

    # -- metrics ------------------------------------------------------------
    metrics_enabled: bool = Field(
        True,
        description="false: no process feeds or serves metrics (no /metrics, no exporters).",
    )
    metrics_host: str = Field(
        "127.0.0.1", description="Address the worker and scheduler metrics exporters bind."
    )
    metrics_port: int = Field(
        9191, ge=1, le=65_535, description="Port of a worker group's metrics exporter."
    )
    scheduler_metrics_port: int = Field(
        9192, ge=0, le=65_535, description="Port of memctl scheduler's metrics; 0: none."
    )
    metrics_multiproc_dir: Path | None = Field(
        None,
        description="Where worker processes write their samples for the exporter; "
        "unset: <tmp>/reverie-metrics-<metrics_port>.",
    )
    metrics_brain_ttl_s: float = Field(
        5.0, ge=0, description="Seconds the brain gauges are cached between scrapes."
    )

    # -- logging ------------------------------------------------------------
    log_level: str = Field("WARNING", description="Root log level (DEBUG, INFO, WARNING, ...).")
    log_format: Literal["text", "json"] = Field(
        "text", description="text, or json: one JSON object per line with job and trace ids."
    )

    _home_source: str = PrivateAttr("home setting")

    @field_validator("host_command", mode="before")
    @classmethod
    def _argv(cls, value: Any) -> Any:
        """A command given as one string is split as a shell would (and never run by one)."""
        if isinstance(value, str):
            try:
                return shlex.split(value)
            except ValueError as e:
                raise ValueError(f"cannot split the command: {e}") from e
        return value

    @model_validator(mode="after")
    def _reasoner_complete(self) -> Settings:
        """A reasoner chosen by name has what it needs to run."""
        if self.reasoner == "chat" and not self.llm_base_url:
            raise ValueError("reasoner chat needs llm_base_url")
        if self.reasoner == "host" and self.host_cli == "command" and not self.host_command:
            raise ValueError("host_cli command needs host_command")
        return self

    @model_validator(mode="after")
    def _under_the_home(self) -> Settings:
        """The brain and data folder default to the home, the home to the user's folder."""
        given = self.model_fields_set
        if "home" not in given:
            self.home, self._home_source = default_home()
        if "brain_url" not in given:
            self.brain_url = f"sqlite:///{self.home / 'brain.sqlite'}"
        if "data_dir" not in given:
            self.data_dir = self.home
        return self

    @property
    def home_source(self) -> str:
        """Why the home is where it is: ``home setting``, ``./reverie-data`` or ``user data``."""
        return self._home_source

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, _TomlSource(settings_cls))


@contextmanager
def _toml_in_scope(values: dict[str, Any]) -> Iterator[None]:
    token = _toml_values.set(values)
    try:
        yield
    finally:
        _toml_values.reset(token)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError as e:
        raise ConfigError(f"config file not found: {path}") from e
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise ConfigError(f"cannot read config file {path}: {e}") from e
    unknown = sorted(k for k in data if k.lower() not in Settings.model_fields)
    if unknown:
        raise ConfigError(f"unknown setting {unknown[0]!r} in {path}")
    return {k.lower(): v for k, v in data.items()}


LEGACY_HOME = Path("reverie-data")


def default_home(cwd: Path | None = None) -> tuple[Path, str]:
    """The home when none is set, and why: an existing ``./reverie-data``, else user data.

    ``./reverie-data`` was the default before the brain moved to the user's data
    folder; a folder that still has one keeps using it.
    """
    legacy = (cwd or Path.cwd()) / LEGACY_HOME
    if legacy.is_dir():
        return legacy, "./reverie-data"
    return platformdirs.user_data_path("reverie", appauthor=False), "user data"


def _check_environ(environ: Mapping[str, str]) -> None:
    for key in sorted(environ):
        upper = key.upper()
        if not upper.startswith(ENV_PREFIX) or upper == CONFIG_ENV:
            continue
        if upper[len(ENV_PREFIX) :].lower() not in Settings.model_fields:
            raise ConfigError(f"unknown setting {key} in the environment")


def load_settings(config_file: str | Path | None = None, **overrides: Any) -> Settings:
    """Build the settings from overrides, the environment and the TOML file.

    The TOML file is ``config_file`` or, when not given, ``REVERIE_CONFIG``.
    """
    _check_environ(os.environ)
    path = config_file or os.environ.get(CONFIG_ENV)
    toml = _read_toml(Path(path)) if path else {}
    unknown = sorted(k for k in overrides if k not in Settings.model_fields)
    if unknown:
        raise ConfigError(f"unknown setting {unknown[0]!r}")
    try:
        with _toml_in_scope(toml):
            return Settings(**overrides)
    except ValidationError as e:
        err = e.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "settings"
        raise ConfigError(f"invalid setting {where}: {err['msg']}") from e
