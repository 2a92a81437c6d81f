"""The console in a real headless Chromium, driven by Playwright, with the network off.

A reviewer logs in with a token, finds a user's memory by search, accepts one
proposal of a real dream pass, rejects one, undoes the accept, and the brain
changes accordingly (checked through the API); a read-only token looks but every
decide button is refused; every control has a label and the pages work by
keyboard; no page asks for anything from another host.  With
``CONSOLE_SCREENSHOTS=docs/console`` the test leaves a screenshot of each
page there (the README shows them).
"""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

import memory_core as mc
from memory_core.auth import SYSTEM, create_token
from memory_core.consolidation.dream import dream
from memory_core.supersession.chain import supersede
from reverie.compose import Process
from reverie.compose import app as api_app
from tests.api.conftest import serving

try:
    from playwright import sync_api as playwright_sync
except ImportError:  # the dev extras bring it; say so rather than pass unseen
    playwright_sync = None  # type: ignore[assignment]

pytestmark = pytest.mark.slow

DAY = 86_400.0
# Every host but the API's own resolves to nothing: the network is off.
OFFLINE = "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"


def _chromium() -> str:
    if playwright_sync is None:
        if os.environ.get("CI"):
            pytest.fail("playwright is required in CI (the dev extras install it)")
        pytest.skip("no playwright")
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is required in CI (apt-get install chromium)")
        pytest.skip("no chromium")
    return found


@dataclass
class Console:
    url: str
    admin: str  # a reviewer's token: every capability
    viewer: str  # read only
    ids: dict[str, str]  # the memories by a short name
    proposals: dict[str, str]  # kind -> the pending proposal of that kind
    pass_id: str
    brain: mc.Brain

    def get(self, path: str, **params: Any) -> httpx.Response:
        headers = {"Authorization": f"Bearer {self.admin}"}
        return httpx.get(self.url + path, params=params, headers=headers, timeout=10)

    def status_of(self, proposal_id: str) -> str:
        found = self.get("/v1/proposals", status="all").json()["proposals"]
        return str(next(p["status"] for p in found if p["id"] == proposal_id))

    def active(self, trace_id: str) -> bool:
        return self.get(f"/v1/memories/{trace_id}").status_code == 200


MEMORIES = {
    "sister": ("ana", "semantic", 0.5, "Ana's sister Maja lives in Lisbon and works as a nurse."),
    "sister2": (
        "ana",
        "semantic",
        0.5,
        "Ana's sister Maja lives in Lisbon and works as a nurse at the city hospital.",
    ),
    "weather": ("ana", "episodic", 0.1, "Ana mentioned the weather was nice that afternoon."),
    "allergy": ("ana", "semantic", 0.9, "Ana is allergic to penicillin."),
    "cello": ("ben", "semantic", 0.6, "Ben plays the cello in a quartet on Thursdays."),
}


@pytest.fixture
def console(api_settings: mc.Settings, workers: Process) -> Iterator[Console]:
    app = api_app(workers)
    with serving(app) as url:
        brain = app.state.brain
        _, admin = create_token(
            brain, "reviewer", ["read", "write", "delete", "dream", "admin"], identity=mc.OPEN
        )
        _, viewer = create_token(brain, "viewer", ["read"], identity=mc.OPEN)
        headers = {"Authorization": f"Bearer {admin}"}
        then = time.time() - 400 * DAY
        ids = {}
        for k, (name, (user, kind, importance, text)) in enumerate(MEMORIES.items()):
            body = {
                "content": text,
                "scope_id": user,
                "type": kind,
                "importance": importance,
                "tags": ["family"] if name.startswith("sister") else [],
                "timestamp": then + k * DAY,
            }
            r = httpx.post(url + "/v1/memories", json=body, headers=headers, timeout=10)
            assert r.status_code == 201, r.text
            ids[name] = r.json()["id"]
        # Two copies, as an import brings them: the pass merges them unattended (undoable).
        copies = [mc.NewTrace("Ben takes the 7:40 train.", scope_id="ben", type="semantic")] * 2
        mc.add_traces(brain, copies, identity=SYSTEM)
        workers.join()
        # A pass a year on, nothing used since: the small talk is weak, the two
        # sentences of Maja a near-duplicate and two values of one attribute.
        report = dream(
            brain,
            app.state.settings,
            embedder=workers.runtime.embedder(),
            now=time.time() + 400 * DAY,
        )
        pending = httpx.get(url + "/v1/proposals", headers=headers, timeout=10).json()
        kinds = {
            p["kind"]: p["id"]
            for p in pending["proposals"]
            if {ids["weather"], ids["sister"]} & set(p["trace_ids"])
        }
        assert {"prune", "merge"} <= set(kinds), pending
        [ran] = httpx.get(url + "/v1/dreams", headers=headers, timeout=10).json()["passes"]
        assert ran["undoable"], ran
        yield Console(url, admin, viewer, ids, kinds, report.pass_id, brain)


