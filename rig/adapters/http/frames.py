"""A run's stream as the rig's events: frames cut from bytes (SSE, NDJSON, JSON objects), sorted by rules.

Every frame is stamped when the bytes that completed it arrived (the rig's one clock), whatever the framing.
Rules with `event` are looked up by the SSE event name; the others are tried in order with their `when` test on
`{event, id, data}`. The first rule that matches decides; a frame no rule matches is not an event of the run; a
rule with `each` makes one event per element of a list (a references line → one citation each). With `end: close`
the stream's clean end is the run's end: the rig adds the terminal event itself, `completed` only when an answer
token came, else `failed/empty_answer`, marked `derived: stream_end` so nobody takes it for the target's word.
"""

from __future__ import annotations

import codecs
import json
import re
import time
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass
from itertools import chain
from typing import Any

import jmespath
import orjson

from rig.adapters.http.extract import Reader
from rig.adapters.http.functions import options as rule_options
from rig.adapters.http.shape import Shape, take
from rig.adapters.http.spec import EventRule, StreamSpec, compile_path
from rig.adapters.models import Event, TokenEvent, make_event
from rig.adapters.transport import TransportError
from rig.clock import now_ns
from rig.errors import TargetProtocolError
from rig.jsonvalue import ForeignJson
from rig.measure.sse import MAX_EVENT_BYTES, SAMPLE_BYTES, LineSplitter, RawEvent, SseParser, StreamTooLarge, read_events

MAX_TAKES = 3  # the token events a stream takes a shape from before it reads every one in full
DELIMITER = {"sse": b"\n\n", "ndjson": b"\n", "json": b"}"}  # where a block-reading transport may end a read


@dataclass(slots=True)
class Frame:
    """One unit of a stream: its name and id where the framing has them, its data, when it arrived."""

    event: str | None
    id: str | None
    data: Any
    recv_ns: int

    def context(self) -> ForeignJson:
        return {"event": self.event, "id": self.id, "data": self.data}


_NOT_JSON: dict[str | bytes, str] = {}  # short texts found not to be JSON (a stream's `[DONE]`): not tried again


def _loads(text: str | bytes) -> Any:
    """The JSON a frame's data holds, or its text where it is not JSON."""
    known = _NOT_JSON.get(text)
    if known is not None:
        return known
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        plain = text if isinstance(text, str) else text.decode("utf-8", "replace")
        if len(text) <= 64 and len(_NOT_JSON) < 256:  # the sentinels a stream repeats, never a stream's pieces
            _NOT_JSON[text] = plain
        return plain


def sse_frames(chunks: Iterable[bytes], *, max_event_bytes: int = MAX_EVENT_BYTES) -> Iterator[Frame]:
    for raw in read_events(chunks, max_event_bytes=max_event_bytes, max_line_bytes=max_event_bytes):
        yield Frame(raw.event, raw.id, _loads(raw.data) if raw.data else {}, raw.recv_ns)


def ndjson_frames(chunks: Iterable[bytes], *, max_event_bytes: int = MAX_EVENT_BYTES) -> Iterator[Frame]:
    """One JSON value a line; a line past `max_event_bytes` is `StreamTooLarge`."""
    lines = LineSplitter(max_event_bytes, "an NDJSON line")
    for chunk in chunks:
        stamp = now_ns()
        for line in lines.feed(chunk):
            if line.strip():
                yield Frame(None, None, _loads(line), stamp)
    rest = lines.rest()
    if rest.strip():
        yield Frame(None, None, _loads(rest), now_ns())


_OUTSIDE = re.compile(r'["\[\]{}]')
_INSIDE = re.compile(r'["\\]')


class _ValueEnd:
    """Finds where a JSON object, array or string that starts a buffer ends, reading each byte once across calls
    (the buffer only grows at its end until the value is cut off)."""

    __slots__ = ("pos", "depth", "in_string")

    def __init__(self) -> None:
        self.pos, self.depth, self.in_string = 0, 0, False

    def find(self, text: str) -> int | None:
        """The index just past the value, or None while it is incomplete."""
        i = self.pos
        while True:
            m = (_INSIDE if self.in_string else _OUTSIDE).search(text, i)
            if m is None:
                self.pos = len(text)
                return None
            i = m.end()
            ch = m.group()
            if self.in_string:
                if ch == "\\":
                    if i >= len(text):  # the escaped character has not come yet: look again from the backslash
                        self.pos = i - 1
                        return None
                    i += 1
                    continue
                self.in_string = False
                if self.depth == 0:
                    return self._done(i)
            elif ch == '"':
                self.in_string = True
            elif ch in "[{":
                self.depth += 1
            else:
                self.depth -= 1
                if self.depth == 0:
                    return self._done(i)

    def _done(self, end: int) -> int:
        self.pos, self.depth, self.in_string = 0, 0, False
        return end


