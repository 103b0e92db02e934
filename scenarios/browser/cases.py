"""浏览器 — the browser halves of reliability cases 1, 5, 17, 20, 22 and 27–30.

Each step runs after its case's HTTP half, in fresh browser contexts of one Chromium, through the
target's selector map. Items are named `browser_*`; each keeps a screenshot of what the page showed
and compares it with the target's own records (run detail, saved messages, citation locate).
"""

from __future__ import annotations

import asyncio

from playwright.async_api import TimeoutError as PlaywrightTimeout

from rig.browser import BrowserTurn, BrowserUser, turn_measures
from rig.gate import BrowserKit, CaseContext, browser_step
from scenarios.reliability.login_isolation import CASE1_QUESTION
from scenarios.reliability.steps import answer_of

SANE_LAG_MS = 2000.0  # browser first answer text later than the server's first token, but not by seconds


async def _login_a(ctx: CaseContext, kit: BrowserKit) -> BrowserUser:
    user = await kit.user()
    if not await user.login(ctx.a.username, ctx.target.passwords["a"]):
        raise AssertionError("the UI refused A's credentials")
    return user


def _ordered(turn: BrowserTurn) -> bool:
    return None not in (turn.t3, turn.t4, turn.t5) and 0 <= turn.t3 <= turn.t4 <= turn.t5  # type: ignore[operator]


@browser_step(1)
async def login_and_first_answer(ctx: CaseContext, kit: BrowserKit) -> None:
    """Log in as A in the UI, open a session on P32, ask the case-1 question and watch the answer stream.

    Expects: A's name on screen; first status, first answer text and end in that order, linked to a run
    of A's session whose first token the server stamped before the page showed it.
    Evidence: browser stamps, the run record, a screenshot.
    """
    user = await _login_a(ctx, kit)
    shown = await user.page.locator(kit.selectors.logged_in).first.text_content() or ""
    login = ctx.observe("the page after login", {"logged_in_text": shown.strip(), "account": ctx.a.username})
    ctx.item("browser_login", shown.strip() == ctx.a.username, f"the page shows {shown.strip()!r}", login)
    sid = await user.start_session(["P32"], ctx.target.setup.project_a)
    turn = await user.ask(CASE1_QUESTION)
    detail = ctx.run_detail(ctx.a, turn.run_id) if turn.run_id else None
    shot = await kit.shot(ctx, user, "first-answer", "case 1: first answer in the browser")
    e = ctx.observe("browser turn and server record", {"turn": turn.model_dump(), "session_id": sid,
                    "server_first_status_ms": detail.first_status_at_ms if detail else None,
                    "server_first_token_ms": detail.first_token_at_ms if detail else None})
    lag = (turn.answer_ms - detail.first_token_at_ms) if detail and detail.first_token_at_ms and turn.answer_ms else None
    ctx.measures(turn_measures(turn, detail.first_token_at_ms if detail else None, "case1-browser"))
    ctx.item("browser_timings", _ordered(turn) and turn.state == "completed",
             f"T3 {turn.t3} ≤ T4 {turn.t4} ≤ T5 {turn.t5} ms on screen; state {turn.state}", e, shot)
    linked = detail is not None and detail.session_id == sid
    ctx.item("browser_run_linked", linked and lag is not None and 0 <= lag <= SANE_LAG_MS,
             f"run {turn.run_id} of session {sid}; page showed the answer {lag} ms after the server's first token", e)


