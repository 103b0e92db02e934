"""TTFT and ITL fidelity with ground truth: the rig's timings of each request against the server's own log of it.

    python bench/ttft_fidelity.py [--levels 50,100,200,400] [--seconds 20] [--tokens 64] [--delay-ms 10]

An OpenAI-compatible mock (`workbench.openai_compat`: asyncio, a few percent of a core) streams `--tokens` pieces
`--delay-ms` apart and logs, per request, when it took the request and when it sent each token (wall clock, ns). At
each level one Locust process runs that many streams at once, first through the rig — the target described in
YAML (`docs/targets/openai.rig.yaml`, the HTTP adapter on Locust's client, its collector settled at the test's start:
what `rig load` does) — then through a bare reader (a stock `FastHttpUser` reading lines and stamping the first and
last content line), each in a process of its own so their CPU is apart. Every request is matched to the server's log
by the completion id its chunks carry:

- TTFT error: the client's submit → first answer piece, minus the server's took → first piece sent;
- ITL error: the client's mean gap between pieces after the first, minus the server's;
- CPU µs per token and per stream (the Locust process's rusage over its run), and the client's loop lag p95.

Requests sent in the first `--warmup` seconds (every user spawning at once) are left out of the errors.

Ratios are against the bare reader of the same level, in this invocation. CPU per token is compared a second way,
the one to trust on a machine whose speed drifts between runs (a shared VM's does by ±30 % over minutes): `--cpu-pairs`
times, a rig reader and a bare reader run side by side at `--cpu-level` streams each, so both see the same machine;
their median ratio is the figure; each pair also prints the garbage collector's share of each reader's CPU. Goals
(2 cores, 100 streams, 64 tokens at 10 ms): rig TTFT error p50 ≤ 15 ms and p99 ≤ 150 ms; rig CPU per token ≤ 1.2× the
bare reader's.
At 200 streams the rig meets the same bound or its client is saturated by `rig load`'s limits (rig.load.headroom),
which each row says.
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

import yaml

from rig.load.headroom import CPU_LIMIT_PCT, LAG_LIMIT_MS

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
KEY = "bench-key"

LOCUSTFILE = r'''
import gc, json, os, re, resource, time
import gevent
from locust import FastHttpUser, task, constant, events
from rig.adapters import load_adapter_class
from rig.adapters.models import TokenEvent
from rig.clock import now_ns, wall_ms
from rig.config import load_config
from rig.load.collector import settle_for_load
from rig.load.transport import LocustTransport
from rig.measure.transcript import RunTranscript
from pathlib import Path

OUT, READER = os.environ["BENCH_OUT"], os.environ["BENCH_READER"]
ROWS, LAG, CPU = [], [], {}
BODY = {"model": "mock", "stream": True, "stream_options": {"include_usage": True},
        "messages": [{"role": "user", "content": "How did the buyer protection program change trust?"}]}
ID = re.compile(rb'"id": "([^"]+)"')


CONFIG = load_config(Path(os.environ["BENCH_CONFIG"])) if os.environ.get("BENCH_CONFIG") else None


class RigReader(FastHttpUser):
    """The rig's path: the target described in YAML, the HTTP adapter on Locust's client."""
    wait_time = constant(0)
    network_timeout = 120.0
    def on_start(self):
        config = CONFIG
        self.adapter = load_adapter_class(config.target.adapter).connect(
            self.host, transport=LocustTransport(self.client), options=config.target.adapter_options())
        self.auth = self.adapter.login("bench", os.environ["RIG_OPENAI_KEY"])
        self.session = self.adapter.open_session(self.auth, "", []).session_id
    @task
    def ask(self):
        # as a load user reads a run: its raw events, then the ones its measures read typed (add_measured)
        sub = self.adapter.ask(self.auth, self.session, "How did the buyer protection program change trust?")
        run = RunTranscript(run_id=sub.run_id, submit_ns=sub.submit_ns)
        run.add_measured(list(self.adapter.raw_events(self.auth, sub.run_id)), self.adapter.typed)
        answers = [e for e in run.events if isinstance(e, TokenEvent) and e.kind == "answer" and e.text]
        pieces = sorted([e.recv_ns for e in answers] + run.piece_ns)
        rid = answers[0].data.get("request_id") if answers else None
        if pieces and rid:
            ROWS.append([rid, wall_ms(sub.submit_ns), wall_ms(pieces[0]), wall_ms(pieces[-1]), len(pieces)])


class BareReader(FastHttpUser):
    """Baseline: the same request, raw lines, the first and last content line stamped as they arrive."""
    wait_time = constant(0)
    network_timeout = 120.0
    @task
    def ask(self):
        submit, first, last, n, rid = now_ns(), None, None, 0, None
        with self.client.post("/v1/chat/completions", json=BODY, stream=True, name="ask",
                              headers={"authorization": "Bearer " + os.environ["RIG_OPENAI_KEY"]}) as resp:
            raw = resp._response
            while line := raw.readline(b"\n"):
                if b'"content": "' in line and b'"content": ""' not in line:
                    last = now_ns()
                    first = first or last
                    n += 1
                    if rid is None:
                        m = ID.search(line)
                        rid = m.group(1).decode() if m else None
        if first and rid:
            ROWS.append([rid, wall_ms(submit), wall_ms(first), wall_ms(last), n])


def _lag_probe():
    while True:
        began = time.perf_counter()
        gevent.sleep(0.2)
        LAG.append(max(0.0, (time.perf_counter() - began - 0.2) * 1000))


@events.test_start.add_listener
def _start(environment, **_kw):
    CPU["start"] = resource.getrusage(resource.RUSAGE_SELF)
    if READER == "rig":  # as every process `rig load` runs users in does at the test's start (rig.load.collector)
        settle_for_load()
    gc.callbacks.append(_collector_time)
    gevent.spawn(_lag_probe)


def _collector_time(phase, info):
    if phase == "start":
        CPU["gc_began"] = time.process_time()
    elif "gc_began" in CPU:
        CPU["gc_s"] = CPU.get("gc_s", 0.0) + time.process_time() - CPU.pop("gc_began")


@events.quitting.add_listener
def _save(environment, **_kw):
    end, start = resource.getrusage(resource.RUSAGE_SELF), CPU["start"]
    cpu_s = (end.ru_utime - start.ru_utime) + (end.ru_stime - start.ru_stime)
    with open(OUT, "w") as fh:
        json.dump({"rows": ROWS, "lag": LAG, "cpu_s": cpu_s, "gc_s": CPU.get("gc_s", 0.0)}, fh)
'''


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def _bench_config(tmp: Path, url: str) -> Path:
    """docs/targets/openai.rig.yaml, its token rule also keeping the completion id (to match the server's log)."""
    spec = yaml.safe_load((ROOT / "docs" / "targets" / "openai.rig.yaml").read_text(encoding="utf-8"))
    spec["target"]["url"] = url
    for rule in spec["target"]["http"]["ask"]["stream"]["events"]:
        if rule["type"] == "token":
            rule["data"]["request_id"] = "data.id"
    path = tmp / "openai-bench.rig.yaml"
    path.write_text(yaml.safe_dump(spec, allow_unicode=True), encoding="utf-8")
    return path


def _mock(tmp: Path, tokens: int, delay_ms: float) -> tuple[subprocess.Popen[bytes], str, Path]:
    port, log = tmp / "port", tmp / "sent.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "workbench.openai_compat", "--port-file", str(port), "--log",
                             str(log), "--tokens", str(tokens), "--delay-ms", str(delay_ms), "--key", KEY], cwd=ROOT)
    deadline = time.monotonic() + 30
    while not (port.exists() and port.read_text().strip()):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("the mock endpoint did not start")
        time.sleep(0.05)
    return proc, f"http://127.0.0.1:{port.read_text().strip()}", log


