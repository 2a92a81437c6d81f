"""Several hosts on one PostgreSQL brain: two APIs, two worker groups, disasters.

Each host is a network namespace of this machine joined to the others by veth
pairs on a bridge (a 10.77.x.0/24 no interface of this machine holds, so a run
left behind by a killed one or beside this one never shares its routes): a
database host runs a PostgreSQL server and Redis of the test's own, hosts A and
B each run ``memctl api`` and a ``memctl worker`` group.  Clients post turns to
both APIs; mid-run host A's worker group and API are killed with -9.  Every
turn that got a 202 is ingested exactly once, and once A's API is back, the
same searches from either API answer the same.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text

import memory_core as mc
from memory_core.auth import create_token
from tests.workers.test_crashes import done_count

pytestmark = pytest.mark.slow

BRIDGE = "rvbr0"
HOST_NUMBERS = {"db": 10, "a": 11, "b": 12}
PORT = 8420
TURNS_PER_CLIENT = 120
WORDS = ["heron", "maple", "quartz", "lantern", "fjord", "saffron", "cobalt", "tundra"]


def _ip(*args: str, ns: str | None = None) -> None:
    cmd = ["ip", *args] if ns is None else ["ip", "netns", "exec", ns, "ip", *args]
    subprocess.run(cmd, check=True, capture_output=True, timeout=30)


def _netns_permitted() -> str | None:
    """Why namespaces cannot be made here, or None when they can."""
    if shutil.which("ip") is None:
        return "the ip command (iproute2) is missing"
    probe = f"rvprobe{os.getpid()}"
    made = subprocess.run(
        ["ip", "netns", "add", probe], check=False, capture_output=True, text=True
    )
    if made.returncode != 0:
        return f"network namespaces are not permitted: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], check=False, capture_output=True)
    return None


def _free_net() -> str:
    """A 10.77.x network no address or route of this machine is in."""
    taken = subprocess.run(
        ["ip", "-4", "-o", "addr"], check=True, capture_output=True, text=True
    ).stdout
    taken += subprocess.run(
        ["ip", "-4", "route"], check=True, capture_output=True, text=True
    ).stdout
    for third in random.sample(range(256), 256):
        if f"10.77.{third}." not in taken:
            return f"10.77.{third}"
    pytest.fail("every 10.77.x.0/24 is in use on this machine")


@dataclass(frozen=True)
class Net:
    prefix: str  # "10.77.x"
    names: dict[str, str]  # host -> namespace

    def address(self, host: str) -> str:
        return f"{self.prefix}.{HOST_NUMBERS[host]}"


@contextmanager
def hosts() -> Iterator[Net]:
    """The namespaces, on a bridge the test's own process reaches."""
    tag = uuid.uuid4().hex[:4]
    net = Net(_free_net(), {h: f"rv{h}{tag}" for h in HOST_NUMBERS})
    names = net.names
    bridge = f"{BRIDGE}{tag}"[:15]
    try:
        _ip("link", "add", bridge, "type", "bridge")
        _ip("addr", "add", f"{net.prefix}.1/24", "dev", bridge)
        _ip("link", "set", bridge, "up")
        for h, ns in names.items():
            outer, inner = f"rv{h}{tag}o", f"rv{h}{tag}i"
            subprocess.run(["ip", "netns", "add", ns], check=True, capture_output=True)
            _ip("link", "add", outer, "type", "veth", "peer", "name", inner)
            _ip("link", "set", inner, "netns", ns)
            _ip("link", "set", outer, "master", bridge)
            _ip("link", "set", outer, "up")
            _ip("addr", "add", f"{net.address(h)}/24", "dev", inner, ns=ns)
            _ip("link", "set", inner, "up", ns=ns)
            _ip("link", "set", "lo", "up", ns=ns)
        yield net
    finally:
        for ns in names.values():
            subprocess.run(["ip", "netns", "del", ns], check=False, capture_output=True)
        subprocess.run(["ip", "link", "del", bridge], check=False, capture_output=True)


