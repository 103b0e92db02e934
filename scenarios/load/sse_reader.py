"""Reading a run's event stream from a FastHttpUser as it arrives, line by line.

Locust times only the headers of a streamed response; this reader stamps what a researcher waits for:
the first status, the first answer text (and the kind of the first text), and the terminal event. Token
payloads after the first answer token are not parsed, which keeps the reader cheap under load.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass


@dataclass
class StreamTimes:
    """Monotonic ns stamps of one streamed run (None where the event never came)."""

    first_status_ns: int | None = None
    first_text_ns: int | None = None
    first_text_kind: str | None = None
    first_answer_ns: int | None = None
    end_ns: int | None = None
    state: str | None = None
    reason: str | None = None
    answer_chars: int = 0
    events: int = 0
    last_id: int | None = None
    first_server_token_ms: float | None = None
    error: str | None = None


def _block(block: bytes) -> tuple[str, str | None, str] | None:
    """(event, id, data) of one event block; None for a block of comments or `retry` only."""
    name, event_id, data = "message", None, []
    seen = False
    for raw in block.decode("utf-8", "replace").splitlines():
        if not raw or raw.startswith(":"):
            continue
        field, _, value = raw.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "event":
            name, seen = value, True
        elif field == "data":
            data.append(value)
            seen = True
        elif field == "id":
            event_id, seen = value, True
    return (name, event_id, "\n".join(data)) if seen else None


def read_stream(response: object, times: StreamTimes | None = None) -> StreamTimes:
    """Consume an SSE response (a FastResponse opened with `stream=True`) to its terminal event.

    It reads one whole event block per call (the blank-line delimiter), which keeps the per-event cost
    low while still stamping each event the moment its block is complete.
    """
    times = times or StreamTimes()
    raw = getattr(response, "_response", None)
    if raw is None:
        raise TypeError("read_stream needs a FastHttpUser response opened with stream=True")
    sep = b"\n\n"
    first = True
    while True:
        try:
            if first:
                head = raw.readline(b"\n")
                if head.endswith(b"\r\n"):
                    sep = b"\r\n\r\n"
                rest = raw.readline(sep) if head.strip() else b""
                block = head + rest
                first = False
            else:
                block = raw.readline(sep)
        except Exception as exc:  # the connection broke: the run's end is unknown to this reader
            times.error = f"{type(exc).__name__}: {exc}"
            return times
        if not block:
            times.error = times.error or "stream closed before a terminal event"
            return times
        parsed = _block(block)
        if parsed is None:
            continue
        now = time.perf_counter_ns()
        name, event_id, payload = parsed
        times.events += 1
        if event_id:
            times.last_id = int(event_id)
        if name == "token":
            if times.first_answer_ns is None:
                data = json.loads(payload)
                kind = data.get("kind", "answer")
                if times.first_text_ns is None:
                    times.first_text_ns, times.first_text_kind = now, kind
                if kind == "answer":
                    times.first_answer_ns = now
                    times.first_server_token_ms = data.get("ts_ms")
                    times.answer_chars += len(data.get("text", ""))
            else:
                times.answer_chars += 1
        elif name == "status" and times.first_status_ns is None:
            times.first_status_ns = now
        elif name in ("done", "error"):
            data = json.loads(payload)
            times.end_ns, times.state, times.reason = now, data.get("state"), data.get("reason")
            _drain(raw)
            return times


def _drain(raw: object) -> None:
    """Read to the end of the body (the server closes it right after the terminal event), so the
    keep-alive connection goes back to the pool instead of being closed and opened again."""
    try:
        while raw.readline(b"\n\n"):  # type: ignore[attr-defined]
            pass
    except Exception:
        pass
