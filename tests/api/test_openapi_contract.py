"""The OpenAPI document is true: schemathesis, with all its checks, against the document
the API serves, finds no failure -- no undocumented status, no response outside its
schema, no schema-valid request refused, no invalid one accepted, a right answer to
undeclared methods -- through the example, coverage, fuzzing and stateful phases."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

import memory_core as mc
from memory_core import auth
from memory_core.auth import SYSTEM
from reverie.compose import Process
from reverie.compose import app as api_app
from tests.api.conftest import serving

# The token operations revoke and reset whatever token they are given, the caller's
# own included; they are exercised last, once the rest has run under that token.
TOKEN_ACTS = r"^/v1/tokens/\{name\}/(revoke|reset)$"


@pytest.fixture
def contract_api(api_settings: mc.Settings, workers: Process) -> Iterator[tuple[str, str]]:
    brain = mc.open_brain(api_settings)
    _, admin = auth.create_token(brain, "contract", ["admin"], identity=auth.OPEN)
    mc.add_trace(
        brain, "Ana keeps her bike in the shed.", scope="user", scope_id="ana", identity=SYSTEM
    )
    with serving(api_app(workers)) as url:
        yield url, admin


# A tag expression is a grammar JSON Schema cannot state: a string of the expression's
# alphabet may still not parse ("a (", "b,"), and is refused 422 saying where.  For the
# operations taking one, that refusal is expected of schema-valid data; every other
# check holds for them as for the rest.
EXPRESSIONS = r"^/v1/(search|tools/memory_search|tag-predicates/\{name\})$"
CONFIG = f"""
[[operations]]
include-path-regex = '{EXPRESSIONS}'
checks.positive_data_acceptance.expected-statuses = [
    "2xx", "3xx", "401", "403", "404", "409", "422", "429", "5xx"
]
"""


def _schemathesis(url: str, token: str, cwd: Path, *selection: str) -> None:
    exe = shutil.which("schemathesis", path=str(Path(sys.executable).parent))
    assert exe, "schemathesis is a dev dependency"
    (cwd / "schemathesis.toml").write_text(CONFIG)
    run = subprocess.run(
        [
            exe,
            "run",
            f"{url}/openapi.json",
            "--checks",
            "all",
            "--max-examples",
            os.environ.get("REVERIE_CONTRACT_EXAMPLES", "25"),
            "--seed",
            os.environ.get("REVERIE_CONTRACT_SEED", "20261202"),
            "--header",
            f"Authorization: Bearer {token}",
            "--workers",
            "1",
            "--no-color",
            *selection,
        ],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=900,
        check=False,
        env={k: v for k, v in os.environ.items() if not k.startswith("REVERIE_")},
    )
    assert run.returncode == 0, run.stdout[-12_000:] + run.stderr[-2_000:]
    assert "Tested: " in run.stdout and "0 failures" not in run.stdout.split("Tested: ")[0]


def test_schemathesis_finds_nothing_against_the_served_document(
    contract_api: tuple[str, str], tmp_path: Path
) -> None:
    url, admin = contract_api
    document = httpx.get(f"{url}/openapi.json", timeout=10).json()
    search = document["paths"]["/v1/search"]["get"]["responses"]
    assert search["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/SearchOut"
    }
    _schemathesis(url, admin, tmp_path, "--exclude-path-regex", TOKEN_ACTS)
    _schemathesis(url, admin, tmp_path, "--include-path-regex", TOKEN_ACTS)


def test_an_undeclared_method_answers_405_with_every_allowed_method(
    contract_api: tuple[str, str],
) -> None:
    url, admin = contract_api
    r = httpx.request("PUT", f"{url}/v1/memories", headers={"authorization": f"Bearer {admin}"})
    assert r.status_code == 405
    assert r.headers["allow"] == "GET, POST"
    assert r.json()["error"]["code"] == "method_not_allowed"
