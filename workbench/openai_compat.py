"""An OpenAI-compatible chat endpoint, the smallest model server the rig can load: `POST /v1/chat/completions` streams
`--tokens` pieces `--delay-ms` apart (as vLLM, llama.cpp, TGI and SGLang stream them), then a `usage` chunk when the
request asks for one (`stream_options.include_usage`), then `data: [DONE]`. It logs, per request, when it took the
request and when it sent each token (`--log`, JSON lines, wall-clock ns): the ground truth a client's TTFT and ITL
are held against (bench/ttft_fidelity.py, tests/load/test_openai_target.py).

    python -m workbench.openai_compat --port-file PORT --log sent.jsonl [--tokens 64] [--delay-ms 10] [--key KEY]

Plain asyncio over HTTP/1.1 with keep-alive and chunked bodies: cheaper than any client it serves. A request without
`Authorization: Bearer <key>` (the `--key`, when given) is refused 401, as a hosted endpoint does; `GET /health`
answers without one, as vLLM, llama.cpp and TGI do.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import time
from pathlib import Path
from typing import Any, TextIO

HEAD = (b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
        b"transfer-encoding: chunked\r\n\r\n")
_IDS = itertools.count(1)


def _reply(status: int, body: dict[str, Any]) -> bytes:
    data = json.dumps(body).encode()
    reason = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found"}.get(status, "Error")
    return (f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {len(data)}\r\n\r\n"
            .encode() + data)


def _chunk(payload: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(payload), payload)


def _event(body: dict[str, Any] | str) -> bytes:
    return _chunk(b"data: " + (body.encode() if isinstance(body, str) else json.dumps(body).encode()) + b"\n\n")


class Endpoint:
    """The endpoint's settings and its log of what it sent."""

    def __init__(self, tokens: int, delay_ms: float, key: str | None, log: TextIO | None) -> None:
        self.tokens, self.delay_s, self.key, self.log = tokens, delay_ms / 1000.0, key, log

    async def chat(self, writer: asyncio.StreamWriter, request: dict[str, Any], took_ns: int) -> None:
        """Stream one completion: a role chunk, the tokens, a usage chunk when asked for, `[DONE]`."""
        cid, model = f"chatcmpl-{next(_IDS)}", str(request.get("model") or "mock")
        tokens = min(int(request.get("max_tokens") or self.tokens), self.tokens)  # the answer's length, at most

        def piece(delta: dict[str, Any], finish: str | None = None) -> bytes:
            return _event({"id": cid, "object": "chat.completion.chunk", "model": model,
                           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

        writer.write(HEAD + piece({"role": "assistant", "content": ""}))
        sent: list[int] = []
        for i in range(tokens):
            await asyncio.sleep(self.delay_s)
            writer.write(piece({"content": f"t{i} "}))
            sent.append(time.time_ns())
            await writer.drain()
        writer.write(piece({}, "stop"))
        if (request.get("stream_options") or {}).get("include_usage"):
            prompt = sum(len(str(m.get("content", "")).split()) for m in request.get("messages") or [])
            writer.write(_event({"id": cid, "object": "chat.completion.chunk", "model": model, "choices": [],
                                 "usage": {"prompt_tokens": prompt, "completion_tokens": tokens,
                                           "total_tokens": prompt + tokens}}))
        writer.write(_event("[DONE]") + b"0\r\n\r\n")
        await writer.drain()
        if self.log is not None:
            self.log.write(json.dumps({"id": cid, "took_ns": took_ns, "sent_ns": sent}) + "\n")
            self.log.flush()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                took = time.time_ns()
                lines = head.decode("latin-1").split("\r\n")
                method, path = (lines[0].split(" ") + ["", ""])[:2]
                headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in lines[1:] if h)}
                body = await reader.readexactly(int(headers.get("content-length") or 0))
                if method == "GET" and path == "/health":  # as vLLM, llama.cpp and TGI answer it: without a key
                    writer.write(_reply(200, {"status": "ok"}))
                elif self.key and headers.get("authorization") != f"Bearer {self.key}":
                    writer.write(_reply(401, {"error": {"message": "invalid api key", "code": "invalid_api_key"}}))
                elif method == "GET" and path.startswith("/v1/models"):
                    writer.write(_reply(200, {"object": "list", "data": [{"id": "mock", "object": "model"}]}))
                elif method == "POST" and path.startswith("/v1/chat/completions"):
                    try:
                        request = json.loads(body or b"{}")
                    except ValueError:
                        writer.write(_reply(400, {"error": {"message": "the body is not JSON"}}))
                    else:
                        await self.chat(writer, request, took)
                else:
                    writer.write(_reply(404, {"error": {"message": f"no route {method} {path}"}}))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()


async def main(args: argparse.Namespace) -> None:
    log = Path(args.log).open("a", encoding="utf-8") if args.log else None
    endpoint = Endpoint(args.tokens, args.delay_ms, args.key, log)
    server = await asyncio.start_server(endpoint.serve, "127.0.0.1", args.port, backlog=2048)
    Path(args.port_file).write_text(str(server.sockets[0].getsockname()[1]), encoding="utf-8")
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--log", default=None)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--delay-ms", type=float, default=10.0)
    parser.add_argument("--key", default=None)
    asyncio.run(main(parser.parse_args()))