@pytest.fixture
def browser() -> Iterator[Any]:
    args = [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        OFFLINE,
    ]
    with playwright_sync.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=_chromium(), args=args)
        try:
            yield chromium
        finally:
            chromium.close()


@dataclass
class Tab:
    """A page of the console and everything it asked for or complained of."""

    page: Any
    base: str
    requests: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def go(self, hash_: str) -> None:
        self.page.goto(f"{self.base}/console#{hash_}")
        self.page.wait_for_load_state("networkidle")

    def shot(self, name: str) -> None:
        folder = os.environ.get("CONSOLE_SCREENSHOTS")
        if folder:
            Path(folder).mkdir(parents=True, exist_ok=True)
            self.page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)


def _tab(browser: Any, console: Console) -> Tab:
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    tab = Tab(page, console.url)
    page.on("request", lambda r: tab.requests.append(r.url))
    page.on("console", lambda m: tab.problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: tab.problems.append(str(e)))
    page.set_default_timeout(15_000)
    return tab


def _log_in(tab: Tab, token: str) -> None:
    tab.go("/login")
    tab.page.get_by_label("Token").fill(token)
    tab.page.get_by_role("button", name="Log in").click()
    tab.page.get_by_role("heading", name="Memories").wait_for()


def _offline(tab: Tab) -> None:
    """Nothing was asked of another host, and the page met no error."""
    foreign = [u for u in tab.requests if not u.startswith(tab.base) and not u.startswith("data:")]
    assert foreign == []
    assert tab.problems == []


def _expect_text(tab: Tab, text: str) -> None:
    tab.page.get_by_text(text, exact=False).first.wait_for()


