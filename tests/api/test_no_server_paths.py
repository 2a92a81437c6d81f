"""No answer shows where the server keeps its data: files of the data folder are named
from there (a proposal file, a pass report), the brain by its file name."""

from __future__ import annotations

import json
from pathlib import Path

from fastapi.testclient import TestClient

import memory_core as mc
from memory_core import proposals
from reverie.compose import Process


def _add(client: TestClient, content: str) -> str:
    r = client.post("/v1/memories", json={"content": content, "scope_id": "ana"})
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


def test_a_refused_edited_proposal_names_its_file_from_the_data_folder(
    client: TestClient, api_settings: mc.Settings, tmp_path: Path
) -> None:
    brain: mc.Brain = client.app.state.brain  # type: ignore[attr-defined]
    keep, gone = (
        _add(client, "Ana's sister lives in Lisbon."),
        _add(client, "Ana's sister: Lisbon."),
    )
    draft = proposals.ProposalDraft("merge", [keep, gone], "test", {"cosine": 0.97}, "merge")
    [made] = proposals.create_proposals(brain, api_settings, [draft], None)
    path = api_settings.data_dir / "proposals" / "pending" / f"{made}.json"
    path.write_text(path.read_text().replace("Lisbon", "Porto"))
    r = client.post(f"/v1/proposals/{made}/accept")
    assert r.status_code == 409
    assert f"proposals/pending/{made}.json" in r.json()["error"]["message"]
    assert str(tmp_path) not in r.text
    path.unlink()
    r = client.post(f"/v1/proposals/{made}/accept")
    assert r.status_code == 409 and "is missing" in r.json()["error"]["message"]
    assert str(tmp_path) not in r.text


def test_passes_name_their_reports_from_the_data_folder(
    client: TestClient, api_settings: mc.Settings, workers: Process, tmp_path: Path
) -> None:
    _add(client, "Ana keeps bees.")
    assert client.post("/v1/tools/memory_reflect", json={}).status_code == 200
    workers.join()
    [listed] = client.get("/v1/dreams").json()["passes"]
    expected = f"dream-reports/{listed['pass_id']}.json"
    assert listed["report_path"] == expected
    assert (api_settings.data_dir / expected).is_file()
    report = client.get(f"/v1/dreams/{listed['pass_id']}")
    assert report.json()["report_path"] == expected
    assert str(tmp_path) not in json.dumps([listed, report.json()])
