"""The ``host`` reasoner: the host agent's own command line answers, with its own
login -- no API key of Reverie's.

Each question runs the command line :mod:`.clis` makes for ``REVERIE_HOST_CLI``
(``claude -p``, ``codex exec`` or ``REVERIE_HOST_COMMAND``) once, in an empty
temporary folder, as a process group of its own, with the prompt on stdin and
never through a shell.  ``REVERIE_HOST_TIMEOUT_S`` is a wall-clock deadline: when
it passes the whole group is killed (a child the command started with it too) and
the question has failed.  After ``REVERIE_LLM_BREAKER_FAILURES`` failures in a row
(a non-zero exit, the deadline, output that is not the command line's answer)
the breaker refuses questions at once until a probe ``REVERIE_LLM_BREAKER_PROBE_S``
later succeeds; the caller keeps its offline reading meanwhile.

**The environment.**  The command line needs its own login and configuration
(``HOME``, ``PATH``, ``ANTHROPIC_API_KEY``, ``CODEX_HOME``, proxies): it gets this
process's environment, less every ``REVERIE_*`` and ``MEMCTL_*`` variable (Reverie's
keys, tokens and brain URL are none of its business), plus :data:`CHILD_MARK`, by
which ``memctl hook`` commands a headless session might still run know to do
nothing: a question is never itself posted as a turn.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping

from memory_core.errors import BreakerOpen, ReasonerError
from memory_core.reasoners.base import Answer
from memory_core.reasoners.breaker import Breaker
from memory_core.reasoners.clis import Cli, cli_for
from memory_core.settings import Settings

log = logging.getLogger(__name__)

# Set in a host command's environment: what it runs is answering Reverie.
CHILD_MARK = "MEMCTL_REASONER_CHILD"
_OWN_PREFIXES = ("REVERIE_", "MEMCTL_")
_SNIPPET = 200
_REAP_S = 1.0  # how long a killed group is given to let go of its pipes


class HostReasoner:
    """Runs the host agent's command line for each question; see the module docstring."""

    kind = "host"

    def __init__(
        self,
        cli: Cli,
        *,
        timeout_s: float = 60.0,
        breaker: Breaker | None = None,
        concurrency: int = 2,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.cli = cli
        self.model = cli.model
        self.timeout_s = timeout_s
        self.breaker = breaker
        self._clock = clock
        self._slots = threading.BoundedSemaphore(concurrency)

    @classmethod
    def from_settings(cls, settings: Settings) -> HostReasoner:
        return cls(
            cli_for(settings),
            timeout_s=settings.host_timeout_s,
            breaker=Breaker(settings.llm_breaker_failures, settings.llm_breaker_probe_s),
            concurrency=settings.host_concurrency,
        )

    def __repr__(self) -> str:
        return f"HostReasoner(cli={self.cli.name!r}, model={self.model!r})"

    def close(self) -> None:
        """Nothing is held between questions."""

    def ask(self, system: str, prompt: str) -> Answer:
        """The command line's answer to ``prompt`` under ``system``, through the breaker."""
        breaker = self.breaker
        if breaker is not None and not breaker.allow():
            raise BreakerOpen(f"{self.cli.name}'s breaker is open: reading offline")
        try:
            stdout = self._run(self.cli.argv(system), self.cli.stdin(system, prompt))
            answer = self.cli.read(stdout)
        except ReasonerError as e:
            if breaker is not None:
                breaker.failed()
            log.warning("host reasoner %s failed: %s", self.cli.name, e)
            raise
        if breaker is not None:
            breaker.succeeded()
        return answer

    def _run(self, argv: list[str], stdin: str) -> str:
        """What the command printed on stdout, within the deadline (its group killed when
        the deadline passes); ReasonerError when it cannot run, fails or runs out of time."""
        end = self._clock() + self.timeout_s
        if not self._slots.acquire(timeout=self.timeout_s):
            raise ReasonerError(f"{self.cli.name}: every slot stayed busy for {self.timeout_s:g} s")
        try:
            executable = shutil.which(argv[0])
            if executable is None:
                raise ReasonerError(f"{argv[0]} is not on PATH")
            with tempfile.TemporaryDirectory(prefix="reverie-ask-") as folder:
                return self._communicate([executable, *argv[1:]], stdin, folder, end)
        finally:
            self._slots.release()

    def _communicate(self, argv: list[str], stdin: str, folder: str, end: float) -> str:
        try:
            process = subprocess.Popen(  # an argv list, never a shell
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=folder,
                env=child_environment(os.environ),
                start_new_session=True,  # its own process group, killed as one
            )
        except OSError as e:
            raise ReasonerError(f"{self.cli.name} could not be started: {e}") from e
        try:
            out, err = process.communicate(stdin.encode(), timeout=max(0.0, end - self._clock()))
        except subprocess.TimeoutExpired:
            _kill_group(process)
            raise ReasonerError(
                f"{self.cli.name} gave no answer within {self.timeout_s:g} s"
            ) from None
        except BaseException:
            _kill_group(process)
            raise
        if process.returncode != 0:
            said = err.decode(errors="replace").strip().splitlines()[-1:] or [""]
            raise ReasonerError(
                f"{self.cli.name} exited with {process.returncode}: {said[0][:_SNIPPET]}"
            )
        return out.decode(errors="replace")


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """Kill the command's whole process group and reap it; a child that left the group
    and keeps its pipes open is not waited for."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    try:
        process.communicate(timeout=_REAP_S)
    except subprocess.TimeoutExpired:
        for pipe in (process.stdin, process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()
        process.wait()


def child_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment a host command runs in: ``environ`` less Reverie's own variables,
    with :data:`CHILD_MARK` set."""
    env = {k: v for k, v in environ.items() if not k.upper().startswith(_OWN_PREFIXES)}
    env[CHILD_MARK] = "1"
    env.setdefault("NO_COLOR", "1")
    return env
