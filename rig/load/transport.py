"""The adapter's transport under load: requests go through a Locust user's own HTTP client.

So Locust's request statistics are the adapter's real requests, each named by its operation (`ask`,
`events`, `run` …), and a status the user expects (a 409 for a resume with no checkpoint) does not count
as a failure. A stream is read in whole event blocks (up to the last blank line that arrived), which keeps reading
cheap — blocks that arrived together cost one read — and stamps every event the moment its block is complete; a
block that grows past `max_block_bytes` without its end is the target's protocol error (`StreamTooLarge`), never
memory without bound.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import gevent

from rig.adapters.transport import Reply, StreamReply, Transport, TransportError
from rig.errors import RigError
from rig.measure.sse import MAX_EVENT_BYTES, SAMPLE_BYTES, StreamTooLarge

DRAIN_S = 1.0  # how long a stream left after its last event is read on, to keep the connection
DRAIN_BYTES = 1 << 20  # and how much of it, at most
RECV_BYTES = 65536  # the most one read takes off the socket: what has arrived, up to this


class LocustTransport(Transport):
    """Sends through `client` (a FastHttpUser's `FastHttpSession`)."""

    def __init__(self, client: Any, *, max_block_bytes: int = MAX_EVENT_BYTES) -> None:
        self.client = client
        self.max_block_bytes = max_block_bytes
        self._expected: frozenset[int] = frozenset()

    @contextmanager
    def expecting(self, *statuses: int) -> Iterator[None]:
        before = self._expected
        self._expected = before | frozenset(statuses)
        try:
            yield
        finally:
            self._expected = before

    def _judge(self, resp: Any) -> int:
        """Mark the request in Locust's statistics; raise TransportError when no answer came."""
        status = int(resp.status_code or 0)
        if status == 0:
            error = getattr(resp, "error", None) or "no answer"
            resp.failure(f"{type(error).__name__}: {error}" if isinstance(error, Exception) else str(error))
            raise TransportError(f"{type(error).__name__}: {error}" if isinstance(error, Exception) else str(error))
        if status >= 400 and status not in self._expected:
            resp.failure(f"HTTP {status}")
        else:
            resp.success()
        return status

    def send(self, method: str, path: str, *, op: str, headers: dict[str, str], body: bytes | None = None,
             timeout_s: float | None = None) -> Reply:
        try:
            with self.client.request(method, path, name=op, data=body, headers=headers, catch_response=True) as resp:
                status = self._judge(resp)
                try:
                    content = resp.content or b""
                except Exception as exc:  # the body broke off after the headers
                    resp.failure(f"{type(exc).__name__}: {exc}")
                    raise TransportError(f"body cut: {type(exc).__name__}: {exc}") from None
                reply = Reply(status, _headers(resp), content)
        finally:
            self.client.cookiejar.clear()  # identity is always the Auth passed in
        return reply

    @contextmanager
    def stream(self, method: str, path: str, *, op: str, headers: dict[str, str],
               timeout_s: float | None = None, body: bytes | None = None,
               delimiter: bytes = b"\n\n") -> Iterator[StreamReply]:
        with self.client.request(method, path, name=op, headers=headers, data=body, stream=True,
                                 catch_response=True) as resp:
            status = self._judge(resp)
            raw = stream_reader(resp)

            def chunks() -> Iterator[bytes]:
                try:
                    sep, cap = delimiter, self.max_block_bytes
                    if delimiter == b"\n\n" and crlf_lines(raw, cap):
                        sep = b"\r\n\r\n"
                    while block := read_blocks(raw, sep, cap):
                        yield block
                except StreamTooLarge:
                    raise
                except Exception as exc:  # reset, closed, timed out: the stream broke
                    raise TransportError(f"{type(exc).__name__}: {exc}") from None

            try:
                yield StreamReply(status, _headers(resp), chunks)
            finally:
                _finish(raw)
                self.client.cookiejar.clear()


def read_blocks(raw: Any, sep: bytes, cap: int) -> bytes:
    """The stream's next complete blocks: every byte that has arrived up to and including the last `sep` in them
    (what is left, then b"", at its end). Read as geventhttpclient's own `readline` reads — its body buffer, fed from
    its socket — but ending at the last block that is whole rather than the first, so blocks that arrived together
    cost one read, and each is stamped by the arrival that completed it; looking only at the new bytes each time,
    and bounded: a block past `cap` bytes without its end is StreamTooLarge."""
    buf = raw._body_buffer
    start = 0
    while True:
        at = buf.rfind(sep, max(0, start - len(sep) + 1))
        if at >= 0:
            end = at + len(sep)
            blocks = bytes(buf[:end])
            del buf[:end]
            return blocks
        if len(buf) > cap:
            raise StreamTooLarge("one event of the stream", cap, len(buf), bytes(buf[:SAMPLE_BYTES]))
        start = len(buf)
        if raw.message_complete:
            rest = bytes(buf)
            del buf[:]
            return rest
        _fill(raw)


def crlf_lines(raw: Any, cap: int) -> bool:
    """Whether the stream's lines end in CRLF: read until its first line end has arrived (nothing is consumed)."""
    buf = raw._body_buffer
    while True:
        at = buf.find(b"\n")
        if at >= 0:
            return at > 0 and buf[at - 1] == 13
        if len(buf) > cap:
            raise StreamTooLarge("one event of the stream", cap, len(buf), bytes(buf[:SAMPLE_BYTES]))
        if raw.message_complete:
            return False
        _fill(raw)


def _fill(raw: Any) -> None:
    """Feed the response what has arrived on its socket (up to `RECV_BYTES`)."""
    sock = raw._sock
    if sock is None:
        raise TransportError("connection closed")
    try:
        raw.feed(sock.recv(max(raw.block_size, RECV_BYTES)))
    except BaseException:
        raw.release()
        raise


def stream_reader(resp: Any) -> Any:
    """The socket reader under a Locust FastResponse (geventhttpclient's response, `_response`): its body buffer
    and socket (`read_blocks`), and `readline(sep)` (what is left after the last event). Neither library promises
    them: when a version lacks them, this raises a RigError (the run is then undecided, as for any rig error)
    instead of every stream reading empty and counting as `stream_broken`."""
    raw = getattr(resp, "_response", None)
    if raw is None or not _readable(type(raw)) or not all(hasattr(raw, name) for name in _PARTS):
        raise RigError(f"the load client's response ({type(resp).__name__}) has no stream reader "
                       "`_response.readline(sep)`: Locust or geventhttpclient changed what the rig reads streams with",
                       fix="install the locust and geventhttpclient versions pyproject.toml allows (make setup)")
    return raw


_PARTS = ("_body_buffer", "_sock", "feed", "message_complete", "block_size", "release")  # what read_blocks uses


_READABLE: dict[type[Any], bool] = {}


def _readable(cls: type[Any]) -> bool:
    """Whether the response class has `readline(sep)` (looked at once per class: a signature costs a stream's reading)."""
    if cls not in _READABLE:
        _READABLE[cls] = _takes_sep(cls)
    return _READABLE[cls]


def _takes_sep(cls: type[Any]) -> bool:
    readline = getattr(cls, "readline", None)
    try:
        return callable(readline) and "sep" in inspect.signature(readline).parameters
    except (TypeError, ValueError):
        return False


def _headers(resp: Any) -> dict[str, str]:
    return {str(k).lower(): str(v) for k, v in (resp.headers or {}).items()}


def _finish(raw: Any) -> None:
    """Drop what is left of a stream, so a body that ends soon after its last event keeps its connection (it goes
    back to the pool as its end arrives); one still streaming after `DRAIN_S` or `DRAIN_BYTES` — or broken — is
    closed instead. Bounded by bytes and by time, never by a read that scans for a separator: a target sending
    without pause cannot hold a user here."""
    if raw is None or getattr(raw, "_sock", None) is None:
        return
    buf = raw._body_buffer
    deadline, dropped = time.monotonic() + DRAIN_S, 0
    try:
        while raw._sock is not None and not raw.message_complete:
            dropped += len(buf)
            del buf[:]
            left = deadline - time.monotonic()
            if dropped > DRAIN_BYTES or left <= 0:
                break
            with gevent.Timeout(left):
                _fill(raw)
            gevent.sleep(0)  # a socket that always has bytes must not keep the other users waiting
        else:
            del buf[:]
            return
    except (gevent.Timeout, Exception):  # broken, or silent past the drain: close it rather than reuse it
        pass
    del buf[:]
    sock, pool = getattr(raw, "_sock", None), getattr(raw, "_pool", None)
    if sock is not None and pool is not None:
        pool.release_socket(sock)
    raw._sock = raw._pool = None
