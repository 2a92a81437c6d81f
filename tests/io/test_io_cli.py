"""memctl export / import as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def memctl(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REVERIE_")}
    return subprocess.run(
        [sys.executable, "-m", "memctl", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def test_memctl_export_then_import_into_a_new_brain(tmp_path: Path) -> None:
    a = ["--brain", f"sqlite:///{tmp_path / 'a.sqlite'}"]
    b = ["--brain", f"sqlite:///{tmp_path / 'b.sqlite'}"]
    assert memctl(*a, "add", "User prefers dark mode.", "--tags", "ui").returncode == 0
    out = tmp_path / "a.json"
    r = memctl("--json", *a, "export", "json", str(out))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["traces"] == 1
    r = memctl("--json", *b, "import", "json", str(out))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert (doc["imported"], doc["skipped"], doc["errors"], doc["unembedded"]) == (1, 0, [], 1)
    r = memctl(*b, "import", "json", str(out))
    assert r.returncode == 0 and "imported 0, skipped 1" in r.stdout


def test_memctl_export_to_an_existing_path_is_one_error_line(tmp_path: Path) -> None:
    brain = ["--brain", f"sqlite:///{tmp_path / 'a.sqlite'}"]
    memctl(*brain, "migrate")
    taken = tmp_path / "taken.json"
    taken.write_text("keep")
    r = memctl(*brain, "export", "json", str(taken))
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        f"memctl: error: {taken} already exists; an export never overwrites a path"
    ]
    assert taken.read_text() == "keep"


def test_memctl_import_of_a_csv_without_content_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "x.csv"
    path.write_text("text\nhello\n")
    r = memctl("--brain", f"sqlite:///{tmp_path / 'a.sqlite'}", "import", "csv", str(path))
    assert r.returncode == 2 and "'content' column" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_memctl_import_rejects_an_unknown_format(tmp_path: Path) -> None:
    r = memctl("--brain", f"sqlite:///{tmp_path / 'a.sqlite'}", "import", "xml", str(tmp_path))
    assert r.returncode == 2 and "import format must be one of" in r.stderr
