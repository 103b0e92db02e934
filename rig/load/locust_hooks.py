"""The rig's hooks into Locust, installed by the locustfile `rig load` starts (`install()`).

- custom options (`--rig-plan`, `--rig-workers`);
- measuring that waits for idle time (`rig.load.deriver`) is finished when the users stop;
- workers ship their rows to the master with each stats report (and note each report in their ledger);
  the master merges them and keeps its book of workers (joined, reports, lost, back: rig.load.workers);
- the aggregating process serves the rig's Prometheus endpoint, writes rows to the evidence store, samples
  users, workers and the target's CPU and memory (from the adapter's `metrics_text()`), and at the end
  leaves `metrics.prom` in the run directory and pushes to a Pushgateway when one is configured.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

import gevent
from locust import events
from locust.runners import MasterRunner, WorkerRunner
from prometheus_client import generate_latest, push_to_gateway, start_http_server

from rig.adapters import load_adapter_class
from rig.clock import now_ns
from rig.errors import RigError
from rig.evidence import EvidenceStore
from rig.jsonvalue import ForeignJson
from rig.load.collector import settle_for_load
from rig.load.environment import MachineSampler
from rig.load.plan import LoadPlan
from rig.load.process import PROCESS, RECORDER, plan_of, replay_of
from rig.load.recorder import unpack
from rig.load.workers import WorkerLedger, report_counts
from rig.measure.events import Measure
from rig.promtext import sample_value

log = logging.getLogger("rig.load")
SAMPLE_EVERY_S = 1.0
FINAL_REPORT_S = 15.0  # how long the master waits for the workers' last reports after their users stopped


def install() -> None:
    """Register the listeners once per process."""
    if PROCESS.installed:
        return
    PROCESS.installed = True
    events.init_command_line_parser.add_listener(_options)
    events.init.add_listener(_init)
    events.quitting.add_listener(lambda **_: PROCESS.close_tracer())


def _options(parser: Any) -> None:
    parser.add_argument("--rig-plan", type=str, default="", help="rig load plan (JSON)", include_in_web_ui=False)
    parser.add_argument("--rig-workers", type=int, default=1, help="workers sharing the arrival rate",
                        include_in_web_ui=False)


def _init(environment: Any, **_: Any) -> None:
    runner = environment.runner
    events.test_stopping.add_listener(_stopping)
    # the users have stopped: what they measured and is still waiting for idle time is derived now, before
    # a worker's last report (sent right after this event) or the local run's last flush
    events.test_stop.add_listener(lambda **_: PROCESS.deriver.drain())
    events.test_start.add_listener(_replay_clock)
    if isinstance(runner, WorkerRunner):
        RECORDER.aggregating = False
        RECORDER.origin = runner.client_id
        ledger = WorkerLedger.from_env()

        def ship(client_id: str, data: ForeignJson) -> None:
            data["rig_samples"] = RECORDER.drain_outbox()
            if ledger is not None:
                ledger.shipped(client_id, len(data["rig_samples"]), *report_counts(data))

        events.report_to_master.add_listener(ship)
        events.test_start.add_listener(_probe_client)
        return
    RECORDER.origin = "master" if isinstance(runner, MasterRunner) else "local"
    if isinstance(runner, MasterRunner):
        def merge(client_id: str, data: ForeignJson) -> None:
            rows = [unpack(r, client_id) for r in data.get("rig_samples") or []]
            RECORDER.ingest(rows, client_id)
            PROCESS.book.report(client_id, len(rows), *report_counts(data))
            PROCESS.last_report[client_id] = time.monotonic()

        events.worker_report.add_listener(merge)
        events.heartbeat_sent.add_listener(lambda client_id, **_: PROCESS.book.heard(client_id))
    events.test_start.add_listener(_start)
    if not isinstance(runner, MasterRunner):  # a local run's one process runs the users: it probes itself
        events.test_start.add_listener(_probe_client)
    events.spawning_complete.add_listener(_spawned)
    events.quitting.add_listener(_quit)


LAG_PROBE_S = 0.2  # the loop-lag probe: how late a sleep of this length wakes


def _probe_client(environment: Any, **_: Any) -> None:
    """A process that runs users reports, each second, its CPU share and how late its event loop wakes
    (`client_cpu`, `loop_lag`): `rig capacity` calls a step whose client was saturated undecided. Its collector is
    settled for load first (rig.load.collector)."""
    if PROCESS.probing is None:
        settle_for_load()
        PROCESS.probing = gevent.spawn(_client_probe_loop, environment)


def _client_probe_loop(environment: Any) -> None:
    import psutil

    me = psutil.Process()
    me.cpu_percent(None)
    while environment.runner is not None and environment.runner.state not in ("stopped", "quitting"):
        began = time.perf_counter()
        gevent.sleep(LAG_PROBE_S)
        lag_ms = max(0.0, (time.perf_counter() - began - LAG_PROBE_S) * 1000)
        RECORDER.record([Measure(code="client_cpu", source="client", value=me.cpu_percent(None), unit="%"),
                         Measure(code="loop_lag", source="client", value=round(lag_ms, 3), unit="ms")])
        gevent.sleep(SAMPLE_EVERY_S - LAG_PROBE_S)


def _replay_clock(environment: Any, **_: Any) -> None:
    """A replay counts its arrivals from the test start of each process that runs users (not the master)."""
    if not isinstance(environment.runner, MasterRunner) and plan_of(environment).replay is not None:
        replay_of(environment).start()


def _spawned(user_count: int, **_: Any) -> None:
    """Every planned user runs: the moment a chaos schedule counts its offsets from (`load_spawned_ms`)."""
    if RECORDER.store is not None:
        RECORDER.store.set_meta("load_spawned_ms", time.time() * 1000)


def _stopping(environment: Any, **_: Any) -> None:
    """Open loop: arrivals still waiting for a free user when the run stops count as sends that lagged at
    least until now (leaving them out would hide the backlog: coordinated omission)."""
    schedule = PROCESS.schedule
    if schedule is None:
        return
    now = now_ns()
    RECORDER.record([Measure(code="send_lag", source="client", value=round((now - at) / 1e6, 3), label="unsent",
                             scenario="open_loop") for at in schedule.unsent(now)])


def _start(environment: Any, **_: Any) -> None:
    plan = plan_of(environment)
    if plan.store_path and RECORDER.store is None:
        RECORDER.store = EvidenceStore(Path(plan.store_path))
    if plan.metrics_port and not PROCESS.serving:

        start_http_server(plan.metrics_port, addr=plan.metrics_host, registry=RECORDER.metrics.registry)
        PROCESS.serving = True
    gevent.spawn(_sample_loop, environment, plan)
    if plan.duration_s and PROCESS.clock is None:
        PROCESS.clock = gevent.spawn(_end_after, environment, plan.duration_s)


def _end_after(environment: Any, duration_s: float) -> None:
    """End the run after `duration_s`, losing nothing: stop the users (Locust waits for every worker's users
    to stop), then wait for one more report from every worker (it carries their last requests and rows),
    then quit. Locust's own `--run-time` quit gives workers a fixed half second, which a busy machine misses."""
    gevent.sleep(duration_s)
    runner = environment.runner
    master = isinstance(runner, MasterRunner)
    if master:
        _observe(runner)
    # a worker already lost sends nothing more: waiting for it would only make the run end late
    workers = [c.id for c in runner.clients.all if c.state != "missing"] if master else []
    runner.stop()
    stopped = time.monotonic()
    deadline = stopped + FINAL_REPORT_S

    def waiting() -> list[str]:
        return [w for w in workers if PROCESS.last_report.get(w, 0.0) <= stopped and not _missing(runner, w)]

    while time.monotonic() < deadline and waiting():
        gevent.sleep(0.1)
    late = [w for w in workers if PROCESS.last_report.get(w, 0.0) <= stopped]
    if late:
        log.warning("no last report from worker(s) %s within %.0f s; their last requests are not counted",
                    ", ".join(late), FINAL_REPORT_S)
    if master:
        _observe(runner)
    runner.quit()


