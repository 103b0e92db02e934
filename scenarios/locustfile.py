"""The locustfile `rig load` runs (usable directly: `locust -f scenarios/locustfile.py --rig-plan ...`).

Hooks: custom options, sample shipping from workers to the master, the master's Prometheus endpoint
(every worker's measurements merged), sampling of the target's CPU and memory, and the final push to
a Pushgateway when one is configured.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import gevent
from locust import events
from locust.runners import MasterRunner, WorkerRunner

from scenarios.load import IngestUser, OpenLoopResearcher, ResearcherUser
from scenarios.load.recorder import RECORDER, Sample
from scenarios.load.researcher import plan_of

__all__ = ["IngestUser", "OpenLoopResearcher", "ResearcherUser"]
log = logging.getLogger("rig.load")


@events.init_command_line_parser.add_listener
def _options(parser: Any) -> None:
    parser.add_argument("--rig-plan", type=str, default="", help="rig load plan (JSON)", include_in_web_ui=False)
    parser.add_argument("--rig-workers", type=int, default=1, help="workers sharing the arrival rate",
                        include_in_web_ui=False)


@events.init.add_listener
def _init(environment: Any, **_: Any) -> None:
    runner = environment.runner
    if isinstance(runner, WorkerRunner):
        RECORDER.aggregating = False
        RECORDER.origin = runner.client_id

        @events.report_to_master.add_listener
        def _ship(client_id: str, data: dict[str, Any]) -> None:
            data["rig_samples"] = RECORDER.drain_outbox()
        return

    RECORDER.origin = "master" if isinstance(runner, MasterRunner) else "local"
    if isinstance(runner, MasterRunner):
        @events.worker_report.add_listener
        def _merge(client_id: str, data: dict[str, Any]) -> None:
            rows = data.get("rig_samples") or []
            RECORDER.ingest([Sample.unpack(r) for r in rows], client_id)

    @events.test_start.add_listener
    def _start(environment: Any, **_: Any) -> None:
        plan = plan_of(environment)
        if plan.store_path and RECORDER.store is None:
            from rig.evidence import EvidenceStore

            RECORDER.store = EvidenceStore(__import__("pathlib").Path(plan.store_path))
        if plan.metrics_port and not getattr(RECORDER, "_serving", False):
            from prometheus_client import start_http_server

            start_http_server(plan.metrics_port, addr=plan.metrics_host, registry=RECORDER.metrics.registry)
            RECORDER._serving = True  # type: ignore[attr-defined]
        gevent.spawn(_sample_loop, environment, plan)

    @events.quitting.add_listener
    def _quit(environment: Any, **_: Any) -> None:
        RECORDER.flush()
        plan = plan_of(environment)
        if plan.store_path:
            from pathlib import Path

            from prometheus_client import generate_latest

            # The endpoint goes away with the master; its last state stays in the run directory.
            Path(plan.store_path).with_name("metrics.prom").write_bytes(generate_latest(RECORDER.metrics.registry))
        if plan.pushgateway:
            from prometheus_client import push_to_gateway

            try:
                push_to_gateway(plan.pushgateway, job="rig_load", registry=RECORDER.metrics.registry)
            except OSError as exc:
                log.warning("push to %s failed: %s", plan.pushgateway, exc)


def _sample_loop(environment: Any, plan: Any) -> None:
    """Each second: users running, workers connected, the target's CPU and memory from its /metrics."""
    import httpx

    from rig.promtext import sample_value

    last_cpu: tuple[float, float] | None = None
    points: dict[str, list[tuple[float, float]]] = {"users": [], "target_cpu": [], "target_rss_bytes": []}
    with httpx.Client(timeout=2.0) as client:
        while environment.runner is not None and environment.runner.state not in ("stopped", "quitting"):
            now = time.time() * 1000
            users = float(environment.runner.user_count)
            RECORDER.metrics.users.set(users)
            points["users"].append((now, users))
            if isinstance(environment.runner, MasterRunner):
                RECORDER.metrics.workers.set(len(environment.runner.clients.ready) +
                                             len(environment.runner.clients.running))
            if plan.target_metrics:
                try:
                    text = client.get(f"{plan.target_url}/metrics").text
                    cpu = sample_value(text, "process_cpu_seconds_total")
                    rss = sample_value(text, "process_resident_memory_bytes")
                    if cpu is not None:
                        if last_cpu is not None and now > last_cpu[0]:
                            ratio = (cpu - last_cpu[1]) / ((now - last_cpu[0]) / 1000)
                            RECORDER.metrics.target_cpu.set(ratio)
                            points["target_cpu"].append((now, ratio))
                        last_cpu = (now, cpu)
                    if rss is not None:
                        RECORDER.metrics.target_rss.set(rss)
                        points["target_rss_bytes"].append((now, rss))
                except (httpx.HTTPError, ValueError):
                    pass
            if RECORDER.store is not None and len(points["users"]) >= 5:
                for name, pts in points.items():
                    if pts:
                        RECORDER.store.add_series(name, pts)
                points = {k: [] for k in points}
            RECORDER.flush()
            gevent.sleep(1.0)
    if RECORDER.store is not None:
        for name, pts in points.items():
            if pts:
                RECORDER.store.add_series(name, pts)