@browser_step(5)
async def logout_revokes(ctx: CaseContext, kit: BrowserKit) -> None:
    """Log in as A in the UI, log out, reload, and ask the API with the browser's own cookie.

    Expects: the login form after logout and after reload; the old cookie answers 401.
    Evidence: the status of /me with the browser's cookies, screenshots.
    """
    user = await _login_a(ctx, kit)
    cookies_before = await user.context.cookies()
    await user.logout()
    await user.reload()
    await user.page.locator(f"{kit.selectors.login.username}:visible").wait_for(timeout=10_000)
    shot = await kit.shot(ctx, user, "after-logout", "case 5: after logout and reload")
    still_in = await user.logged_in()
    ctx.item("browser_logged_out", not still_in, "the login form shows after logout and reload", shot,
             seen={"still_logged_in": still_in})
    with ctx.part("browser_cookie_revoked"):  # the adapter's identity operation, with the old cookies only
        status = ctx.adapter.me_status_with_cookies({c["name"]: c["value"] for c in cookies_before})
        e = ctx.observe("the old cookie after logout", {"status": status, "cookies": len(cookies_before)})
        ctx.item("browser_cookie_revoked", status == 401, "the identity operation refuses the pre-logout cookies",
                 e, seen={"status": status})


@browser_step(17)
async def refresh_and_relogin(ctx: CaseContext, kit: BrowserKit) -> None:
    """Ask in the UI, reload the page, log out, log in again and open the saved session from the list.

    Expects: the same answer text after reload and after re-login, equal to the saved message.
    Evidence: answers as shown at each point, the saved message, screenshots.
    """
    user = await _login_a(ctx, kit)
    sid = await user.start_session(["P32"], ctx.target.setup.project_a)
    turn = await user.ask("2.9%指什么？")
    first = (await user.answers())[-1:]
    await user.reload()
    await user.page.locator(kit.selectors.answer).last.wait_for(timeout=10_000)
    after_reload = (await user.answers())[-1:]
    await user.logout()
    await user.login(ctx.a.username, ctx.target.passwords["a"])
    await user.revisit(sid)
    await user.page.locator(kit.selectors.answer).last.wait_for(timeout=10_000)
    after_login = (await user.answers())[-1:]
    shot = await kit.shot(ctx, user, "revisit", "case 17: the session after re-login")
    saved = answer_of(ctx, sid, turn.run_id) if turn.run_id else None
    e = ctx.observe("answer as shown", {"streamed": first, "after_reload": after_reload, "after_relogin": after_login,
                                        "saved": saved.content if saved else None})
    same = bool(first) and first == after_reload == after_login and saved is not None and \
        first[0] == saved.content.strip()
    ctx.item("browser_revisit", same, "the answer survives reload and re-login unchanged" if same else
             "the answer shown changed or is missing", e, shot)


@browser_step(20)
async def stop_from_ui(ctx: CaseContext, kit: BrowserKit) -> None:
    """Ask in the UI with a slow model, press stop once the answer has started.

    Expects: the page shows the run stopped; the server ended it stopped/user_stop; the partial answer
    stays on screen. Evidence: stamps, run record, screenshot.
    """
    user = await _login_a(ctx, kit)
    await user.start_session(["P32"], ctx.target.setup.project_a)
    with ctx.slow_model():
        await user.ask("请查清买家保护与徽章关系并给依据。", wait=False)
        await user.wait_for("answer_ms", 30)
        await user.stop()
        turn = await user.wait_turn(30)
    shot = await kit.shot(ctx, user, "stopped", "case 20: stopped from the UI")
    detail = ctx.run_detail(ctx.a, turn.run_id) if turn.run_id else None
    shown = (await user.answers())[-1:] or [""]
    e = ctx.observe("stop from the UI", {"turn": turn.model_dump(), "server_state": detail.state if detail else None,
                                         "server_reason": detail.end_reason if detail else None,
                                         "shown_chars": len(shown[0])})
    ctx.item("browser_stop_shown", turn.state == "stopped", f"the page shows {turn.state}", e, shot)
    ctx.item("browser_stop_server", detail is not None and (detail.state, detail.end_reason) == ("stopped", "user_stop"),
             f"server: {detail.state if detail else '?'}/{detail.end_reason if detail else '?'}", e)
    ctx.item("browser_partial_kept", len(shown[0]) > 0, f"{len(shown[0])} characters stay on screen", e, shot)