def json_frames(chunks: Iterable[bytes], *, max_event_bytes: int = MAX_EVENT_BYTES) -> Iterator[Frame]:
    """Concatenated JSON values, or the items of one streamed top-level array (`[{…},{…}]`); linear in the input,
    and a value that passes `max_event_bytes` unfinished is `StreamTooLarge`."""
    buffer, opened, scan = "", False, _ValueEnd()
    decode = codecs.getincrementaldecoder("utf-8")("replace").decode  # a character split between chunks stays whole
    for chunk in chunks:
        stamp = now_ns()
        buffer += decode(chunk)
        while True:
            if scan.pos == 0:  # between values: drop separators and the wrapping array's brackets
                buffer = buffer.lstrip(" \t\r\n,")
                if not opened and buffer.startswith("["):
                    opened, buffer = True, buffer[1:]
                    continue
                if opened and buffer.startswith("]"):
                    buffer = buffer[1:]
                    continue
            if not buffer:
                break
            if buffer[0] in '{["':
                end = scan.find(buffer)
            else:  # a bare number, true, false or null: short, decoded where it stands
                try:
                    end = json.JSONDecoder().raw_decode(buffer)[1]
                except json.JSONDecodeError:
                    end = None
            if end is None:
                if len(buffer) > max_event_bytes:
                    raise StreamTooLarge("one JSON value of the stream", max_event_bytes, len(buffer),
                                         buffer[:SAMPLE_BYTES].encode())
                break  # incomplete: wait for more bytes
            value, buffer = _loads(buffer[:end]), buffer[end:]
            yield Frame(None, None, value, stamp)
    if buffer.strip(" \t\r\n,]"):
        raise TargetProtocolError(f"the stream ended inside a JSON value: {buffer[:80]!r}")


FRAMERS = {"sse": sse_frames, "ndjson": ndjson_frames, "json": json_frames}


class _Rule:
    __slots__ = ("type", "when", "when_data", "each", "data", "name", "lazy")

    def __init__(self, rule: EventRule, index: int) -> None:
        self.type = rule.type
        self.when = compile_path(rule.when) if rule.when else None
        under = getattr(self.when, "under", None)
        self.when_data = under("data") if under is not None else None  # the test read from the data alone
        self.each = compile_path(rule.each) if rule.each else None
        self.data = Reader(rule.data) if rule.data is not None else None
        self.name = f"{rule.event or ''}#{index}"  # a raw event's name: the rule that sorted it
        self.lazy = self.each is None and self.type not in ("done", "error", "ignore")  # typed later, or never


Deferred = tuple  # (rule, frame name, frame id, frame data, raw id, opts): a frame sorted, typed only when asked
# An SSE frame's data is None there: it is read again from the event's own text when typed. Its parsed form dies as
# soon as the frame is sorted, so a run in flight holds its hundreds of untyped tokens as a string each, not as a
# tree of dicts each. A frame sorted unread, whose id and data are its own, holds a shorter one its stream's frames of
# the same rule and name share: (rule, frame name, opts) (`_Unread`).


class _Unread(dict[tuple[Any, str], Deferred]):
    """A stream's deferral of each rule and frame name whose frames are sorted unread, made once: (rule, name, opts),
    the id and data being the frame's own. Tokens share it rather than each holding a tuple until its run ends."""

    def __init__(self, opts: Any) -> None:
        super().__init__()
        self.opts = opts

    def __missing__(self, key: tuple[Any, str]) -> Deferred:
        self[key] = deferred = (*key, self.opts)
        return deferred


def typed_later(raw: RawEvent) -> Event:
    """The rig's event of a frame `EventSorter.raw` deferred: what `EventSorter.events` makes of it, same stamp."""
    if len(raw.deferred) == 3:  # sorted unread (`_Unread`)
        (rule, name, opts), frame_id, data, raw_id = raw.deferred, raw.id, None, raw.id
    else:
        rule, name, frame_id, data, raw_id, opts = raw.deferred
    if data is None:
        data = _loads(raw.data) if raw.data else {}
    read = data if rule.data is None else rule.data.read({"event": name, "id": frame_id, "data": data}, opts)
    return make_event(rule.type, _int(raw_id), read if isinstance(read, dict) else {"value": read}, raw.recv_ns)


