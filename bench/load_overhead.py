"""Rig overhead: a bare Locust FastHttpUser reading an SSE stream vs the rig's adapter-driven researcher.

    python bench/load_overhead.py [--seconds 20] [--users 20] [--adapter workbench|http]

Both user classes run in the same Locust process at the same time, half the users each, reading the
same finished run's event stream (the workbench replays it from storage), so they compete for the same
CPU. The rig user goes the whole way a load run's researcher goes: the configured adapter on a Locust
transport, the one SSE reader, typed events, the T-code derivation, Locust rows and the recorder. The
printed ratio is rig streams/s ÷ bare streams/s (goal ≥ 0.97). `--adapter http` runs the rig user on the
declarative adapter described by docs/http-target.rig.yaml instead of the built-in WorkbenchAdapter.
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
import json
import os
from locust import FastHttpUser, task, constant
from rig.adapters import load_adapter_class
from rig.adapters.models import Auth
from rig.clock import now_ns
from rig.load.plan import LoadPlan
from rig.load.transport import LocustTransport
from rig.measure.transcript import RunTranscript
from scenarios.load import ResearcherUser

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

class RigStreamUser(ResearcherUser):
    # the researcher's own path: the configured adapter on Locust's client, the one SSE reader, typed events,
    # rig.measure's derivation, Locust rows for the T-codes and the process recorder (Prometheus metrics)
    wait_time = constant(0)
    def on_start(self):
        self.plan = LoadPlan(target_url=self.host, project_by_user={}, paper_sets=[], usernames=["bench"],
                             fetch_detail=False, adapter=os.environ["BENCH_ADAPTER"],
                             adapter_options=json.loads(os.environ["BENCH_ADAPTER_OPTIONS"]))
        self.transport = LocustTransport(self.client)
        self.adapter = load_adapter_class(self.plan.adapter).connect(self.host, transport=self.transport,
                                                                     options=self.plan.adapter_options)
        self.auth = Auth(token=TOKEN, user_id="bench", username="bench")
        self.username = "bench"
    def turn(self):
        self.follow(RunTranscript(run_id=RUN, submit_ns=now_ns()), "bench")
'''


def adapter_env(kind: str) -> dict[str, str]:
    """The rig user's adapter: the built-in one, or the declarative one from docs/http-target.rig.yaml."""
    if kind == "workbench":
        return {"BENCH_ADAPTER": "rig.adapters:WorkbenchAdapter", "BENCH_ADAPTER_OPTIONS": "{}"}
    import yaml

    spec = yaml.safe_load((HERE.parent / "docs" / "http-target.rig.yaml").read_text(encoding="utf-8"))["target"]["http"]
    return {"BENCH_ADAPTER": "rig.adapters.http:HttpAdapter", "BENCH_ADAPTER_OPTIONS": json.dumps({"http": spec})}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--adapter", choices=("workbench", "http"), default="workbench")
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
                   "PYTHONPATH": str(HERE.parent), **adapter_env(args.adapter)}
            csv_prefix = Path(tmp) / "bench"
            subprocess.run([sys.executable, "-m", "locust", "-f", str(lf), "--headless", "--host", bt.target.url,
                            "-u", str(args.users), "-r", str(args.users), "-t", f"{args.seconds}s", "--csv",
                            str(csv_prefix), "--only-summary", "--loglevel", "ERROR", "BareStreamUser",
                            "RigStreamUser"], env=env, check=True, capture_output=True)
            import csv

            rows = {r["Name"]: r for r in csv.DictReader((Path(f"{csv_prefix}_stats.csv")).open())
                    if r["Type"] in ("GET",)}
            bare, rig = float(rows["bare"]["Requests/s"]), float(rows["events"]["Requests/s"])
            print(f"stream of {len(events)} events, {args.users} users for {args.seconds}s in one process, "
                  f"{args.adapter} adapter")
            print(f"bare FastHttpUser: {bare:.1f} streams/s; rig researcher: {rig:.1f} streams/s")
            print(f"overhead ratio (rig / bare): {rig / bare:.3f}  (goal ≥ 0.97)")
            print(json.dumps({"adapter": args.adapter, "bare_streams_per_s": bare, "rig_streams_per_s": rig,
                              "ratio": rig / bare}))
        finally:
            bt.target.cleanup()


if __name__ == "__main__":
    main()
