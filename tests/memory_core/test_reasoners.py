"""The host reasoner runs the host agent's own command line -- a fake ``claude`` or
``codex`` first on PATH -- under a wall-clock deadline and a breaker, and its answers
are read and checked as the chat endpoint's are."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

import memory_core as mc
from memory_core.errors import BreakerOpen, ExtractionError, ReasonerError
from memory_core.extraction import MemoryConfig, OfflineExtractor, extract_facts, make_extractor
from memory_core.extraction.base import Fact
from memory_core.extraction.llm import LLMExtractor
from memory_core.reasoners import chosen, make_reasoner
from memory_core.reasoners.chat import ChatReasoner
from memory_core.reasoners.host import CHILD_MARK, HostReasoner
from tests.fakes import FakeHostCli

TIMEOUT_S = 2.0
SLACK_S = 1.0
CHILLIES = Fact("The user grows chillies on the balcony.", "knowledge", 0.9, ["balcony"])


def host(**settings: object) -> LLMExtractor:
    values: dict[str, object] = {"reasoner": "host", "host_timeout_s": TIMEOUT_S}
    values.update(settings)
    return LLMExtractor(HostReasoner.from_settings(mc.load_settings(**values)))


@pytest.fixture
def claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeHostCli:
    fake = FakeHostCli(tmp_path / "claude", "claude")
    fake.on_path(monkeypatch)
    return fake


@pytest.fixture
def codex(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeHostCli:
    fake = FakeHostCli(tmp_path / "codex", "codex")
    fake.on_path(monkeypatch)
    return fake


def test_claude_answers_the_facts_of_an_exchange_through_its_print_mode(
    claude: FakeHostCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REVERIE_LLM_API_KEY", "sk-reverie-own-key")
    monkeypatch.setenv("MEMCTL_MCP_TOKEN", "rvt_secret")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "the-cli-own-login")
    extraction = host(host_model="haiku").extract("I grow chillies on my balcony.", "Nice!")
    assert extraction.facts == [CHILLIES]
    assert (extraction.extractor, extraction.tokens) == ("host", 120)
    [call] = claude.calls()
    argv = call["argv"]
    assert argv[:3] == ["-p", "--output-format", "json"]
    assert "You extract facts" in argv[argv.index("--system-prompt") + 1]
    assert {"--strict-mcp-config", "--no-session-persistence"} <= set(argv)
    assert argv[argv.index("--model") + 1] == "haiku"
    assert call["stdin"] == "User: I grow chillies on my balcony.\n\nAssistant: Nice!"
    # Reverie's own keys and tokens stay home; the question is marked as Reverie's.
    assert call["env"] == {CHILD_MARK: "1"}
    assert call["cwd"] != os.getcwd()


def test_codex_answers_through_exec_with_the_prompt_on_stdin(codex: FakeHostCli) -> None:
    extraction = host(host_cli="codex").extract("I grow chillies on my balcony.", "Nice!")
    assert extraction.facts == [CHILLIES]
    assert extraction.tokens == 120  # its cached input tokens are part of its input tokens
    [call] = codex.calls()
    assert call["argv"][:2] == ["exec", "--json"] and call["argv"][-1] == "-"
    assert {"--skip-git-repo-check", "--ephemeral", "mcp_servers={}"} <= set(call["argv"])
    assert call["stdin"].startswith("You extract facts")
    exchange = "User: I grow chillies on my balcony.\n\nAssistant: Nice!"
    assert call["stdin"].rstrip().endswith(exchange)


def test_a_configured_command_is_split_without_a_shell_and_read_as_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    judge = FakeHostCli(tmp_path / "judge", "my-judge")
    judge.on_path(monkeypatch)
    extractor = host(host_cli="command", host_command="my-judge --tone 'very dry' ; rm -rf /")
    assert extractor.extract("I grow chillies on my balcony.", "Nice!").facts == [CHILLIES]
    assert judge.calls()[0]["argv"] == ["--tone", "very dry", ";", "rm", "-rf", "/"]
    assert extractor.reasoner.model.startswith("my-judge#")  # the command's words kept out
    claude_json = host(host_cli="command", host_command=["claude"], host_answer="claude-json")
    FakeHostCli(tmp_path / "claude", "claude").on_path(monkeypatch)
    assert claude_json.extract("I grow chillies.", "Nice!").facts == [CHILLIES]


@pytest.mark.parametrize("mode", ["slow", "hang"])
def test_a_slow_or_hung_command_costs_its_deadline_and_then_the_breaker_opens(
    claude: FakeHostCli, mode: str
) -> None:
    claude.set(mode, slow_s=30.0)
    extractor = host(llm_breaker_failures=1, llm_breaker_probe_s=600)
    started = time.monotonic()
    with pytest.raises(ReasonerError, match="no answer within 2 s"):
        extractor.extract("I grow chillies on my balcony.", "Nice!")
    assert time.monotonic() - started <= TIMEOUT_S + SLACK_S
    [call] = claude.calls()
    for pid in (call["pid"], call["child"]):  # the whole group was killed
        if pid is not None:
            wait_gone(pid)
    started = time.monotonic()
    with pytest.raises(BreakerOpen):
        extractor.extract("I prefer window seats.", "Noted.")
    assert time.monotonic() - started < 0.5 and len(claude.calls()) == 1


def wait_gone(pid: int) -> None:
    deadline = time.monotonic() + 10
    while Path(f"/proc/{pid}").exists() and "Z" not in _state(pid):
        assert time.monotonic() < deadline, f"process {pid} still runs"
        time.sleep(0.05)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "Z"


def test_a_malformed_answer_falls_back_offline_for_that_turn_alone(claude: FakeHostCli) -> None:
    extractor = host()
    claude.set("malformed")
    first = extract_facts(
        extractor, OfflineExtractor(), "I love hiking in the Alps.", "Nice!", MemoryConfig()
    )
    assert first.fell_back and first.extractor == "offline"
    assert "not JSON" in (first.primary_error or "")
    claude.set("good")
    second = extract_facts(
        extractor, OfflineExtractor(), "I grow chillies on my balcony.", "Nice!", MemoryConfig()
    )
    assert not second.fell_back and second.facts == [CHILLIES]
    assert len(claude.calls()) == 2 and second.breaker_open is False


def test_a_failing_command_says_why_and_one_that_is_missing_says_so(
    claude: FakeHostCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    claude.set("fail")
    with pytest.raises(ReasonerError, match="exited with 3: Error: not logged in"):
        host().extract("I grow chillies.", "Nice!")
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(ReasonerError, match="codex is not on PATH"):
        host(host_cli="codex").extract("I grow chillies.", "Nice!")


def test_the_judgements_are_checked_the_same_way_whoever_answers(claude: FakeHostCli) -> None:
    extractor = host()
    assert extractor.same_fact("Miso hates the vacuum.", "Tom hates the vacuum.") == (
        False,
        "they name different cats",
    )
    assert extractor.replaces("I live in Leeds.", "We moved to York.") == (True, "they moved")
    claude.set("good", same={"same": "maybe"})
    with pytest.raises(ExtractionError, match="duplicate judgement"):
        extractor.same_fact("a", "b")


def test_the_reasoner_is_chosen_by_name() -> None:
    assert chosen(mc.load_settings()) == "offline"
    assert make_reasoner(mc.load_settings()) is None
    url = "http://127.0.0.1:9/v1"
    assert isinstance(make_reasoner(mc.load_settings(llm_base_url=url)), ChatReasoner)
    assert make_reasoner(mc.load_settings(llm_base_url=url, reasoner="offline")) is None
    chosen_host = make_reasoner(mc.load_settings(llm_base_url=url, reasoner="host"))
    assert isinstance(chosen_host, HostReasoner) and chosen_host.model == "claude"
    assert isinstance(make_extractor(mc.load_settings(reasoner="offline")), OfflineExtractor)
    for bad in ({"reasoner": "chat"}, {"reasoner": "host", "host_cli": "command"}):
        with pytest.raises(mc.ConfigError):
            mc.load_settings(**bad)
    with pytest.raises(mc.ConfigError, match="reasoner"):
        mc.load_settings(reasoner="oracle")
