"""A load sorts some frames without reading their JSON — an answer piece known by its text
(`rig.adapters.http.shape`), a frame whose SSE name alone decides its rule — and sorts them as reading it would: on
streams built to trip it (escapes, empty pieces, a piece spelled like another field, fields that change, duplicate
keys, broken JSON, rules that compare the piece), the load path's events, typed, are the gate's events."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import orjson
import pytest

from rig.adapters.http import frames
from rig.adapters.http.frames import EventSorter, typed_later
from rig.adapters.http.shape import _STRING, take
from rig.adapters.http.spec import StreamSpec
from rig.config import load_config

DOCS = Path(__file__).resolve().parents[2] / "docs"
OPENAI = load_config(DOCS / "targets" / "openai.rig.yaml").target.http
assert OPENAI is not None and OPENAI.ask is not None and OPENAI.ask.stream is not None
TOKEN = {"when": "data.choices[0].delta.content", "type": "token",
         "data": {"text": "data.choices[0].delta.content", "kind": "'answer'"}}
DONE = {"when": "data == '[DONE]'", "type": "done", "data": {"state": "'completed'", "reason": "'completed'"}}
SPECS = {
    "openai": OPENAI.ask.stream,
    # rules tried before the token's that read the piece: each makes the shape unsound, so none may be taken
    "compares the piece first": StreamSpec.model_validate({"format": "sse", "events": [
        {"when": "data.choices[0].delta.content == 'stop'", "type": "done",
         "data": {"state": "'completed'", "reason": "'completed'"}}, TOKEN, DONE]}),
    "compares the last choice first": StreamSpec.model_validate({"format": "sse", "events": [
        {"when": "data.choices[-1].delta == `{\"content\": \"x\"}`", "type": "ignore"}, TOKEN, DONE]}),
    "reads the name first": StreamSpec.model_validate({"format": "sse", "events": [
        {"when": "event == 'x'", "type": "ignore"}, TOKEN, DONE]}),
    "jmespath first": StreamSpec.model_validate({"format": "sse", "events": [
        {"when": "contains(data.choices[0].delta.content || '', 'halt')", "type": "done",
         "data": {"state": "'completed'", "reason": "'completed'"}}, TOKEN, DONE]}),
}


def _chunk(content: Any, *, model: str = "m", created: int = 7, extra: str = "", choices: int = 1,
           ascii_only: bool = False) -> str:
    choice = {"index": 0, "delta": {"content": content}, "finish_reason": None}
    body = {"id": "c-1", "object": "chat.completion.chunk", "created": created, "model": model,
            "choices": [choice] * choices}
    return json.dumps(body, ensure_ascii=ascii_only)[:-1] + extra + "}"


def _spelled(piece: str) -> str:
    """A chunk whose piece is written as it stands, unescaped: what no JSON encoder writes, but a target may."""
    return _chunk("@@").replace('"@@"', f'"{piece}"')


def _stream(rng: random.Random) -> bytes:
    pieces = ["a", "Hel", "lo", " world", "m", "c-1", "chat.completion.chunk", "stop", "x", "é", "halt", "0", "中文",
              "\U0001F600", "a\\b", "\x00"]
    out = [_chunk(""), _chunk("first")]
    for _ in range(rng.randint(5, 40)):
        kind = rng.random()
        if kind < 0.45:
            out.append(_chunk(rng.choice(pieces)))
        elif kind < 0.55:
            out.append(_chunk(rng.choice(pieces), ascii_only=True))  # é, 中 as \\u escapes
        elif kind < 0.60:
            out.append(_chunk("line\nbreak"))  # escaped in its JSON
        elif kind < 0.63:
            out.append(_chunk('say "hi"'))
        elif kind < 0.66:
            out.append(_chunk(""))  # an empty piece is not a token
        elif kind < 0.69:
            out.append(_chunk(None))
        elif kind < 0.72:
            out.append(_chunk(rng.choice(pieces), created=8))  # another field changed
        elif kind < 0.75:
            out.append(_chunk("a", extra=', "choices": []'))  # a duplicate key: the last one counts
        elif kind < 0.78:
            out.append(_chunk("a", choices=2))
        elif kind < 0.81:
            out.append(_chunk("m", model="m"))  # the piece spelled like the model, which comes first
        elif kind < 0.83:
            out.append(_spelled("tab\there"))  # a raw control character: not JSON
        elif kind < 0.84:  # a raw quote: the same text around it, but the piece ends early and another follows
            out.append(_spelled('x"}, "finish_reason": null}], "choices": [{"delta": {"content": "'))
        elif kind < 0.87:
            text = _chunk("zz")
            out.append(text[: text.index('"zz"') + 1] + "unterminated")  # broken JSON: text, no rule's
        elif kind < 0.90:
            out.append(_chunk("x", extra=', "usage": {"completion_tokens": 3}'))
        elif kind < 0.93:
            out.append(_chunk("stop"))
        else:
            out.append(_chunk(rng.choice(pieces) * rng.randint(2, 5)))
    out.append('{"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 9}}')
    out.append("[DONE]")
    return b"".join(b"data: " + line.encode() + b"\n\n" for line in out)


def _chunks(stream: bytes, rng: random.Random) -> list[bytes]:
    """Event by event (as a block-reading transport hands them), a few whole events at once, or cut anywhere."""
    kind = rng.random()
    blocks = [block + b"\n\n" for block in stream.split(b"\n\n") if block]
    if kind < 0.5:
        return blocks
    if kind < 0.75:
        cuts = sorted(rng.sample(range(1, len(blocks)), k=min(len(blocks) - 1, rng.randint(1, 10))))
        return [b"".join(blocks[a:b]) for a, b in zip([0, *cuts], [*cuts, len(blocks)], strict=True)]
    cuts = sorted(rng.sample(range(1, len(stream)), k=min(len(stream) - 1, 25)))
    return [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True)]


def _load_path(sorter: EventSorter, chunks: list[bytes]) -> list[tuple[str, int | None, object]]:
    out = []
    for raw in sorter.raw(chunks):
        event = raw.parsed if raw.parsed is not None else typed_later(raw)
        out.append((event.event, event.id, event.data))
    return out


@pytest.mark.parametrize("name", sorted(SPECS))
def test_every_stream_sorts_as_reading_each_event_would(name: str) -> None:
    sorter = EventSorter(SPECS[name])
    for seed in range(150):
        rng = random.Random(seed)
        chunks = _chunks(_stream(rng), rng)
        eager = [(e.event, e.id, e.data) for e in sorter.events(chunks)]
        assert _load_path(sorter, chunks) == eager, (name, seed)


def test_the_openai_stream_reads_the_json_of_few_of_its_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where it is sound (the documented OpenAI rules) pieces after the first few are not read; where a rule before
    the token's compares the piece, every event is read."""
    read: list[str] = []
    loads = frames._loads
    monkeypatch.setattr(frames, "_loads", lambda text: read.append(text) or loads(text))
    stream = "".join(f"data: {_chunk(f'piece {i}')}\n\n" for i in range(50)) + "data: [DONE]\n\n"
    chunks = [block.encode() + b"\n\n" for block in stream.split("\n\n") if block]
    events = list(EventSorter(SPECS["openai"]).raw(chunks))
    assert len(events) == 51 and len(read) <= 3, len(read)
    read.clear()
    list(EventSorter(SPECS["compares the piece first"]).raw(chunks))
    assert len(read) == 51


