"""A distributed load run across hosts made of network namespaces: target, Locust master, N workers.

Every host runs the command a person would run on a machine of its own:

    target     python -m workbench user add … ; python -m workbench serve --host 127.0.0.1 --port 8000
               rig chaos net-proxy --upstream 127.0.0.1:8000 --listen <target>:8000 --control <target>:8001
    master     rig load --target http://<target>:8000 --config rig.yaml --expect-workers N
                        --master-bind-host <master> --master-port 5557 [--chaos link.yaml]
    worker-k   rig load --worker-only --master-host <master> --master-port 5557 --config rig.yaml

During the run the lab can crash a worker's host (SIGKILL to everything on it) or pull its cable
(interface down, then up), and the master's schedule can slow the target's link (`via: network`).
Afterwards it sets what the master counted from each worker beside what each worker's own ledger
says it shipped (`lab.json`). Bounded: the master's run, the wait for it and every start have limits,
and the namespaces are deleted on the way out, whatever happened.
"""

from __future__ import annotations

import datetime as dt
import json
import secrets
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

from rig.errors import RigError
from rig.load.workers import read_ledger
from rig.netlab.netns import Host, Network, check_can_run, sweep
from rig.results.load import WorkerRecord

TARGET_PORT, CONTROL_PORT, MASTER_PORT = 8000, 8001, 5557
ACCOUNTS = ("lab-1", "lab-2", "lab-3", "lab-4")
Progress = Callable[[str], None]


class LabOptions(BaseModel):
    """What `rig lab run` was asked to do (offsets count from the moment every user was spawned)."""

    workers: int = Field(2, ge=1, le=6)
    users: int = Field(6, ge=1)
    duration_s: float = Field(30.0, gt=0, le=600)
    think: str = "0.5-1.5"
    out: Path
    kill_worker_at_s: float | None = None  # crash worker-1's host
    link_down_at_s: float | None = None  # pull worker-1's cable …
    link_down_for_s: float = 8.0  # … and put it back after this long
    latency_ms: float | None = None  # slow the target's link (one way, from the target) …
    latency_at_s: float = 10.0
    latency_for_s: float = 10.0  # … for this long
    first_token_delay_ms: float = 300.0  # the target's model: time to its first token


class WorkerCheck(BaseModel):
    """One worker: what its ledger says it shipped, what the master counted, whether they agree."""

    host: str
    worker_id: str | None = None
    shipped_reports: int = 0
    shipped_rows: int = 0
    shipped_requests: int = 0
    counted_rows: int = 0  # the master's book
    counted_requests: int = 0
    stored_rows: int = 0  # rows of this worker in the master's evidence store
    counted_reports: int | None = None  # k: the master's counts are the first k reports of the ledger
    intact: bool = False  # every report shipped with something in it was counted, once, and stored
    prefix: bool = False  # what was counted is exactly a prefix of what was shipped (nothing twice, no gaps)
    crashed_ms: float | None = None
    link_down: tuple[float, float] | None = None
    record: WorkerRecord | None = None


class LabResult(BaseModel):
    out: Path
    run_dir: Path
    master_exit: int | None
    decision: str | None = None
    reasons: list[str] = Field(default_factory=list)
    spawned_ms: float | None = None
    master_ended_ms: float | None = None
    overrun_s: float | None = None  # the master's end past spawn + duration (the stop phase and last reports)
    merged_requests: int | None = None  # load.json's requests (Locust on the master, merged)
    shipped_requests: int = 0  # the sum over every worker's ledger
    merged_rows: int = 0  # rows from workers in the master's store
    shipped_rows: int = 0
    workers: list[WorkerCheck] = Field(default_factory=list)
    chaos_windows: list[dict[str, object]] = Field(default_factory=list)
    target_peers: dict[str, int] = Field(default_factory=dict)  # connections the target's host saw, by address
    hosts: dict[str, str] = Field(default_factory=dict)  # lab host → its address


def _rig() -> list[str]:
    exe = Path(sys.executable).with_name("rig")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "rig.cli"]


def _wait_for(check: Callable[[], bool], what: str, timeout_s: float, alive: Callable[[], bool] | None = None) -> None:
    """Poll `check` until it holds; fail fast when the process it waits on has ended."""
    deadline = time.monotonic() + timeout_s
    while not check():
        if alive is not None and not alive():
            raise RigError(f"{what}: the process ended first", fix="read its log in the lab directory")
        if time.monotonic() > deadline:
            raise RigError(f"{what}: not within {timeout_s:.0f} s", fix="read the logs in the lab directory")
        time.sleep(0.2)


def _meta(store: Path, key: str) -> object:
    """A meta value of the master's evidence store, read while the master writes it (WAL)."""
    if not store.exists():
        return None
    try:
        with sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5) as db:
            row = db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
    except sqlite3.Error:
        return None
    return json.loads(row[0]) if row else None