@browser_step(22)
async def close_page_reopen(ctx: CaseContext, kit: BrowserKit) -> None:
    """Ask in the UI with a slow model, close the page once the answer has started, open a new page.

    Expects: the run is not cancelled; the new page follows it to its end and shows the saved answer.
    Evidence: run record, the answer shown on the new page, screenshot.
    """
    user = await _login_a(ctx, kit)
    sid = await user.start_session(["P32"], ctx.target.setup.project_a)
    with ctx.slow_model():
        await user.ask("请查清买家保护与徽章关系并给依据。", wait=False)
        turn = await user.wait_for("answer_ms", 30)
        await user.reopen()
        reattached = await _page_follows_run(ctx, user, kit, turn.run_id)
    shot = await kit.shot(ctx, user, "reopened", "case 22: the reopened page")
    detail = ctx.run_detail(ctx.a, turn.run_id) if turn.run_id else None
    saved = answer_of(ctx, sid, turn.run_id) if turn.run_id else None
    shown = (await user.answers())[-1:] or [""]
    e = ctx.observe("reopened page", {"run_id": turn.run_id, "server_state": detail.state if detail else None,
                                      "shown": shown[0][:400], "saved": saved.content[:400] if saved else None})
    ctx.item("browser_not_cancelled", detail is not None and detail.state == "completed",
             f"server: {detail.state if detail else '?'} after the page closed mid-answer", e)
    ctx.item("browser_reopened_complete", reattached and saved is not None and shown[0] == saved.content.strip(),
             "the new page followed the run to its end and shows the saved answer" if reattached else
             "the new page never showed the run's end", e, shot)


async def _page_follows_run(ctx: CaseContext, user: BrowserUser, kit: BrowserKit, run_id: str | None,
                            grace_s: float = 15.0) -> bool:
    """Wait for the page to show the run's end, for as long as the server says the run is still going.

    The deadline follows the target: while the run record is not terminal the page is not late; once it is,
    the page has `grace_s` to show it (a slow, busy machine delays both alike)."""
    ended_at: float | None = None
    loop = asyncio.get_running_loop()
    while True:
        try:
            await user.page.locator(kit.selectors.done).last.wait_for(timeout=1_000)
            return True
        except PlaywrightTimeout:
            pass
        if ended_at is None and (run_id is None or ctx.adapter.run(ctx.a, run_id).terminal):
            ended_at = loop.time()
        if ended_at is not None and loop.time() - ended_at > grace_s:
            return False


async def _citations_as_shown(ctx: CaseContext, kit: BrowserKit, name: str) -> tuple[list[dict[str, object]], int]:
    """Open the case's last session in the UI and click every citation of its last answer; compare each with
    the target's own locate record. Returns the rows and a screenshot's evidence id."""
    if not ctx.sessions:
        raise AssertionError("the HTTP half opened no session")
    user = await _login_a(ctx, kit)
    await user.revisit(ctx.sessions[-1])
    await user.page.locator(kit.selectors.answer).last.wait_for(timeout=10_000)
    rows: list[dict[str, object]] = []
    shot = 0
    buttons = user.page.locator(kit.selectors.message or "body").last.locator(kit.selectors.citation or "")
    for i in range(await user.citation_count()):
        citation_id = await buttons.nth(i).get_attribute("data-citation-id") or ""
        view = await user.open_citation(i)
        located = ctx.adapter.locate_citation(ctx.a, citation_id)
        expect_page = str(located.page) if located.page is not None else "—"
        page_text = ctx.adapter.page_text(ctx.a, located.doc_id, located.page).text if located.page else ""
        expected_marks = [page_text[h.start:h.end] for h in located.highlights if h.page == located.page] \
            if located.match == "unique" else []
        rows.append({"citation_id": citation_id, "shown_page": view.page, "located_page": expect_page,
                     "shown_match": view.match, "located_match": located.match, "shown_highlights": view.highlights,
                     "expected_highlights": [m.strip() for m in expected_marks],
                     "page_text_equal": (view.page_text == page_text.strip()) if located.page else None})
        if i == 0:
            shot = await kit.shot(ctx, user, name, f"case {ctx.case.case_id}: citation viewer")
    return rows, shot


