"""Client capacity: how much load one Locust process offers through the rig, against bare Locust, in one run.

    python bench/client_capacity.py [--levels 50,100,200,400] [--seconds 60] [--saturation-users 200]
    python bench/client_capacity.py --levels ""      # the saturation rows alone (about a minute)

1. Live streams (`--levels`): at each level one Locust process runs that many users, half the rig's
   researcher (the configured adapter on Locust's client; while a stream is read only stamps and raw events
   are kept; typing, T-code derivation and recording wait for idle time — `rig.load.deriver`), half a bare
   FastHttpUser that posts the same question and reads raw lines. Both ask on their own session and read
   each answer to its end, in a loop, sharing the process's CPU. Per reader: runs completed, and the
   first-token lag — the client wall time at which the first answer token's event was complete minus the
   `ts_ms` the workbench stamped on it (one machine, one clock): what the client adds. Counted are runs that
   ended between `--warmup` seconds and the end of the window: the first burst of questions, all sent at
   once, is served in an order neither kind controls. The rig must complete ≥ 0.97 × the bare runs and keep
   its lag p99 ≤ 1.1 × the bare p99 at 200 and 400 streams.
2. Saturation (`--saturation-users`): the same finished run's stream read as fast as one process can, all-bare
   then all-rig, in separate processes. The stream is recorded off the workbench once and served by
   `bench/_stream_server.py`, which answers every request with the same bytes at a fraction of a reader's cost, so
   the client is the bottleneck for both readers (a live workbench at a whole core caps the bare reader first).
   Per reader: streams/s and events/s, the CPU seconds the Locust process spent per event and per stream (its own
   rusage from the first user to the last derivation — start-up imports are not the reader's cost), the server's
   CPU share over the same seconds, which side was the bottleneck (the one near a whole core), and the rig ÷ bare
   ratios. The rig's hot path should cost ≤ 1.2× the bare reader's CPU per event where the client is the
   bottleneck. Then the built-in adapter and the same target described in YAML (`docs/http-target.rig.yaml`:
   `target.http`, as every real target is read) alternately, twice each: `target.http`'s CPU per event over the
   built-in adapter's run before it, goal ≤ 1.3×.
3. Parsing one event off the hot path (in this process): the standard library's `json` vs `orjson`, and the
   typed event the derivation builds, per event of the same recorded stream.
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
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

LOCUSTFILE = r'''
import itertools, json, os, random, resource, time
from locust import FastHttpUser, task, constant, events
from rig.adapters.models import Auth, TokenEvent
from rig.clock import now_ns, wall_ms
from rig.load.plan import LoadPlan
from rig.load.process import DERIVER, RECORDER
from rig.load.transport import LocustTransport
from rig.adapters import load_adapter_class
from rig.measure.transcript import RunTranscript
from scenarios.load import ResearcherUser

TOKEN = os.environ["BENCH_TOKEN"]; PROJECT = os.environ["BENCH_PROJECT"]; DOC = os.environ["BENCH_DOC"]
OUT = os.environ["BENCH_OUT"]; REPLAY = os.environ.get("BENCH_REPLAY")
SESSIONS = json.loads(open(os.environ["BENCH_SESSIONS"]).read())
H = {"authorization": "Bearer " + TOKEN}
QUESTIONS = ["请查清买家保护与徽章关系并给依据。", "这篇论文的主要发现是什么？", "样本来自哪里？"]
RESULT = {"rig": [], "bare": [], "rig_streams": 0, "bare_streams": 0, "rig_events": 0, "bare_events": 0}
_started = [0.0]
_cpu = [0.0]  # this process's CPU seconds when the users started: start-up (imports) is not the reader's cost
_origin = [0]  # rig clock at the start: run end times are kept relative to it (seconds)
_ORDINALS = {"rig": itertools.count(), "bare": itertools.count()}


def seat(kind):
    """The k-th user of either kind: a session opened before the run (so both kinds start asking at once,
    whatever order the target serves set-up requests in), and the same questions in the same random order as
    the k-th user of the other kind (answers of different lengths spread the turns, so neither kind's count
    hinges on where the window happens to end)."""
    k = next(_ORDINALS[kind])
    rng = random.Random(k)

    def questions():
        while True:
            yield rng.choice(QUESTIONS)
    return SESSIONS[2 * k + (kind == "bare")], questions()

@events.test_start.add_listener
def _start(**_kw):
    _started[0] = time.monotonic()
    _origin[0] = now_ns()
    _cpu[0] = _cpu_s()


def _cpu_s():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


class BareUser(FastHttpUser):
    """Baseline: post the question, read raw lines, stamp the one holding the first answer token."""
    abstract = True
    wait_time = constant(0)
    network_timeout = 120.0
    def on_start(self):
        self.sid, self.questions = seat("bare")
    @task
    def ask(self):
        if REPLAY:
            run = REPLAY
        else:
            r = self.client.post(f"/api/v1/sessions/{self.sid}/messages", json={"content": next(self.questions)},
                                 headers=H, name="ask")
            if r.status_code != 202:
                return
            run = r.json()["run_id"]
        stamp, ts, n = None, None, 0
        with self.client.get(f"/api/v1/runs/{run}/events", headers=H, stream=True, name="events") as resp:
            raw = resp._response
            while line := raw.readline(b"\n"):
                if line.startswith(b"event: "):
                    n += 1
                if stamp is None and line.startswith(b"data: ") and b'"kind": "answer"' in line:
                    stamp = now_ns()
                    ts = json.loads(line[6:])["ts_ms"]
        RESULT["bare_streams"] += 1
        RESULT["bare_events"] += n
        if stamp is not None and not REPLAY:
            RESULT["bare"].append([(now_ns() - _origin[0]) / 1e9, wall_ms(stamp) - ts])


class BareStreamUser(BareUser):
    pass


class RigStreamUser(ResearcherUser):
    """The rig's researcher path: ask, follow (raw, stamped), finish, derivation when the loop is idle."""
    wait_time = constant(0)
    network_timeout = 120.0
    def on_start(self):
        self.plan = LoadPlan(target_url=self.host, project_by_user={"bench": PROJECT}, paper_sets=[],
                             usernames=["bench"], fetch_detail=False)
        self.transport = LocustTransport(self.client)
        self.adapter = load_adapter_class(self.plan.adapter).connect(self.host, transport=self.transport)
        self.auth = Auth(token=TOKEN, user_id="bench", username="bench")
        self.username = "bench"
        self.session_id, self.questions = seat("rig")
    def turn(self):
        if REPLAY:
            self.follow(RunTranscript(run_id=REPLAY, submit_ns=now_ns()), "bench")
        else:
            self.ask(next(self.questions), "bench")
    def derive(self, run, scenario, raw):
        super().derive(run, scenario, raw)  # the rig's own derivation and recording, off the hot path
        RESULT["rig_streams"] += 1
        RESULT["rig_events"] += len(raw)
        first = run.first_answer_token()
        if first is not None and first.server_ts_ms is not None and not REPLAY and run.end_ns is not None:
            RESULT["rig"].append([(run.end_ns - _origin[0]) / 1e9, wall_ms(first.recv_ns) - first.server_ts_ms])


