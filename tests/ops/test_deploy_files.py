"""ops/compose.yaml, ops/Dockerfile, Grafana provisioning and the systemd units.

Docker is not run here: these check the files' structure and that every
path, port, command and setting they name exists.
"""

from __future__ import annotations

import configparser
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

import memory_core as mc
from memory_core.settings import ENV_PREFIX, Settings

ROOT = Path(__file__).resolve().parents[2]
OPS = ROOT / "ops"
REVERIE_SERVICES = {"api": "api", "workers": "worker", "scheduler": "scheduler"}
DASHBOARD_DIR = "/var/lib/grafana/dashboards/reverie"


@pytest.fixture
def compose() -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((OPS / "compose.yaml").read_text(encoding="utf-8"))
    return doc


def assert_known_settings(keys: list[str], where: str) -> None:
    for key in keys:
        assert key.startswith(ENV_PREFIX), f"{where}: {key}"
        assert key[len(ENV_PREFIX) :].lower() in Settings.model_fields, f"{where}: {key}"


def test_compose_runs_redis_the_three_reverie_roles_prometheus_and_grafana(
    compose: dict[str, Any],
) -> None:
    assert set(compose["services"]) == {
        "redis",
        "api",
        "workers",
        "scheduler",
        "prometheus",
        "grafana",
    }
    assert set(compose["volumes"]) >= {"brain", "prometheus", "grafana"}


def test_each_reverie_service_builds_the_image_and_runs_its_memctl_command(
    compose: dict[str, Any],
) -> None:
    for service, command in REVERIE_SERVICES.items():
        spec = compose["services"][service]
        assert (ROOT / "ops" / spec["build"]["context"] / spec["build"]["dockerfile"]).is_file()
        assert spec["command"][:2] == ["memctl", command], service
        env = spec["environment"]
        assert_known_settings(list(env), service)
        assert env["REVERIE_REDIS_URL"].startswith("redis://redis:")
        assert env["REVERIE_METRICS_HOST"] == "0.0.0.0"  # scraped from another container
        assert "brain:/data" in spec["volumes"]
        assert env["REVERIE_BRAIN_URL"] == "sqlite:////data/brain.sqlite"


def test_compose_restarts_the_worker_group_always(compose: dict[str, Any]) -> None:
    assert compose["services"]["workers"]["restart"] == "always"


def test_the_api_listens_where_prometheus_scrapes_it(compose: dict[str, Any]) -> None:
    command = compose["services"]["api"]["command"]
    assert command[command.index("--host") + 1] == "0.0.0.0"
    assert command[command.index("--port") + 1] == "8420"
    scrape = yaml.safe_load((OPS / "prometheus.yml").read_text(encoding="utf-8"))
    targets = {
        job["job_name"]: job["static_configs"][0]["targets"][0] for job in scrape["scrape_configs"]
    }
    assert targets == {
        "reverie-api": "api:8420",
        "reverie-workers": "workers:9191",
        "reverie-scheduler": "scheduler:9192",
    }


def mounts(spec: dict[str, Any]) -> dict[str, Path]:
    """Container path -> host path of a service's bind mounts (relative to ops/)."""
    found = {}
    for volume in spec["volumes"]:
        source, target = volume.split(":")[:2]
        if source.startswith("."):
            found[target] = (OPS / source).resolve()
    return found


def test_prometheus_gets_the_scrape_config_and_the_rules(compose: dict[str, Any]) -> None:
    spec = compose["services"]["prometheus"]
    bound = mounts(spec)
    assert bound["/etc/prometheus/prometheus.yml"] == OPS / "prometheus.yml"
    assert bound["/etc/prometheus/alerts.yml"] == OPS / "alerts.yml"
    assert "--config.file=/etc/prometheus/prometheus.yml" in spec["command"]


