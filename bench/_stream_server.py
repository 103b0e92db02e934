"""A stream server cheaper than any reader: every GET is answered with the same recorded event stream.

    python bench/_stream_server.py BODY_FILE PORT_FILE

It serves HTTP/1.1 with keep-alive on a free loopback port (written to PORT_FILE once listening), each answer
one `text/event-stream` body in chunked encoding, one chunk per event block, as a streaming server frames it, all
written at once. So a bench that reads a finished run's stream as fast as it can measures its reader, not the
target that had to produce the events.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n"


def answer(body: bytes) -> bytes:
    """The whole response: head, one chunk per event block, the last chunk."""
    blocks = [b + b"\n\n" for b in body.split(b"\n\n") if b]
    return HEAD + b"".join(b"%x\r\n%s\r\n" % (len(b), b) for b in blocks) + b"0\r\n\r\n"


async def serve(reply: bytes, port_file: Path) -> None:
    async def conn(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                if not head:
                    break
                writer.write(reply)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(conn, "127.0.0.1", 0, backlog=1024)
    port_file.write_text(str(server.sockets[0].getsockname()[1]))
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(serve(answer(Path(sys.argv[1]).read_bytes()), Path(sys.argv[2])))
