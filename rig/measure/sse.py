"""The one reader of `text/event-stream`: bytes in, whole events out, each stamped when it arrived.

It takes chunks of any size (a socket read, a line, one event block) so it serves every transport: the
adapters' httpx streams and Locust's gevent sockets alike. An event's receive time is the moment the
chunk that completed it arrived, on the rig's one monotonic clock (`rig.clock.now_ns`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from rig.clock import now_ns


@dataclass(slots=True)
class RawEvent:
    """One complete server-sent event: its name, id and data lines joined, and when it was received."""

    event: str
    id: str | None
    data: str
    recv_ns: int


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
        lines = (self._buffer + chunk).split(b"\n")
        self._buffer = lines.pop()
        out: list[RawEvent] = []
        for raw in lines:
            event = self._line(raw[:-1] if raw.endswith(b"\r") else raw, stamp)
            if event is not None:
                out.append(event)
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
