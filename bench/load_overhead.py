"""Rig overhead: bare Locust FastHttpUser reading an SSE stream vs the rig's instrumented reader.

    python bench/load_overhead.py [--seconds 20] [--users 20]

Both user classes run in the same Locust process at the same time, half the users each, reading the
same finished run's event stream (the workbench replays it from storage), so they compete for the same
CPU. The printed ratio is rig streams/s ÷ bare streams/s (goal ≥ 0.9).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

LOCUSTFILE = '''
import os, json, time
from locust import FastHttpUser, task, constant, events
from scenarios.load.sse_reader import read_stream
from scenarios.load.recorder import RECORDER, Sample

RUN = os.environ["BENCH_RUN"]; TOKEN = os.environ["BENCH_TOKEN"]
H = {"authorization": "Bearer " + TOKEN}

class BareStreamUser(FastHttpUser):
    wait_time = constant(0)
    @task
    def read(self):
        with self.client.get(f"/api/v1/runs/{RUN}/events", headers=H, stream=True, name="bare") as r:
            raw = r._response  # raw bytes, no decoding: the cheapest possible reader
            while raw.read(65536):
                pass

class RigStreamUser(FastHttpUser):
    wait_time = constant(0)
    @task
    def read(self):
        began = time.perf_counter_ns()
        with self.client.get(f"/api/v1/runs/{RUN}/events", headers=H, stream=True, name="rig") as r:
            t = read_stream(r)
        ms = lambda ns: (ns - began) / 1e6 if ns else 0.0
        for code, ns in (("T3", t.first_status_ns), ("T4", t.first_answer_ns), ("T5", t.end_ns)):
            events.request.fire(request_type=code, name="rig", response_time=ms(ns), response_length=0,
                                exception=None, context={})
        RECORDER.record([Sample("T3", "bench", "client", ms(t.first_status_ns)),
                         Sample("T4", "bench", "client", ms(t.first_answer_ns)),
                         Sample("T5", "bench", "client", ms(t.end_ns))])
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--users", type=int, default=20)
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    from _target import bench_target

    with tempfile.TemporaryDirectory() as tmp:
        bt = bench_target(Path(tmp) / "wb")
        try:
            sid = bt.adapter.open_session(bt.auth, bt.project, [bt.doc]).session_id
            sub = bt.adapter.ask(bt.auth, sid, "请查清买家保护与徽章关系并给依据。")
            events = list(bt.adapter.events(bt.auth, sub.run_id))
            lf = Path(tmp) / "bench_locustfile.py"
            lf.write_text(LOCUSTFILE)
            env = {**os.environ, "BENCH_RUN": sub.run_id, "BENCH_TOKEN": bt.auth.token,
                   "PYTHONPATH": str(HERE.parent)}
            csv_prefix = Path(tmp) / "bench"
            subprocess.run([sys.executable, "-m", "locust", "-f", str(lf), "--headless", "--host", bt.target.url,
                            "-u", str(args.users), "-r", str(args.users), "-t", f"{args.seconds}s", "--csv",
                            str(csv_prefix), "--only-summary", "--loglevel", "ERROR", "BareStreamUser",
                            "RigStreamUser"], env=env, check=True, capture_output=True)
            import csv

            rows = {r["Name"]: r for r in csv.DictReader((Path(f"{csv_prefix}_stats.csv")).open())
                    if r["Type"] in ("GET",)}
            bare, rig = float(rows["bare"]["Requests/s"]), float(rows["rig"]["Requests/s"])
            print(f"stream of {len(events)} events, {args.users} users for {args.seconds}s in one process")
            print(f"bare FastHttpUser: {bare:.1f} streams/s; rig reader: {rig:.1f} streams/s")
            print(f"overhead ratio (rig / bare): {rig / bare:.3f}  (goal ≥ 0.9)")
            print(json.dumps({"bare_streams_per_s": bare, "rig_streams_per_s": rig, "ratio": rig / bare}))
        finally:
            bt.target.cleanup()


if __name__ == "__main__":
    main()
