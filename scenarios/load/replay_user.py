"""A user that replays sessions of a trace: each turn sent at its (sped-up) time, in its session's order.

Every turn leaves a `replay_turn` row — its session, place, kind and the digest of its source, valued with
how late it was sent against its schedule — and a `send_lag` row, so the replay's fidelity to its source is
measured, not assumed (`rig.load.replay.fidelity`). A turn is a question (asked in the session's own target
session, read to its end like any researcher's), a stop (asked, then stopped at its first answer text), or an
upload (one of the corpus' papers into the user's project, polled until final).
"""

from __future__ import annotations

import random
import time
from functools import partial
from pathlib import Path

import gevent
from locust.exception import StopUser

from rig.adapters import Submitted
from rig.clock import now_ns
from rig.errors import TargetError
from rig.load import ReplaySession, ReplayTurn, error_row, replay_of
from rig.measure import Measure, RawEvent, RunTranscript, send_lag_measure
from scenarios.load.researcher import ResearcherUser, _answer, _reason

UPLOAD_POLL_S = 0.1
UPLOAD_TIMEOUT_S = 120.0


class ReplayUser(ResearcherUser):
    """Replays sessions from its process's share of the plan's replay, one after another."""

    upload_project: str | None = None

    def wait_time(self) -> float:
        return 0.0

    def turn(self) -> None:
        """Replay the next session of this process's share; none left: this user is done."""
        session = replay_of(self.environment).take()
        if session is None:
            raise StopUser()
        self.replay(session)

    def replay(self, session: ReplaySession) -> None:
        self.session_id = None
        self.paper_set = self.plan.paper_sets[session.paper_set % len(self.plan.paper_sets)]
        for turn in session.turns:
            due = replay_of(self.environment).due_ns(turn)
            delay = (due - now_ns()) / 1e9
            if delay > 0:
                gevent.sleep(delay)
            label = f"{session.key}#{turn.index}:{turn.kind}:{turn.digest}"
            self.guarded("replay", partial(getattr(self, f"replay_{turn.kind}"), turn, due, label))

    def _sent(self, due: int, sent: int, label: str, run_id: str | None = None) -> None:
        lag = send_lag_measure(due, sent, run_id=run_id, scenario="replay")
        self.record([lag, Measure(code="replay_turn", source="client", value=lag.value, unit="ms", run_id=run_id,
                                  label=label, scenario="replay")])

    def _session(self) -> str:
        if self.session_id is None:
            self.open_replay_session()
        assert self.session_id is not None
        return self.session_id

    def open_replay_session(self) -> None:
        assert self.paper_set is not None
        opened = self.adapter.open_session(self.auth, self.plan.project_by_user[self.username], self.paper_set.doc_ids)
        self.session_id = opened.session_id

    def _submit(self, turn: ReplayTurn, due: int, label: str) -> tuple[str, Submitted]:
        """Ask the turn's question in the session's target session; the arrival is recorded whatever the answer."""
        session_id = self._session()
        sent = now_ns()
        try:
            sub = self.adapter.ask(self.auth, session_id, turn.text)
        except TargetError:
            self._sent(due, sent, label)
            raise
        self._sent(due, sub.submit_ns, label, sub.run_id)
        return session_id, sub

    def replay_ask(self, turn: ReplayTurn, due: int, label: str) -> None:
        session_id, sub = self._submit(turn, due, label)
        self.follow(RunTranscript(run_id=sub.run_id, session_id=session_id, question=turn.text,
                                  revision=turn.index > 0, submit_ns=sub.submit_ns, scheduled_ns=due), "replay")

    def replay_stop(self, turn: ReplayTurn, due: int, label: str) -> None:
        """The user stopped this one: ask, stop at the first answer text, read to the end (no resume)."""
        session_id, sub = self._submit(turn, due, label)
        run = RunTranscript(run_id=sub.run_id, session_id=session_id, question=turn.text, submit_ns=sub.submit_ns,
                            scheduled_ns=due)
        raw: list[RawEvent] = []
        try:
            for event in self.stream(run.run_id):
                raw.append(event)
                if run.stop_ns is None and event.event == "token" and _answer(self.adapter.typed(event)):
                    run.stop_ns = now_ns()  # T9 stop_to_end counts from here
                    with self.transport.expecting(409):
                        self.adapter.stop(self.auth, run.run_id)
        except TargetError as exc:
            run.error = _reason(exc)
        run.end_ns = now_ns()
        self.finish(run, "stop_resume", raw)

    def replay_upload(self, turn: ReplayTurn, due: int, label: str) -> None:
        """A paper of the corpus uploaded into the user's own project (made on its first upload), polled until
        final; the arrival is recorded whatever the answer."""
        if not self.plan.ingest_files:
            self._sent(due, now_ns(), label)
            self.record([error_row("replay", "upload:no_files")])
            return
        path = Path(random.Random(turn.digest).choice(self.plan.ingest_files))
        sent = now_ns()
        try:
            if self.upload_project is None:
                self.upload_project = self.adapter.create_project(self.auth, f"rig replay uploads {self.username}")
            up = self.adapter.upload(self.auth, self.upload_project, path)
        finally:
            self._sent(due, sent, label)
        deadline = time.monotonic() + UPLOAD_TIMEOUT_S
        doc = self.adapter.document(self.auth, up.doc_id)
        while not doc.final and time.monotonic() < deadline:
            gevent.sleep(UPLOAD_POLL_S)
            doc = self.adapter.document(self.auth, up.doc_id)
