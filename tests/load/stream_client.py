"""Locust's own client reading a stream through LocustTransport, in a process of its own (Locust patches gevent in).

    python tests/load/stream_client.py

Serves three SSE events on a loopback port, reads them through a real `FastHttpSession`, prints the blocks.
"""

from __future__ import annotations

import json
import socket

import gevent
from gevent.server import StreamServer
from locust.contrib.fasthttp import FastHttpSession
from locust.event import EventHook

from rig.load.transport import LocustTransport

BODY = b"".join(b"id: %d\nevent: token\ndata: {}\n\n" % i for i in range(3))


def serve(sock: socket.socket, _: object) -> None:
    sock.recv(65536)
    sock.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: %d\r\n\r\n" % len(BODY)
                 + BODY)
    sock.close()


def main() -> None:
    server = StreamServer(("127.0.0.1", 0), serve)
    server.start()
    try:
        session = FastHttpSession(f"http://127.0.0.1:{server.server_port}", request_event=EventHook(), user=None)
        with LocustTransport(session).stream("GET", "/events", op="events", headers={}) as reply:
            blocks = [b.decode() for b in reply.chunks()]
        print(json.dumps({"status": reply.status_code, "blocks": blocks}))
    finally:
        server.stop()
        gevent.wait(timeout=1)


if __name__ == "__main__":
    main()
