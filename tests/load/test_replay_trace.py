"""Reading a trace export into sessions and planning its replay: Langfuse (through its SDK's models) and
OTLP/JSON, speed, window, a session cap, anonymising."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rig.errors import ConfigError
from rig.load.replay import parse_window, plan_replay, read_trace

SHIPPED = Path(__file__).resolve().parents[2] / "docs" / "replay" / "langfuse-observations.json"
QUESTIONS = ["q-a", "q-b", "q-c"]


def test_the_shipped_langfuse_export_reads_as_sessions_of_ordered_turns() -> None:
    source = read_trace(SHIPPED)
    assert source.format == "langfuse" and len(source.sessions) == 10 and source.turns == 26
    kinds = [t.kind for s in source.sessions for t in s.turns]
    assert kinds.count("upload") == 2 and kinds.count("stop") == 1
    for s in source.sessions:
        assert [t.at_s for t in s.turns] == sorted(t.at_s for t in s.turns)
    raw = json.loads(SHIPPED.read_text(encoding="utf-8"))["data"]
    roots = [o for o in raw if o["isRootObservation"]]
    assert len(roots) == source.turns and len(raw) > len(roots), "child observations are not turns"
    first = next(t for s in source.sessions for t in s.turns if t.kind == "ask")
    assert first.text and "assistant" not in first.text, "the question is the last user message, not the system one"


def _otlp(tmp_path: Path) -> Path:
    def span(trace: str, at_s: float, session: str, text: str, name: str = "run", parent: str = "",
             reason: str = "completed") -> dict[str, object]:
        return {"traceId": trace, "spanId": trace[:16], "parentSpanId": parent, "name": name,
                "startTimeUnixNano": str(int((1_790_000_000 + at_s) * 1e9)),
                "attributes": [{"key": "session.id", "value": {"stringValue": session}},
                               {"key": "rig.question", "value": {"stringValue": text}},
                               {"key": "run.end_reason", "value": {"stringValue": reason}}]}

    spans = [span("a" * 32, 0, "s1", "first"), span("b" * 32, 30, "s1", "second", reason="user_stop"),
             span("c" * 32, 10, "s2", "other"), span("d" * 32, 10.5, "s2", "child", parent="ffff"),
             span("e" * 32, 50, "s2", "", name="upload")]
    path = tmp_path / "dump.json"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}), encoding="utf-8")
    return path


def test_an_otlp_dump_reads_root_spans_as_turns(tmp_path: Path) -> None:
    source = read_trace(_otlp(tmp_path))
    assert source.format == "otlp"
    assert [(s.key, [(t.at_s, t.kind, t.text) for t in s.turns]) for s in source.sessions] == [
        ("s1", [(0.0, "ask", "first"), (30.0, "stop", "second")]),
        ("s2", [(10.0, "ask", "other"), (50.0, "upload", None)])]


def test_speed_window_cap_and_anonymising(tmp_path: Path) -> None:
    source = read_trace(_otlp(tmp_path))
    fast = plan_replay(source, questions=QUESTIONS, paper_sets=2, speed=10)
    assert [t.at_s for s in fast.sessions for t in s.turns] == [0.0, 3.0, 1.0, 5.0]
    assert [t.text for s in fast.sessions for t in s.turns][:3] == ["first", "second", "other"]
    windowed = plan_replay(source, questions=QUESTIONS, paper_sets=2, window=parse_window("5s-40s"))
    assert [(s.key, [t.at_s for t in s.turns]) for s in windowed.sessions] == [("s1", [25.0]), ("s2", [5.0])]
    assert windowed.window_s == (5.0, 40.0)
    capped = plan_replay(source, questions=QUESTIONS, paper_sets=2, max_sessions=1)
    assert [s.key for s in capped.sessions] == ["s1"]
    hidden = plan_replay(source, questions=QUESTIONS, paper_sets=2, anonymise=True)
    texts = [t.text for s in hidden.sessions for t in s.turns]
    assert set(texts) <= set(QUESTIONS) and "s1" not in [s.key for s in hidden.sessions]
    again = plan_replay(source, questions=QUESTIONS, paper_sets=2, anonymise=True)
    assert again == hidden, "the same source maps the same way"
    assert [t.digest for s in hidden.sessions for t in s.turns] == [t.digest for s in fast.sessions for t in s.turns]


@pytest.mark.parametrize(("text", "message"), [("ten-twenty", "not START-END"), ("20m-10m", "ends before")])
def test_a_bad_window_is_refused(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_window(text)


def test_a_file_that_is_no_export_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"data": [{"id": "x"}]}), encoding="utf-8")
    with pytest.raises(ConfigError, match="not a Langfuse observations export"):
        read_trace(bad)
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"resourceSpans": []}), encoding="utf-8")
    with pytest.raises(ConfigError, match="holds no turn"):
        read_trace(empty)
