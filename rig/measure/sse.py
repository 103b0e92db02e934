"""The one reader of `text/event-stream`: bytes in, whole events out, each stamped when it arrived.

It takes chunks of any size (a socket read, a line, one event block) so it serves every transport: the
adapters' httpx streams and Locust's gevent sockets alike. An event's receive time is the moment the
chunk that completed it arrived, on the rig's one monotonic clock (`rig.clock.now_ns`).

It is linear in its input and bounded: a line with no end past `max_line_bytes`, or one event whose data passes
`max_event_bytes`, is the target's protocol error (`StreamTooLarge`), carrying only a sample of what came.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from rig.clock import now_ns
from rig.errors import TargetProtocolError

MAX_EVENT_BYTES = 8 * 2**20  # one event's data, every line of it together
MAX_LINE_BYTES = 8 * 2**20  # bytes with no line end
SAMPLE_BYTES = 512  # what the error keeps of an oversized event or line
# one block in the usual spelling: an optional id (before or after the name), an optional name, one data line
_USUAL = re.compile(r"(?:id: ([^\n]*)\n)?(?:event: ([^\n]*)\n)?(?:id: ([^\n]*)\n)?data: ([^\n]*)\n\n")


class StreamTooLarge(TargetProtocolError):
    """An event or a line of the stream passed the reader's cap: the protocol error of a target that streams
    without bound. `exchange` holds the cap, the size reached and a sample, never the whole."""

    def __init__(self, what: str, cap: int, size: int, sample: bytes) -> None:
        super().__init__(f"{what} passed {cap:,} bytes ({size:,} read) without an end",
                         exchange={"cap_bytes": cap, "read_bytes": size,
                                   "sample": sample[:SAMPLE_BYTES].decode("utf-8", "replace")})


@dataclass(slots=True)
class RawEvent:
    """One complete event as it arrived: its name, id and data (unparsed), when it was received, and — for an
    adapter that reads its stream otherwise — the typed event it already made (`parsed`), or what it needs to make
    it later (`deferred`: the adapter's own, read by its `typed()`)."""

    event: str
    id: str | None
    data: str
    recv_ns: int
    parsed: Any = None
    deferred: Any = None


class LineSplitter:
    """Bytes in, whole lines out (without their `\\n`), linear in the input; a line past `max_bytes` raises."""

    __slots__ = ("_pending", "_size", "max_bytes", "what")

    def __init__(self, max_bytes: int = MAX_LINE_BYTES, what: str = "a stream line") -> None:
        self._pending: list[bytes] = []
        self._size = 0
        self.max_bytes = max_bytes
        self.what = what

    @property
    def holding(self) -> bool:
        """Whether part of a line waits for its end."""
        return bool(self._pending)

    def feed(self, chunk: bytes) -> list[bytes]:
        """The lines `chunk` completed; the rest waits, counted against the cap."""
        if chunk.find(b"\n") < 0:  # not bytes' `in`: it raises and clears a TypeError on every call
            self._hold(chunk)
            return []
        lines = chunk.split(b"\n")
        last = lines.pop()
        if self._pending:
            lines[0] = b"".join(self._pending) + lines[0]
            self._pending, self._size = [], 0
        if len(lines[0]) > self.max_bytes:
            raise StreamTooLarge(self.what, self.max_bytes, len(lines[0]), lines[0])
        for line in lines[1:]:
            if len(line) > self.max_bytes:
                raise StreamTooLarge(self.what, self.max_bytes, len(line), line)
        self._hold(last)
        return lines

    def rest(self) -> bytes:
        """What came after the last line end (at the stream's end)."""
        rest = b"".join(self._pending)
        self._pending, self._size = [], 0
        return rest

    def _hold(self, piece: bytes) -> None:
        if not piece:
            return
        self._pending.append(piece)
        self._size += len(piece)
        if self._size > self.max_bytes:
            raise StreamTooLarge(self.what, self.max_bytes, self._size, self._pending[0])


class SseParser:
    """Incremental parser: `feed(chunk, recv_ns)` returns the events the chunk completed."""

    __slots__ = ("_lines", "_name", "_id", "_data", "_size", "_dirty", "last_id", "max_event_bytes")

    def __init__(self, *, max_event_bytes: int = MAX_EVENT_BYTES, max_line_bytes: int = MAX_LINE_BYTES) -> None:
        self._lines = LineSplitter(max_line_bytes, "an event-stream line")
        self._name = "message"
        self._id: str | None = None
        self._data: list[str] = []
        self._size = 0
        self._dirty = False
        self.last_id: str | None = None
        self.max_event_bytes = max_event_bytes

    def feed(self, chunk: bytes, recv_ns: int | None = None) -> list[RawEvent]:
        """Parse `chunk`; a partial line waits for the next chunk."""
        if not chunk:
            return []
        stamp = now_ns() if recv_ns is None else recv_ns
        if chunk[-2:] == b"\n\n" and chunk[:6] == b"data: " and not self._dirty and not self._lines._pending \
                and len(chunk) <= self.max_event_bytes:
            # one whole event of one data line, as a block-reading transport hands most tokens: no other line end
            # in it (a CR or LF byte is always that character in UTF-8, whatever surrounds it); tested by slices
            # and on the text, which cost less than bytes' own `in`, `find` and `startswith`
            text = chunk[6:-2].decode("utf-8", "replace")
            if "\n" not in text and "\r" not in text:
                return [RawEvent("message", None, text, stamp)]
        if chunk[-2:] == b"\n\n" and chunk.find(b"\r") < 0 and len(chunk) <= self.max_event_bytes:
            # whole event blocks, as a block-reading transport hands them; an event begun in an earlier chunk is
            # finished line by line first
            if not self._lines.holding and not self._dirty:
                return self._blocks(chunk, stamp)
            cut = chunk.find(b"\n\n") + 2
            return self._by_line(chunk[:cut], stamp) + self._blocks(chunk[cut:], stamp)
        return self._by_line(chunk, stamp)

    def _by_line(self, chunk: bytes, stamp: int) -> list[RawEvent]:
        out: list[RawEvent] = []
        for raw in self._lines.feed(chunk):
            event = self._line(raw[:-1] if raw.endswith(b"\r") else raw, stamp)
            if event is not None:
                out.append(event)
        return out

    def _blocks(self, chunk: bytes, stamp: int) -> list[RawEvent]:
        """The events of complete blocks, decoded once. Blocks in the usual spelling (`_USUAL`: one line each of
        `id`, `event`, `data`, a space after the colon) are matched in one pass; a chunk with any other block is
        read field by field — the same events either way."""
        text = chunk.decode("utf-8", "replace")
        out: list[RawEvent] = []
        at = 0
        for m in _USUAL.finditer(text):
            if m.start() != at:
                return self._any_blocks(text, stamp)
            at = m.end()
            before, name, after, data = m.groups()
            event_id = after if after is not None else before  # the last id line counts, as line by line
            out.append(RawEvent(name if name is not None else "message", event_id, data, stamp))
        if at != len(text):
            return self._any_blocks(text, stamp)
        for e in reversed(out):
            if e.id is not None:
                self.last_id = e.id
                break
        return out

    def _any_blocks(self, text: str, stamp: int) -> list[RawEvent]:
        """Complete blocks in any spelling: comments (an empty field), `retry` and unknown fields carry no event."""
        out: list[RawEvent] = []
        for block in text.split("\n\n")[:-1]:
            name, event_id, data, seen = "message", None, None, False
            for line in block.split("\n"):
                field, _, value = line.partition(":")
                if value[:1] == " ":
                    value = value[1:]
                if field == "data":
                    data = value if data is None else f"{data}\n{value}"
                elif field == "event":
                    name = value
                elif field == "id":
                    event_id = value
                else:
                    continue
                seen = True
            if seen:
                if event_id is not None:
                    self.last_id = event_id
                out.append(RawEvent(name, event_id, data or "", stamp))
        return out

    def _line(self, raw: bytes, stamp: int) -> RawEvent | None:
        if not raw:
            if not self._dirty:
                return None
            event = RawEvent(self._name, self._id, "\n".join(self._data), stamp)
            if self._id is not None:
                self.last_id = self._id
            self._name, self._id, self._data, self._size, self._dirty = "message", None, [], 0, False
            return event
        if raw[:1] == b":":
            return None  # a comment (keep-alive)
        name, _, value = raw.decode("utf-8", "replace").partition(":")
        if value[:1] == " ":
            value = value[1:]
        if name == "data":
            self._size += len(raw)
            if self._size > self.max_event_bytes:
                raise StreamTooLarge("one event's data", self.max_event_bytes, self._size,
                                     ("\n".join(self._data[:1]) or value).encode())
            self._data.append(value)
        elif name == "event":
            self._name = value
        elif name == "id":
            self._id = value
        else:
            return None  # `retry` and unknown fields carry no event
        self._dirty = True
        return None


def read_events(chunks: Iterable[bytes], *, max_event_bytes: int = MAX_EVENT_BYTES,
                max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[RawEvent]:
    """Events from a stream of byte chunks, each stamped with the arrival of the chunk that completed it."""
    parser = SseParser(max_event_bytes=max_event_bytes, max_line_bytes=max_line_bytes)
    for chunk in chunks:
        stamp = now_ns()
        yield from parser.feed(chunk, stamp)