def test_a_shape_is_taken_where_the_piece_is_and_fits_only_a_string_that_is_not_empty() -> None:
    sorter = EventSorter(SPECS["openai"])
    rule = sorter._rules("message")[0]
    text = _chunk("m")  # "m" is the model too, spelled earlier in the text
    shape = take("message", text, json.loads(text), rule, sorter._rules("message"))
    assert shape is not None and shape.head.endswith('"content": "') and shape.tail.startswith('"}')
    for piece in ("next piece", "a\nb", 'a"b', "a\\b", "中文", "\U0001F600", "\x00"):  # JSON's escapes, either encoder
        assert shape.fits("message", _chunk(piece)) and shape.fits("message", _chunk(piece, ascii_only=True)), piece
    assert not shape.fits("other", _chunk("next piece")), "another event name"
    for other in (_chunk(""), _spelled("a\tb"), _spelled('a"b'), _spelled("a\\q"), _spelled("\\ud800"),
                  _spelled("\\ud83d"), _spelled("\\ude00\\ud83d"), _spelled("\\x41"), _chunk("x", created=8),
                  _chunk("a", model="n"), _chunk(None)):
        assert not shape.fits("message", other), other
    escaped = _chunk("中文", ascii_only=True)  # a piece spelled in ASCII escapes is found too
    assert take("message", escaped, json.loads(escaped), rule, sorter._rules("message")) is not None
    for name in ("compares the piece first", "compares the last choice first", "reads the name first",
                 "jmespath first"):
        other = EventSorter(SPECS[name])
        rules = other._rules("message")
        assert take("message", text, json.loads(text), rules[1], rules) is None, name