def _in(ns: str, *cmd: str) -> list[str]:
    return ["ip", "netns", "exec", ns, *cmd]


def _wait_port(host: str, port: int, proc: subprocess.Popen[bytes], what: str, log: Path) -> None:
    import socket

    def said() -> str:
        return log.read_text(errors="replace")[-2000:] if log.exists() else ""

    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"{what} exited with {proc.returncode}:\n{said()}"
        with suppress(OSError), socket.create_connection((host, port), timeout=0.5):
            return
        time.sleep(0.2)
    routes = subprocess.run(
        ["ip", "-4", "route"], check=False, capture_output=True, text=True
    ).stdout
    raise AssertionError(
        f"{what} never listened on {host}:{port}\nroutes:\n{routes}\n{what} said:\n{said()}"
    )


def _wait_accepting(host: str, log: Path) -> None:
    """Until the server takes connections: it listens before it has started up."""
    import psycopg

    url = f"postgresql://postgres@{host}:5432/postgres"
    deadline = time.monotonic() + 90
    while True:
        try:
            psycopg.connect(url, connect_timeout=5).close()
            return
        except psycopg.OperationalError as e:
            if time.monotonic() > deadline:
                raise AssertionError(f"postgres never took a connection:\n{log.read_text()}") from e
            time.sleep(0.2)


def _spawn(log: Path, cmd: list[str]) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)


@contextmanager
def database_host(net: Net, logs: Path) -> Iterator[tuple[str, str]]:
    """A PostgreSQL server and a Redis of the test's own on the database host."""
    pgbin = sorted(Path("/usr/lib/postgresql").glob("*/bin"))
    if not pgbin or shutil.which("redis-server") is None:
        pytest.fail("PostgreSQL's server binaries and redis-server are needed (.ci/run)")
    # Not under pytest's folder: the server's own user must reach it.
    pgdata = Path(tempfile.mkdtemp(prefix="reverie-hosts-pg-"))
    owner: list[str] = []
    if os.getuid() == 0:
        shutil.chown(pgdata, "postgres")
        owner = ["runuser", "-u", "postgres", "--"]
    bin_ = pgbin[-1]
    subprocess.run(
        [*owner, str(bin_ / "initdb"), "-D", str(pgdata), "-U", "postgres", "--auth=trust"],
        check=True,
        capture_output=True,
        timeout=120,
    )
    with (pgdata / "pg_hba.conf").open("a") as hba:
        hba.write(f"host all all {net.prefix}.0/24 trust\n")
    host, ns = net.address("db"), net.names["db"]
    pg_log, redis_log = logs / "postgres.log", logs / "redis.log"
    server = _spawn(
        pg_log,
        _in(
            ns,
            *owner,
            str(bin_ / "postgres"),
            "-D",
            str(pgdata),
            "-c",
            f"listen_addresses={host}",
            "-c",
            f"unix_socket_directories={pgdata}",
            "-c",
            "max_connections=200",
        ),
    )
    redis_server = _spawn(
        redis_log,
        _in(
            ns,
            "redis-server",
            "--bind",
            host,
            "--port",
            "6379",
            "--save",
            "",
            "--appendonly",
            "no",
            "--protected-mode",
            "no",
        ),
    )
    try:
        _wait_port(host, 5432, server, "postgres", pg_log)
        _wait_accepting(host, pg_log)
        _wait_port(host, 6379, redis_server, "redis-server", redis_log)
        yield (
            f"postgresql+psycopg://postgres@{host}:5432/reverie",
            f"redis://{host}:6379/0",
        )
    finally:
        for proc in (redis_server, server):
            proc.send_signal(signal.SIGTERM)
        for proc in (redis_server, server):
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
        shutil.rmtree(pgdata, ignore_errors=True)


