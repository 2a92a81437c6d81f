"""What the distribution installs: Reverie's own top-level packages, none with a generic
name another project could also install."""

from __future__ import annotations

import tomllib
from pathlib import Path

from setuptools import find_packages

ROOT = Path(__file__).resolve().parent.parent


def test_the_wheel_installs_only_namespaced_packages() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    include = config["tool"]["setuptools"]["packages"]["find"]["include"]
    packages = find_packages(where=str(ROOT), include=include)
    assert {p.split(".")[0] for p in packages} == {"memory_core", "memctl", "reverie"}
    assert {"reverie.api", "reverie.workers", "reverie.scheduler"} <= set(packages)