def test_grafana_is_provisioned_with_the_datasource_and_the_dashboard(
    compose: dict[str, Any],
) -> None:
    bound = mounts(compose["services"]["grafana"])
    provisioning = bound["/etc/grafana/provisioning"]
    assert provisioning == OPS / "grafana" / "provisioning"
    assert bound[f"{DASHBOARD_DIR}/reverie.json"] == OPS / "grafana" / "reverie.json"

    sources = yaml.safe_load(
        (provisioning / "datasources" / "prometheus.yml").read_text(encoding="utf-8")
    )
    [source] = sources["datasources"]
    assert (source["type"], source["url"], source["isDefault"]) == (
        "prometheus",
        "http://prometheus:9090",
        True,
    )
    boards = yaml.safe_load(
        (provisioning / "dashboards" / "reverie.yml").read_text(encoding="utf-8")
    )
    [provider] = boards["providers"]
    assert provider["type"] == "file"
    assert provider["options"]["path"] == DASHBOARD_DIR


def test_the_dockerfile_installs_the_project_and_runs_memctl() -> None:
    text = (OPS / "Dockerfile").read_text(encoding="utf-8")
    base = re.search(r"^FROM python:3\.(\d+)", text, re.MULTILINE)
    assert base is not None and int(base.group(1)) >= 11
    for package in ("memory_core", "workers", "scheduler", "api", "memctl"):
        assert f"COPY {package} ./{package}" in text
    assert "RUN pip install ." in text
    assert re.search(r"^USER reverie$", text, re.MULTILINE)
    assert '"memctl"' in text.splitlines()[-1]
    ignored = (ROOT / ".dockerignore").read_text(encoding="utf-8").split()
    assert ".venv" in ignored


def unit(name: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keep key case
    parser.read_string((OPS / "systemd" / name).read_text(encoding="utf-8"))
    return parser


@pytest.mark.parametrize(
    ("name", "command"),
    [
        ("reverie-api.service", "api"),
        ("reverie-worker.service", "worker"),
        ("reverie-scheduler.service", "scheduler"),
    ],
)
def test_each_systemd_unit_runs_its_memctl_command_with_the_shared_settings(
    name: str, command: str
) -> None:
    service = unit(name)["Service"]
    assert service["ExecStart"].split()[:2] == ["/opt/reverie/.venv/bin/memctl", command]
    assert service["EnvironmentFile"] == "/etc/reverie/reverie.env"
    assert service["User"] == "reverie"
    assert service["Restart"] in {"always", "on-failure"}
    assert unit(name)["Install"]["WantedBy"] == "multi-user.target"


def test_the_worker_unit_restarts_always_and_signals_the_master_only() -> None:
    service = unit("reverie-worker.service")["Service"]
    assert service["Restart"] == "always"
    assert service["KillMode"] == "mixed"


def test_the_systemd_settings_file_names_only_real_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lines = (OPS / "systemd" / "reverie.env").read_text(encoding="utf-8").splitlines()
    pairs = [line.split("=", 1) for line in lines if line.strip() and not line.startswith("#")]
    assert_known_settings([key for key, _ in pairs], "reverie.env")
    for key, value in pairs:
        monkeypatch.setenv(key, value)
    settings = mc.load_settings()  # every value is valid, too
    assert settings.redis_url == "redis://127.0.0.1:6379/0"


def test_ops_holds_no_python() -> None:
    assert list(OPS.rglob("*.py")) == []


def test_the_postgresql_overlay_puts_every_reverie_service_on_the_postgres_service() -> None:
    from sqlalchemy import make_url

    overlay = yaml.safe_load((OPS / "compose.postgresql.yaml").read_text(encoding="utf-8"))
    postgres = overlay["services"]["postgres"]
    assert postgres["image"].startswith("postgres:")
    assert "pg_isready" in postgres["healthcheck"]["test"]
    for service in REVERIE_SERVICES:
        spec = overlay["services"][service]
        assert spec["depends_on"]["postgres"]["condition"] == "service_healthy"
        url = make_url(
            spec["environment"]["REVERIE_BRAIN_URL"].replace("${POSTGRES_PASSWORD:-reverie}", "x")
        )
        assert (url.get_backend_name(), url.get_driver_name()) == ("postgresql", "psycopg")
        assert (url.host, url.database) == ("postgres", postgres["environment"]["POSTGRES_DB"])
        assert_known_settings(list(spec["environment"]), service)
    assert "postgres" in overlay["volumes"]
