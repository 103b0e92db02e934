"""The network fault proxy: a TCP relay on the target's host, in front of it, with faults of the link.

For hosts without the `netem` qdisc: put it where the target listens (the target itself on loopback
behind it) and every byte to and from the target passes it. Modes, as rules on its control API:

    latency    each chunk in `direction` is delivered `delay_ms` after it arrived, order kept — a delay
               line like `tc qdisc add dev eth0 root netem delay 100ms` on the target's interface
               (`from_target`, the default), not a pause per request
    partition  nothing passes either way while the rule holds; bytes wait and flow when it is removed,
               as after a cable pulled and put back (connections survive a short cut)
    reset      open connections are reset, and new ones while the rule holds

The control API has the shape of the other fault proxies (`/_rig/healthz`, `/_rig/rules`,
`/_rig/rules/{id}`) on its own port, so schedules, Chaos Toolkit and `rig.faults.FaultControl` drive it the same
way; `/_rig/links` lists the connections and the bytes each carried.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import socket
import struct
import threading
import time
from typing import Any

from pydantic import BaseModel, ValidationError

from chaos.wire import Request, Responder, WireServer
from rig.faults import NET_MODES, LinkFault

CHUNK = 65536
JSON = [("content-type", "application/json")]


class LinkRule(BaseModel):
    rule_id: str
    fault: LinkFault
    added_ms: float
    fired: int = 0  # connections reset (reset), chunks delayed (latency), chunks held (partition)


class Link(BaseModel):
    """One relayed connection."""

    link_id: int
    peer: str
    opened_ms: float
    closed_ms: float | None = None
    to_target_bytes: int = 0
    from_target_bytes: int = 0
    reset: bool = False


class NetFaultProxy:
    """`rig chaos net-proxy`: relays `listen` → `upstream` (TCP), applying the link rules in force."""

    modes = NET_MODES

    def __init__(self, upstream_host: str, upstream_port: int) -> None:
        self.upstream = (upstream_host, upstream_port)
        self._rules: dict[str, LinkRule] = {}
        self._rule_ids = itertools.count(1)
        self._link_ids = itertools.count(1)
        self._links: dict[int, Link] = {}
        self._writers: dict[int, list[asyncio.StreamWriter]] = {}
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._open: asyncio.Event | None = None  # set while no partition holds
        self._server: asyncio.Server | None = None
        self._thread: threading.Thread | None = None
        self.control: WireServer | None = None
        self.address: tuple[str, int] | None = None

    # -- rules (called from the control thread) ------------------------------------------------------------
    def add(self, fault: LinkFault) -> str:
        with self._lock:
            rule = LinkRule(rule_id=f"l{next(self._rule_ids)}", fault=fault, added_ms=time.time() * 1000)
            self._rules[rule.rule_id] = rule
        self._changed()
        return rule.rule_id

    def remove(self, rule_id: str) -> bool:
        with self._lock:
            found = self._rules.pop(rule_id, None) is not None
        self._changed()
        return found

    def clear(self) -> int:
        with self._lock:
            n = len(self._rules)
            self._rules.clear()
        self._changed()
        return n

    def rules(self) -> list[LinkRule]:
        with self._lock:
            return [r.model_copy() for r in self._rules.values()]

    def links(self) -> list[Link]:
        """Every connection relayed so far."""
        return [link.model_copy() for link in list(self._links.values())]

    def _changed(self) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._apply)

    def _in_force(self, mode: str) -> list[LinkRule]:
        with self._lock:
            return [r for r in self._rules.values() if r.fault.mode == mode]

    def _apply(self) -> None:
        """On the relay's loop: open or close the gate, reset connections when a reset rule holds."""
        assert self._open is not None
        if self._in_force("partition"):
            self._open.clear()
        else:
            self._open.set()
        resets = self._in_force("reset")
        if resets:
            for link_id in list(self._writers):
                self._reset(link_id)
                resets[0].fired += 1

    def _delay_s(self, direction: str) -> float:
        total = 0.0
        for rule in self._in_force("latency"):
            if rule.fault.direction in (direction, "both"):
                total += (rule.fault.delay_ms or 0) / 1000
                rule.fired += 1
        return total

    # -- relaying ----------------------------------------------------------------------------------------------
    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        link = Link(link_id=next(self._link_ids), peer=f"{peer[0]}:{peer[1]}" if peer else "?", opened_ms=time.time() * 1000)
        self._links[link.link_id] = link
        if self._in_force("reset"):
            self._writers[link.link_id] = [writer]
            self._reset(link.link_id)
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        except OSError:
            self._writers[link.link_id] = [writer]
            self._reset(link.link_id)
            return
        self._writers[link.link_id] = [writer, up_writer]
        try:
            await asyncio.gather(self._pump(reader, up_writer, "to_target", link),
                                 self._pump(up_reader, writer, "from_target", link))
        finally:
            link.closed_ms = time.time() * 1000
            self._writers.pop(link.link_id, None)
            for w in (writer, up_writer):
                with contextlib.suppress(Exception):
                    w.close()

    async def _pump(self, src: asyncio.StreamReader, dst: asyncio.StreamWriter, direction: str, link: Link) -> None:
        """Read as it comes; deliver each chunk at its due time through the gate (a delay line keeps order)."""
        assert self._loop is not None and self._open is not None
        line: asyncio.Queue[tuple[float, bytes | None]] = asyncio.Queue()

        async def deliver() -> None:
            assert self._open is not None
            while True:
                due, data = await line.get()
                wait = due - asyncio.get_running_loop().time()
                if wait > 0:
                    await asyncio.sleep(wait)
                if not self._open.is_set():
                    for rule in self._in_force("partition"):
                        rule.fired += 1
                    await self._open.wait()
                if data is None:
                    with contextlib.suppress(Exception):
                        if dst.can_write_eof():
                            dst.write_eof()
                    return
                dst.write(data)
                await dst.drain()
                if direction == "to_target":
                    link.to_target_bytes += len(data)
                else:
                    link.from_target_bytes += len(data)

        sender = asyncio.create_task(deliver())
        try:
            while True:
                try:
                    data = await src.read(CHUNK)
                except (ConnectionError, OSError):
                    data = b""
                now = asyncio.get_running_loop().time()
                line.put_nowait((now + self._delay_s(direction), data or None))
                if not data:
                    break
            await sender
        except (ConnectionError, OSError):
            pass
        finally:
            if not sender.done():
                sender.cancel()

    def _reset(self, link_id: int) -> None:
        """Close a connection with RST on both sides (SO_LINGER 0), as a reset on the wire."""
        link = self._links.get(link_id)
        if link is not None:
            link.reset = True
            link.closed_ms = link.closed_ms or time.time() * 1000
        for w in self._writers.pop(link_id, []):
            sock = w.get_extra_info("socket")
            with contextlib.suppress(OSError):
                if sock is not None:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            w.transport.abort()

    # -- control ----------------------------------------------------------------------------------------------
    async def _control(self, request: Request, respond: Responder) -> None:
        path, method = request.path.rstrip("/"), request.method
        if path == "/_rig/healthz":
            host, port = self.upstream
            return await _json(respond, 200, {"ok": True, "upstream": f"tcp://{host}:{port}", "modes": list(NET_MODES)})
        if path == "/_rig/rules" and method == "GET":
            return await _json(respond, 200, [r.model_dump(mode="json") for r in self.rules()])
        if path == "/_rig/rules" and method == "POST":
            try:
                fault = LinkFault.model_validate_json(request.body or b"{}")
            except ValidationError as exc:
                err = exc.errors()[0]
                return await _json(respond, 422, {"error": {"code": "invalid_rule", "message": str(err["msg"]),
                                                            "loc": list(err["loc"])}})
            return await _json(respond, 201, {"rule_id": self.add(fault)})
        if path == "/_rig/rules" and method == "DELETE":
            return await _json(respond, 200, {"cleared": self.clear()})
        if path.startswith("/_rig/rules/") and method == "DELETE":
            return await _json(respond, 200, {"removed": self.remove(path.rsplit("/", 1)[1])})
        if path == "/_rig/links" and method == "GET":
            return await _json(respond, 200, [link.model_dump(mode="json") for link in self.links()])
        return await _json(respond, 404, {"error": {"code": "not_found", "message": f"no control endpoint {path}"}})

    # -- serving ------------------------------------------------------------------------------------------------
    def start(self, listen: tuple[str, int] = ("127.0.0.1", 0), control: tuple[str, int] = ("127.0.0.1", 0)
              ) -> tuple[str, str]:
        """Serve in background threads; returns (`host:port` of the relay, the control URL)."""
        ready = threading.Event()
        failed: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self._bind(*listen))
            except BaseException as exc:
                failed.append(exc)
                ready.set()
                return
            ready.set()
            loop.run_forever()
            pending = asyncio.all_tasks(loop)  # connections still open: end them before the loop closes
            for task in pending:
                task.cancel()
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

        self._thread = threading.Thread(target=run, name="net-proxy", daemon=True)
        self._thread.start()
        ready.wait(10)
        if failed:
            raise OSError(f"cannot listen on {listen[0]}:{listen[1]}: {failed[0]}")
        self.control = WireServer(self._control, *control)
        url = self.control.start()
        assert self.address is not None
        return f"{self.address[0]}:{self.address[1]}", url

    async def _bind(self, host: str, port: int) -> None:
        self._loop = asyncio.get_running_loop()
        self._open = asyncio.Event()
        self._open.set()
        self._server = await asyncio.start_server(self._connection, host, port, reuse_address=True)
        bound = self._server.sockets[0].getsockname()
        self.address = (bound[0], bound[1])

    def stop(self) -> None:
        if self.control is not None:
            self.control.stop()
        loop, server = self._loop, self._server
        if loop is not None and server is not None:
            def close() -> None:
                server.close()
                for link_id in list(self._writers):
                    self._reset(link_id)
                loop.stop()

            loop.call_soon_threadsafe(close)
            if self._thread is not None:
                self._thread.join(timeout=10)
        self._loop = None


async def _json(respond: Responder, status: int, data: Any) -> None:
    await respond.send(status, JSON, json.dumps(data, ensure_ascii=False).encode())
