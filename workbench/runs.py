"""Live runs: their event logs (SSE with replay), run slots, stop, persistence and restart recovery."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from workbench.clock import iso, now_ms
from workbench.db import dumps, loads
from workbench.services import Services

log = logging.getLogger("workbench.runs")
TERMINAL = {"completed", "stopped", "failed", "interrupted"}
FLUSH_EVERY = 64


RECORD_WRITE_S = 0.5  # with `stop_race_slot`: how long a run stays live, holding its slot, after its end event


class LiveRun:
    """A run in this process: its detail record, its ordered events and its task."""

    def __init__(self, detail: dict[str, Any]) -> None:
        self.detail = detail
        self.run_id: str = detail["run_id"]
        self.events: list[tuple[int, str, dict[str, Any]]] = []
        self.changed = asyncio.Event()
        self.task: asyncio.Task[None] | None = None
        self.finished = False
        self.stop_reason: str | None = None
        self.holds_slot = False
        self.flushed = 0

    def emit(self, event: str, data: dict[str, Any]) -> int:
        """Append an event (id increases by one) and wake every reader."""
        ts = now_ms()
        data = {**data, "ts_ms": ts}
        event_id = len(self.events) + 1
        self.events.append((event_id, event, data))
        if event == "status" and self.detail.get("first_status_at") is None:
            self.detail["first_status_at"], self.detail["first_status_at_ms"] = iso(ts), ts
        if event == "token" and data.get("kind") == "answer" and self.detail.get("first_token_at") is None:
            self.detail["first_token_at"], self.detail["first_token_at_ms"] = iso(ts), ts
        self.changed.set()
        self.changed = asyncio.Event()
        return event_id


class RunManager:
    """Owns the live runs and the run slots (`workbench_run_slots_in_use`)."""

    def __init__(self, svc: Services) -> None:
        self.svc = svc
        self.live: dict[str, LiveRun] = {}
        self._slots = asyncio.Semaphore(svc.config.slots)
        self._kept: list[object] = []  # what the seeded soak defects leak
        self._waiting = 0
        self.shutting_down = False

    # -- persistence -------------------------------------------------------------------------------------
    def save(self, run: LiveRun) -> None:
        d = run.detail
        with self.svc.db.tx() as conn:
            conn.execute("UPDATE runs SET state=?, end_reason=?, data=? WHERE run_id=?",
                         (d["state"], d["end_reason"], dumps(d), run.run_id))

    def flush_events(self, run: LiveRun) -> None:
        pending = run.events[run.flushed:]
        if not pending:
            return
        with self.svc.db.tx() as conn:
            conn.executemany("INSERT OR IGNORE INTO run_events(run_id, id, event, data) VALUES(?,?,?,?)",
                             [(run.run_id, i, e, dumps(d)) for i, e, d in pending])
        run.flushed = len(run.events)

    def emit(self, run: LiveRun, event: str, data: dict[str, Any]) -> None:
        first_token = event == "token" and run.detail.get("first_token_at") is None
        run.emit(event, data)
        if event != "token" or len(run.events) - run.flushed >= FLUSH_EVERY:
            self.flush_events(run)
        if first_token and run.detail.get("first_token_at") is not None:
            self.flush_events(run)
            self.save(run)  # T4 of a run survives even if the process dies before the run ends

    # -- lifecycle ----------------------------------------------------------------------------------------
    def start(self, run: LiveRun, body: Callable[[LiveRun], Awaitable[None]]) -> None:
        """Register a queued run and start its task."""
        self.live[run.run_id] = run
        self.svc.metrics.runs_started.inc()
        self.emit(run, "queued", {"run_id": run.run_id})
        run.task = asyncio.get_running_loop().create_task(self._guard(run, body), name=run.run_id)

    async def _guard(self, run: LiveRun, body: Callable[[LiveRun], Awaitable[None]]) -> None:
        try:
            await body(run)
            if "stop_race_slot" in self.svc.defects:
                await asyncio.sleep(RECORD_WRITE_S)  # the seeded defect's window: the record written after the end
        finally:
            self.release_slot(run)
            run.finished = True
            with contextlib.suppress(Exception):
                self.flush_events(run)
                if "stop_not_propagated" not in self.svc.defects or run.detail["state"] not in TERMINAL:
                    self.save(run)
            run.changed.set()
            self.live.pop(run.run_id, None)
            self._seeded_leaks()

    def _seeded_leaks(self) -> None:
        """The soak defects: what a run leaves behind that it should not (each run, for good)."""
        if "memory_per_stream" in self.svc.defects:
            self._kept.append(bytearray(2 * 1024 * 1024))
        if "fd_per_turn" in self.svc.defects:
            self._kept.append(open(os.devnull, "rb"))  # noqa: SIM115 - the leak is the point

    async def acquire_slot(self, run: LiveRun) -> None:
        self._waiting += 1
        self.svc.metrics.queue_depth.set(self._waiting)
        try:
            await self._slots.acquire()
        finally:
            self._waiting -= 1
            self.svc.metrics.queue_depth.set(self._waiting)
        run.holds_slot = True
        self.svc.metrics.slots_in_use.inc()

    def release_slot(self, run: LiveRun) -> None:
        if run.holds_slot:
            run.holds_slot = False
            self._slots.release()
            self.svc.metrics.slots_in_use.dec()

    def stop(self, run: LiveRun, reason: str = "user_stop") -> None:
        """Ask a live run to stop: the cancellation reaches whatever stage is awaiting."""
        if "stop_not_propagated" in self.svc.defects and reason == "user_stop":
            d = run.detail
            ended = now_ms()
            d.update(state="stopped", end_reason="user_stop", ended_at=iso(ended), ended_at_ms=ended)
            self.emit(run, "error", {"state": "stopped", "reason": "user_stop"})
            self.save(run)
            return
        if "stop_waits_for_stage" in self.svc.defects and self._in_stage(run):
            asyncio.get_running_loop().create_task(self._stop_after_stage(run, reason))
            return
        run.stop_reason = reason
        if run.task is not None:
            run.task.cancel()

    @staticmethod
    def _in_stage(run: LiveRun) -> bool:
        return any(s.get("ended_at_ms") is None for s in run.detail.get("stages", []))

    async def _stop_after_stage(self, run: LiveRun, reason: str) -> None:
        while self._in_stage(run):  # the seeded defect: the stage runs to its end before the stop lands
            await asyncio.sleep(0.02)
        run.stop_reason = reason
        if run.task is not None:
            run.task.cancel()

    async def drain(self, timeout_s: float) -> None:
        """Let live runs finish for up to `timeout_s`, then interrupt the rest (graceful shutdown)."""
        self.shutting_down = True
        tasks = [r.task for r in self.live.values() if r.task is not None]
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=timeout_s)
            for run in list(self.live.values()):
                if run.task in pending:
                    self.stop(run, "server_restart")
            if pending:
                await asyncio.wait(pending, timeout=5)

    def recover_at_start(self) -> int:
        """Mark runs that were in flight when the process died; returns how many."""
        rows = self.svc.db.all("SELECT run_id, data FROM runs WHERE state IN ('queued','running')")
        state, reason = ("stopped", "user_stop") if "restart_marks_user_stop" in self.svc.defects else (
            "interrupted", "server_restart")
        ended = now_ms()
        with self.svc.db.tx() as conn:
            for row in rows:
                detail = loads(row["data"])
                detail.update(state=state, end_reason=reason, ended_at=iso(ended), ended_at_ms=ended)
                for stage in detail.get("stages", []):
                    if stage.get("ended_at") is None:
                        stage.update(ended_at=iso(ended), ended_at_ms=ended, ok=False, cancelled=True)
                last = conn.execute("SELECT MAX(id) AS m FROM run_events WHERE run_id=?", (row["run_id"],)).fetchone()
                next_id = (last["m"] or 0) + 1
                conn.execute("INSERT INTO run_events(run_id, id, event, data) VALUES(?,?,?,?)",
                             (row["run_id"], next_id, "error", dumps({"state": state, "reason": reason,
                                                                      "ts_ms": ended})))
                conn.execute("UPDATE runs SET state=?, end_reason=?, data=? WHERE run_id=?",
                             (state, reason, dumps(detail), row["run_id"]))
                self.svc.metrics.runs.labels(state, reason).inc()
        return len(rows)

    # -- reading ------------------------------------------------------------------------------------------
    def rewrite_end(self, run_id: str, state: str, end_reason: str) -> None:
        """The seeded defect `late_stop_rewrites`: an ended run's record rewritten after the fact."""
        row = self.svc.db.one("SELECT data FROM runs WHERE run_id=?", run_id)
        if row is None:
            return
        d = {**loads(row["data"]), "state": state, "end_reason": end_reason}
        with self.svc.db.tx() as conn:
            conn.execute("UPDATE runs SET state=?, end_reason=?, data=? WHERE run_id=?",
                         (state, end_reason, dumps(d), run_id))

    def detail(self, run_id: str) -> dict[str, Any] | None:
        live = self.live.get(run_id)
        if live is not None:
            return live.detail
        row = self.svc.db.one("SELECT data FROM runs WHERE run_id=?", run_id)
        return loads(row["data"]) if row else None

    async def events(self, run_id: str, after: int, keepalive_s: float = 10.0
                     ) -> AsyncIterator[tuple[int, str, dict[str, Any]] | None]:
        """Events with id > `after`, live until the run ends; yields None as a keep-alive tick."""
        live = self.live.get(run_id)
        if live is not None:
            index = after
            while True:
                while index < len(live.events):
                    index += 1
                    yield live.events[index - 1]
                if live.finished or _terminal_seen(live.events):
                    return
                changed = live.changed
                try:
                    await asyncio.wait_for(changed.wait(), timeout=keepalive_s)
                except TimeoutError:
                    yield None
            return
        rows = self.svc.db.all("SELECT id, event, data FROM run_events WHERE run_id=? AND id>? ORDER BY id",
                               run_id, after)
        for row in rows:
            yield row["id"], row["event"], loads(row["data"])


def _terminal_seen(events: list[tuple[int, str, dict[str, Any]]]) -> bool:
    return bool(events) and events[-1][1] in ("done", "error")
