"""`target.http` read and checked before anything is sent: templates, JMESPath, streams cut from any chunking."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from rig.adapters.http.frames import EventSorter, json_frames, ndjson_frames, sse_frames, typed_later
from rig.adapters.http.render import render
from rig.adapters.http.spec import HttpSpec, Request, StreamSpec
from rig.adapters.models import TerminalEvent, TokenEvent
from rig.config import load_config
from rig.errors import ConfigError
from tests.adapters.test_http_language import LINES, STREAM, _ndjson

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _spec() -> dict[str, Any]:
    return dict(yaml.safe_load((DOCS / "http-target.rig.yaml").read_text(encoding="utf-8"))["target"]["http"])


def _config_with(tmp_path: Path, http: dict[str, Any]) -> Path:
    path = tmp_path / "rig.yaml"
    path.write_text(yaml.safe_dump({"target": {"url": "http://127.0.0.1:9", "http": http},
                                    "accounts": {"a": {"username": "a", "password_env": "X"},
                                                 "b": {"username": "b", "password_env": "Y"}}}, allow_unicode=True))
    return path


def test_the_documented_example_is_a_valid_spec_and_implies_the_adapter(tmp_path: Path) -> None:
    config = load_config(_config_with(tmp_path, _spec()))
    assert config.target.adapter == "rig.adapters.http:HttpAdapter"
    assert config.target.http is not None and config.target.adapter_options()["http"]["events"]["stream"]["format"] == "sse"


@pytest.mark.parametrize(("change", "message"), [
    (lambda s: s["ask"]["request"].update(path="/s/{sesion_id}/messages"), r"ask\.request uses \{sesion_id\}"),
    (lambda s: s["ask"].update(result={"run_id": "run_id[?"}), r"JMESPath 'run_id\[\?'"),
    (lambda s: s["events"]["stream"].update(events=[{"event": "token", "type": "token"}]), "a rule of type done"),
    (lambda s: s.pop("resume") and s.update(capabilities={"resume": True}), "capabilities.resume is declared"),
    (lambda s: s["login"].update(reslt="token"),
     r"unknown key target\.http\.login\.reslt \(did you mean target\.http\.login\.result\?\)"),
    (lambda s: s.update(capabilities={"run_timing": False}), "unknown run_timing"),
    (lambda s: s.update(ask={**s["ask"], "stream": s["events"]["stream"]}), "give the run's stream once"),
])
def test_a_broken_spec_is_refused_naming_the_place(tmp_path: Path, change: Any, message: str) -> None:
    spec = _spec()
    change(spec)
    with pytest.raises(ConfigError, match=message):
        load_config(_config_with(tmp_path, spec))


def test_a_placeholder_alone_keeps_its_type_and_none_leaves_the_key_out() -> None:
    request = Request.model_validate({"method": "POST", "path": "/p/{project_id}/q", "query": {"k": "{parent_id}"},
                                      "headers": {"traceparent": "{traceparent}", "x-user": "u-{user_id}"},
                                      "json": {"scope": "{scope}", "parent": "{parent_id}", "text": "Q: {content}"}})
    r = render(request, {"project_id": "a b/c", "scope": ["d1", "d2"], "parent_id": None, "traceparent": None,
                         "user_id": "7", "content": "why?"})
    assert r.path == "/p/a%20b%2Fc/q"
    assert r.headers == {"x-user": "u-7"}
    assert r.record_body == {"scope": ["d1", "d2"], "text": "Q: why?"}
    assert r.content_type == "application/json"


def test_a_template_filled_again_is_filled_anew() -> None:
    """A request's template is worked out once and filled per question: no filling shares anything mutable with
    another, nor changes the template."""
    request = Request.model_validate({"method": "POST", "path": "/q", "json": {
        "messages": [{"role": "user", "content": "{content}"}], "options": {"stream": True}, "scope": "{scope?}"}})
    first = render(request, {"content": "one", "scope": ["d1"]})
    first.record_body["messages"].append("changed")
    first.record_body["options"]["stream"] = False
    second = render(request, {"content": "two", "scope": []})
    assert second.record_body == {"messages": [{"role": "user", "content": "two"}], "options": {"stream": True}}
    assert second.body == b'{"messages": [{"role": "user", "content": "two"}], "options": {"stream": true}}'
    assert request.json_body == {"messages": [{"role": "user", "content": "{content}"}], "options": {"stream": True},
                                 "scope": "{scope?}"}


def test_an_environment_placeholder_is_read_at_send_time(monkeypatch: pytest.MonkeyPatch) -> None:
    request = Request.model_validate({"path": "/x", "headers": {"x-api-key": "{env:RIG_TEST_KEY}"}})
    with pytest.raises(ConfigError, match="RIG_TEST_KEY"):
        render(request, {})
    monkeypatch.setenv("RIG_TEST_KEY", "k-123")
    assert render(request, {}).headers == {"x-api-key": "k-123"}


def _split(data: bytes, size: int) -> list[bytes]:
    return [data[i:i + size] for i in range(0, len(data), size)]


NDJSON = (b'{"type":"status","stage":"search"}\n{"type":"delta","text":"Hel"}\n\n'
          b'{"type":"delta","text":"lo"}\n{"type":"end","state":"completed","why":"ok"}\n')
RULES = [{"when": "data.type == 'status'", "type": "status", "data": {"stage": "data.stage", "text": "data.stage"}},
         {"when": "data.type == 'delta'", "type": "token", "data": {"text": "data.text", "kind": "'answer'"}},
         {"when": "data.type == 'end'", "type": "done", "data": {"state": "data.state", "reason": "data.why"}}]


@pytest.mark.parametrize("size", [1, 3, 7, 1000])
def test_ndjson_and_json_frames_do_not_depend_on_chunking(size: int) -> None:
    lines = [f.data for f in ndjson_frames(_split(NDJSON, size))]
    assert [x["type"] for x in lines] == ["status", "delta", "delta", "end"]
    array = b"[" + b",".join(NDJSON.split(b"\n")[:2] + NDJSON.split(b"\n")[3:5]) + b"]"
    assert [f.data["type"] for f in json_frames(_split(array, size))] == ["status", "delta", "delta", "end"]
    glued = NDJSON.replace(b"\n", b"")
    assert [f.data["type"] for f in json_frames(_split(glued, size))] == ["status", "delta", "delta", "end"]
    sse = b"event: token\ndata: {\"text\": \"a\"}\nid: 3\n\nevent: done\ndata: {}\n\n"
    assert [(f.event, f.id) for f in sse_frames(_split(sse, size))] == [("token", "3"), ("done", None)]


def test_rules_sort_frames_into_the_rigs_events_and_stop_at_the_end() -> None:
    sorter = EventSorter(StreamSpec.model_validate({"format": "ndjson", "events": RULES}))
    events = list(sorter.events([NDJSON + b'{"type":"delta","text":"after the end"}\n']))
    assert [e.event for e in events] == ["status", "token", "token", "done"]
    assert "".join(e.text for e in events if isinstance(e, TokenEvent)) == "Hello"
    end = events[-1]
    assert isinstance(end, TerminalEvent) and (end.state, end.reason) == ("completed", "ok")


def test_the_spec_model_lists_every_configured_operation() -> None:
    spec = HttpSpec.model_validate(_spec())
    ops = spec.operations()
    assert {"login", "ask", "events", "model_config", "export.md", "export.json"} <= set(ops)


def _typed(sorter: EventSorter, chunks: list[bytes]) -> list[tuple[str, int | None, object]]:
    """The load path's events (`EventSorter.raw`), each typed afterwards as a load's `typed()` would."""
    out = []
    for raw in sorter.raw(chunks):
        event = raw.parsed if raw.parsed is not None else typed_later(raw)
        assert event.recv_ns == raw.recv_ns, "typed later, stamped when it arrived"
        out.append((event.event, event.id, event.data))
    return out


@pytest.mark.parametrize("size", [2, 1000])
def test_the_load_paths_deferred_events_type_to_the_same_events(size: int) -> None:
    """A load sorts each frame as it arrives and types it later, or never: typed, the same events, stamps and end as
    the gate's reading — for the OpenAI-compatible stream, rules by test, a list rule (`each`) and a stream closed
    without an end — and until the first answer text nothing waits to be typed."""
    openai = load_config(DOCS / "targets" / "openai.rig.yaml").target.http
    assert openai is not None and openai.ask is not None and openai.ask.stream is not None
    chunk = (b'data: {"choices":[{"delta":{"content":"%s"},"finish_reason":null}]}\n\n')
    sse = (chunk % b"" + chunk % b"Hel" + chunk % b"lo" + b'data: {"choices":[],"usage":{"prompt_tokens":3,'
           b'"completion_tokens":2}}\n\n' + b"data: [DONE]\n\n")
    cases = [(openai.ask.stream, _split(sse, size)),
             (StreamSpec.model_validate({"format": "ndjson", "events": RULES}), _split(NDJSON, size)),
             (StreamSpec.model_validate(STREAM), _split(b"".join(_ndjson(LINES)), size)),
             (StreamSpec.model_validate(STREAM), _split(b"".join(_ndjson(LINES[:1])), size))]
    for spec, chunks in cases:
        sorter = EventSorter(spec)
        eager = [(e.event, e.id, e.data) for e in sorter.events(chunks)]
        assert _typed(sorter, chunks) == eager
    raws = list(EventSorter(openai.ask.stream).raw(_split(sse, size)))
    assert [r.parsed is not None for r in raws] == [True, False, False, True], "the first piece and the end typed"
    assert raws[1].event == raws[0].event != raws[2].event, "a raw event is named by the rule that sorted it"
