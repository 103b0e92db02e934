"""The one reader of `text/event-stream`: bytes in, whole events out, each stamped when it arrived.

It takes chunks of any size (a socket read, a line, one event block) so it serves every transport: the
adapters' httpx streams and Locust's gevent sockets alike. An event's receive time is the moment the
chunk that completed it arrived, on the rig's one monotonic clock (`rig.clock.now_ns`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from rig.clock import now_ns


@dataclass(slots=True)
class RawEvent:
    """One complete event as it arrived: its name, id and data (unparsed), when it was received, and — for an
    adapter whose stream is not SSE — the typed event it already made (`parsed`)."""

    event: str
    id: str | None
    data: str
    recv_ns: int
    parsed: Any = None


class SseParser:
    """Incremental parser: `feed(chunk, recv_ns)` returns the events the chunk completed."""

    __slots__ = ("_buffer", "_name", "_id", "_data", "_dirty", "last_id")

    def __init__(self) -> None:
        self._buffer = b""
        self._name = "message"
        self._id: str | None = None
        self._data: list[str] = []
        self._dirty = False
        self.last_id: str | None = None

    def feed(self, chunk: bytes, recv_ns: int | None = None) -> list[RawEvent]:
        """Parse `chunk`; a partial line waits for the next chunk."""
        if not chunk:
            return []
        stamp = now_ns() if recv_ns is None else recv_ns
        if not self._buffer and not self._dirty and chunk.endswith(b"\n\n") and b"\r" not in chunk:
            return self._blocks(chunk, stamp)  # whole event blocks, as a block-reading transport hands them
        lines = (self._buffer + chunk).split(b"\n")
        self._buffer = lines.pop()
        out: list[RawEvent] = []
        for raw in lines:
            event = self._line(raw[:-1] if raw.endswith(b"\r") else raw, stamp)
            if event is not None:
                out.append(event)
        return out

    def _blocks(self, chunk: bytes, stamp: int) -> list[RawEvent]:
        """The events of complete blocks, decoded once: the same fields as line by line, fewer steps."""
        out: list[RawEvent] = []
        for block in chunk.decode("utf-8", "replace").split("\n\n")[:-1]:
            name, event_id, data, seen = "message", None, [], False
            for line in block.split("\n"):
                if not line or line[0] == ":":
                    continue
                field, _, value = line.partition(":")
                if value[:1] == " ":
                    value = value[1:]
                if field == "data":
                    data.append(value)
                elif field == "event":
                    name = value
                elif field == "id":
                    event_id = value
                else:
                    continue  # `retry` and unknown fields carry no event
                seen = True
            if seen:
                if event_id is not None:
                    self.last_id = event_id
                out.append(RawEvent(name, event_id, "\n".join(data), stamp))
        return out

    def _line(self, raw: bytes, stamp: int) -> RawEvent | None:
        if not raw:
            if not self._dirty:
                return None
            event = RawEvent(self._name, self._id, "\n".join(self._data), stamp)
            if self._id is not None:
                self.last_id = self._id
            self._name, self._id, self._data, self._dirty = "message", None, [], False
            return event
        if raw[:1] == b":":
            return None  # a comment (keep-alive)
        name, _, value = raw.decode("utf-8", "replace").partition(":")
        if value[:1] == " ":
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._name = value
        elif name == "id":
            self._id = value
        else:
            return None  # `retry` and unknown fields carry no event
        self._dirty = True
        return None


def read_events(chunks: Iterable[bytes]) -> Iterator[RawEvent]:
    """Events from a stream of byte chunks, each stamped with the arrival of the chunk that completed it."""
    parser = SseParser()
    for chunk in chunks:
        stamp = now_ns()
        yield from parser.feed(chunk, stamp)