def _shown_as_located(row: dict[str, object]) -> bool:
    return (row["shown_page"] == row["located_page"] and row["shown_match"] == row["located_match"]
            and row["shown_highlights"] == row["expected_highlights"] and row["page_text_equal"] is not False)


@browser_step(27)
async def unique_quote_in_ui(ctx: CaseContext, kit: BrowserKit) -> None:
    """Open each citation of the case's answer in the UI.

    Expects: the viewer shows the located physical page; a unique match is highlighted exactly where the
    quote is, nothing else is. Evidence: viewer vs locate per citation, a screenshot.
    """
    rows, shot = await _citations_as_shown(ctx, kit, "citation")
    e = ctx.observe("citations as shown", rows)
    unique = [r for r in rows if r["located_match"] == "unique"]
    ctx.item("browser_unique_highlight", bool(unique) and all(_shown_as_located(r) and r["shown_highlights"] for r in unique),
             f"{len(unique)} unique citation(s) highlighted on the located page", e, shot)
    ctx.item("browser_viewer_matches_record", bool(rows) and all(_shown_as_located(r) for r in rows),
             f"{sum(_shown_as_located(r) for r in rows)}/{len(rows)} citations shown as located", e)


@browser_step(28)
async def reliable_page_in_ui(ctx: CaseContext, kit: BrowserKit) -> None:
    """Open each citation of the case's summary answer in the UI.

    Expects: each opens its reliable physical page with the page's own text; no highlight unless unique.
    Evidence: viewer vs locate per citation, a screenshot.
    """
    rows, shot = await _citations_as_shown(ctx, kit, "summary-citation")
    e = ctx.observe("citations as shown", rows)
    ctx.item("browser_page_shown", bool(rows) and all(_shown_as_located(r) for r in rows),
             f"{sum(_shown_as_located(r) for r in rows)}/{len(rows)} citations open their located page", e, shot)


@browser_step(29)
async def no_false_highlight_in_ui(ctx: CaseContext, kit: BrowserKit) -> None:
    """Open each citation of the case's last answer (page-less and duplicate-quote citations) in the UI.

    Expects: a file-level citation shows no page; a duplicate quote shows no highlight.
    Evidence: viewer vs locate per citation, a screenshot.
    """
    rows, shot = await _citations_as_shown(ctx, kit, "no-page")
    e = ctx.observe("citations as shown", rows)
    no_mark = [r for r in rows if r["located_match"] != "unique"]
    false_marks = [r for r in no_mark if r["shown_highlights"]]
    false_pages = [r for r in rows if r["located_match"] == "file_only" and r["shown_page"] != "—"]
    ok = bool(rows) and not false_marks and not false_pages and all(_shown_as_located(r) for r in rows)
    ctx.item("browser_no_false_highlight", ok, f"{len(no_mark)} non-unique citation(s): {len(false_marks)} highlighted, "
             f"{len(false_pages)} file-level shown with a page", e, shot)


@browser_step(30)
async def distinct_pages_in_ui(ctx: CaseContext, kit: BrowserKit) -> None:
    """Open each citation of the case's answer that cites one PDF on different pages.

    Expects: each citation opens its own physical page (two pages → two different views).
    Evidence: viewer vs locate per citation, a screenshot.
    """
    rows, shot = await _citations_as_shown(ctx, kit, "pages")
    e = ctx.observe("citations as shown", rows)
    pages = {r["shown_page"] for r in rows}
    ctx.item("browser_distinct_pages", len(pages) >= 2 and all(_shown_as_located(r) for r in rows),
             f"{len(rows)} citation(s) open {len(pages)} distinct page(s), each as located", e, shot)