@dataclass
class Host:
    ns: str
    address: str
    env: dict[str, str]
    log: Path
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def start(self, what: str, *args: str) -> subprocess.Popen[bytes]:
        with self.log.open("ab") as out:
            proc = subprocess.Popen(
                _in(self.ns, sys.executable, "-m", "memctl", *args),
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.procs[what] = proc
        return proc

    def api(self) -> None:
        proc = self.start("api", "api", "--host", self.address, "--port", str(PORT))
        _wait_port(self.address, PORT, proc, f"the API on {self.ns}", self.log)

    def kill9(self, what: str) -> None:
        proc = self.procs.pop(what)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)

    def stop(self) -> None:
        for proc in self.procs.values():
            with suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        self.procs.clear()


@dataclass
class Client:
    """Posts turns to one API until told to stop; keeps what got a 202."""

    base: str
    token: str
    name: str
    accepted: dict[str, str] = field(default_factory=dict)  # turn id -> its word
    sent: set[str] = field(default_factory=set)  # every idempotency key posted
    refused: int = 0

    def run(self, stop: threading.Event) -> None:
        headers = {"authorization": f"Bearer {self.token}"}
        with httpx.Client(base_url=self.base, headers=headers, timeout=10) as http:
            for i in range(TURNS_PER_CLIENT):
                if stop.is_set():
                    return
                word = f"{WORDS[i % len(WORDS)]}{self.name}{i}"
                body = {
                    "user": f"Remember the word {word}, please.",
                    "assistant": "I will.",
                    "scope": "user",
                    "scope_id": f"u{i % 3}",
                    "conversation_id": f"{self.name}-{i % 5}",
                    "idempotency_key": f"{self.name}/{i}",
                }
                self.sent.add(body["idempotency_key"])
                try:
                    r = http.post("/v1/turns", json=body)
                except httpx.HTTPError:
                    self.refused += 1
                    time.sleep(0.05)
                    continue
                if r.status_code == 202:
                    self.accepted[r.json()["turn_id"]] = word
                else:
                    self.refused += 1
                time.sleep(0.01)


def _wait(predicate: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.3)


