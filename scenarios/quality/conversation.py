"""Quality cases, end to end (专家-11…25, 用户-01…24, 对抗-01…09): a conversation per case.

What it does: opens a fresh session scoped to exactly the case's allowed papers, asks each turn in that
session in order, and switches the scope before a turn whose allowed papers differ from the last
(the backend's effective file list is read back and kept). A turn that rewrites the previous answer
(the case lists T6) is timed as a revision.
Expects: every turn ends in a recorded state; citations trace to the run's hits and the allowed papers;
an unanswerable question is refused.
Evidence: the scope as requested and as the target applied it, each run's stream and record, the saved
answer with every citation traced, the cited pages as downloaded, the T-codes the case lists.
"""

from __future__ import annotations

from typing import Any

from rig.measure import RunTranscript
from rig.quality import CaseDriver, QualityContext, scenario
from rig.results import TurnRecord
from rig.verdict import Verdict
from scenarios.quality.asking import measure_turn
from scenarios.quality.expectations import expected_refusal, unapplied_preparation


class Conversation:
    """The session a case's turns share, and the scope in force."""

    def __init__(self) -> None:
        self.session_id: str | None = None
        self.scope: list[str] = []
        self.previous: list[dict[str, str]] = []

    def ensure_scope(self, ctx: QualityContext, record: TurnRecord, docs: list[str],
                     project: str | None = None) -> None:
        """Open the session on the first turn, or switch its scope when this turn's papers differ."""
        if self.session_id is None:
            opened = ctx.adapter.open_session(ctx.a, project or ctx.project, docs)
            ctx.sessions.append(opened.session_id)
            self.session_id = opened.session_id
            record.effective_scope = opened.effective_scope
            ctx.observe("session opened", {"requested": docs, "effective_scope": opened.effective_scope,
                                           "dropped": [d.model_dump() for d in opened.dropped]})
        elif sorted(docs) != sorted(self.scope) and ctx.caps.missing("sessions"):
            # no sessions: the conversation is the rig's, and its next question goes with the new papers
            opened = ctx.adapter.open_session(ctx.a, project or ctx.project, docs)
            self.session_id = opened.session_id
            record.effective_scope = opened.effective_scope
            record.fixture["scope_switch"] = {"from": self.scope, "to": docs, "how": "a new conversation (the "
                                              "target keeps no sessions)"}
        elif sorted(docs) != sorted(self.scope):
            ctx.require("scope_change")
            changed = ctx.adapter.set_scope(ctx.a, self.session_id, docs)
            backend = ctx.adapter.session(ctx.a, self.session_id).scope
            record.effective_scope = changed.effective_scope
            record.fixture["scope_switch"] = {"from": self.scope, "to": docs,
                                              "effective_scope": changed.effective_scope,
                                              "backend_scope": backend}
            ctx.observe("scope switched before the turn", record.fixture["scope_switch"])
        else:
            record.effective_scope = list(self.scope)
        self.scope = docs

    def ask(self, ctx: QualityContext, record: TurnRecord, docs: list[str], question: str | None = None,
            **extra: Any) -> RunTranscript:
        """Ask one turn in the session, measure it into `record` against `docs`; returns the run."""
        record.scope_doc_ids = docs
        record.previous = list(self.previous)
        self.ensure_scope(ctx, record, docs, extra.pop("project", None))
        assert self.session_id is not None
        run = ctx.chat(ctx.a, self.session_id, question or ctx.turn.prompt,
                       revision="T6" in ctx.turn.performance_codes)
        measure_turn(ctx, record, run, docs, expected_refusal(ctx.turn))
        self.previous.append({"record_id": ctx.turn.record_id, "question": question or ctx.turn.prompt,
                              "answer": record.answer or ""})
        return run


@scenario("conversation")
def conversation(driver: CaseDriver) -> None:
    """Every turn of the case in one session, scope switched where the eval set says."""
    talk = Conversation()
    for index in range(len(driver.case.turns)):
        with driver.turn(index) as ctx:
            record = ctx.base_record("conversation")
            gap = unapplied_preparation(ctx.turn)
            if gap:
                record.fixture["preparation_not_applied"] = gap
                ctx.item("preparation", Verdict.BLOCKED, gap, required=False)
            talk.ask(ctx, record, ctx.doc_ids(ctx.turn.allowed_paper_ids))
            ctx.record(record)