def _write_config(path: Path, url: str) -> None:
    lines = ["target:", f"  url: {url}", "  adapter: rig.adapters:WorkbenchAdapter", "  ready_path: /readyz",
             "accounts:"]
    lines += [f"  {key}: {{username: {name}, password_env: RIG_LAB_PW_{i}}}"
              for i, (key, name) in enumerate(zip("abcd", ACCOUNTS, strict=True), 1)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _write_schedule(path: Path, options: LabOptions, control_url: str) -> None:
    path.write_text("\n".join([
        "title: the target's link slows down",
        "steady-state-hypothesis:",
        "  title: the target answers",
        "  probes: [{name: target-ready, probe: ready}]",
        "method:",
        f"  - {{name: slow-link, at: {options.latency_at_s:g}s, duration: {options.latency_for_s:g}s,",
        f"     fault: {{via: network, mode: latency, delay_ms: {options.latency_ms:g}}}}}",
        f"proxies: {{network: {control_url}}}", ""]), encoding="utf-8")


def run_lab(options: LabOptions, progress: Progress = lambda _: None) -> LabResult:
    """Build the hosts, run the load across them with the asked-for faults, check the counts, tear down."""
    check_can_run()  # before anything is written
    out = options.out
    if out.exists() and any(out.iterdir()):
        raise RigError(f"{out} is not empty", fix="give a new --out directory")
    out.mkdir(parents=True, exist_ok=True)
    run_dir = out / "run"
    passwords = {f"RIG_LAB_PW_{i}": secrets.token_urlsafe(18) for i in range(1, len(ACCOUNTS) + 1)}
    with Network() as net:
        progress("making hosts")
        target, master = net.add_host("target"), net.add_host("master")
        workers = [net.add_host(f"worker-{k}") for k in range(1, options.workers + 1)]
        url = f"http://{target.address}:{TARGET_PORT}"
        control = f"http://{target.address}:{CONTROL_PORT}"
        _start_target(target, out, options, passwords, progress)
        config = out / "rig.yaml"
        _write_config(config, url)
        cmd = [*_rig(), "load", "--target", url, "--config", str(config), "--users", str(options.users),
               "--spawn-rate", str(options.users), "--duration", f"{options.duration_s:g}s", "--think", options.think,
               "--expect-workers", str(options.workers), "--master-bind-host", master.address,
               "--master-port", str(MASTER_PORT), "--out", str(run_dir), "--metrics-host", "127.0.0.1"]
        if options.latency_ms is not None:
            schedule = out / "link.yaml"
            _write_schedule(schedule, options, control)
            cmd += ["--chaos", str(schedule)]
        progress("starting the master and the workers")
        master_proc = master.start(cmd, out / "hosts" / "master" / "rig-load.log", env=passwords)
        for host in workers:
            host.start([*_rig(), "load", "--worker-only", "--workers", "1", "--master-host", master.address,
                        "--master-port", str(MASTER_PORT), "--config", str(config),
                        "--out", str(out / "hosts" / host.name)],
                       out / "hosts" / host.name / "rig-load.log", env=passwords)
        store = run_dir / "evidence.sqlite3"
        _wait_for(lambda: _meta(store, "load_spawned_ms") is not None, "every user spawned",
                  300, alive=lambda: master_proc.poll() is None)
        spawned = float(_meta(store, "load_spawned_ms"))  # type: ignore[arg-type]
        progress("load running")
        faults = _faults(options, workers[0], spawned, master_proc)
        limit = spawned / 1000 + options.duration_s + 180
        while master_proc.poll() is None and time.time() < limit:
            time.sleep(0.5)
        ended = time.time() * 1000
        code = master_proc.poll()
        if code is None:
            master.stop()
        for host in [*workers, target]:  # the proxy writes its record of connections as it stops
            host.stop()
        progress("checking what was counted")
        return _check(options, out, run_dir, workers, faults, code, spawned, ended,
                      {h.name: h.address for h in net.hosts.values()})


def _start_target(target: Host, out: Path, options: LabOptions, passwords: dict[str, str], progress: Progress
                  ) -> None:
    progress("starting the target")
    data, logs = out / "hosts" / "target" / "data", out / "hosts" / "target"
    data.mkdir(parents=True, exist_ok=True)
    stdin = "".join(f"{passwords[f'RIG_LAB_PW_{i}']}\n" for i in range(1, len(ACCOUNTS) + 1)).encode()
    if target.run([sys.executable, "-m", "workbench", "user", "add", *ACCOUNTS, "--data", str(data)],
                  logs / "user-add.log", stdin=stdin) != 0:
        raise RigError("`python -m workbench user add` failed on the target host", fix=f"see {logs}/user-add.log")
    port_file = data / "port"
    server = target.start([sys.executable, "-m", "workbench", "serve", "--data", str(data), "--host", "127.0.0.1",
                           "--port", str(TARGET_PORT), "--port-file", str(port_file),
                           "--first-token-delay-ms", f"{options.first_token_delay_ms:g}"], logs / "workbench.log")
    _wait_for(port_file.exists, "the workbench listening", 120, alive=lambda: server.poll() is None)
    proxy_log = logs / "net-proxy.log"
    proxy = target.start([*_rig(), "chaos", "net-proxy", "--upstream", f"127.0.0.1:{TARGET_PORT}",
                          "--listen", f"{target.address}:{TARGET_PORT}", "--control", f"{target.address}:{CONTROL_PORT}",
                          "--record", str(logs / "links.json")], proxy_log)
    _wait_for(lambda: "network fault proxy" in proxy_log.read_text(errors="replace"), "the network proxy listening",
              60, alive=lambda: proxy.poll() is None)


def _faults(options: LabOptions, victim: Host, spawned_ms: float, master: subprocess.Popen[bytes]
            ) -> dict[str, float]:
    """Crash the victim's host and/or pull its cable at their offsets; returns when each happened (wall ms)."""
    done: dict[str, float] = {}
    plan: list[tuple[float, str]] = []
    if options.kill_worker_at_s is not None:
        plan.append((options.kill_worker_at_s, "crash"))
    if options.link_down_at_s is not None:
        plan += [(options.link_down_at_s, "down"), (options.link_down_at_s + options.link_down_for_s, "up")]
    for offset, what in sorted(plan):
        while master.poll() is None and time.time() * 1000 < spawned_ms + offset * 1000:
            time.sleep(0.05)
        if master.poll() is not None:
            break
        if what == "crash":
            done["crashed_ms"] = victim.crash()
        else:
            victim.link(up=what == "up")
            done[f"link_{what}_ms"] = time.time() * 1000
    return done


def _stored_rows(store: Path) -> dict[str, int]:
    with sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5) as db:
        return {str(o): int(n) for o, n in db.execute(
            "SELECT origin, COUNT(*) FROM measures WHERE case_id IS NULL AND origin IS NOT NULL GROUP BY origin")}


