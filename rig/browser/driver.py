"""One browser user: its own context and page, driven through the selector map, timed from the DOM.

The stamps script (`stamps.js`) is added to the context before any page loads; every turn's send,
first status, first answer text, end and run id are read back from `window.__rig.turns`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from rig.browser.selectors import SelectorMap
from rig.measure.derive import browser_measures
from rig.measure.events import Measure

STAMPS = (Path(__file__).resolve().parent / "stamps.js").read_text(encoding="utf-8")


class BrowserTurn(BaseModel):
    """What the page showed for one send or regenerate, in epoch ms (None where it never appeared)."""

    kind: str
    send_ms: float
    status_ms: float | None = None
    status_text: str | None = None
    answer_ms: float | None = None
    done_ms: float | None = None
    state: str | None = None
    run_id: str | None = None

    def since_send(self, at: float | None) -> float | None:
        return None if at is None else at - self.send_ms

    @property
    def t3(self) -> float | None:
        return self.since_send(self.status_ms)

    @property
    def t4(self) -> float | None:
        return self.since_send(self.answer_ms)

    @property
    def t5(self) -> float | None:
        return self.since_send(self.done_ms)


class CitationView(BaseModel):
    """The citation viewer as the page shows it."""

    page: str
    match: str
    highlights: list[str]
    page_text: str


class BrowserUser:
    """A logged-in (or not yet) person in one browser context."""

    def __init__(self, context: Any, page: Any, selectors: SelectorMap) -> None:
        self.context = context
        self.page = page
        self.sel = selectors

    @classmethod
    async def open(cls, browser: Any, base_url: str, selectors: SelectorMap) -> BrowserUser:
        """A fresh context (no cookies, no storage) with the stamps script, on the UI's start page."""
        context = await browser.new_context(base_url=base_url, viewport={"width": 1400, "height": 900})
        await context.add_init_script(STAMPS.replace("__RIG_SELECTORS__", json.dumps(selectors.model_dump())))
        page = await context.new_page()
        await page.goto(selectors.path)
        return cls(context, page, selectors)

    # -- identity -----------------------------------------------------------------------------------------
    async def login(self, username: str, password: str, timeout_s: float = 15) -> bool:
        """Fill the login form; True once the logged-in marker shows, False when the UI shows an error."""
        s = self.sel.login
        await self.page.locator(s.username).wait_for(timeout=timeout_s * 1000)
        await self.page.fill(s.username, username)
        await self.page.fill(s.password, password)
        await self.page.click(s.submit)
        wanted = f"{self.sel.logged_in}:visible" + (f", {s.error}:visible" if s.error else "")
        await self.page.locator(wanted).first.wait_for(timeout=timeout_s * 1000)
        return await self.page.locator(f"{self.sel.logged_in}:visible").count() > 0

    async def logout(self, timeout_s: float = 15) -> None:
        await self.page.click(self.sel.logout)
        await self.page.locator(f"{self.sel.login.username}:visible").wait_for(timeout=timeout_s * 1000)

    async def logged_in(self) -> bool:
        return await self.page.locator(f"{self.sel.logged_in}:visible").count() > 0

    # -- sessions -----------------------------------------------------------------------------------------
    async def start_session(self, paper_ids: list[str], project_id: str | None = None, *, by_doc_id: bool = False,
                            timeout_s: float = 15) -> str:
        """Tick the given papers (paper ids, or document ids with `by_doc_id`), open a new session; the
        session id the page shows."""
        if project_id and self.sel.project:
            await self.page.select_option(self.sel.project, project_id)
        attr = self.sel.doc_id_attr if by_doc_id else self.sel.paper_id_attr
        for paper in paper_ids if self.sel.paper else []:
            box = self.page.locator(f'{self.sel.paper}[{attr}="{paper}"]')
            await box.first.wait_for(timeout=timeout_s * 1000)
            await box.first.check()
        before = await self._text(self.sel.session_id) if self.sel.session_id else ""
        if not self.sel.new_session:
            return ""
        await self.page.click(self.sel.new_session)
        if not self.sel.session_id:
            return ""
        await self.page.wait_for_function(
            "([sel, before]) => { const n = document.querySelector(sel); return n && n.textContent.trim() && "
            "n.textContent.trim() !== before; }", arg=[self.sel.session_id, before], timeout=timeout_s * 1000)
        return await self._text(self.sel.session_id)

    async def revisit(self, session_id: str, timeout_s: float = 15) -> None:
        """Open a saved session from the list."""
        if not self.sel.session_item:
            raise ValueError("the selector map has no session_item")
        item = self.page.locator(f'{self.sel.session_item}[data-session-id="{session_id}"]')
        await item.wait_for(timeout=timeout_s * 1000)
        await item.click()
        if self.sel.session_id:
            await self.page.wait_for_function("([sel, want]) => document.querySelector(sel)?.textContent.trim() === want",
                                              arg=[self.sel.session_id, session_id], timeout=timeout_s * 1000)

    async def answers(self) -> list[str]:
        """Texts of every answer on the page, in order."""
        return [t.strip() for t in await self.page.locator(self.sel.answer).all_inner_texts()]

    # -- turns --------------------------------------------------------------------------------------------
    async def ask(self, text: str, *, wait: bool = True, timeout_s: float = 60) -> BrowserTurn:
        """Type a question and send it; with `wait`, return once the page shows the run has ended."""
        if await self.page.locator(self.sel.prompt).first.get_attribute("contenteditable") == "true":
            await self.page.click(self.sel.prompt)  # a rich editor takes typed input, not a value
            await self.page.keyboard.insert_text(text)
        else:
            await self.page.fill(self.sel.prompt, text)
        await self.page.click(self.sel.send)
        return await self.wait_turn(timeout_s) if wait else await self.turn()

    async def regenerate(self, *, wait: bool = True, timeout_s: float = 60) -> BrowserTurn:
        if not self.sel.regenerate:
            raise ValueError("the selector map has no regenerate")
        await self.page.locator(self.sel.regenerate).last.click()
        return await self.wait_turn(timeout_s) if wait else await self.turn()

    async def stop(self) -> None:
        if not self.sel.stop:
            raise ValueError("the selector map has no stop")
        await self.page.click(self.sel.stop)

    async def turn(self) -> BrowserTurn:
        """The latest turn's stamps as they are now."""
        raw = await self.page.evaluate("() => window.__rig && window.__rig.turns[window.__rig.turns.length - 1]")
        if not raw:
            raise RuntimeError("no turn stamped on this page: was send clicked after the page loaded?")
        return BrowserTurn.model_validate(raw)

    async def wait_for(self, field: str, timeout_s: float = 60) -> BrowserTurn:
        """Wait until the latest turn has `field` (status_ms, answer_ms, run_id, done_ms) stamped."""
        await self.page.wait_for_function(
            "(f) => { const t = window.__rig && window.__rig.turns[window.__rig.turns.length - 1]; "
            "return t && t[f] !== null; }", arg=field, timeout=timeout_s * 1000)
        return await self.turn()

    async def wait_turn(self, timeout_s: float = 60, quiet_ms: int = 300) -> BrowserTurn:
        """Wait until the latest turn ended and its answer is on the page.

        Some UIs show the end-of-turn controls a moment before the answer's text; after `done_ms` this
        waits for the answer or, for a turn that ends without one, for the page to stop changing
        (`quiet_ms` without a DOM mutation)."""
        await self.wait_for("done_ms", timeout_s)
        await self.page.wait_for_function(
            "(q) => { const r = window.__rig, t = r.turns[r.turns.length - 1]; "
            "return t.answer_ms !== null || performance.timeOrigin + performance.now() - r.changed_ms >= q; }",
            arg=quiet_ms, timeout=timeout_s * 1000)
        return await self.turn()

    # -- citations ----------------------------------------------------------------------------------------
    async def open_citation(self, index: int = 0, timeout_s: float = 15) -> CitationView:
        """Click the index-th citation of the last answer and read the viewer."""
        if not (self.sel.citation and self.sel.citation_viewer and self.sel.citation_page):
            raise ValueError("the selector map has no citation viewer")
        last = self.page.locator(self.sel.message).last if self.sel.message else self.page
        button = last.locator(self.sel.citation).nth(index)
        citation_id = await button.get_attribute("data-citation-id")
        await button.click()
        viewer = self.page.locator(f"{self.sel.citation_viewer}:visible")
        await viewer.wait_for(timeout=timeout_s * 1000)
        if citation_id:
            await self.page.wait_for_function("([sel, id]) => document.querySelector(sel)?.dataset.citationId === id",
                                              arg=[self.sel.citation_viewer, citation_id], timeout=timeout_s * 1000)
        highlights = (await self.page.locator(self.sel.citation_highlight).all_inner_texts()
                      if self.sel.citation_highlight else [])
        return CitationView(page=await self._text(self.sel.citation_page),
                            match=await self._text(self.sel.citation_match) if self.sel.citation_match else "",
                            highlights=[h.strip() for h in highlights],
                            page_text=await self._text(self.sel.citation_text) if self.sel.citation_text else "")

    async def citation_count(self) -> int:
        if not self.sel.citation:
            return 0
        last = self.page.locator(self.sel.message).last if self.sel.message else self.page
        return await last.locator(self.sel.citation).count()

    # -- page ---------------------------------------------------------------------------------------------
    async def reload(self) -> None:
        await self.page.reload()

    async def reopen(self) -> None:
        """Close the page and open a new one in the same context (cookies and storage stay)."""
        await self.page.close()
        self.page = await self.context.new_page()
        await self.page.goto(self.sel.path)

    async def screenshot(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        await self.page.screenshot(path=str(path), full_page=True)
        return path

    async def close(self) -> None:
        await self.context.close()

    async def _text(self, selector: str) -> str:
        node = self.page.locator(selector).first
        return (await node.text_content() or "").strip() if await node.count() else ""


def turn_measures(turn: BrowserTurn, server_first_token_ms: float | None, scenario: str) -> list[Measure]:
    """Browser T3/T4/T5 of one turn (from the click on send) and, where the server stamped it, browser T4 −
    server T4 (`rig.measure.derive.browser_measures`)."""
    return browser_measures(turn.run_id, turn.send_ms, turn.t3, turn.t4, turn.t5, server_first_token_ms,
                            turn.answer_ms, scenario)
