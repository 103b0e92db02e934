"""Two accounts of one run must agree; "absent" is decided per target. The rig's reading of a run (its stream, its
record, its own clock) and of what the target showed, on real models and a real evidence store."""

from __future__ import annotations

from pathlib import Path

from rig.adapters import Capabilities
from rig.clock import now_ns, wall_ms
from rig.evidence import EvidenceStore
from rig.measure.events import RunDetail, StatusEvent, TerminalEvent, TokenEvent, ToolCallEvent, ToolCallRecord
from rig.measure.transcript import RunTranscript
from rig.target.accounts import CLOCK_TOLERANCE_MS, run_accounts
from rig.target.showings import Showings, rejudge
from rig.verdict import Verdict
from tests.rig.test_item_capabilities import _ctx

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


def _run(**record: object) -> RunTranscript:
    """A run as the rig reads one: submitted, a status, a tool card, a first answer token, its end; then its record."""
    sent = now_ns()
    step = 50_000_000  # 50 ms between events
    events = [StatusEvent(event="status", recv_ns=sent + step, stage="searching"),
              ToolCallEvent(event="tool_call", recv_ns=sent + 2 * step, tool_call_id="c1", name="internal_search"),
              TokenEvent(event="token", recv_ns=sent + 3 * step, text="答"),
              TerminalEvent(event="done", recv_ns=sent + 4 * step, state="completed", reason="completed")]
    base = wall_ms(sent)
    detail = RunDetail(run_id="r1", state="completed", end_reason="completed", trace_id=TRACE,
                       queued_at_ms=base + 5, started_at_ms=base + 10, first_status_at_ms=base + 40,
                       first_token_at_ms=base + 140, ended_at_ms=base + 190,
                       tool_calls=[ToolCallRecord(tool_call_id="c1", name="internal_search", ok=True)])
    return RunTranscript(run_id="r1", submit_ns=sent, events=events, sent_trace_id=TRACE,
                         detail=detail.model_copy(update=record))


def test_a_run_whose_accounts_agree_compares_every_fact_both_tell() -> None:
    accounts = run_accounts(_run(), Capabilities())
    assert accounts.disagreements == []
    assert set(accounts.compared) == {"end", "trace", "tool_calls", "queued_at", "started_at", "first_status_at",
                                      "first_token_at", "ended_at"}


def test_each_fact_told_two_ways_is_a_disagreement_naming_both_accounts() -> None:
    run = _run(state="stopped", end_reason="user_stop", trace_id="0" * 32, tool_calls=[])
    found = {d.fact: d for d in run_accounts(run, Capabilities()).disagreements}
    assert set(found) == {"end", "trace", "tool_calls"}
    assert "completed/completed" in found["end"].one and "stopped/user_stop" in found["end"].other
    assert TRACE in found["trace"].one and "0" * 32 in found["trace"].other


def test_a_stamp_before_the_request_or_after_its_receipt_is_beyond_the_clock_tolerance() -> None:
    run = _run()
    assert run.detail is not None
    before = run.detail.queued_at_ms - 3 * CLOCK_TOLERANCE_MS  # type: ignore[operator]
    late = run.detail.ended_at_ms + 3 * CLOCK_TOLERANCE_MS  # type: ignore[operator]
    facts = {d.fact for d in run_accounts(_run(first_token_at_ms=before, ended_at_ms=late), Capabilities()
                                          ).disagreements}
    assert facts == {"first_token_at", "ended_at"}
    within = run.detail.ended_at_ms + CLOCK_TOLERANCE_MS / 2  # type: ignore[operator]
    assert run_accounts(_run(ended_at_ms=within), Capabilities()).disagreements == []