def _check(options: LabOptions, out: Path, run_dir: Path, workers: list[Host], faults: dict[str, float],
           code: int | None, spawned: float, ended: float, hosts: dict[str, str]) -> LabResult:
    load = json.loads((run_dir / "load.json").read_text(encoding="utf-8")) if (run_dir / "load.json").exists() else {}
    book = {w["worker_id"]: WorkerRecord.model_validate(w) for w in load.get("worker_nodes", [])}
    stored = _stored_rows(run_dir / "evidence.sqlite3") if (run_dir / "evidence.sqlite3").exists() else {}
    result = LabResult(out=out, run_dir=run_dir, master_exit=code, spawned_ms=spawned, master_ended_ms=ended,
                       overrun_s=round((ended - spawned) / 1000 - options.duration_s, 2),
                       merged_requests=load.get("requests"), chaos_windows=(load.get("chaos") or {}).get("windows", []),
                       hosts=hosts)
    decided = _meta(run_dir / "evidence.sqlite3", "decision")
    if isinstance(decided, dict):
        result.decision, result.reasons = decided.get("decision"), decided.get("reasons", [])
    for i, host in enumerate(workers):
        ledgers = sorted((out / "hosts" / host.name).glob("*.ledger.jsonl"))
        lines = [line for path in ledgers for line in read_ledger(path)]
        check = WorkerCheck(host=host.name, shipped_reports=len(lines), shipped_rows=sum(x.rows for x in lines),
                            shipped_requests=sum(x.requests for x in lines))
        if i == 0:
            check.crashed_ms = faults.get("crashed_ms")
            if "link_down_ms" in faults:
                check.link_down = (faults["link_down_ms"], faults.get("link_up_ms", ended))
        if lines:
            check.worker_id = lines[0].worker_id
            record = book.get(check.worker_id)
            check.record = record
            check.counted_rows = record.rows if record else 0
            check.counted_requests = record.requests if record else 0
            check.stored_rows = stored.get(check.worker_id, 0)
            rows = requests = 0
            for k in range(len(lines) + 1):
                if (rows, requests) == (check.counted_rows, check.counted_requests) and record and \
                        record.reports == k:
                    check.counted_reports, check.prefix = k, True
                    break
                if k < len(lines):
                    rows, requests = rows + lines[k].rows, requests + lines[k].requests
            # reports past the counted ones may only be empty (a worker's report after its master quit)
            rest = lines[check.counted_reports or 0:] if check.prefix else lines
            check.intact = check.prefix and check.stored_rows == check.counted_rows and \
                not any(x.rows or x.requests for x in rest)
        result.workers.append(check)
    links = out / "hosts" / "target" / "links.json"
    for link in json.loads(links.read_text(encoding="utf-8")) if links.exists() else []:
        peer = link["peer"].rsplit(":", 1)[0]
        result.target_peers[peer] = result.target_peers.get(peer, 0) + 1
    result.shipped_requests = sum(w.shipped_requests for w in result.workers)
    result.shipped_rows = sum(w.shipped_rows for w in result.workers)
    result.merged_rows = sum(stored.values())
    (out / "lab.json").write_text(result.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return result


def clean() -> list[str]:
    """Remove what labs whose process is gone left behind."""

    return sweep()


def default_out() -> Path:
    """`reports/<time>-lab`."""
    return Path("reports") / f"{dt.datetime.now(dt.UTC).strftime('%Y%m%dT%H%M%S')}-lab"


