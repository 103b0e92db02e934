"""Timing fidelity: the rig's client-side first-answer stamp vs the server's own first-token timestamp.

    python bench/timing_fidelity.py [--levels 50,100,200] [--seconds 12]

For each level, one Locust process runs that many researcher streams at once (each user asks on its own
session and reads the stream, in a loop): half read through the rig's adapter on Locust's client (the
one SSE reader and typed events a load run's researcher uses), half with a bare baseline
that stamps the raw line holding the first answer token, so what the rig's parsing costs is apart
from what the server and the shared CPUs cost. For every run it takes the client wall
time at which the first answer token's event block was complete (`rig.clock.wall_ms`) minus the `ts_ms`
the workbench stamped on that event when it emitted it. Client and server share this machine's clock,
so the difference is what the rig adds or loses: delivery through the server's event loop, the
loopback socket and the client's greenlet scheduling. Goal at 100 streams: median ≤ 2 ms, p99 ≤ 10 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

LOCUSTFILE = r'''
import json, os, time
from locust import FastHttpUser, task, constant, events
from rig.adapters import WorkbenchAdapter
from rig.adapters.models import Auth, TokenEvent
from rig.clock import wall_ms
from rig.load.transport import LocustTransport

TOKEN = os.environ["BENCH_TOKEN"]; PROJECT = os.environ["BENCH_PROJECT"]; DOC = os.environ["BENCH_DOC"]
OUT = os.environ["BENCH_OUT"]
H = {"authorization": "Bearer " + TOKEN}
DELTAS = {"rig": [], "bare": []}
QUESTIONS = ["请查清买家保护与徽章关系并给依据。", "这篇论文的主要发现是什么？", "样本来自哪里？"]

class _Asker(FastHttpUser):
    abstract = True
    wait_time = constant(0)
    network_timeout = 120.0
    def on_start(self):
        r = self.client.post("/api/v1/sessions", json={"project_id": PROJECT, "scope": [DOC]},
                             headers=H, name="session")
        self.sid = r.json()["session_id"]
        self.n = 0
    def submit(self):
        self.n += 1
        q = QUESTIONS[self.n % len(QUESTIONS)]
        r = self.client.post(f"/api/v1/sessions/{self.sid}/messages", json={"content": q}, headers=H, name="ask")
        return r.json()["run_id"] if r.status_code == 202 else None

class RigReaderUser(_Asker):
    """The rig's path: the adapter on Locust's client, the one SSE reader, typed events."""
    def on_start(self):
        super().on_start()
        self.adapter = WorkbenchAdapter(self.host, transport=LocustTransport(self.client))
        self.auth = Auth(token=TOKEN, user_id="bench", username="bench")
    @task
    def ask(self):
        run = self.submit()
        if run is None:
            return
        events = list(self.adapter.events(self.auth, run))
        first = next((e for e in events if isinstance(e, TokenEvent) and e.kind == "answer"), None)
        if first is not None and first.server_ts_ms is not None:
            DELTAS["rig"].append(wall_ms(first.recv_ns) - first.server_ts_ms)

class BareReaderUser(_Asker):
    """Baseline: raw lines, stamped the moment the line holding the first answer token arrives."""
    @task
    def ask(self):
        run = self.submit()
        if run is None:
            return
        stamp, ts = None, None
        with self.client.get(f"/api/v1/runs/{run}/events", headers=H, stream=True, name="events") as resp:
            raw = resp._response
            while line := raw.readline(b"\n"):
                if stamp is None and line.startswith(b"data: ") and b'"kind": "answer"' in line:
                    stamp = time.perf_counter_ns()
                    ts = json.loads(line[6:])["ts_ms"]
        if stamp is not None:
            DELTAS["bare"].append(wall_ms(stamp) - ts)

@events.quitting.add_listener
def _save(environment, **_kw):
    with open(OUT, "w") as fh:
        json.dump(DELTAS, fh)
'''


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--levels", default="50,100,200")
    parser.add_argument("--seconds", type=int, default=12)
    parser.add_argument("--token-delay-ms", type=float, default=25.0,
                        help="model pacing between answer pieces; 0 makes every level a CPU saturation test")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    sys.path.insert(0, str(HERE))
    from _target import bench_target

    levels = [int(x) for x in args.levels.split(",")]
    print(f"model pacing: {args.token_delay_ms} ms between answer pieces, 200 ms before the first; "
          f"{os.cpu_count()} CPUs shared by target and client")
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        bt = bench_target(Path(tmp) / "wb", extra_args=["--slots", str(max(levels))])
        try:
            bt.adapter.chaos("PUT", "/settings", {"token_delay_ms": args.token_delay_ms, "first_token_delay_ms": 200})
            lf = Path(tmp) / "fidelity_locustfile.py"
            lf.write_text(LOCUSTFILE)
            for level in levels:
                out = Path(tmp) / f"deltas_{level}.json"
                env = {**os.environ, "BENCH_TOKEN": bt.auth.token, "BENCH_PROJECT": bt.project, "BENCH_DOC": bt.doc,
                       "BENCH_OUT": str(out), "PYTHONPATH": str(HERE.parent)}
                proc = subprocess.run([sys.executable, "-m", "locust", "-f", str(lf), "--headless", "--host", bt.target.url,
                                "-u", str(level), "-r", str(level), "-t", f"{args.seconds}s", "--only-summary",
                                "--loglevel", "ERROR", "--stop-timeout", "30"],
                               env=env, capture_output=True, text=True)
                if os.environ.get("BENCH_DEBUG"):
                    print(proc.stderr[-4000:])
                if not out.exists():
                    raise SystemExit(f"locust at {level} streams wrote no results:\n{proc.stderr[-3000:]}")
                both = json.loads(out.read_text())
                results[level] = {}
                for reader in ("rig", "bare"):
                    deltas = both[reader]
                    if not deltas:
                        print(f"{level:>4} streams, {reader}: no completed runs")
                        continue
                    row = {"runs": len(deltas), "median_ms": statistics.median(deltas), "p99_ms": _pct(deltas, 0.99),
                           "max_ms": max(deltas)}
                    results[level][reader] = row
                    print(f"{level:>4} streams, {reader:>4} reader: {row['runs']:>5} runs  client−server first token: "
                          f"median {row['median_ms']:.2f} ms, p99 {row['p99_ms']:.2f} ms, max {row['max_ms']:.2f} ms")
        finally:
            bt.target.cleanup()
    hundred = results.get(100, {}).get("rig")
    if hundred:
        met = hundred["median_ms"] <= 2 and hundred["p99_ms"] <= 10
        print(f"goal at 100 streams (median ≤ 2 ms, p99 ≤ 10 ms): {'met' if met else 'not met'}")
    print(json.dumps({str(k): v for k, v in results.items()}))


if __name__ == "__main__":
    main()