def end_run_now(environment: Any) -> None:
    """End the run as the rig's clock would at its end (a steered shape asks for it when the rig is done)."""
    gevent.spawn(_end_after, environment, 0.0)


def _missing(runner: Any, worker_id: str) -> bool:
    node = runner.clients.get(worker_id)
    return node is not None and node.state == "missing"


def _observe(runner: Any) -> None:
    """Bring the book of workers up to date with the master's view of them."""
    PROCESS.book.observe({c.id: c.state for c in runner.clients.all},
                 stopping=runner.state in ("stopping", "stopped", "quitting", "cleanup"))


def _quit(environment: Any, **_: Any) -> None:
    if isinstance(environment.runner, MasterRunner):
        _observe(environment.runner)
        PROCESS.book.save(force=True)
    RECORDER.flush()
    plan = plan_of(environment)

    if plan.store_path:  # the endpoint goes away with the master; its last state stays in the run directory
        run_dir = Path(plan.store_path).parent
        (run_dir / "metrics.prom").write_bytes(generate_latest(RECORDER.metrics.registry))
        write_request_stats(environment, run_dir / "locust-requests.json")
    if plan.pushgateway:
        try:
            push_to_gateway(plan.pushgateway, job="rig_load", registry=RECORDER.metrics.registry)
        except OSError as exc:
            log.warning("push to %s failed: %s", plan.pushgateway, exc)


