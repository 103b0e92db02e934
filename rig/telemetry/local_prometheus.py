"""A Prometheus server (and Pushgateway) from the system's packages, on loopback, owned by this process.

Used where dashboards are checked against real Prometheus and by local runs that want one: start it
with scrape targets, query it through its HTTP API, stop it (by the PID it was started with).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import httpx
import yaml

from rig.errors import RigError
from rig.jsonvalue import ForeignJson, JsonObject
from rig.lifeline import spawn
from rig.ports import free_port
from rig.waiting import wait_until


class LocalProcess:
    """A server binary started on a free loopback port, waited for until `ready_path` answers 200."""

    binary = ""
    ready_path = "/-/ready"

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def args(self) -> list[str]:
        raise NotImplementedError

    def start(self) -> LocalProcess:
        exe = shutil.which(self.binary)
        if exe is None:
            raise RigError(f"{self.binary} is not installed", fix=f"apt-get install -y {self.binary}")
        self.data_dir.mkdir(parents=True, exist_ok=True)
        log = (self.data_dir / f"{self.binary}.log").open("wb")
        self.proc = spawn([exe, *self.args()], stdout=log, stderr=subprocess.STDOUT)
        if not wait_until(self._ready, 30.0, interval_s=0.2):
            self.stop()
            raise RigError(f"{self.binary} did not become ready on {self.url}",
                           fix=f"see {self.data_dir / (self.binary + '.log')}")
        return self

    def _ready(self) -> bool:
        if self.proc is not None and self.proc.poll() is not None:
            raise RigError(f"{self.binary} exited with {self.proc.returncode}",
                           fix=f"see {self.data_dir / (self.binary + '.log')}")
        try:
            return httpx.get(self.url + self.ready_path, timeout=1.0).status_code == 200
        except httpx.HTTPError:
            return False

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self) -> LocalProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class LocalPushgateway(LocalProcess):
    binary = "prometheus-pushgateway"

    def args(self) -> list[str]:
        return [f"--web.listen-address=127.0.0.1:{self.port}"]


class LocalPrometheus(LocalProcess):
    """Prometheus scraping `targets` (job name → list of host:port) every `interval_s`."""

    binary = "prometheus"

    def __init__(self, data_dir: Path, targets: dict[str, list[str]], interval_s: float = 1.0) -> None:
        super().__init__(data_dir)
        self.targets = targets
        self.interval_s = interval_s

    def config(self) -> JsonObject:
        """prometheus.yml: a scrape job per target list, at the chosen interval."""
        jobs = [{"job_name": job, "honor_labels": job == "pushgateway", "static_configs": [{"targets": hosts}]}
                for job, hosts in self.targets.items()]
        every = f"{max(1, round(self.interval_s * 1000))}ms"  # Prometheus durations take no decimals
        return {"global": {"scrape_interval": every, "evaluation_interval": every},
                "scrape_configs": jobs}

    def args(self) -> list[str]:
        config = self.data_dir / "prometheus.yml"
        config.write_text(yaml.safe_dump(self.config()), encoding="utf-8")
        return [f"--config.file={config}", f"--storage.tsdb.path={self.data_dir / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{self.port}"]

    def query(self, expr: str) -> list[ForeignJson]:
        """An instant query; a PromQL error is raised with Prometheus's own message."""
        resp = httpx.get(f"{self.url}/api/v1/query", params={"query": expr}, timeout=10.0)
        body = resp.json()
        if body.get("status") != "success":
            raise RigError(f"PromQL error in {expr!r}: {body.get('error')}", fix="fix the panel query")
        result: list[ForeignJson] = body["data"]["result"]  # Prometheus's vector: {metric, value} each
        return result
