"""Open streams per worker: how many live event streams one Locust process holds, and RSS per stream.

    python bench/open_streams.py [--streams 1000,2000] [--timeout 90]

The workbench is told to hold its first answer token back for minutes, so one run stays live and
every stream stays open on it. One Locust process (the same as one `rig load` worker) spawns that
many users; each opens the run's event stream through the rig's adapter on Locust's client and
blocks on it. A sampler in
the process reports how many streams have received their first event and the process's RSS; the
benchmark prints the count reached and (RSS at that count − RSS before the first user) ÷ count.
Goal: ≥ 1000 open streams per worker.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

LOCUSTFILE = r'''
import json, os
import gevent
from locust import FastHttpUser, task, constant, events
from rig.adapters import WorkbenchAdapter
from rig.adapters.models import Auth
from rig.load.transport import LocustTransport

RUN = os.environ["BENCH_RUN"]; TOKEN = os.environ["BENCH_TOKEN"]; OUT = os.environ["BENCH_OUT"]
H = {"authorization": "Bearer " + TOKEN}
STATE = {"open": 0, "failed": 0, "ended": 0}

def _rss_kb():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0

def _sampler():
    while True:
        tmp = OUT + ".tmp"
        with open(tmp, "w") as fh:
            json.dump({**STATE, "rss_kb": _rss_kb()}, fh)
        os.replace(tmp, OUT)
        gevent.sleep(0.25)

@events.init.add_listener
def _start(environment, **_kw):
    gevent.spawn(_sampler)

class HolderUser(FastHttpUser):
    wait_time = constant(3600)
    network_timeout = 600.0
    connection_timeout = 30.0
    def on_start(self):
        self.adapter = WorkbenchAdapter(self.host, transport=LocustTransport(self.client))
        self.auth = Auth(token=TOKEN, user_id="bench", username="bench")
    @task
    def hold(self):
        counted = False
        try:
            for _event in self.adapter.events(self.auth, RUN, timeout_s=600):
                if not counted:  # the first event: the stream is open and being read
                    STATE["open"] += 1
                    counted = True
        except Exception:
            STATE["failed"] += 1
        finally:
            if counted:
                STATE["open"] -= 1
                STATE["ended"] += 1
'''


def _sample(path: Path) -> dict[str, int]:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--streams", default="1000,2000")
    parser.add_argument("--timeout", type=float, default=90.0, help="seconds to wait for each level to open")
    args = parser.parse_args()
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    sys.path.insert(0, str(HERE))
    from _target import bench_target

    levels = [int(x) for x in args.streams.split(",")]
    print(f"file descriptor limit {hard}; target and client on {os.cpu_count()} shared CPUs")
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        bt = bench_target(Path(tmp) / "wb")
        try:
            bt.adapter.chaos("PUT", "/settings", {"first_token_delay_ms": 600_000})
            lf = Path(tmp) / "open_streams_locustfile.py"
            lf.write_text(LOCUSTFILE)
            for level in levels:
                sid = bt.adapter.open_session(bt.auth, bt.project, [bt.doc]).session_id
                run = bt.adapter.ask(bt.auth, sid, "请查清买家保护与徽章关系并给依据。").run_id
                out = Path(tmp) / f"open_{level}.json"
                env = {**os.environ, "BENCH_RUN": run, "BENCH_TOKEN": bt.auth.token, "BENCH_OUT": str(out),
                       "PYTHONPATH": str(HERE.parent)}
                proc = subprocess.Popen([sys.executable, "-m", "locust", "-f", str(lf), "--headless", "--host",
                                         bt.target.url, "-u", str(level), "-r", "250", "-t",
                                         f"{int(args.timeout) + 30}s", "--only-summary", "--loglevel", "ERROR",
                                         "--stop-timeout", "5"],
                                        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                try:
                    base = None
                    best: dict[str, int] = {}
                    began = time.monotonic()
                    while time.monotonic() - began < args.timeout and proc.poll() is None:
                        snap = _sample(out)
                        if snap and base is None:
                            base = snap["rss_kb"]
                        if snap.get("open", 0) >= best.get("open", 0):
                            best = snap
                        if snap.get("open", 0) >= level:
                            break
                        time.sleep(0.25)
                    elapsed = time.monotonic() - began
                finally:
                    bt.adapter.stop(bt.auth, run)
                    proc.terminate()
                    try:
                        proc.wait(timeout=30)
                    except subprocess.TimeoutExpired:
                        proc.kill()
                        proc.wait()
                opened = best.get("open", 0)
                per_stream = (best["rss_kb"] - (base or 0)) / opened if opened else float("nan")
                results[level] = {"open": opened, "failed": best.get("failed", 0), "rss_mb": best.get("rss_kb", 0) / 1024,
                                  "base_rss_mb": (base or 0) / 1024, "rss_kb_per_stream": per_stream,
                                  "seconds_to_open": elapsed}
                print(f"{level:>5} asked: {opened:>5} open at once after {elapsed:.1f} s, {best.get('failed', 0)} failed; "
                      f"RSS {results[level]['rss_mb']:.1f} MiB (base {results[level]['base_rss_mb']:.1f}), "
                      f"{per_stream:.1f} KiB per stream")
        finally:
            bt.target.cleanup()
    reached = max((r["open"] for r in results.values()), default=0)
    print(f"most open streams held by one worker process: {reached}  (goal ≥ 1000: {'met' if reached >= 1000 else 'not met'})")
    print(json.dumps({str(k): v for k, v in results.items()}))


if __name__ == "__main__":
    main()
