"""What a browser step of a gate case gets: the shared browser, the selector map, screenshots as evidence."""

from __future__ import annotations

import re
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rig.browser.driver import BrowserUser
from rig.browser.host import BrowserHost
from rig.browser.selectors import SelectorMap
from rig.gate.context import CaseContext
from rig.plugins import load_scenario_packs

BrowserStep = Callable[[CaseContext, "BrowserKit"], Coroutine[Any, Any, None]]
_STEPS: dict[int, BrowserStep] = {}


def browser_step(case_id: int) -> Callable[[BrowserStep], BrowserStep]:
    """Register the browser half of reliability case `case_id` (run after its HTTP half with `--browser`)."""
    def register(fn: BrowserStep) -> BrowserStep:
        _STEPS[case_id] = fn
        return fn
    return register


def browser_steps() -> dict[int, BrowserStep]:
    """Every registered browser half, loading the scenario packs on first use."""
    load_scenario_packs()
    return dict(_STEPS)


@dataclass
class BrowserKit:
    """One browser for the whole gate run; each step opens fresh contexts through `user()`."""

    host: BrowserHost
    selectors: SelectorMap
    base_url: str
    run_dir: Path
    users: list[BrowserUser] = field(default_factory=list)

    async def user(self) -> BrowserUser:
        u = await BrowserUser.open(self.host.browser, self.base_url, self.selectors)
        self.users.append(u)
        return u

    async def shot(self, ctx: CaseContext, user: BrowserUser, name: str, caption: str) -> int:
        """A full-page screenshot of `user`'s page, stored under screenshots/ and recorded as evidence."""
        slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
        rel = Path("screenshots") / f"r{ctx.rep}-case{ctx.case.case_id:02d}-{slug}.png"
        await user.screenshot(self.run_dir / rel)
        return ctx.evidence("screenshot", caption, {"file": rel.as_posix(), "url": user.page.url})

    async def close_users(self) -> None:
        for u in self.users:
            try:
                await u.close()
            except Exception:
                pass
        self.users.clear()