def test_only_what_the_target_declares_both_channels_carry_is_compared() -> None:
    caps = Capabilities(run_timings=False, trace_ids=False, stream_tool_cards=False)
    accounts = run_accounts(_run(state="stopped", trace_id="0" * 32, tool_calls=[], first_token_at_ms=0.0), caps)
    assert accounts.compared == ["end"] and [d.fact for d in accounts.disagreements] == ["end"]
    # a record that only says "done" (no ends in the protocol's words): its state is the adapter's reading
    assert run_accounts(_run(state="stopped"), caps.model_copy(update={"end_reasons": False})).compared == []
    assert run_accounts(_run().model_copy(update={"detail": None}), Capabilities()).compared == []


def test_an_end_the_rig_wrote_is_not_the_targets_account() -> None:
    run = _run(state="stopped", end_reason="user_stop")
    run.events[-1] = TerminalEvent(event="done", recv_ns=run.events[-1].recv_ns, state="completed",
                                   reason="completed", data={"derived": "client_disconnect"})
    assert "end" not in run_accounts(run, Capabilities()).compared


def test_absent_is_blocked_until_the_target_showed_it_and_a_fail_once_it_has(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, Capabilities())
    first = ctx.absent("pages_here", "hit_pages", "run r2's record names no page")
    assert first.verdict == Verdict.BLOCKED and first.reason.startswith("missing capability: hit_pages")
    e = ctx.observe("run r1's record", {"pages": [3, 4]})
    ctx.showed("hit_pages", "run r1's record: 2 hits with pages", e)
    again = ctx.absent("pages_there", "hit_pages", "run r3's record names no page")
    assert again.verdict == Verdict.FAIL and "run r1's record" in again.reason and e in again.evidence_ids


def test_the_first_showing_of_each_capability_outlives_a_resume(tmp_path: Path) -> None:
    store = EvidenceStore(tmp_path / "e.sqlite3")
    Showings(store).saw("hit_pages", "run r1's record", case_id=7, evidence_id=3)
    Showings(store).saw("hit_pages", "run r9's record", case_id=9)  # a later showing changes nothing
    shown = Showings(store).first("hit_pages")
    assert shown is not None and (shown.where, shown.case_id, shown.evidence_id) == ("run r1's record", 7, 3)


def test_a_blocked_absence_the_target_showed_later_in_the_gate_is_judged_again_fail(tmp_path: Path) -> None:
    """"Elsewhere" includes later: an item BLOCKED before the target first showed its capability becomes FAIL, with
    the later showing as evidence, once the gate's cases have run — and its case's verdict follows; an absence never
    shown stays BLOCKED, and judging again twice changes nothing more."""
    ctx = _ctx(tmp_path, Capabilities())
    store = ctx.store
    ctx.target.showings = Showings(store)  # as the gate opens it: kept in the store
    store.begin_case(ctx.rep, ctx.key, "R-x", "m", "n")
    ctx.absent("pages_here", "hit_pages", "run r2's record names no page")
    ctx.absent("spans_here", "exported_spans", "no span of run r2 arrived")
    store.end_case(ctx.rep, ctx.key, Verdict.BLOCKED, "missing capability")
    assert rejudge(store, ctx.target.showings) == {}, "nothing shown yet: nothing changes"
    e = store.add_evidence(1, 31, "observation", "run r9's record", {"pages": [2]})
    Showings(store).saw("hit_pages", "run r9's record: 1 hit with pages", case_id=31, evidence_id=e)
    showings = Showings(store)  # as a resumed gate reads them back
    changed = rejudge(store, showings)
    assert changed == {(ctx.rep, ctx.key): (Verdict.FAIL, changed[(ctx.rep, ctx.key)][1])}
    items = {i.name: i for i in store.items(ctx.rep, ctx.key)}
    assert items["pages_here"].verdict == Verdict.FAIL and "later in this gate" in items["pages_here"].reason
    assert e in items["pages_here"].evidence_ids and "case 31" in items["pages_here"].reason
    assert items["spans_here"].verdict == Verdict.BLOCKED
    row = next(c for c in store.cases(ctx.rep) if c.case_id == ctx.key)
    assert row.verdict == Verdict.FAIL
    assert rejudge(store, showings) == {}, "judged once"
