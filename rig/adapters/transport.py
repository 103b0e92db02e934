"""How an adapter's requests reach the wire: a small interface with two implementations.

`HttpxTransport` (the default) is a plain httpx client; `rig.load.transport.LocustTransport` sends the
same requests through a Locust user's own HTTP client, so a load run's request statistics are the
adapter's real requests. An adapter builds bodies (JSON, multipart) and query strings itself and hands
the transport bytes; the transport only sends them, names them (`op`) and reports connection failures
as `TransportError`.
"""

from __future__ import annotations

import json as _json
import secrets
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any

import httpx


class TransportError(Exception):
    """The request did not get an HTTP answer (refused, reset, timed out, cut mid-body)."""


@dataclass
class Reply:
    """An HTTP answer, body read."""

    status_code: int
    headers: dict[str, str]
    content: bytes
    reason: str = ""

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "")

    def json(self) -> Any:
        return _json.loads(self.content)


@dataclass
class StreamReply:
    """An HTTP answer whose body is read as it arrives (`chunks()`), or at once (`read()`)."""

    status_code: int
    headers: dict[str, str]
    chunks: Callable[[], Iterator[bytes]]
    reason: str = ""

    def read(self) -> bytes:
        return b"".join(self.chunks())


class Transport(ABC):
    """Sends an adapter's requests; one instance per adapter (and per simulated user under load)."""

    @abstractmethod
    def send(self, method: str, path: str, *, op: str, headers: dict[str, str], body: bytes | None = None,
             timeout_s: float | None = None) -> Reply:
        """One request; raises TransportError when no HTTP answer came."""

    @abstractmethod
    def stream(self, method: str, path: str, *, op: str, headers: dict[str, str],
               timeout_s: float | None = None, body: bytes | None = None,
               delimiter: bytes = b"\n\n") -> AbstractContextManager[StreamReply]:
        """A request whose answer body is read as it arrives; chunks() raises TransportError if it breaks.

        `delimiter` ends one event of the stream (a blank line for SSE, a newline for NDJSON): a transport that
        reads in blocks ends a read there, so each event is stamped when its last byte arrived."""

    def expecting(self, *statuses: int) -> AbstractContextManager[None]:
        """Statuses the caller expects inside the block (a load transport then does not count them as failures)."""
        return _nothing()

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""


@contextmanager
def _nothing() -> Iterator[None]:
    yield


class HttpxTransport(Transport):
    """The default transport: an httpx client with a small keep-alive pool; cookies never carry over."""

    def __init__(self, base_url: str, timeout_s: float = 30.0) -> None:
        self._http = httpx.Client(base_url=base_url.rstrip("/"), timeout=timeout_s,
                                  limits=httpx.Limits(max_connections=32, max_keepalive_connections=16))

    def send(self, method: str, path: str, *, op: str, headers: dict[str, str], body: bytes | None = None,
             timeout_s: float | None = None) -> Reply:
        timeout = httpx.USE_CLIENT_DEFAULT if timeout_s is None else timeout_s
        try:
            response = self._http.request(method, path, headers=headers, content=body, timeout=timeout)
        except httpx.TransportError as exc:
            raise TransportError(f"{type(exc).__name__}: {exc}") from None
        finally:
            self._http.cookies.clear()  # identity is always the Auth passed in, never a cookie left behind
        return Reply(response.status_code, dict(response.headers), response.content, response.reason_phrase)

    @contextmanager
    def stream(self, method: str, path: str, *, op: str, headers: dict[str, str],
               timeout_s: float | None = None, body: bytes | None = None,
               delimiter: bytes = b"\n\n") -> Iterator[StreamReply]:
        timeout = httpx.Timeout(timeout_s) if timeout_s is not None else None
        try:
            with self._http.stream(method, path, headers=headers, content=body, timeout=timeout) as response:
                def chunks() -> Iterator[bytes]:
                    try:
                        yield from response.iter_bytes()
                    except httpx.TransportError as exc:
                        raise TransportError(f"{type(exc).__name__}: {exc}") from None

                yield StreamReply(response.status_code, dict(response.headers), chunks, response.reason_phrase)
        except httpx.TransportError as exc:
            raise TransportError(f"{type(exc).__name__}: {exc}") from None
        finally:
            self._http.cookies.clear()

    def close(self) -> None:
        self._http.close()


def multipart(fields: dict[str, str], files: dict[str, tuple[str, bytes, str]]) -> tuple[bytes, str]:
    """A `multipart/form-data` body and its content type (form fields first, then files)."""
    boundary = f"rig-{secrets.token_hex(12)}"
    parts: list[bytes] = []
    for name, value in fields.items():
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'.encode()
                     + value.encode() + b"\r\n")
    for name, (filename, data, ctype) in files.items():
        safe = filename.replace('"', "%22").replace("\r", "").replace("\n", "")
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{safe}"\r\n'
                     f"Content-Type: {ctype}\r\n\r\n".encode() + data + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"