class EventSorter:
    """A stream spec, compiled: frames in, the rig's typed events out (ending at `done` or `error`)."""

    def __init__(self, spec: StreamSpec) -> None:
        self.format = spec.format
        self.end = spec.end
        self.after_end = spec.after_end
        self.drain_s = spec.drain_s
        self._frames = FRAMERS[spec.format]
        self._id = compile_path(spec.id) if spec.id else None
        self._by_name: dict[str, list[_Rule]] = {}
        self._any: list[_Rule] = []
        for index, rule in enumerate(spec.events):
            compiled = _Rule(rule, index)
            (self._by_name.setdefault(rule.event, []) if rule.event is not None else self._any).append(compiled)
        self._tried: dict[str | None, tuple[_Rule, ...]] = {}  # per frame name, the rules tried in order (built once)
        # a load defers a frame its name alone sorts without reading its data: the first rule tried tests nothing
        self._named = {name: self._untested(self._rules(name)) for name in self._by_name}
        self._unnamed = self._untested(tuple(self._any))  # a name no rule names: the rules without one

    @staticmethod
    def _untested(rules: tuple[_Rule, ...]) -> _Rule | None:
        """The rule that sorts every frame these rules are tried on, whatever its data, where it is deferred."""
        first = rules[0] if rules else None
        return first if first is not None and first.when is None and first.lazy else None

    def _rules(self, name: str | None) -> tuple[_Rule, ...]:
        rules = self._tried[name] = tuple(self._by_name.get(name or "", [])) + tuple(self._any)
        return rules

    def _match(self, name: str | None, frame_id: str | None, data: Any, opts: jmespath.Options
               ) -> tuple[_Rule, ForeignJson | None] | None:
        """The first rule that sorts a frame, and the `{event, id, data}` built to test it (None when no rule needed
        it: a rule that reads only the data is tested on the data — this runs for every frame of every stream)."""
        ctx: ForeignJson | None = None
        rules = self._tried.get(name)
        for rule in self._rules(name) if rules is None else rules:
            test = rule.when_data
            if test is not None:
                if not test.search(data):
                    continue
            elif rule.when is not None:
                ctx = ctx or {"event": name, "id": frame_id, "data": data}
                if not rule.when.search(ctx, options=opts):
                    continue
            return rule, ctx
        return None

    def events(self, chunks: Iterable[bytes], opts: jmespath.Options | None = None, *,
               max_event_bytes: int = MAX_EVENT_BYTES) -> Generator[Event, None, None]:
        """The rig's events of one stream, each stamped when its frame arrived; stops after `done`/`error` (or, with
        `end: close`, at the stream's clean end). `opts` binds the rules' functions to the request's variables."""
        opts = opts or rule_options()
        answered = False
        frames = iter(self._frames(chunks, max_event_bytes=max_event_bytes))
        for frame in frames:
            found = self._match(frame.event, frame.id, frame.data, opts)
            if found is None:
                continue
            rule, ctx = found
            if rule.type == "ignore":
                continue
            ctx = ctx or frame.context()
            raw_id = frame.id if self._id is None else self._id.search(ctx, options=opts)
            for data in self._data(rule, frame, ctx, opts):
                event = make_event(rule.type, _int(raw_id), data, frame.recv_ns)
                answered = answered or (isinstance(event, TokenEvent) and event.kind == "answer" and bool(event.text))
                yield event
            if rule.type in ("done", "error"):
                if self.after_end == "drain":
                    _drain(frames, self.drain_s)
                return
        if self.end == "close":
            yield stream_end(answered)

    def raw(self, chunks: Iterable[bytes], opts: jmespath.Options | None = None, *,
            max_event_bytes: int = MAX_EVENT_BYTES) -> Generator[RawEvent, None, None]:
        """The same events for the load path, sorted but typed only where needed: each frame matched to its rule
        (its raw name, `event#rule`, says which) and its data read later (`typed_later`) — but an answer's tokens up to
        the first with text, lists (`each`) and the end, typed as `events` types them. Same stamps, end and drain.

        Runs for every token a load reads: an answer piece that fits its stream's shape (`shape.py`) and a frame its
        SSE name alone sorts (`_untested`) are deferred unread: the parser's own event, one deferral per rule and name."""
        opts = opts or rule_options()
        answered, takes = False, 0
        sse = self.format == "sse"
        batches: Iterator[Iterable[Any]] = map(  # each chunk's events, parsed with no generator between
            SseParser(max_event_bytes=max_event_bytes, max_line_bytes=max_event_bytes).feed, chunks) if sse \
            else map(_alone, self._frames(chunks, max_event_bytes=max_event_bytes))
        by_id, named, unnamed = self._id, self._named, self._unnamed
        shape: Shape | None = None  # an answer piece's text around its string, once one is sorted (rig...shape)
        unread = _Unread(opts)
        for frame in chain.from_iterable(batches):
            name = frame.event
            if shape is not None and shape.fits(name, frame.data):  # sorted unread: an answer piece like the last
                frame.event, frame.deferred = shape.rule.name, shape.deferred
                yield frame
                continue
            frame_id = frame.id
            rule = named.get(name, unnamed) if sse and by_id is None else None  # or unread: a frame its name sorts
            if rule is not None and (answered or rule.type != "token"):
                frame.event, frame.deferred = rule.name, unread[rule, name]
                yield frame
                continue
            data = (_loads(frame.data) if frame.data else {}) if sse else frame.data
            found = self._match(name, frame_id, data, opts)
            if found is None or found[0].type == "ignore":
                continue  # no rule sorts it (not an event of the run), or one that drops it
            rule, ctx = found
            raw_id = frame_id if by_id is None else by_id.search(
                ctx or {"event": name, "id": frame_id, "data": data}, options=opts)
            if rule.lazy and (answered or rule.type != "token"):
                if sse:  # the parser's own event, renamed for its rule; its data read again from its text if typed
                    frame.event, frame.deferred = rule.name, unread[rule, name] if by_id is None else \
                        (rule, name, frame_id, None, raw_id, opts)
                    if shape is None and answered and by_id is None and takes < MAX_TAKES and rule.type == "token":
                        takes, shape = takes + 1, take(name, frame.data, data, rule, self._tried[name], unread[rule, name])
                    yield frame
                else:
                    yield RawEvent(rule.name, frame_id, "", frame.recv_ns, None,
                                   (rule, name, frame_id, data, raw_id, opts))
                continue
            whole = Frame(name, frame_id, data, frame.recv_ns)
            for item in self._data(rule, whole, ctx or whole.context(), opts):
                event = make_event(rule.type, _int(raw_id), item, frame.recv_ns)
                answered = answered or (isinstance(event, TokenEvent) and event.kind == "answer" and bool(event.text))
                yield RawEvent(rule.name, frame_id, "", frame.recv_ns, event)
            if rule.type in ("done", "error"):
                if self.after_end == "drain":
                    _drain(batches, self.drain_s)
                return
        if self.end == "close":
            end = stream_end(answered)
            yield RawEvent(end.event, None, "", end.recv_ns, end)

    @staticmethod
    def _data(rule: _Rule, frame: Frame, ctx: ForeignJson, opts: jmespath.Options) -> Iterator[ForeignJson]:
        if rule.each is None:
            items: list[Any] = [None]
        else:
            listed = rule.each.search(ctx, options=opts)
            items = listed if isinstance(listed, list) else []
        for item in items:
            if rule.data is None:
                data = frame.data if item is None else item
            else:
                data = rule.data.read(ctx if item is None else {**ctx, "item": item}, opts)
            yield data if isinstance(data, dict) else {"value": data}


def _alone(frame: Frame) -> tuple[Frame]:
    return (frame,)


def _drain(frames: Iterator[Any], seconds: float) -> None:
    """Read what follows the terminal event until the target closes the stream, a broken stream, or `seconds`."""
    began = time.monotonic()
    try:
        for _ in frames:
            if time.monotonic() - began > seconds:
                return
    except TransportError:
        return


def stream_end(answered: bool) -> Event:
    """The terminal event the rig adds when a stream that has none closed cleanly (`end: close`)."""
    if answered:
        return make_event("done", None, {"state": "completed", "reason": "completed", "derived": "stream_end"}, now_ns())
    return make_event("error", None, {"state": "failed", "reason": "empty_answer", "derived": "stream_end"}, now_ns())


def _int(value: Any) -> int | None:
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None