def test_a_reviewer_finds_a_memory_and_decides_proposals(browser: Any, console: Console) -> None:
    tab = _tab(browser, console)
    page = tab.page
    tab.go("/login")
    tab.shot("login")
    _log_in(tab, console.admin)

    # Find a user's memory by search.
    page.get_by_label("Search").fill("penicillin")
    page.get_by_label("User (scope id)").fill("ana")
    page.get_by_role("button", name="Show").click()
    _expect_text(tab, "found for “penicillin”")
    page.get_by_role("link", name=f"Open memory {console.ids['allergy']}").wait_for()
    assert page.get_by_text("Ana is allergic to penicillin.").count() == 1
    assert page.get_by_text("Ben plays the cello").count() == 0  # another user's
    tab.shot("memories")
    page.get_by_role("link", name=f"Open memory {console.ids['allergy']}").click()
    page.get_by_role("heading", name="History").wait_for()
    assert page.locator("dl.fields dt").all_inner_texts()[:6] == [
        "Id",
        "Type",
        "User",
        "Happened",
        "Stored",
        "Last used",
    ]
    assert "[object" not in page.inner_text("main")

    # Accept the prune, reject the merge, undo the accept.
    prune, merge = console.proposals["prune"], console.proposals["merge"]
    tab.go("/proposals")
    page.get_by_role("button", name=f"Accept proposal {prune}").wait_for()
    _expect_text(tab, "Result if accepted")  # the merge's exact result, beside its two texts
    for shown in console.get("/v1/proposals").json()["proposals"]:  # stale ones say so
        badge = page.locator(f'[data-proposal="{shown["id"]}"] .badge.stale')
        assert badge.count() == int(shown["stale"]), shown
    tab.shot("proposals")
    page.get_by_role("button", name=f"Accept proposal {prune}").click()
    page.get_by_role("button", name=f"Accept proposal {prune}").wait_for(state="detached")
    assert console.status_of(prune) == "accepted"
    assert not console.active(console.ids["weather"])  # pruned

    page.get_by_role("button", name=f"Reject proposal {merge}").click()
    page.get_by_role("button", name=f"Reject proposal {merge}").wait_for(state="detached")
    assert console.status_of(merge) == "rejected"
    assert console.active(console.ids["sister"]) and console.active(console.ids["sister2"])

    tab.go("/proposals?status=accepted")
    page.get_by_role("button", name=f"Undo proposal {prune}").click()
    page.get_by_role("button", name=f"Undo proposal {prune}").wait_for(state="detached")
    assert console.status_of(prune) == "undone"
    assert console.active(console.ids["weather"])  # back

    # The other pages render what the API says.
    tab.go("/dreams")
    page.get_by_role("link", name=console.pass_id).wait_for()
    tab.shot("dreams")
    page.get_by_role("link", name=console.pass_id).click()
    page.get_by_role("heading", name=f"Dream pass {console.pass_id}").wait_for()
    tab.shot("dream-report")
    tab.go("/timeline?scope_id=ana")
    page.get_by_role("heading", name="Timeline of ana").wait_for()
    assert page.get_by_text("Ana is allergic to penicillin.").count() == 1
    tab.shot("timeline")
    tab.go("/tags")
    page.get_by_label("New name").fill("relatives")
    page.get_by_role("button", name="Rename everywhere").click()
    page.get_by_role("button", name="Rename", exact=True).click()  # the confirmation
    page.get_by_role("cell", name="relatives").wait_for()
    assert console.get(f"/v1/memories/{console.ids['sister']}").json()["tags"] == ["relatives"]
    tab.shot("tags")
    tab.go("/tokens")
    page.get_by_label("Name", exact=True).fill("agent-one")
    page.get_by_role("button", name="Create token").click()
    secret = page.locator(".secret").inner_text()
    assert secret.startswith("rvt_")
    ok = httpx.get(
        console.url + "/v1/me", headers={"Authorization": f"Bearer {secret}"}, timeout=10
    )
    assert ok.json()["name"] == "agent-one" and ok.json()["capabilities"] == ["read"]
    tab.shot("tokens")
    # Revocation is final: a revoked row offers no Reset.
    page.get_by_role("button", name="Revoke token agent-one").click()
    page.get_by_role("button", name="Revoke", exact=True).click()  # the confirmation
    page.get_by_role("button", name="Revoke token agent-one").wait_for(state="detached")
    page.get_by_role("button", name="Reset token reviewer").wait_for()
    assert page.get_by_role("button", name="Reset token agent-one").count() == 0
    tab.go(f"/memory/{console.ids['sister']}")  # renamed, and named by the rejected merge
    page.get_by_role("cell", name="rename tag").wait_for()
    tab.shot("memory")
    _offline(tab)


def test_a_read_only_token_looks_but_every_decide_button_is_refused(
    browser: Any, console: Console
) -> None:
    tab = _tab(browser, console)
    page = tab.page
    _log_in(tab, console.viewer)
    tab.go("/proposals")
    page.get_by_role("button", name=f"Accept proposal {console.proposals['prune']}").wait_for()
    deciding = page.get_by_role("button", name=re.compile(r"^(Accept|Reject|Undo)"))
    assert deciding.count() >= 2 * len(console.proposals)
    for k in range(deciding.count()):
        assert deciding.nth(k).is_disabled(), deciding.nth(k).get_attribute("aria-label")
    # And were a button forced, the API refuses it: a read token decides nothing.
    forced = page.evaluate(
        """async ([id, token]) => (await fetch(`/v1/proposals/${id}/accept`,
            {method: "POST", headers: {Authorization: `Bearer ${token}`}})).status""",
        [console.proposals["prune"], console.viewer],
    )
    assert forced == 403
    assert tab.problems == [
        "Failed to load resource: the server responded with a status of 403 (Forbidden)"
    ]
    tab.problems.clear()  # that refusal, and only it
    assert console.status_of(console.proposals["prune"]) == "pending"
    tab.go(f"/memory/{console.ids['allergy']}")
    assert page.get_by_role("button", name="Delete memory").is_disabled()
    assert page.get_by_role("button", name="Save").is_disabled()
    tab.go(f"/dream/{console.pass_id}")
    page.get_by_role("heading", name=f"Dream pass {console.pass_id}").wait_for()
    assert page.get_by_role("button", name="Undo this pass").is_disabled()
    tab.go("/tokens")
    _expect_text(tab, "needs the admin capability")
    assert tab.problems == []


# Every control's accessible name, as a screen reader would announce it.
UNLABELLED = """() => [...document.querySelectorAll('button, input, select, textarea, a[href]')]
  .filter((el) => el.offsetParent !== null || el.type === 'checkbox')
  .filter((el) => {
    const aria = el.getAttribute('aria-label') || '';
    const labelled = el.labels && [...el.labels].some((l) => l.textContent.trim());
    const own = (el.tagName === 'BUTTON' || el.tagName === 'A') && el.textContent.trim();
    return !(aria.trim() || labelled || own);
  })
  .map((el) => el.outerHTML.slice(0, 120))"""