def test_a_frame_its_name_sorts_is_not_read_on_a_load(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rules by SSE event name alone (the reference target described in YAML): after the first answer text only the
    end is read; reasoning before it, a status, citations and the end type as the gate types them."""
    http = load_config(DOCS / "http-target.rig.yaml").target.http
    assert http is not None and http.events is not None
    blocks = [("status", {"stage": "retrieving"}), ("token", {"text": "think", "kind": "reasoning"}),
              ("token", {"text": "", "kind": "answer"}), ("token", {"text": "An", "kind": "answer"})]
    blocks += [("token", {"text": f" piece {i}", "kind": "answer", "ts_ms": i}) for i in range(40)]
    blocks += [("citation", {"doc_id": "d", "page": 2}), ("unnamed-kind", {"x": 1}),
               ("done", {"state": "completed", "reason": "completed"})]
    stream = "".join(f"id: {i}\nevent: {name}\ndata: {json.dumps(data)}\n\n" for i, (name, data) in enumerate(blocks))
    chunks = [block.encode() + b"\n\n" for block in stream.split("\n\n") if block]
    sorter = EventSorter(http.events.stream)
    eager = [(e.event, e.id, e.data) for e in sorter.events(chunks)]
    read: list[str] = []
    loads = frames._loads
    monkeypatch.setattr(frames, "_loads", lambda text: read.append(text) or loads(text))
    assert _load_path(sorter, chunks) == eager
    read.clear()
    list(sorter.raw(chunks))
    assert len(read) == 5, read  # the tokens up to the answer's first text, a frame no rule names (to find none), the end


def test_what_a_shape_takes_for_a_string_a_json_reader_reads_as_one() -> None:
    """Every inside `_STRING` takes is a string orjson reads and that is not empty; every non-empty string either
    encoder writes is taken (random texts of quotes, backslashes, escape letters, hex digits, surrogate halves)."""
    alphabet = ['a', 'é', '中', '"', '\\', '/', 'b', 'n', 'u', '0', 'd', '8', 'D', 'c', 'f', 'F', '\x01', '\t',
                '\U0001F600', ' ']
    rng = random.Random(7)
    taken = 0
    for _ in range(40_000):
        inside = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        if _STRING.fullmatch(inside):
            taken += 1
            assert orjson.loads(f'"{inside}"') != "", inside
        text = inside or "x"
        for spelled in (json.dumps(text), json.dumps(text, ensure_ascii=False), orjson.dumps(text).decode()):
            assert _STRING.fullmatch(spelled[1:-1]), spelled
    assert taken > 5_000


def test_a_short_text_that_is_not_json_is_tried_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stream's sentinel (`[DONE]`) is text, not JSON: known after one try (no exception per run); a long text and
    JSON are read every time."""
    tried: list[str | bytes] = []
    loads = orjson.loads
    monkeypatch.setattr(orjson, "loads", lambda text: tried.append(text) or loads(text))
    monkeypatch.setattr(frames, "_NOT_JSON", {})
    long_text = "not json " * 10
    for _ in range(3):
        assert frames._loads("[DONE]") == "[DONE]"
        assert frames._loads(b"[DONE]\xff") == "[DONE]\ufffd"
        assert frames._loads(long_text) == long_text
        assert frames._loads('{"a": 1}') == {"a": 1}
    assert tried.count("[DONE]") == 1 and tried.count(b"[DONE]\xff") == 1
    assert tried.count(long_text) == 3 and tried.count('{"a": 1}') == 3