class RigHttpStreamUser(RigStreamUser):
    """The same reader through the reference target described in YAML (`target.http`, BENCH_HTTP_CONFIG): what
    every real target is read through, against the built-in adapter above."""
    def on_start(self):
        super().on_start()
        from pathlib import Path
        from rig.config import load_config
        target = load_config(Path(os.environ["BENCH_HTTP_CONFIG"])).target
        self.plan = self.plan.model_copy(update={"adapter": target.adapter,
                                                 "adapter_options": target.adapter_options()})
        self.adapter = load_adapter_class(self.plan.adapter).connect(self.host, transport=self.transport,
                                                                     options=self.plan.adapter_options)


@events.quitting.add_listener
def _save(environment, **_kw):
    DERIVER.drain()
    RESULT["seconds"] = time.monotonic() - _started[0]
    RESULT["cpu_s"] = _cpu_s() - _cpu[0]  # from the first user to the last derivation
    RESULT["deriver"] = {"idle": DERIVER.done, "inline": DERIVER.inline, "peak_backlog": DERIVER.peak,
                         "failed": DERIVER.failed}
    with open(OUT, "w") as fh:
        json.dump(RESULT, fh)
'''


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def _parsing(events: list[Any]) -> dict[str, float]:
    """Microseconds per event: decoding its data with json and with orjson, and building the typed event."""
    import timeit

    import orjson

    from rig.adapters.models import make_event

    datas = [json.dumps(e.data, ensure_ascii=False) for e in events]
    rounds = max(1, 20000 // len(datas))

    def per_event(fn: Any) -> float:
        return timeit.timeit(fn, number=rounds) / rounds / len(datas) * 1e6

    decoded = [orjson.loads(d) for d in datas]
    return {"json_us": per_event(lambda: [json.loads(d) for d in datas]),
            "orjson_us": per_event(lambda: [orjson.loads(d) for d in datas]),
            "typed_us": per_event(lambda: [make_event(e.event, e.id, d, 0) for e, d in zip(events, decoded,
                                                                                          strict=True)])}


def _stream_server(body: Path, port_file: Path) -> tuple[subprocess.Popen[bytes], str]:
    """bench/_stream_server.py serving `body` on a free loopback port; its process and URL."""
    proc = subprocess.Popen([sys.executable, str(HERE / "_stream_server.py"), str(body), str(port_file)])
    for _ in range(200):
        if port_file.exists() and port_file.read_text():
            return proc, f"http://127.0.0.1:{port_file.read_text()}"
        if proc.poll() is not None:
            raise SystemExit("the stream server did not start")
        time.sleep(0.05)  # polling for the port file the server writes once it listens
    proc.kill()
    raise SystemExit("the stream server did not listen within 10 s")


def _cpu_of(proc: subprocess.Popen[bytes]) -> float:
    """CPU seconds a running child has used (psutil)."""
    import psutil

    t = psutil.Process(proc.pid).cpu_times()
    return t.user + t.system


def _locust(lf: Path, url: str, users: int, seconds: int, classes: list[str], env: dict[str, str],
            out: Path) -> dict[str, Any]:
    """One Locust process's results; a derivation that failed in it stops the bench (its numbers would be wrong)."""
    proc = subprocess.run([sys.executable, "-m", "locust", "-f", str(lf), "--headless", "--host", url, "-u", str(users),
                           "-r", str(users), "-t", f"{seconds}s", "--only-summary", "--loglevel", "ERROR",
                           "--stop-timeout", "30", *classes], env={**env, "BENCH_OUT": str(out)},
                          capture_output=True, text=True)
    if not out.exists():
        raise SystemExit(f"locust with {users} users wrote no results:\n{proc.stderr[-3000:]}")
    got = dict(json.loads(out.read_text()))
    if got["deriver"]["failed"]:
        raise SystemExit(f"{got['deriver']['failed']} run(s) failed to derive in the rig's reader:\n"
                         f"{proc.stderr[-3000:]}")
    return got


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--levels", default="50,100,200,400")
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--warmup", type=float, default=10.0, help="runs ending before this are not counted")
    parser.add_argument("--saturation-seconds", type=int, default=20)
    parser.add_argument("--saturation-users", type=int, default=200)
    parser.add_argument("--token-delay-ms", type=float, default=25.0)
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    sys.path.insert(0, str(HERE))
    from _target import bench_target

    levels = [int(x) for x in args.levels.split(",") if x.strip()]
    print(f"{os.cpu_count()} CPUs shared by the target and the client; model pacing {args.token_delay_ms} ms, "
          f"200 ms before the first answer piece; runs ending in [{args.warmup:g} s, {args.seconds} s] counted")
    report: dict[str, Any] = {"live": {}, "saturation": {}}
    with tempfile.TemporaryDirectory() as tmp:
        bt = bench_target(Path(tmp) / "wb", extra_args=["--slots", str(max(levels + [args.saturation_users]))])
        try:
            bt.adapter.chaos("PUT", "/settings", {"token_delay_ms": args.token_delay_ms, "first_token_delay_ms": 200})
            lf = Path(tmp) / "capacity_locustfile.py"
            lf.write_text(LOCUSTFILE)
            most = max(levels + [args.saturation_users])
            sessions = Path(tmp) / "sessions.json"
            sessions.write_text(json.dumps([bt.adapter.open_session(bt.auth, bt.project, [bt.doc]).session_id
                                            for _ in range(most + 1)]))
            env = {**os.environ, "BENCH_TOKEN": bt.auth.token, "BENCH_PROJECT": bt.project, "BENCH_DOC": bt.doc,
                   "BENCH_SESSIONS": str(sessions), "PYTHONPATH": str(HERE.parent)}
            print("\nlive streams (half rig, half bare, one process)")
            print(f"{'streams':>7} {'runs rig':>9} {'runs bare':>9} {'ratio':>6}  {'lag p50 rig/bare ms':>20}  "
                  f"{'lag p99 rig/bare ms':>20} {'ratio':>6}  deriver (idle/inline/peak)")
            for level in levels:
                got = _locust(lf, bt.target.url, level, args.seconds, ["RigStreamUser", "BareStreamUser"], env,
                              Path(tmp) / f"live_{level}.json")
                rig, bare = ([lag for end, lag in got[k] if args.warmup <= end <= args.seconds] for k in ("rig", "bare"))
                row = {"runs_rig": len(rig), "runs_bare": len(bare), "runs_ratio": len(rig) / max(1, len(bare)),
                       "lag_p50_rig_ms": statistics.median(rig) if rig else None,
                       "lag_p50_bare_ms": statistics.median(bare) if bare else None,
                       "lag_p99_rig_ms": _pct(rig, 0.99) if rig else None,
                       "lag_p99_bare_ms": _pct(bare, 0.99) if bare else None, "deriver": got["deriver"]}
                row["lag_p99_ratio"] = (row["lag_p99_rig_ms"] / row["lag_p99_bare_ms"]
                                        if rig and bare and row["lag_p99_bare_ms"] else None)
                report["live"][level] = row
                d = got["deriver"]
                print(f"{level:>7} {len(rig):>9} {len(bare):>9} {row['runs_ratio']:>6.3f}  "
                      f"{row['lag_p50_rig_ms'] or 0:>9.1f} / {row['lag_p50_bare_ms'] or 0:>7.1f}  "
                      f"{row['lag_p99_rig_ms'] or 0:>9.1f} / {row['lag_p99_bare_ms'] or 0:>7.1f} "
                      f"{row['lag_p99_ratio'] or 0:>6.3f}  {d['idle']}/{d['inline']}/{d['peak_backlog']}")
            sid = bt.adapter.open_session(bt.auth, bt.project, [bt.doc]).session_id
            finished = bt.adapter.ask(bt.auth, sid, QUESTION)
            raws = list(bt.adapter.raw_events(bt.auth, finished.run_id))
            events = [bt.adapter.typed(r) for r in raws]
            env["BENCH_REPLAY"] = finished.run_id
            body = Path(tmp) / "stream.txt"
            body.write_bytes(b"".join(f"id: {r.id}\nevent: {r.event}\ndata: {r.data}\n\n".encode() for r in raws))
            server, url = _stream_server(body, Path(tmp) / "port")
            print(f"\nsaturation: {args.saturation_users} users read a finished run's stream ({len(events)} events, "
                  f"{body.stat().st_size} bytes) as fast as one process can, served by bench/_stream_server.py")
            env["BENCH_HTTP_CONFIG"] = str(HERE.parent / "docs" / "http-target.rig.yaml")
            rounds: dict[str, list[float]] = {}
            try:
                for reader, cls in (("bare", "BareStreamUser"), ("rig", "RigStreamUser"), ("http", "RigHttpStreamUser"),
                                    ("rig", "RigStreamUser"), ("http", "RigHttpStreamUser")):
                    server_cpu0 = _cpu_of(server)
                    got = _locust(lf, url, args.saturation_users, args.saturation_seconds, [cls], env,
                                  Path(tmp) / f"sat_{reader}.json")
                    client_s, server_s = got["cpu_s"], _cpu_of(server) - server_cpu0
                    kind = "bare" if reader == "bare" else "rig"
                    n_streams, n_events = got[f"{kind}_streams"], got[f"{kind}_events"]
                    streams, evs = n_streams / got["seconds"], n_events / got["seconds"]
                    row = {"streams_per_s": streams, "events_per_s": evs, "cpu_s": client_s,
                           "cpu_us_per_event": 1e6 * client_s / max(1, n_events),
                           "cpu_ms_per_stream": 1e3 * client_s / max(1, n_streams),
                           "client_share": client_s / got["seconds"], "server_share": server_s / got["seconds"]}
                    row["bottleneck"] = "client" if row["client_share"] >= 0.85 else \
                        "server" if row["server_share"] >= 0.85 else "neither (shared CPUs)"
                    report["saturation"].setdefault(reader, row)  # the first of each; both rounds kept below
                    rounds.setdefault(reader, []).append(row["cpu_us_per_event"])
                    print(f"  {reader:>4}: {streams:8.1f} streams/s  {evs:9.0f} events/s  "
                          f"{row['cpu_us_per_event']:6.2f} µs CPU/event  {row['cpu_ms_per_stream']:6.2f} ms CPU/stream  "
                          f"client {row['client_share']:.0%} / server {row['server_share']:.0%} of a core → "
                          f"bottleneck: {row['bottleneck']}")
            finally:
                server.terminate()
                server.wait(10)
            sat = report["saturation"]
            sat["ratio"] = sat["rig"]["streams_per_s"] / sat["bare"]["streams_per_s"]
            sat["cpu_per_event_ratio"] = sat["rig"]["cpu_us_per_event"] / sat["bare"]["cpu_us_per_event"]
            print(f"  rig / bare: throughput {sat['ratio']:.3f}, CPU per event {sat['cpu_per_event_ratio']:.2f}× "
                  f"(goal ≤ 1.2× where the client is the bottleneck)")
            pairs = [h / b for b, h in zip(rounds["rig"], rounds["http"], strict=True)]  # each http run after a built-in
            sat["http_per_builtin"] = statistics.median(pairs)
            print(f"  target.http / built-in adapter, CPU per event, run after run: "
                  f"{', '.join(f'{x:.2f}' for x in pairs)}× (goal ≤ 1.3×: {'met' if max(pairs) <= 1.3 else 'NOT met'})")
            parse = report["parsing"] = _parsing(events)
            print(f"\nparsing one event (off the hot path): json {parse['json_us']:.2f} µs, orjson "
                  f"{parse['orjson_us']:.2f} µs (json / orjson: {parse['json_us'] / parse['orjson_us']:.1f}×); "
                  f"the typed event {parse['typed_us']:.2f} µs")
        finally:
            bt.target.cleanup()
    goals = [lvl for lvl in (200, 400) if lvl in report["live"]]
    for level in goals:
        row = report["live"][level]
        met = row["runs_ratio"] >= 0.97 and (row["lag_p99_ratio"] or 99) <= 1.1
        print(f"goal at {level} streams (runs ≥ 0.97 × bare, lag p99 ≤ 1.1 × bare): {'met' if met else 'NOT met'}")
    print(json.dumps(report))


QUESTION = "请查清买家保护与徽章关系并给依据。"

if __name__ == "__main__":
    main()
