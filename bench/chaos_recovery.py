"""Chaos numbers: recovery after restarts under load, and what the LLM fault proxy costs when it injects nothing.

    python bench/chaos_recovery.py [--restarts 5] [--requests 400]

1. Recovery: one load run (6 closed-loop users, 15 ms token pacing) with a schedule that SIGKILLs the
   embedded workbench `--restarts` times, 10 s apart. Per restart: kill → /readyz (ready), kill → first
   completed run submitted after the kill (recovery), runs interrupted and lost, committed answers lost.
2. Proxy overhead: the same streamed chat completion against the mock model directly and through an
   LLM fault proxy with no rules (each `rig chaos llm-proxy` in its own process; requests interleaved,
   one client), time to first token and to the end.
   The ratios are proxied / direct for the median and p99.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from rig.faults import FaultControl
from rig.load.options import LoadOptions
from rig.load.session import run_load
from rig.ports import free_port
from rig.stats import summarize
from rig.waiting import wait_until


def recovery(restarts: int, tmp: Path) -> None:
    steps = "\n".join(f"  - {{name: restart-{i + 1}, at: {8 + 10 * i}s, fault: {{via: restart, mode: kill}}}}"
                      for i in range(restarts))
    schedule = tmp / "restarts.yaml"
    schedule.write_text(f"title: {restarts} restarts\nmethod:\n{steps}\n", encoding="utf-8")
    duration = 8 + 10 * restarts + 4
    result = run_load(LoadOptions(users=6, spawn_rate=6, duration_s=duration, think_min_s=0.3, think_max_s=0.8,
                                  token_delay_ms=15, out=tmp / "load", chaos=schedule))
    windows = json.loads((result.run_dir / "load.json").read_text())["chaos"]["windows"]
    print(f"{'restart':<11}{'ready s':>9}{'recovery s':>12}{'interrupted':>13}{'lost':>6}{'resumed':>9}"
          f"{'committed lost':>16}")
    for w in windows:
        print(f"{w['step']:<11}{w['ready_s']:>9.3f}{(w['recovery_s'] or float('nan')):>12.3f}{w['interrupted']:>13}"
              f"{w['lost']:>6}{len(w['resumed']):>9}{(w.get('committed') or {}).get('lost', '?'):>16}")
    ready = [w["ready_s"] for w in windows]
    rec = [w["recovery_s"] for w in windows if w["recovery_s"] is not None]
    print(f"median of {len(windows)} restarts: ready {statistics.median(ready):.3f} s, "
          f"recovery (first good run) {statistics.median(rec):.3f} s")


def _serve(args: list[str]) -> subprocess.Popen[bytes]:
    """`rig chaos llm-proxy` in its own process, as it runs in front of a real target."""
    return subprocess.Popen([sys.executable, "-m", "rig.cli", "chaos", "llm-proxy", *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def overhead(requests: int) -> None:
    body = {"model": "rig-mock", "stream": True, "stream_options": {"include_usage": True},
            "messages": [{"role": "system", "content": "papers"},
                         {"role": "user", "content": "What do eBay badges change?"},
                         {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
                          "function": {"name": "internal_search", "arguments": "{\"queries\": [\"badge\"]}"}}]},
                         {"role": "tool", "tool_call_id": "c1", "content": json.dumps({"hits": [
                             {"ref": 1, "text": "Badges raise prices of sellers with eBay badges. " * 6}]})}]}
    procs = []
    direct_url, proxied_url = f"http://127.0.0.1:{free_port()}", ""
    procs.append(_serve(["--upstream", "mock", "--listen", direct_url[7:]]))
    proxied_url = f"http://127.0.0.1:{free_port()}"
    procs.append(_serve(["--upstream", f"{direct_url}/v1", "--listen", proxied_url[7:]]))
    for url in (direct_url, proxied_url):
        if not wait_until(lambda u=url: FaultControl(u).healthy(), 20.0):
            raise SystemExit(f"fault proxy at {url} did not start")
    times: dict[str, dict[str, list[float]]] = {"direct": {"first": [], "end": []}, "proxied": {"first": [], "end": []}}
    try:
        with httpx.Client(timeout=30) as client:
            def one(url: str) -> tuple[float, float]:
                began = time.perf_counter()
                first = None
                with client.stream("POST", f"{url}/v1/chat/completions", json=body) as r:
                    for line in r.iter_lines():
                        if first is None and '"content": "' in line and '"content": ""' not in line:
                            first = time.perf_counter()
                end = time.perf_counter()
                return ((first or end) - began) * 1000, (end - began) * 1000

            for _ in range(20):  # warm both paths
                one(direct_url)
                one(proxied_url)
            for _ in range(requests):
                for name, url in (("direct", direct_url), ("proxied", proxied_url)):
                    first, end = one(url)
                    times[name]["first"].append(first)
                    times[name]["end"].append(end)
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(10)
    print(f"\n{requests} streamed completions each, interleaved; ms")
    print(f"{'':<24}{'direct':>10}{'proxied':>10}{'ratio':>8}{'added':>9}")
    for key, label in (("first", "first token"), ("end", "whole stream")):
        d, p = summarize(times["direct"][key]), summarize(times["proxied"][key])
        for stat in ("p50", "p99"):
            dv, pv = getattr(d, stat), getattr(p, stat)
            print(f"{label + ' ' + stat:<24}{dv:>10.2f}{pv:>10.2f}{pv / dv:>8.2f}{pv - dv:>9.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--restarts", type=int, default=5)
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--skip-recovery", action="store_true")
    args = parser.parse_args()
    overhead(args.requests)
    if not args.skip_recovery:
        with tempfile.TemporaryDirectory() as tmp:
            recovery(args.restarts, Path(tmp))


if __name__ == "__main__":
    main()
