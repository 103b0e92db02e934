"""What a load run types of a stream: what its measures read, the rest counted (`RunTranscript.add_measured`)."""

from __future__ import annotations

import json

from rig.adapters import WorkbenchAdapter
from rig.measure.derive import pace_measures, stream_measures
from rig.measure.sse import RawEvent
from rig.measure.transcript import RunTranscript


def _raw(i: int, name: str, **data: object) -> RawEvent:
    return RawEvent(name, str(i), json.dumps(data), 1_000_000 * i)


STREAM = [_raw(1, "queued"), _raw(2, "token", text="想", kind="reasoning"), _raw(3, "token", text=" ", kind="answer"),
          _raw(4, "status", stage="reading"), _raw(5, "token", text="答", kind="answer"),
          _raw(6, "token", text="案", kind="answer"), _raw(7, "status", stage="writing"),
          _raw(8, "citation", citation_id="c1"), _raw(9, "token", text="。", kind="answer"),
          _raw(10, "done", state="completed")]


def test_a_load_run_types_the_first_of_each_name_the_tokens_to_the_first_answer_text_and_the_end() -> None:
    typed = []
    adapter = WorkbenchAdapter("http://127.0.0.1:9")

    def typing(raw: RawEvent):  # type: ignore[no-untyped-def]
        typed.append(raw.id)
        return adapter.typed(raw)

    run = RunTranscript(run_id="r", submit_ns=0)
    run.add_measured(STREAM, typing)
    assert typed == ["1", "2", "3", "4", "5", "8", "9", "10"]  # a blank answer token does not end the typing; the
    assert run.untyped == 2  # last three events are typed whatever their names (the end, a usage report before it)
    assert run.piece_ns == [6_000_000]  # an answer piece read untyped: its stamp kept for the answer's pace
    every = RunTranscript(run_id="r", submit_ns=0, events=[adapter.typed(r) for r in STREAM])
    assert [(m.code, m.value, m.label) for m in stream_measures(run)] == \
        [(m.code, m.value, m.label) for m in stream_measures(every)]
    assert [(m.code, m.value) for m in pace_measures(run)] == [(m.code, m.value) for m in pace_measures(every)] == \
        [("ITL", 2.0), ("tokens_out", 4.0), ("TPOT", 2.0)]  # pieces at 3, 5, 6 and 9 ms: 6 ms over 3 gaps


def test_an_answer_without_text_is_typed_to_its_end() -> None:
    adapter = WorkbenchAdapter("http://127.0.0.1:9")
    blank = [_raw(1, "token", text=" ", kind="answer"), _raw(2, "token", text="", kind="answer"),
             _raw(3, "done", state="completed")]
    run = RunTranscript(run_id="r", submit_ns=0)
    run.add_measured(blank, adapter.typed)
    assert run.untyped == 0 and len(run.events) == 3
    (end,) = [m for m in stream_measures(run) if m.code == "T5"]
    assert end.label == "no_body:completed/None"  # no answer text: the end counts apart, as with every event typed


def test_the_pace_counts_the_targets_reported_tokens_and_nothing_for_an_unfinished_answer() -> None:
    adapter = WorkbenchAdapter("http://127.0.0.1:9")
    pieces = [_raw(i, "token", text="x", kind="answer") for i in (10, 20, 30)]
    done = RunTranscript(run_id="r", submit_ns=0, events=[adapter.typed(r) for r in [*pieces, _raw(40, "done",
                                                                                                    state="completed")]])
    done.events.insert(3, adapter.typed(_raw(35, "usage", output_tokens=11)))
    assert [(m.code, m.source, m.value) for m in pace_measures(done)] == [
        ("ITL", "client", 10.0), ("tokens_out", "server", 11.0), ("TPOT", "client", 2.0)]  # 20 ms over 10 tokens
    cut = RunTranscript(run_id="r", submit_ns=0, events=[adapter.typed(r) for r in pieces])
    assert pace_measures(cut) == []  # no end: no pace (the run's failure is counted elsewhere)
