"""Streams that arrive over socket.io instead of SSE: one connection per account, events sorted by message.

Some assistants (Open WebUI among them) run a chat turn as a background task and push its progress to
the user's socket.io room. `ChatSocket` keeps one such connection per token and hands each message's events,
stamped on arrival with the rig's clock, to whoever waits for that message. Events of a message nobody
waits for yet are kept (bounded), so a reader that starts after the turn was accepted loses nothing.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import Any

from rig.clock import now_ns
from rig.errors import TargetUnreachable
from rig.jsonvalue import ForeignJson

MAX_PENDING = 2000  # events kept for messages nobody reads yet
_CLOSED = object()


class ChatSocket:
    """A socket.io connection of one account; `messages(message_id)` yields that message's events."""

    def __init__(self, base_url: str, token: str, *, socketio_path: str = "/ws/socket.io",
                 event_name: str = "events") -> None:
        import socketio  # python-socketio: comes with Locust

        self.base_url = base_url
        self._token = token
        self._path = socketio_path
        self._client = socketio.Client(reconnection=False)
        self._queues: dict[str, queue.Queue[Any]] = {}
        self._pending: dict[str, list[tuple[int, ForeignJson]]] = {}
        self._lock = threading.Lock()
        self._client.on(event_name, self._on_event)
        self._client.on("disconnect", self._on_disconnect)

    def connect(self, timeout_s: float = 15.0) -> ChatSocket:
        try:
            self._client.connect(self.base_url, socketio_path=self._path, auth={"token": self._token},
                                 transports=["websocket"], wait_timeout=timeout_s)
        except Exception as exc:  # socketio.exceptions.ConnectionError and transport errors
            raise TargetUnreachable(self.base_url, f"socket.io connect failed: {exc}") from None
        return self

    @property
    def sid(self) -> str:
        return str(self._client.get_sid() or "")

    @property
    def connected(self) -> bool:
        return bool(self._client.connected)

    def expect(self, message_id: str) -> None:
        """Start keeping `message_id`'s events (call before the turn is sent)."""
        with self._lock:
            q = self._queues.setdefault(message_id, queue.Queue())
            for item in self._pending.pop(message_id, []):
                q.put(item)

    def expects(self, message_id: str) -> bool:
        """True when this connection keeps `message_id`'s events (a turn it sent, not yet read)."""
        with self._lock:
            return message_id in self._queues

    def events(self, message_id: str, timeout_s: float) -> Iterator[tuple[int, ForeignJson]]:
        """(receive time, payload) of each event of the message, until the caller stops or `timeout_s` of silence."""
        self.expect(message_id)
        q = self._queues[message_id]
        try:
            while True:
                try:
                    item = q.get(timeout=timeout_s)
                except queue.Empty:
                    raise TargetUnreachable(self.base_url, f"no event for {timeout_s:.0f}s on the socket") from None
                if item is _CLOSED:
                    raise TargetUnreachable(self.base_url, "the socket.io connection closed mid-stream")
                yield item
        finally:
            with self._lock:
                self._queues.pop(message_id, None)

    def _on_event(self, data: ForeignJson) -> None:
        stamp = now_ns()
        message_id = str((data or {}).get("message_id") or "")
        with self._lock:
            q = self._queues.get(message_id)
            if q is not None:
                q.put((stamp, data))
                return
            if sum(len(v) for v in self._pending.values()) < MAX_PENDING:
                self._pending.setdefault(message_id, []).append((stamp, data))

    def _on_disconnect(self, *_: Any) -> None:
        with self._lock:
            for q in self._queues.values():
                q.put(_CLOSED)

    def close(self) -> None:
        try:
            self._client.disconnect()
        except Exception:  # already gone
            pass
