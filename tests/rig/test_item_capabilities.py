"""Capabilities gate items, not cases: a part that needs what the target lacks is BLOCKED naming it, the rest count."""

from __future__ import annotations

from pathlib import Path

from rig.adapters import Capabilities, WorkbenchAdapter
from rig.adapters.models import Auth
from rig.errors import CapabilityMissing
from rig.evidence import EvidenceStore
from rig.target.recording import RecordingContext
from rig.target.session import TargetSession
from rig.target.setup import TargetSetup
from rig.telemetry.otlp_receiver import OtlpReceiver
from rig.telemetry.tracing import noop_tracer
from rig.verdict import Verdict, aggregate


def _ctx(tmp_path: Path, caps: Capabilities) -> RecordingContext:
    setup = TargetSetup(embedded=False, target_url="http://127.0.0.1:9", usernames={"a": "a", "b": "b"},
                        project_a="p", project_isolated="i", project_b_shared="s", project_b_private="q", docs={},
                        isolated={}, b_shared_doc="d", b_private_doc="e", ingest=[])
    auth = Auth(token="t", user_id="u", username="a")
    target = TargetSession(adapter=WorkbenchAdapter("http://127.0.0.1:9"), adapter_spec="test", usernames={},
                           auth={"a": auth, "b": auth}, passwords={},
                           setup=setup, caps=caps, embedded=None, receiver=OtlpReceiver())
    span = noop_tracer().case_span(1, "可靠性-01-1", [], 1).__enter__()
    return RecordingContext(1, 1, EvidenceStore(tmp_path / "e.sqlite3"), target, tracer=noop_tracer(), span=span)


def test_a_missing_operation_blocks_its_part_and_the_case_goes_on(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, Capabilities(page_text=False))
    with ctx.part("page_text"):
        raise CapabilityMissing("page_text")
    ctx.item("session", True, "refused")
    verdict, _ = aggregate(ctx.items)
    by = {i.name: i for i in ctx.items}
    assert by["page_text"].verdict == Verdict.BLOCKED and "page_text" in by["page_text"].reason
    assert by["session"].verdict == Verdict.PASS and verdict == Verdict.BLOCKED


def test_a_failure_elsewhere_still_fails_the_case(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, Capabilities(trace_ids=False))
    ctx.declared("trace_linked", "trace_ids", False, "no trace id")
    seen = ctx.observe("the old token after logout", {"status": 200})
    ctx.item("revoked", False, "the old token still works", seen)
    assert aggregate(ctx.items)[0] == Verdict.FAIL
    assert ctx.items[0].verdict == Verdict.BLOCKED and ctx.items[0].reason == "missing capability: trace_ids"


def test_a_field_declared_present_but_absent_is_the_targets_failure(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, Capabilities())
    record = ctx.observe("the run record", {"trace_id": None})
    assert ctx.declared("trace_linked", "trace_ids", False, "run carries no trace id", record).verdict == Verdict.FAIL
    assert ctx.item("reason", True, "ok", needs=("end_reasons",)).verdict == Verdict.PASS
    assert _ctx(tmp_path, Capabilities(end_reasons=False)).item("reason", True, "ok", needs=("end_reasons",)).verdict \
        == Verdict.BLOCKED


def test_lacks_records_the_block_and_tells_the_caller_to_skip(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, Capabilities(resume=False))
    assert ctx.lacks("checkpoint_resume", "checkpoints", "resume") is True
    assert ctx.items[-1].reason == "missing capability: resume"
    assert ctx.lacks("other", "checkpoints") is False and len(ctx.items) == 1


def test_no_fail_without_named_evidence(tmp_path: Path) -> None:
    """A FAIL must name what the target showed; one that names nothing is U, saying so — and what the rig could not
    find or link is U too, saying what it tried."""
    ctx = _ctx(tmp_path, Capabilities())
    unnamed = ctx.item("cited", False, "the answer cites 0 documents")
    assert unnamed.verdict == Verdict.U and unnamed.reason.startswith("undecided, not failed")
    assert "cites 0 documents" in unnamed.reason
    shown = ctx.observe("the saved answer", {"citations": []})
    assert ctx.item("cited", False, "the answer cites 0 documents", shown).verdict == Verdict.FAIL
    lost = ctx.could_not("answer_linked", "find the saved answer of run r1", "run ids, then the answer text")
    assert lost.verdict == Verdict.U and lost.reason == "could not find the saved answer of run r1 (tried: run ids, " \
        "then the answer text)"
    assert ctx.item("fine", True, "no evidence needed to say nothing failed").verdict == Verdict.PASS