def test_every_control_has_a_label_and_the_pages_work_by_keyboard(
    browser: Any, console: Console
) -> None:
    tab = _tab(browser, console)
    page = tab.page
    tab.go("/login")
    assert page.evaluate(UNLABELLED) == []
    # Log in by keyboard alone: tab to the token field, type, press Enter.
    for _ in range(30):
        if page.evaluate("document.activeElement && document.activeElement.id") == "token":
            break
        page.keyboard.press("Tab")
    else:
        pytest.fail("the token field is not reachable by Tab")
    page.keyboard.type(console.admin)
    page.keyboard.press("Enter")
    page.get_by_role("heading", name="Memories").wait_for()
    for where, heading in (
        ("/memories", "Memories"),
        (f"/memory/{console.ids['sister']}", "Memory"),
        ("/proposals", "Proposals"),
        ("/dreams", "Dream passes"),
        (f"/dream/{console.pass_id}", f"Dream pass {console.pass_id}"),
        ("/timeline?scope_id=ana", "Timeline of ana"),
        ("/tags", "Tags"),
        ("/tokens", "Tokens"),
    ):
        tab.go(where)
        page.get_by_role("heading", name=heading, exact=True).wait_for()
        assert page.evaluate(UNLABELLED) == [], where

    # Accept a proposal by keyboard: Tab to its button, Enter.
    tab.go("/proposals")
    target = f"Accept proposal {console.proposals['merge']}"
    page.get_by_role("button", name=target).wait_for()
    for _ in range(200):
        if page.evaluate("document.activeElement.getAttribute('aria-label')") == target:
            break
        page.keyboard.press("Tab")
    else:
        pytest.fail(f"{target} is not reachable by Tab")
    page.keyboard.press("Enter")
    page.get_by_role("button", name=target).wait_for(state="detached")
    assert console.status_of(console.proposals["merge"]) == "accepted"

    # A bulk decision asks first, saying how many of what; Escape cancels it.
    tab.go("/proposals?status=accepted")
    page.get_by_label(f"Select proposal {console.proposals['merge']}").check()
    page.get_by_role("button", name="Undo selected").click()
    _expect_text(tab, "Undo 1 proposal (1 merge)?")
    page.keyboard.press("Escape")
    assert console.status_of(console.proposals["merge"]) == "accepted"
    _offline(tab)


def test_a_page_whose_data_comes_late_never_draws_over_the_next(
    browser: Any, console: Console
) -> None:
    tab = _tab(browser, console)
    page = tab.page
    _log_in(tab, console.admin)
    held: list[Any] = []

    def hold(route: Any) -> None:  # playwright marks its handler: a bound method will not do
        held.append(route)

    page.route("**/v1/tokens", hold)
    tab.page.goto(f"{tab.base}/console#/tokens")
    while not held:
        page.wait_for_timeout(50)
    tab.page.goto(f"{tab.base}/console#/proposals")
    page.get_by_role("heading", name="Proposals", exact=True).wait_for()
    with page.expect_response("**/v1/tokens"):
        held[0].continue_()
    page.wait_for_timeout(300)  # the late page's own work, had it drawn
    assert page.locator("main h1").inner_text() == "Proposals"
    page.get_by_role("button", name=f"Accept proposal {console.proposals['merge']}").wait_for()
    _offline(tab)


def test_a_wrong_supersession_is_undone_from_the_memory_page(
    browser: Any, console: Console
) -> None:
    older, later = console.ids["sister"], console.ids["allergy"]
    with console.brain.transaction() as conn:  # a reading took one for the other's successor
        supersede(conn, [older], later, at=time.time())
    assert console.get(f"/v1/memories/{older}").json()["superseded_by"] == later
    tab = _tab(browser, console)
    page = tab.page
    _log_in(tab, console.admin)
    tab.go(f"/memory/{older}")
    undo = page.get_by_role("button", name=f"Still current: undo the supersession of {older}")
    undo.click()
    _expect_text(tab, f"Current again: {older}")
    assert console.get(f"/v1/memories/{older}").json()["superseded_by"] is None
    undo.wait_for(state="detached")  # the page drawn again: nothing left to undo
    _offline(tab)
