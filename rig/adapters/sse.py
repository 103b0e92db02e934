"""A small incremental parser for `text/event-stream` (used by the adapter and the Locust users)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class RawEvent:
    event: str = "message"
    id: str | None = None
    data_lines: list[str] = field(default_factory=list)

    @property
    def data(self) -> str:
        return "\n".join(self.data_lines)


class SseParser:
    """Feed decoded lines (without the newline); `feed` returns a complete event at each blank line."""

    def __init__(self) -> None:
        self._current = RawEvent()
        self._dirty = False
        self.last_id: str | None = None

    def feed(self, line: str) -> RawEvent | None:
        if line == "":
            if not self._dirty:
                return None
            event = self._current
            self._current = RawEvent()
            self._dirty = False
            if event.id is not None:
                self.last_id = event.id
            return event
        if line.startswith(":"):
            return None  # a comment (keep-alive)
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "event":
            self._current.event = value
        elif name == "data":
            self._current.data_lines.append(value)
        elif name == "id":
            self._current.id = value
        else:
            return None  # `retry` and unknown fields carry no event
        self._dirty = True
        return None
