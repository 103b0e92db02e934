"""Restarts: SIGKILL mid-run loses nothing committed and marks the run interrupted; SIGTERM drains."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from rig.adapters.models import CheckpointEvent, TokenEvent
from rig.errors import TargetHTTPError
from tests.conftest import Corpus, LiveWorkbench, start_workbench
from tests.workbench.helpers import ask, open_on, wait_terminal

LONG = "请查清买家保护与徽章关系并给依据。"


@pytest.fixture()
def own(tmp_path: Path, corpus: Corpus):  # type: ignore[no-untyped-def]
    wb = start_workbench(tmp_path / "wb", corpus, include_variants=False,
                         extra_args=["--token-delay-ms", "20", "--first-token-delay-ms", "50"])
    try:
        yield wb
    finally:
        wb.adapter.close()
        wb.target.cleanup()


def _snapshot(wb: LiveWorkbench, session_id: str, done: str, in_flight: str) -> dict[str, object]:
    session = wb.adapter.session(wb.auth_a, session_id)
    cut = wb.adapter.run(wb.auth_a, in_flight)
    return {
        "session": session.model_dump(),
        "done": wb.adapter.run(wb.auth_a, done).model_dump(),
        "in_flight": [cut.checkpoints, cut.queued_at_ms, cut.started_at_ms, cut.first_status_at_ms,
                      cut.first_token_at_ms],
        "documents": sorted((d.doc_id, d.status, d.sha256)
                            for d in wb.adapter.documents(wb.auth_a, wb.corpus.project_id)),
        "locate": [wb.adapter.locate_citation(wb.auth_a, c.citation_id).model_dump(exclude={"cache"})
                   for m in session.messages for c in m.citations],
    }


def test_sigkill_mid_run_marks_it_interrupted_and_keeps_everything_committed(own: LiveWorkbench) -> None:
    done = ask(own, ["P32"], "2.9%指什么？")
    sid = done.session_id
    sub = own.adapter.ask(own.auth_a, sid, LONG)
    stream = own.adapter.events(own.auth_a, sub.run_id)
    next(e for e in stream if isinstance(e, CheckpointEvent))
    next(e for e in stream if isinstance(e, TokenEvent))
    before = _snapshot(own, sid, done.run_id, sub.run_id)
    own.target.kill()
    stream.close()
    own.target.start()
    auth = own.adapter.login(own.a.username, own.a.password)
    own.auth_a = auth
    cut = own.adapter.run(auth, sub.run_id)
    assert (cut.state, cut.end_reason) == ("interrupted", "server_restart")
    assert cut.checkpoints, "the checkpoint committed before the kill survives"
    assert _snapshot(own, sid, done.run_id, sub.run_id) == before
    replay = list(own.adapter.events(auth, sub.run_id))
    assert replay[-1].event == "error" and replay[-1].data["reason"] == "server_restart"
    resumed = own.adapter.resume(auth, sub.run_id)
    list(own.adapter.events(auth, resumed.run_id))
    assert own.adapter.run(auth, resumed.run_id).state == "completed"


def test_resume_after_a_restart_with_new_code_is_refused(own: LiveWorkbench) -> None:
    sid = open_on(own, own.auth_a, ["P32"])
    sub = own.adapter.ask(own.auth_a, sid, LONG)
    stream = own.adapter.events(own.auth_a, sub.run_id)
    next(e for e in stream if isinstance(e, CheckpointEvent))
    own.target.kill()
    stream.close()
    own.target.extra_args += ["--code-version", "9.9.9-next"]
    own.target.start()
    auth = own.adapter.login(own.a.username, own.a.password)
    with pytest.raises(TargetHTTPError) as err:
        own.adapter.resume(auth, sub.run_id)
    assert err.value.code == "checkpoint_invalid" and err.value.details["reasons"] == ["code_changed"]


def test_sigterm_lets_a_short_run_finish_and_interrupts_what_outlasts_the_drain(own: LiveWorkbench) -> None:
    own.target.stop()
    own.target.extra_args += ["--drain-timeout-s", "1"]
    own.target.start()
    own.auth_a = own.adapter.login(own.a.username, own.a.password)
    sid = open_on(own, own.auth_a, ["P32"])
    long = own.adapter.ask(own.auth_a, sid, LONG)
    stream = own.adapter.events(own.auth_a, long.run_id)
    next(e for e in stream if isinstance(e, TokenEvent))
    code = own.target.stop(timeout_s=30)
    rest = list(stream)
    assert code in (0, -signal.SIGTERM), "graceful shutdown (uvicorn re-raises the signal it handled)"
    assert rest[-1].event == "error" and rest[-1].data["reason"] == "server_restart", "the stream ends cleanly"
    own.target.start()
    own.auth_a = own.adapter.login(own.a.username, own.a.password)
    detail = wait_terminal(own, long.run_id)
    assert (detail.state, detail.end_reason) == ("interrupted", "server_restart")
    assert detail.ended_at_ms and detail.started_at_ms
