"""Small steps the workbench tests share: ask and finish, slow streams, slot readings."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass

from rig.adapters.models import Auth, Event, RunDetail, Session, Submitted
from rig.promtext import sample_value
from rig.waiting import wait_until
from tests.conftest import LiveWorkbench


@dataclass
class Asked:
    session_id: str
    submitted: Submitted
    events: list[Event]
    detail: RunDetail

    @property
    def run_id(self) -> str:
        return self.submitted.run_id


def open_on(wb: LiveWorkbench, auth: Auth, papers: list[str]) -> str:
    docs = [wb.corpus.doc(p) if p.startswith("P") and len(p) == 3 else wb.corpus.variant(p) for p in papers]
    return wb.adapter.open_session(auth, wb.corpus.project_id, docs).session_id


def ask(wb: LiveWorkbench, papers: list[str], question: str, *, auth: Auth | None = None,
        session_id: str | None = None, parent_id: str | None = None) -> Asked:
    """Ask in a new (or the given) session and read the stream to its end."""
    auth = auth or wb.auth_a
    sid = session_id or open_on(wb, auth, papers)
    sub = wb.adapter.ask(auth, sid, question, parent_id=parent_id)
    events = list(wb.adapter.events(auth, sub.run_id))
    return Asked(sid, sub, events, wb.adapter.run(auth, sub.run_id))


def answer_of(wb: LiveWorkbench, asked: Asked, auth: Auth | None = None) -> Session:
    return wb.adapter.session(auth or wb.auth_a, asked.session_id)


def slots_in_use(wb: LiveWorkbench) -> float:
    return sample_value(wb.adapter.metrics_text(), "workbench_run_slots_in_use") or 0.0


def wait_terminal(wb: LiveWorkbench, run_id: str, auth: Auth | None = None, timeout_s: float = 30.0) -> RunDetail:
    detail = wait_until(lambda: (d := wb.adapter.run(auth or wb.auth_a, run_id)).terminal and d, timeout_s)
    assert detail, f"run {run_id} did not end within {timeout_s}s"
    return detail


@contextmanager
def settings(wb: LiveWorkbench, **values: float) -> Iterator[None]:
    """Change runtime settings for a block, then restore them."""
    before = wb.adapter.chaos("GET", "settings")
    wb.adapter.chaos("PUT", "settings", values)
    try:
        yield
    finally:
        wb.adapter.chaos("PUT", "settings", before)
        wb.adapter.chaos("DELETE", "faults")


def slow_stream(wb: LiveWorkbench) -> AbstractContextManager[None]:
    """Answers that take a few seconds to stream (so a stop lands mid-generation)."""
    return settings(wb, token_delay_ms=25, first_token_delay_ms=50)
