"""A real Prometheus, on ops/prometheus.yml's jobs and ops/alerts.yml's rules,
scraping a real API, worker group and scheduler on a real Redis: every
dashboard query returns data and every alert rule evaluates."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

pytestmark = [pytest.mark.slow, pytest.mark.redis]

OPS = Path(__file__).resolve().parents[2] / "ops"
TURNS = 8
SYNTHETIC = {"up"}  # series Prometheus makes itself


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until(what: str, predicate: Callable[[], bool], timeout: float, *procs: Any) -> None:
    deadline = time.monotonic() + timeout
    while True:
        for proc in procs:
            assert proc.poll() is None, f"{proc.args} exited with {proc.returncode}"
        try:
            if predicate():
                return
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def answers(url: str) -> bool:
    return httpx.get(url, timeout=2).status_code == 200


@contextmanager
def process(cmd: list[str], env: dict[str, str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``cmd`` in a session of its own (so its children go with it), stopped on exit."""
    with log.open("wb") as out:
        proc = subprocess.Popen(
            cmd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


def prometheus_config(tmp_path: Path, ports: dict[str, int]) -> Path:
    """ops/prometheus.yml with its targets on this test's ports, scraped every second."""
    doc = yaml.safe_load((OPS / "prometheus.yml").read_text(encoding="utf-8"))
    doc["global"] = {"scrape_interval": "1s", "evaluation_interval": "1s"}
    doc["rule_files"] = [str(OPS / rules) for rules in doc["rule_files"]]
    assert {job["job_name"] for job in doc["scrape_configs"]} == set(ports)
    for job in doc["scrape_configs"]:
        job["static_configs"] = [{"targets": [f"127.0.0.1:{ports[job['job_name']]}"]}]
    path = tmp_path / "prometheus.yml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


class PromAPI:
    def __init__(self, port: int) -> None:
        self.http = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10)

    def query(self, expr: str) -> dict[str, Any]:
        doc: dict[str, Any] = self.http.get("/api/v1/query", params={"query": expr}).json()
        return doc

    def value(self, expr: str) -> float:
        result = self.query(expr)["data"]["result"]
        return float(result[0]["value"][1]) if result else float("nan")

    def rules(self) -> list[dict[str, Any]]:
        groups = self.http.get("/api/v1/rules").json()["data"]["groups"]
        return [rule for group in groups for rule in group["rules"]]


def reverie_env(tmp_path: Path, redis_url: str, ports: dict[str, int]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("REVERIE_")}
    env.update(
        REVERIE_BRAIN_URL=f"sqlite:///{tmp_path / 'brain.sqlite'}",
        REVERIE_DATA_DIR=str(tmp_path / "data"),
        REVERIE_REDIS_URL=redis_url,
        REVERIE_EMBEDDER="stub",
        REVERIE_METRICS_PORT=str(ports["reverie-workers"]),
        REVERIE_METRICS_MULTIPROC_DIR=str(tmp_path / "worker-metrics"),
        REVERIE_SCHEDULER_METRICS_PORT=str(ports["reverie-scheduler"]),
        REVERIE_METRICS_BRAIN_TTL_S="0.5",
        REVERIE_LOG_LEVEL="INFO",
    )
    return env


def drive(api: str, env: dict[str, str]) -> None:
    """Turns over HTTP, a search, and a dream pass on the workers."""
    with httpx.Client(base_url=api, timeout=10) as http:
        ids = []
        for i in range(TURNS):
            r = http.post(
                "/v1/turns",
                json={
                    "user": f"I moved to Lisbon and I love green tea, note {i}.",
                    "assistant": "Noted.",
                    "scope": "user",
                    "scope_id": "alice",
                },
            )
            assert r.status_code == 202, r.text
            ids.append(r.json()["turn_id"])
        wait_until(
            "every turn ingested",
            lambda: all(http.get(f"/v1/turns/{t}").json()["status"] == "done" for t in ids),
            60,
        )
        assert http.get("/v1/search", params={"q": "Lisbon", "scope_id": "alice"}).json()["results"]
    subprocess.run(
        [sys.executable, "-m", "memctl", "dream", "--enqueue"],
        env=env,
        check=True,
        capture_output=True,
        timeout=60,
    )


