"""Locust's own client reading a stream through LocustTransport, in a process of its own (Locust patches gevent in).

    python tests/load/stream_client.py          # three SSE events, the third cut in two: prints the reads
    python tests/load/stream_client.py crlf     # the same with CRLF line ends
    python tests/load/stream_client.py giant    # 64 MiB with no end of event, read with a 1 MiB cap

Serves a stream on a loopback port and reads it through a real `FastHttpSession`; prints what it saw as JSON.
"""

from __future__ import annotations

import json
import resource
import socket
import sys

import gevent
import gevent.event
from gevent.server import StreamServer
from locust.contrib.fasthttp import FastHttpSession
from locust.event import EventHook

from rig.load.transport import LocustTransport
from rig.measure.sse import StreamTooLarge

LF = b"".join(b"id: %d\nevent: token\ndata: {}\n\n" % i for i in range(3))
BODY = LF.replace(b"\n", b"\r\n") if sys.argv[1:] == ["crlf"] else LF
CUT = BODY.index(b"event", BODY.index(b"id: 2"))  # the third event: its id line sent with the first two events
MORE = gevent.event.Event()  # set by the reader once it has the first read: then the rest of the third is sent


def serve(sock: socket.socket, _: object) -> None:
    sock.recv(65536)
    sock.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: %d\r\n\r\n" % len(BODY)
                 + BODY[:CUT])
    MORE.wait(10)
    sock.sendall(BODY[CUT:])
    sock.close()


SENT = {"bytes": 0}


def serve_giant(sock: socket.socket, _: object) -> None:
    """A stream whose one event never ends: 64 MiB of data, no blank line (the server stops when the client goes)."""
    sock.recv(65536)
    sock.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
    piece = b"data: " + b"x" * 65530
    chunk = b"%x\r\n%s\r\n" % (len(piece), piece)
    try:
        while SENT["bytes"] < 64 << 20:
            sock.sendall(chunk)
            SENT["bytes"] += len(piece)
    except OSError:
        pass
    sock.close()


def giant() -> None:
    server = StreamServer(("127.0.0.1", 0), serve_giant)
    server.start()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    seen: dict[str, object] = {}
    try:
        session = FastHttpSession(f"http://127.0.0.1:{server.server_port}", request_event=EventHook(), user=None)
        with LocustTransport(session, max_block_bytes=1 << 20).stream("GET", "/events", op="events",
                                                                        headers={}) as reply:
            try:
                for _ in reply.chunks():
                    pass
            except StreamTooLarge as exc:
                seen = {"error": type(exc).__name__, **(exc.exchange or {})}
    finally:
        server.stop()
        gevent.wait(timeout=1)
    seen.pop("sample", None)
    print(json.dumps({**seen, "sent_bytes": SENT["bytes"], "rss_before_mib": before,
                      "max_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def main() -> None:
    if sys.argv[1:] == ["giant"]:
        giant()
        return
    server = StreamServer(("127.0.0.1", 0), serve)
    server.start()
    try:
        session = FastHttpSession(f"http://127.0.0.1:{server.server_port}", request_event=EventHook(), user=None)
        with LocustTransport(session).stream("GET", "/events", op="events", headers={}) as reply:
            blocks = []
            for block in reply.chunks():
                blocks.append(block.decode())
                MORE.set()
        print(json.dumps({"status": reply.status_code, "blocks": blocks}))
    finally:
        server.stop()
        gevent.wait(timeout=1)


if __name__ == "__main__":
    main()
