"""The workbench web UI driven in real headless Chromium, timed from the DOM, compared with the server."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from rig.browser.driver import BrowserUser
from rig.browser.host import BrowserHost
from rig.browser.selectors import load_selectors
from rig.browser.session import BrowserPlan, drive_users
from rig.errors import ConfigError
from rig.evidence import EvidenceStore
from tests.conftest import Corpus, LiveWorkbench, start_workbench

pytestmark = pytest.mark.browser
SEL = load_selectors()


@pytest.fixture(scope="module")
def host() -> Iterator[BrowserHost]:
    with BrowserHost() as h:
        yield h


def _ordered(t) -> bool:  # type: ignore[no-untyped-def]
    return None not in (t.t3, t.t4, t.t5) and 0 <= t.t3 <= t.t4 <= t.t5


def test_login_ask_stop_regenerate_citation_logout(host: BrowserHost, live: LiveWorkbench, chaos) -> None:  # type: ignore[no-untyped-def]
    async def flow() -> dict:  # type: ignore[type-arg]
        user = await BrowserUser.open(host.browser, live.url, SEL)
        try:
            assert not await user.login(live.a.username, "wrong password"), "a bad password must not log in"
            assert await user.login(live.a.username, live.a.password)
            sid = await user.start_session(["P32"], live.corpus.project_id)
            asked = await user.ask("2.9%指什么？")
            citation = await user.open_citation(0)
            regenerated = await user.regenerate()
            branches = await user.page.locator(SEL.branch_count).last.inner_text()
            live.adapter.chaos("PUT", "settings", {"token_delay_ms": 25, "first_token_delay_ms": 40})
            await user.ask("请查清买家保护与徽章关系并给依据。", wait=False)
            await user.wait_for("answer_ms", 30)
            await user.stop()
            stopped = await user.wait_turn(30)
            await user.logout()
            return {"sid": sid, "turns": [asked, regenerated, stopped], "citation": citation, "branches": branches,
                    "logged_in": await user.logged_in()}
        finally:
            await user.close()

    out = host.call(flow())
    asked, regenerated, stopped = out["turns"]
    assert [t.kind for t in out["turns"]] == ["send", "regenerate", "send"]
    assert (asked.state, regenerated.state, stopped.state) == ("completed", "completed", "stopped")
    for turn in (asked, regenerated):
        assert _ordered(turn), turn
    assert stopped.t3 is not None and stopped.t4 is not None and stopped.t3 <= stopped.t4 <= stopped.t5  # type: ignore[operator]
    for turn in out["turns"]:
        detail = live.adapter.run(live.auth_a, turn.run_id)
        assert detail.session_id == out["sid"], "every turn is linked to a run of the page's session"
        assert detail.state == turn.state
    assert len({t.run_id for t in out["turns"]}) == 3
    assert out["branches"] == "2/2", "regenerate made a second branch that the page shows"
    assert out["citation"].match == "unique" and out["citation"].highlights
    assert all(h in out["citation"].page_text for h in out["citation"].highlights)
    assert not out["logged_in"]


def test_browser_first_answer_is_after_the_servers_first_token(host: BrowserHost, live: LiveWorkbench,
                                                                tmp_path: Path) -> None:
    store = EvidenceStore(tmp_path / "evidence.sqlite3")
    plan = BrowserPlan(base_url=live.url, username=live.a.username, project_id=live.corpus.project_id,
                       doc_ids=[live.corpus.doc("P32")], questions=["2.9%指什么？", "样本来自哪里？"], users=2, turns=3)
    result = host.call(drive_users(host.browser, SEL, plan, live.a.password, live.adapter, live.auth_a, store))
    assert not result.errors and len(result.records) == 6
    for r in result.records:
        assert r.server_first_token_ms is not None and r.turn.answer_ms is not None, r
        lag = r.turn.answer_ms - r.server_first_token_ms
        assert 0 < lag < 2000, f"the page shows the first answer text {lag:.1f} ms after the server's first token"
        assert r.server_first_status_ms is not None and r.turn.status_ms is not None
        assert r.turn.status_ms > r.server_first_status_ms, "the status shows on screen after the server sent it"
        assert r.server_state == r.turn.state == "completed"
    browser_t4 = [m for m in store.measures("T4") if m.source == "browser"]
    assert len(browser_t4) == 6 and {m.run_id for m in browser_t4} == {r.turn.run_id for r in result.records}
    store.close()


def test_a_browser_user_that_finds_the_target_down_starts_again_once_it_is_back(
        host: BrowserHost, corpus: Corpus, tmp_path: Path) -> None:
    """The target is killed before the user opens its page and restarted 3 s later (a restart under chaos)."""
    own = start_workbench(tmp_path / "wb", corpus, include_variants=False)
    try:
        plan = BrowserPlan(base_url=own.url, username=own.a.username, project_id=own.corpus.project_id,
                           doc_ids=[own.corpus.doc("P32")], questions=["2.9%指什么？"], users=1, turns=2,
                           deadline_s=60)
        own.target.kill()
        back = threading.Timer(3.0, own.target.start)
        back.start()
        result = host.call(drive_users(host.browser, SEL, plan, own.a.password, own.adapter, own.auth_a))
        back.join()
        assert result.errors and all("ERR_CONNECTION_REFUSED" in e for e in result.errors), result.errors
        assert len(result.records) == 2 and all(r.turn.state == "completed" for r in result.records)
    finally:
        own.target.stop()


def test_a_broken_selector_map_is_a_config_error(tmp_path: Path) -> None:
    bad = tmp_path / "ui.yaml"
    bad.write_text("name: x\nlogin: {username: '#u', pasword: '#p'}\n")
    with pytest.raises(ConfigError, match=r"unknown key login\.pasword \(did you mean login\.password\?\).*"
                                          r"login\.password: Field required"):
        load_selectors(bad)