def exposed(urls: list[str]) -> set[str]:
    """Every series name the processes expose right now."""
    return {
        sample.name
        for url in urls
        for family in text_string_to_metric_families(httpx.get(url, timeout=5).text)
        for sample in family.samples
    }


def test_prometheus_scrapes_every_process_and_every_panel_and_alert_query_works(
    tmp_path: Path,
    redis_url: str,
    prometheus: str,
    dashboard_exprs: list[Any],
    alert_exprs: list[Any],
    rules: list[dict[str, Any]],
    names_in: Callable[[str], set[str]],
    resolved: Callable[[str], str],
) -> None:
    ports = {name: free_port() for name in ("reverie-api", "reverie-workers", "reverie-scheduler")}
    prom_port = free_port()
    env = reverie_env(tmp_path, redis_url, ports)
    api = f"http://127.0.0.1:{ports['reverie-api']}"
    metrics_urls = [
        f"{api}/metrics",
        f"http://127.0.0.1:{ports['reverie-workers']}/metrics",
        f"http://127.0.0.1:{ports['reverie-scheduler']}/metrics",
    ]
    memctl = [sys.executable, "-m", "memctl"]
    with ExitStack() as stack:
        api_proc = stack.enter_context(
            process(
                [*memctl, "api", "--port", str(ports["reverie-api"])], env, tmp_path / "api.log"
            )
        )
        wait_until("the API", lambda: answers(f"{api}/readyz"), 60, api_proc)
        # The API created and migrated the brain; the others start on it together.
        procs = [
            api_proc,
            stack.enter_context(
                process(
                    [*memctl, "worker", "--processes", "1", "--threads", "2"],
                    env,
                    tmp_path / "worker.log",
                )
            ),
            stack.enter_context(process([*memctl, "scheduler"], env, tmp_path / "scheduler.log")),
            stack.enter_context(
                process(
                    [
                        prometheus,
                        f"--config.file={prometheus_config(tmp_path, ports)}",
                        f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                        f"--web.listen-address=127.0.0.1:{prom_port}",
                        "--log.level=warn",
                    ],
                    env,
                    tmp_path / "prometheus.log",
                )
            ),
        ]
        prom = PromAPI(prom_port)
        for url in (*metrics_urls[1:], f"http://127.0.0.1:{prom_port}/-/ready"):
            wait_until(url, lambda url=url: answers(url), 60, *procs)

        drive(api, env)

        def scraped_everything() -> bool:
            return (
                prom.value('count(up{job=~"reverie-.*"} == 1)') == 3
                and prom.value("sum(reverie_turns_ingested_total)") >= TURNS
                and prom.value("sum(reverie_search_duration_seconds_count)") >= 1
                and prom.value('sum(reverie_dream_passes_total{status="ok"})') >= 1
                and prom.value('max(reverie_dream_last_finished_timestamp_seconds{status="ok"})')
                > 0
                and prom.value('sum(reverie_scheduler_job_runs_total{outcome="ok"})') >= 1
                and prom.value("sum(reverie_queue_messages)") == 0
            )

        wait_until("Prometheus to scrape the run", scraped_everything, 60, *procs)
        time.sleep(2)  # a few more samples after the last change, for rate()

        no_data, failed = [], []
        for query in dashboard_exprs:
            doc = prom.query(resolved(query.expr))
            if doc["status"] != "success":
                failed.append((query.where, doc.get("error")))
            elif not doc["data"]["result"]:
                no_data.append(query.where)
        assert failed == []
        assert no_data == []

        for query in alert_exprs:
            doc = prom.query(query.expr)
            assert doc["status"] == "success", (query.where, doc.get("error"))
        wait_until(
            "every rule evaluated",
            lambda: (
                {r["name"]: r["health"] for r in prom.rules()}
                == {rule["alert"]: "ok" for rule in rules}
            ),
            30,
            *procs,
        )

        names = exposed(metrics_urls)
        queried = {name for q in (*dashboard_exprs, *alert_exprs) for name in names_in(q.expr)}
        assert queried - names - SYNTHETIC == set()