def test_two_apis_and_two_worker_groups_on_other_hosts_lose_and_duplicate_nothing(
    tmp_path: Path,
) -> None:
    why = _netns_permitted()
    if why is not None:
        pytest.skip(f"several hosts need network namespaces: {why}")
    data = tmp_path / "data"
    data.mkdir()
    with ExitStack() as stack:
        net = stack.enter_context(hosts())
        names = net.names
        brain_url, redis_url = stack.enter_context(database_host(net, tmp_path))
        settings = mc.load_settings(brain_url=brain_url, data_dir=data, embedder="stub")
        brain = mc.open_brain(settings)  # made and migrated, from outside every host
        stack.callback(brain.close)
        _, token = create_token(
            brain, "hosts", ["read", "write", "delete", "dream", "admin"], identity=mc.OPEN
        )
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("REVERIE_")},
            "REVERIE_BRAIN_URL": brain_url,
            "REVERIE_REDIS_URL": redis_url,
            "REVERIE_DATA_DIR": str(data),
            "REVERIE_EMBEDDER": "stub",
            "REVERIE_REDIS_HEARTBEAT_TIMEOUT_MS": "2000",
            "REVERIE_REDIS_MAINTENANCE_CHANCE": "1000000",
        }
        a = Host(names["a"], net.address("a"), env, tmp_path / "a.log")
        b = Host(names["b"], net.address("b"), env, tmp_path / "b.log")
        stack.callback(b.stop)
        stack.callback(a.stop)
        for h in (a, b):
            h.api()
            h.start("workers", "worker", "--processes", "2", "--threads", "2")

        clients = [
            Client(f"http://{h.address}:{PORT}", token, f"{h.ns[-5:]}c{k}")
            for h in (a, b)
            for k in range(2)
        ]
        stop = threading.Event()
        threads = [threading.Thread(target=c.run, args=(stop,)) for c in clients]
        for t in threads:
            t.start()
        _wait(lambda: sum(len(c.accepted) for c in clients) >= 150, 120, "150 accepted turns")
        a.kill9("workers")
        a.kill9("api")
        with brain.read() as conn:
            in_flight = conn.execute(
                text("SELECT count(*) FROM inbox_turns WHERE status <> 'done'")
            ).scalar_one()
        for t in threads:
            t.join(300)
        accepted = {tid: word for c in clients for tid, word in c.accepted.items()}
        on_a = sum(len(c.accepted) for c in clients[:2])
        assert clients[0].refused + clients[1].refused > 0, "A's API died too late to matter"
        assert on_a > 0 and len(accepted) > on_a
        assert in_flight > 0, "nothing was in flight when A's workers died"

        def inbox() -> dict[str, tuple[str, str]]:
            """Every turn the inbox holds: its idempotency key and status."""
            with brain.read() as conn:
                rows = conn.execute(
                    text("SELECT id, idempotency_key, status FROM inbox_turns")
                ).all()
            return {r.id: (r.idempotency_key, r.status) for r in rows}

        def settled() -> bool:
            """Every 202 is in the inbox, and every turn there is ingested.  A turn A's
            API committed as it was killed, before its 202 went out, is kept too: it was
            accepted, though its client never heard so."""
            held = inbox()
            return set(accepted) <= set(held) and all(s == "done" for _, s in held.values())

        # B's workers take over what A's held (redelivered once A's heartbeat lapses);
        # a turn whose job was never sent is what reconcile is for.
        deadline = time.monotonic() + 60
        while not settled() and time.monotonic() < deadline:
            time.sleep(1)
        if not settled():
            reconciled = subprocess.run(
                _in(names["b"], sys.executable, "-m", "memctl", "reconcile"),
                env=env,  # memctl reconcile takes every pending turn, however young
                check=False,
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert reconciled.returncode == 0, reconciled.stdout + reconciled.stderr
        _wait(settled, 180, "every accepted turn ingested")
        assert done_count(brain) == len(inbox())

        with brain.read() as conn:
            rows = conn.execute(
                text(
                    "SELECT json_extract(metadata, '$.turn_id') AS turn, count(*) AS n "
                    "FROM memory_traces WHERE tags LIKE '%\"turn\"%' GROUP BY 1"
                )
            ).all()
            inbox_ids = {r[0] for r in conn.execute(text("SELECT id FROM inbox_turns")).all()}
        episodes = {r.turn: r.n for r in rows}
        assert set(accepted) <= set(episodes) == inbox_ids  # every 202, and what else is kept
        assert set(episodes.values()) == {1}  # exactly once
        # Anything beyond the 202s is a turn a client sent and A committed as it died: at
        # most the one request each of A's clients had in flight.
        unanswered = inbox_ids - set(accepted)
        sent = {key for c in clients for key in c.sent}
        assert {inbox()[t][0] for t in unanswered} <= sent
        assert len(unanswered) <= 2

        # A comes back; with the workers stopped (a search's use is counted by a job),
        # both APIs answer every search alike.
        b.kill9("workers")
        a.api()
        headers = {"authorization": f"Bearer {token}"}
        words = sorted(accepted.values())[:: max(1, len(accepted) // 25)]
        for word in words:
            answers = []
            for h in (a, b):
                r = httpx.get(
                    f"http://{h.address}:{PORT}/v1/search",
                    params={"q": word, "limit": 5},
                    headers=headers,
                    timeout=10,
                )
                assert r.status_code == 200, r.text
                answers.append([hit["id"] for hit in r.json()["results"]])
            assert answers[0] == answers[1], word
            assert answers[0], f"{word} not found"
        print(
            json.dumps(
                {
                    "accepted": len(accepted),
                    "accepted_on_a": on_a,
                    "in_flight_at_the_kill": in_flight,
                    "searches_compared": len(words),
                    "committed_unanswered": len(unanswered),
                }
            )
        )
