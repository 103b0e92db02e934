"""Starting Locust: one local process, or a master and K workers on Locust's own transport."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from rig.errors import ConfigError
from rig.lifeline import spawn
from rig.load.workers import LEDGER_ENV
from rig.plugins import locustfile_module
from rig.ports import free_port

STOP_TIMEOUT_S = 30  # how long a stopping user may take to finish its task
BACKSTOP_S = 60  # past the planned end: the users' stop timeout, the workers' last reports, a margin


def locustfile() -> Path:
    """The registered locustfile (entry point group `rig.locustfiles`), as a path Locust can load."""
    module = locustfile_module()
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin:
        raise ConfigError(f"locustfile module {module!r} is not importable", fix="reinstall the rig (pip install -e .)")
    return Path(spec.origin)


@dataclass
class LocustProcesses:
    """The processes this run started (only these are ever signalled)."""

    master: subprocess.Popen[bytes] | None = None
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)
    logs: list[Path] = field(default_factory=list)

    def all(self) -> list[subprocess.Popen[bytes]]:
        return ([self.master] if self.master else []) + self.workers

    def stop(self) -> None:
        for proc in self.all():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 15
        for proc in self.all():
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _spawn(args: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    if "--worker" in args:
        env = {**env, LEDGER_ENV: str(log.with_suffix(".ledger.jsonl"))}
    with log.open("ab") as out:
        return spawn([sys.executable, "-m", "locust", "-f", str(locustfile()), *args], stdout=out,
                     stderr=subprocess.STDOUT, env=env)


def start_locust(run_dir: Path, plan_json: str, users: list[str], *, host: str = "", total_users: int,
                 spawn_rate: float,
                 duration_s: float, workers: int, expect_workers: int | None, secrets_json: str,
                 master_host: str | None = None, master_port: int | None = None, master_bind: str = "127.0.0.1",
                 worker_only: bool = False, env_extra: dict[str, str] | None = None) -> LocustProcesses:
    """Start the processes; `worker_only` joins a master elsewhere (`--master-host`). Each worker keeps a
    ledger of the reports it shipped next to its log (`locust-worker-N.ledger.jsonl`)."""
    env = {**os.environ, "RIG_LOAD_SECRETS": secrets_json, "PYTHONUNBUFFERED": "1", **(env_extra or {})}
    procs = LocustProcesses()
    # every process lets a stopping user finish its task (a user killed mid-request leaves a request the target
    # served and Locust never counted)
    common = ["--rig-plan", plan_json, "--rig-workers", str(max(workers, expect_workers or 0, 1)),
              "--stop-timeout", str(STOP_TIMEOUT_S), *users]
    # the master's own clock ends the run at `duration_s` (rig.load.locust_hooks); Locust's -t is the backstop
    backstop_s = int(max(1, duration_s)) + BACKSTOP_S
    run = ["--headless", "--host", host, "-u", str(total_users), "-r", str(spawn_rate), "-t", f"{backstop_s}s",
           "--csv", str(run_dir / "locust"), "--html", str(run_dir / "locust.html"),
           "--only-summary", "--loglevel", "WARNING"]
    port = master_port or free_port()
    if worker_only:
        for i in range(workers):
            log = run_dir / f"locust-worker-{i + 1}.log"
            procs.logs.append(log)
            procs.workers.append(_spawn(["--worker", "--master-host", master_host or "127.0.0.1", "--master-port",
                                         str(port), *common], log, env))
        return procs
    log = run_dir / "locust-master.log"
    procs.logs.append(log)
    if workers == 0 and not expect_workers:
        procs.master = _spawn([*run, *common], log, env)
        return procs
    procs.master = _spawn([*run, "--master", "--master-bind-host", master_bind, "--master-bind-port", str(port),
                           "--expect-workers", str(expect_workers or workers), *common], log, env)
    for i in range(workers):
        wlog = run_dir / f"locust-worker-{i + 1}.log"
        procs.logs.append(wlog)
        procs.workers.append(_spawn(["--worker", "--master-host", "127.0.0.1", "--master-port", str(port), *common],
                                    wlog, env))
    return procs


def wait_bounded(procs: LocustProcesses, timeout_s: float) -> int | None:
    """Wait for the master (or the only process) to exit; stop everything past the deadline."""
    main = procs.master or (procs.workers[0] if procs.workers else None)
    if main is None:
        return None
    try:
        code = main.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        code = None
    procs.stop()
    return code
