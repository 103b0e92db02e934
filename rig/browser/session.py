"""Browser users at once: each in its own context, asking in turn, every turn put beside its run record.

Used by `rig browser` and by `rig load --browsers M` (then in a process of its own, writing into the
load run's evidence store). Measures carry `source="browser"`; for each run the server's own first
status, first token and end go in too (`source="server_abs"` as epoch ms), so browser, HTTP and server
times can be compared run by run.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, computed_field

from rig.adapters.base import Adapter
from rig.adapters.models import Auth
from rig.browser.driver import BrowserTurn, BrowserUser, turn_measures
from rig.browser.selectors import SelectorMap
from rig.evidence import EvidenceStore
from rig.jsonvalue import ForeignJson
from rig.stats import summarize
from rig.waiting import wait_until


class BrowserPlan(BaseModel):
    """What each browser user does: log in, open a session on `doc_ids`, ask `turns` questions."""

    base_url: str
    adapter: str = "rig.adapters:WorkbenchAdapter"  # how the worker process reads run records (`package.module:Class`)
    adapter_options: ForeignJson = Field(default_factory=dict)  # target.options and target.http (no secrets)
    username: str
    project_id: str
    doc_ids: list[str]
    questions: list[str]
    users: int = 1
    turns: int = 3
    deadline_s: float = 120.0
    think_s: float = 0.0
    scenario: str = "browser"


class TurnRecord(BaseModel):
    user: int
    turn: BrowserTurn
    server_first_status_ms: float | None = None
    server_first_token_ms: float | None = None
    server_end_ms: float | None = None
    server_state: str | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def t4_minus_server(self) -> float | None:
        if self.turn.answer_ms is None or self.server_first_token_ms is None:
            return None
        return self.turn.answer_ms - self.server_first_token_ms


@dataclass
class BrowserRunResult:
    records: list[TurnRecord] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    rss_base_mb: float = 0.0
    rss_peak_mb: float = 0.0
    wall_s: float = 0.0
    run_dir: Path | None = None  # where `rig browser` wrote it

    def summary(self) -> BrowserSummary:
        """The turns' timings and the browser's memory, as browser.json opens."""
        lags = [r.t4_minus_server for r in self.records if r.t4_minus_server is not None]
        users = max((r.user for r in self.records), default=-1) + 1

        def pcts(code: str) -> Percentiles:
            return _pcts([v for r in self.records if (v := getattr(r.turn, code)) is not None])

        return BrowserSummary(turns=len(self.records), errors=self.errors[:20], users=users, wall_s=self.wall_s,
                              rss_base_mb=self.rss_base_mb, rss_peak_mb=self.rss_peak_mb, T3=pcts("t3"), T4=pcts("t4"),
                              T5=pcts("t5"), T4_browser_minus_server=_pcts(lags))


class Percentiles(BaseModel):
    """Count, p50, p95 and max of one browser timing, in ms."""

    count: int
    p50: float | None
    p95: float | None
    max: float | None


class BrowserSummary(BaseModel):
    """browser.json: the turns' timings, the browser's memory, and (from `rig browser`) every turn's record."""

    turns: int
    errors: list[str]
    users: int
    wall_s: float
    rss_base_mb: float
    rss_peak_mb: float
    rss_per_context_mb: float | None = None
    T3: Percentiles  # noqa: N815 - the eval set's code
    T4: Percentiles  # noqa: N815
    T5: Percentiles  # noqa: N815
    T4_browser_minus_server: Percentiles  # noqa: N815
    records: list[TurnRecord] = Field(default_factory=list)


def _pcts(values: list[float]) -> Percentiles:
    """Count, p50, p95 and max by the rig's one percentile (`rig.stats`), as every report shows them."""
    s = summarize(values)
    return Percentiles(count=s.count, p50=s.p50, p95=s.p95, max=s.max)


async def drive_users(browser: Any, selectors: SelectorMap, plan: BrowserPlan, password: str, adapter: Adapter,
                      auth: Auth, store: EvidenceStore | None = None, rss: Callable[[], float] | None = None,
                      on_turn: Callable[[TurnRecord], None] | None = None) -> BrowserRunResult:
    """Run `plan.users` browser users at once until each did `plan.turns` turns or the deadline passed."""
    result = BrowserRunResult(rss_base_mb=rss() if rss else 0.0)
    began = time.monotonic()
    deadline = began + plan.deadline_s

    async def session(index: int, first: int) -> int:
        """One browser session: open, log in, ask from turn `first` on; returns the turns it did."""
        user: BrowserUser | None = None
        done = 0
        try:
            user = await BrowserUser.open(browser, plan.base_url, selectors)
            if not await user.login(plan.username, password):
                raise LoginRefused("login refused")
            await user.start_session(plan.doc_ids, plan.project_id, by_doc_id=True)
            for n in range(first, plan.turns):
                if time.monotonic() > deadline:
                    break
                question = plan.questions[(index + n) % len(plan.questions)]
                turn = await user.ask(question, timeout_s=max(5.0, deadline - time.monotonic()))
                done += 1
                record = await asyncio.to_thread(_with_server, adapter, auth, index, turn)
                result.records.append(record)
                if store is not None:
                    store.add_measures(turn_measures(turn, record.server_first_token_ms, plan.scenario))
                if on_turn:
                    on_turn(record)
                if rss:
                    result.rss_peak_mb = max(result.rss_peak_mb, rss())
                if plan.think_s:
                    await asyncio.sleep(plan.think_s)
            return done
        except Exception as exc:
            raise _SessionEnded(done) from exc
        finally:
            if user is not None:
                await user.close()

    async def one(index: int) -> None:
        """A user's sessions: after the target went away (a restart), a new one once it is ready again."""
        turns = 0
        for _ in range(MAX_SESSIONS):
            if time.monotonic() > deadline:
                return
            try:
                turns += await session(index, turns)
                return
            except _SessionEnded as ended:
                turns += ended.done
                exc = ended.__cause__ or ended
                result.errors.append(f"user {index}: {type(exc).__name__}: {str(exc)[:300]}")
                if isinstance(exc, LoginRefused) or not await _target_went_away(adapter, exc, deadline):
                    return  # the flow itself broke: one user's failure is recorded; the others go on

    await asyncio.gather(*(one(i) for i in range(plan.users)))
    result.wall_s = time.monotonic() - began
    return result


MAX_SESSIONS = 5  # a user reopens at most this often after the target went away


class LoginRefused(Exception):
    """The target answered the login form with a refusal."""


class _SessionEnded(Exception):
    def __init__(self, done: int) -> None:
        super().__init__(f"session ended after {done} turn(s)")
        self.done = done


async def _target_went_away(adapter: Adapter, exc: BaseException, deadline: float) -> bool:
    """True when the failure was the target being unreachable and it is ready again before the deadline."""
    unreachable = "net::ERR_" in str(exc) or not await asyncio.to_thread(adapter.ready)
    if not unreachable:
        return False
    back = await asyncio.to_thread(lambda: wait_until(adapter.ready, max(0.0, deadline - time.monotonic()), 0.2))
    return bool(back)


def _with_server(adapter: Adapter, auth: Auth, index: int, turn: BrowserTurn) -> TurnRecord:
    record = TurnRecord(user=index, turn=turn)
    if turn.run_id:
        detail = adapter.run(auth, turn.run_id)
        record.server_first_status_ms = detail.first_status_at_ms
        record.server_first_token_ms = detail.first_token_at_ms
        record.server_end_ms = detail.ended_at_ms
        record.server_state = detail.state
    return record