def _start(reader: str, level: int, seconds: int, url: str, config: Path, lf: Path, out: Path
           ) -> subprocess.Popen[str]:
    env = {**os.environ, "BENCH_OUT": str(out), "BENCH_READER": reader, "BENCH_CONFIG": str(config),
           "RIG_OPENAI_KEY": KEY, "RIG_OPENAI_MODEL": "mock", "PYTHONPATH": str(ROOT)}
    cls = "RigReader" if reader == "rig" else "BareReader"
    return subprocess.Popen([sys.executable, "-m", "locust", "-f", str(lf), cls, "--headless", "--host", url,
                             "-u", str(level), "-r", str(level), "-t", f"{seconds}s", "--only-summary", "--loglevel",
                             "ERROR", "--stop-timeout", "30"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)


def _result(proc: subprocess.Popen[str], reader: str, level: int, out: Path) -> dict[str, object]:
    _, err = proc.communicate()
    if not out.exists():
        raise SystemExit(f"locust ({reader}, {level} streams) wrote no results:\n{err[-3000:]}")
    return dict(json.loads(out.read_text()))


def _run(reader: str, level: int, seconds: int, url: str, config: Path, lf: Path, out: Path) -> dict[str, object]:
    return _result(_start(reader, level, seconds, url, config, lf, out), reader, level, out)


def _cpu_pairs(pairs: int, level: int, seconds: int, url: str, config: Path, lf: Path, tmp: Path) -> list[float]:
    """Rig and bare readers side by side, `pairs` times: each pair's rig/bare CPU per token (each process its own
    rusage over its own tokens), printed as it comes."""
    ratios = []
    for i in range(pairs):
        outs = {r: tmp / f"pair-{i}-{r}.json" for r in ("rig", "bare")}
        procs = {r: _start(r, level, seconds, url, config, lf, outs[r]) for r in outs}
        per_token, collector = {}, {}
        for r, proc in procs.items():
            got = _result(proc, r, level, outs[r])
            rows: list[list[object]] = got["rows"]  # type: ignore[assignment]
            tokens = sum(int(str(row[4])) for row in rows)
            per_token[r] = float(got["cpu_s"]) * 1e6 / max(1, tokens)  # type: ignore[arg-type]
            collector[r] = 100 * float(got["gc_s"]) / max(1e-9, float(got["cpu_s"]))  # type: ignore[arg-type]
        ratios.append(per_token["rig"] / per_token["bare"])
        print(f"side by side {i + 1}/{pairs}, {level} streams each: CPU per token rig {per_token['rig']:5.1f} µs, "
              f"bare {per_token['bare']:5.1f} µs: {ratios[-1]:.2f}× (the collector's share: rig "
              f"{collector['rig']:.1f} %, bare {collector['bare']:.1f} %)", flush=True)
    return ratios


def _errors(rows: list[list[object]], served: dict[str, dict[str, object]], warmup_s: float) -> dict[str, float]:
    """Per matched request sent after the warm-up (every user started, connections open): TTFT and ITL of the client
    minus the server's, in ms, and the tokens read."""
    ttft, itl, tokens = [], [], 0
    t0 = min((float(r[1]) for r in rows), default=0.0)  # type: ignore[arg-type]
    for rid, submit, first, last, n in rows:
        s = served.get(str(rid))
        if s is None or float(submit) < t0 + warmup_s * 1000:  # type: ignore[arg-type]
            continue
        sent = [t / 1e6 for t in s["sent_ns"]]  # type: ignore[union-attr]
        ttft.append((float(first) - float(submit)) - (sent[0] - float(s["took_ns"]) / 1e6))  # type: ignore[arg-type]
        if int(n) > 1 and len(sent) > 1:  # type: ignore[call-overload]
            itl.append((float(last) - float(first)) / (int(n) - 1) - (sent[-1] - sent[0]) / (len(sent) - 1))  # type: ignore
        tokens += int(n)  # type: ignore[call-overload]
    if not ttft:
        return {}
    return {"runs": len(ttft), "tokens": tokens, "ttft_p50": statistics.median(ttft), "ttft_p99": _pct(ttft, 0.99),
            "itl_p50": statistics.median(itl) if itl else float("nan"), "itl_p99": _pct(itl, 0.99) if itl else float("nan")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--levels", default="50,100,200,400")
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--delay-ms", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=5.0, help="seconds from the first send left out (spawning)")
    parser.add_argument("--cpu-pairs", type=int, default=3, help="side-by-side CPU comparisons (0: none)")
    parser.add_argument("--cpu-level", type=int, default=100, help="streams each reader runs in a side-by-side pair")
    args = parser.parse_args()
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    print(f"{args.tokens} tokens {args.delay_ms:g} ms apart per stream; {os.cpu_count()} CPUs shared by mock and client")
    results: dict[int, dict[str, dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        proc, url, log = _mock(tmp, args.tokens, args.delay_ms)
        try:
            config, lf = _bench_config(tmp, url), tmp / "fidelity_locustfile.py"
            lf.write_text(LOCUSTFILE, encoding="utf-8")
            for level in [int(x) for x in args.levels.split(",")]:
                results[level] = {}
                for reader in ("rig", "bare"):
                    got = _run(reader, level, args.seconds, url, config, lf, tmp / f"{reader}-{level}.json")
                    served = {d["id"]: d for d in map(json.loads, log.read_text().splitlines())}
                    row = _errors(got["rows"], served, args.warmup)  # type: ignore[arg-type]
                    if not row:
                        print(f"{level:>4} streams, {reader:>4}: no matched run")
                        continue
                    lag = got["lag"] or [0.0]  # type: ignore[assignment]
                    row |= {"cpu_us_per_token": float(got["cpu_s"]) * 1e6 / row["tokens"],  # type: ignore[arg-type]
                            "cpu_us_per_stream": float(got["cpu_s"]) * 1e6 / row["runs"],  # type: ignore[arg-type]
                            "loop_lag_p95_ms": _pct(lag, 0.95),  # type: ignore[arg-type]
                            "cpu_pct": 100 * float(got["cpu_s"]) / args.seconds}  # type: ignore[arg-type]
                    # what `rig load` would call this client (rig.load.headroom's limits on one process)
                    row["saturated"] = float(row["cpu_pct"] >= CPU_LIMIT_PCT or row["loop_lag_p95_ms"] >= LAG_LIMIT_MS)
                    results[level][reader] = row
                    print(f"{level:>4} streams, {reader:>4}: {row['runs']:>5} runs  TTFT error p50 {row['ttft_p50']:6.1f} "
                          f"p99 {row['ttft_p99']:6.1f} ms  ITL error p50 {row['itl_p50']:5.2f} p99 {row['itl_p99']:6.2f} ms"
                          f"  CPU {row['cpu_us_per_token']:5.1f} µs/token {row['cpu_us_per_stream']:7.0f} µs/stream"
                          f"  loop lag p95 {row['loop_lag_p95_ms']:5.1f} ms  CPU {row['cpu_pct']:3.0f} % of a core"
                          + ("  (client saturated by rig load's limits)" if row["saturated"] else ""))
                rig, bare = results[level].get("rig"), results[level].get("bare")
                if rig and bare:
                    print(f"{level:>4} streams: rig/bare CPU per token {rig['cpu_us_per_token'] / bare['cpu_us_per_token']:.2f}×")
            ratios = _cpu_pairs(args.cpu_pairs, args.cpu_level, args.seconds, url, config, lf, tmp)
        finally:
            proc.terminate()
            proc.wait(10)
    hundred = results.get(100, {})
    if "rig" in hundred and "bare" in hundred:
        rig = hundred["rig"]
        ttft_met = rig["ttft_p50"] <= 15 and rig["ttft_p99"] <= 150
        print(f"goal at 100 streams: TTFT error p50 ≤ 15 ms and p99 ≤ 150 ms {'met' if ttft_met else 'NOT met'}")
    if ratios:
        median = statistics.median(ratios)
        print(f"CPU per token side by side, median of {len(ratios)}: {median:.2f}× bare (goal ≤ 1.2×: "
              f"{'met' if median <= 1.2 else 'NOT met'}; pairs {min(ratios):.2f}–{max(ratios):.2f}×)")
    print(json.dumps({str(k): v for k, v in results.items()}))


if __name__ == "__main__":
    main()
