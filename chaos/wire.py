"""A small HTTP/1.1 server on asyncio streams, for the fault proxies.

An ASGI server always answers: it turns a failing handler into a 500. A fault proxy must also be able
to reset a connection (TCP RST), cut a chunked body half way, or send a body slowly, so the proxies
speak HTTP/1.1 themselves: keep-alive, Content-Length and chunked request bodies, Content-Length or
chunked responses.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

MAX_HEADER_BYTES = 64 * 1024
REASONS = {200: "OK", 201: "Created", 202: "Accepted", 204: "No Content", 400: "Bad Request", 404: "Not Found",
           409: "Conflict", 422: "Unprocessable Entity", 429: "Too Many Requests", 500: "Internal Server Error",
           502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout"}
HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade",
              "content-length", "host"}


@dataclass
class Request:
    """One parsed request: method, target (path and query), lower-cased headers, the whole body."""

    method: str
    target: str
    headers: dict[str, str]
    body: bytes = b""

    @property
    def path(self) -> str:
        return urlsplit(self.target).path

    @property
    def keep_alive(self) -> bool:
        return self.headers.get("connection", "").lower() != "close"


@dataclass
class Responder:
    """Writes one response; `reset()` and `cut()` end the connection the way a failing peer would."""

    writer: asyncio.StreamWriter
    reader: asyncio.StreamReader | None = None
    keep_alive: bool = True
    started: bool = False
    chunked: bool = False
    finished: bool = False
    broken: bool = False
    status: int | None = None
    sent_bytes: int = field(default=0)

    def _head(self, status: int, headers: list[tuple[str, str]], extra: list[tuple[str, str]]) -> bytes:
        self.started, self.status = True, status
        lines = [f"HTTP/1.1 {status} {REASONS.get(status, 'Status')}"]
        lines += [f"{k}: {v}" for k, v in headers if k.lower() not in HOP_BY_HOP]
        lines += [f"{k}: {v}" for k, v in extra]
        lines.append(f"connection: {'keep-alive' if self.keep_alive else 'close'}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    async def send(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
        """A complete response with Content-Length."""
        self.writer.write(self._head(status, headers, [("content-length", str(len(body)))]) + body)
        self.sent_bytes += len(body)
        self.finished = True
        await self.writer.drain()

    async def start(self, status: int, headers: list[tuple[str, str]]) -> None:
        """Start a chunked response (streaming)."""
        self.chunked = True
        self.writer.write(self._head(status, headers, [("transfer-encoding", "chunked")]))
        await self.writer.drain()

    async def chunk(self, data: bytes) -> None:
        if data:
            self.writer.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.sent_bytes += len(data)
            await self.writer.drain()

    async def end(self) -> None:
        self.writer.write(b"0\r\n\r\n")
        self.finished = True
        await self.writer.drain()

    async def hold(self, delay_s: float, poll_s: float = 0.02) -> bool:
        """Wait `delay_s` before answering; False as soon as the client closes its end (it gave up on the
        request: a timeout or a cancelled task on its side), True when the whole delay passed."""
        loop = asyncio.get_running_loop()
        until = loop.time() + delay_s
        while (left := until - loop.time()) > 0:
            if self.client_gone():
                return False
            await asyncio.sleep(min(poll_s, left))
        return True

    def client_gone(self) -> bool:
        """True once the client closed or reset its end (seen by the reader's protocol without reading)."""
        reader = self.reader
        return reader is not None and (reader.at_eof() or reader.exception() is not None
                                       or self.writer.transport.is_closing())

    def reset(self) -> None:
        """Close with a TCP RST (SO_LINGER 0): the client sees 'connection reset by peer'."""
        sock = self.writer.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.broken = True
        self.writer.transport.abort()

    def cut(self) -> None:
        """Close the connection mid-body (FIN without the final chunk): an incomplete message."""
        self.broken = True
        self.writer.close()


Handler = Callable[[Request, Responder], Awaitable[None]]


async def read_request(reader: asyncio.StreamReader) -> Request | None:
    """The next request on a connection, or None when the client closed it."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    except asyncio.LimitOverrunError:
        raise ValueError("request head too large") from None
    lines = head.decode("latin-1").split("\r\n")
    method, target, _version = lines[0].split(" ", 2)
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if ":" in line:
            key, _, value = line.partition(":")
            headers[key.strip().lower()] = value.strip()
    body = b""
    if headers.get("transfer-encoding", "").lower() == "chunked":
        parts = []
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                await reader.readuntil(b"\r\n")
                break
            parts.append(await reader.readexactly(size))
            await reader.readexactly(2)
        body = b"".join(parts)
    elif "content-length" in headers:
        body = await reader.readexactly(int(headers["content-length"]))
    return Request(method.upper(), target, headers, body)


class WireServer:
    """Serves `handler` on host:port; `start()` runs it in a background thread, `serve_forever()` in this one."""

    def __init__(self, handler: Handler, host: str = "127.0.0.1", port: int = 0) -> None:
        self.handler = handler
        self.host = host
        self.port = port
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                try:
                    request = await read_request(reader)
                except (ValueError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
                    writer.write(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                    break
                if request is None:
                    break
                responder = Responder(writer, reader=reader, keep_alive=request.keep_alive)
                try:
                    await self.handler(request, responder)
                except (ConnectionError, asyncio.IncompleteReadError):
                    break
                except Exception as exc:  # a handler bug answers 502 once instead of hanging the client
                    if not responder.started:
                        body = f"fault proxy error: {type(exc).__name__}: {exc}".encode()
                        responder.keep_alive = False
                        await responder.send(502, [("content-type", "text/plain")], body)
                    break
                if responder.broken or not responder.keep_alive or not responder.finished:
                    break
        finally:
            with contextlib.suppress(Exception):
                if not writer.transport.is_closing():
                    writer.close()

    async def _open(self) -> None:
        self._server = await asyncio.start_server(self._connection, self.host, self.port, limit=MAX_HEADER_BYTES,
                                                  reuse_address=True)
        self.port = self._server.sockets[0].getsockname()[1]

    def serve_forever(self) -> None:
        """Serve in the calling thread until interrupted."""
        async def main() -> None:
            await self._open()
            assert self._server is not None
            async with self._server:
                await self._server.serve_forever()

        asyncio.run(main())

    def start(self, timeout_s: float = 10.0) -> str:
        """Serve in a daemon thread; returns the base URL once the port is bound."""
        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                loop.run_until_complete(self._open())
            except BaseException as exc:
                self._error = exc
                self._ready.set()
                return
            self._ready.set()
            loop.run_forever()
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

        self._thread = threading.Thread(target=run, name=f"wire-{self.port}", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout_s):
            raise RuntimeError("fault proxy did not start in time")
        if self._error is not None:
            raise OSError(f"cannot listen on {self.host}:{self.port}: {self._error}")
        return self.url

    def call(self, coro: Awaitable[object]) -> object:
        """Run a coroutine on the server's loop (from another thread) and return its result."""
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=30)  # type: ignore[arg-type]

    def stop(self) -> None:
        loop, server = self._loop, self._server
        if loop is None or server is None:
            return

        async def close() -> None:
            server.close()
            loop.stop()

        loop.call_soon_threadsafe(lambda: asyncio.ensure_future(close()))
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._loop = None
