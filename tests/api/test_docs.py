"""The API's own documentation pages work with the network off: their script and styles
are served by the API, and a headless Chromium that cannot reach any other host renders
every route."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from html.parser import HTMLParser

import httpx
import pytest

import memory_core as mc
from reverie.compose import Process
from reverie.compose import app as api_app
from tests.api.conftest import serving


@pytest.fixture
def docs_api(api_settings: mc.Settings, workers: Process) -> Iterator[str]:
    with serving(api_app(workers)) as url:
        yield url


class _Assets(HTMLParser):
    """Every URL a page loads: script sources, stylesheets, icons, and urls in scripts."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._in_script = tag == "script"
        for name, value in attrs:
            if name in ("src", "href") and value:
                self.urls.append(value)

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.urls += re.findall(r"""(?:url|href|src)\s*:\s*['"]([^'"]+)['"]""", data)


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_docs_pages_load_nothing_from_another_host(docs_api: str, page: str) -> None:
    html = httpx.get(docs_api + page, timeout=10)
    assert html.status_code == 200
    parser = _Assets()
    parser.feed(html.text)
    assert parser.urls, "the page names its script"
    for url in parser.urls:
        assert not re.match(r"^(https?:)?//", url), f"{page} loads {url} from another host"
        assert httpx.get(docs_api + url, timeout=10).status_code == 200, url


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is required in CI (apt-get install chromium)")
        pytest.skip("no chromium")
    return found


def test_docs_render_in_a_browser_with_the_network_off(docs_api: str) -> None:
    dom = subprocess.run(
        [
            _chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            # Every host but the API's own resolves to nothing: the network is off.
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
            "--virtual-time-budget=15000",
            "--dump-dom",
            docs_api + "/docs",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    ).stdout
    assert 'class="swagger-ui' in dom, dom[:500]
    for route in ("/v1/search", "/v1/turns", "/v1/memories"):
        assert f'data-path="{route}"' in dom, route