def write_request_stats(environment: Any, path: Path) -> None:
    """Locust's final per-row counts (its CSV can be written before the last requests of the stop phase)."""
    rows = [{"type": e.method, "name": e.name, "requests": e.num_requests, "failures": e.num_failures}
            for e in environment.stats.entries.values()]
    path.write_text(json.dumps(rows, ensure_ascii=False, indent=1), encoding="utf-8")


def _sample_loop(environment: Any, plan: LoadPlan) -> None:
    """Each second: users running, workers connected, the target's CPU and memory from its metrics, and the
    machine's CPU in use and stolen (rig.load.environment)."""
    adapter = load_adapter_class(plan.adapter).connect(plan.target_url, options=plan.adapter_options) \
        if plan.target_metrics else None
    last_cpu: tuple[float, float] | None = None
    points: dict[str, list[tuple[float, float]]] = {"users": [], "target_cpu": [], "target_rss_bytes": [],
                                                    "target_open_fds": [], "target_slots_in_use": [],
                                                    "machine_busy_cores": [], "machine_steal_cores": []}
    metrics = RECORDER.metrics
    machine = MachineSampler()
    last_sample = time.monotonic()
    if RECORDER.store is not None:
        RECORDER.store.add_series("machine_cores", [(time.time() * 1000, float(machine.cores))])
    try:
        while environment.runner is not None and environment.runner.state not in ("stopped", "quitting"):
            now = time.time() * 1000
            users = float(environment.runner.user_count)
            metrics.users.set(users)
            points["users"].append((now, users))
            busy, steal = machine.sample(time.monotonic() - last_sample)  # the machine beside the load (soak)
            last_sample = time.monotonic()
            points["machine_busy_cores"].append((now, busy))
            points["machine_steal_cores"].append((now, steal))
            if isinstance(environment.runner, MasterRunner):
                metrics.workers.set(len(environment.runner.clients.ready) + len(environment.runner.clients.running))
                _observe(environment.runner)
            if adapter is not None:
                try:
                    text = adapter.metrics_text()
                except RigError:
                    text = ""
                cpu = sample_value(text, "process_cpu_seconds_total") if text else None
                rss = sample_value(text, "process_resident_memory_bytes") if text else None
                if cpu is not None:
                    if last_cpu is not None and now > last_cpu[0]:
                        ratio = (cpu - last_cpu[1]) / ((now - last_cpu[0]) / 1000)
                        metrics.target_cpu.set(ratio)
                        points["target_cpu"].append((now, ratio))
                    last_cpu = (now, cpu)
                if rss is not None:
                    metrics.target_rss.set(rss)
                    points["target_rss_bytes"].append((now, rss))
                fds = sample_value(text, "process_open_fds") if text else None
                if fds is not None:
                    points["target_open_fds"].append((now, fds))
                slots = sample_value(text, plan.slots_metric) if text and plan.slots_metric else None
                if slots is not None:
                    points["target_slots_in_use"].append((now, slots))
            if RECORDER.store is not None and len(points["users"]) >= 5:
                _store_series(points)
                points = {k: [] for k in points}
            RECORDER.flush()
            gevent.sleep(SAMPLE_EVERY_S)
    finally:
        _store_series(points)
        if adapter is not None:
            adapter.close()


def _store_series(points: dict[str, list[tuple[float, float]]]) -> None:
    if RECORDER.store is not None:
        for name, pts in points.items():
            if pts:
                RECORDER.store.add_series(name, pts)
