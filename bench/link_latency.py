"""How faithfully a `via: network` latency window moves T4, across hosts made of network namespaces (root).

    python bench/link_latency.py [--delays 50,100,200] [--duration 30]

For each delay: one `rig lab run` (target behind the network fault proxy, a master, two workers, 6 users),
with the target's link slowed by that many ms, one way, from 10 s to 20 s. Printed per delay: the client
T4 median of runs submitted inside the window and after it, each against the runs before the window in
the same run (the baseline), and the ratio shift ÷ delay (1.0 = the delay exactly; the first answer token
is late by the one-way delay once the stream is open). Also: merged vs shipped requests.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from rig.netlab.lab import LabResult


def one(delay: float, duration: float, out: Path) -> LabResult:
    rig = str(Path(sys.executable).with_name("rig"))
    subprocess.run([rig, "lab", "run", "--workers", "2", "--users", "6", "--duration", f"{duration:g}s",
                    "--latency", f"{delay:g}", "--latency-at", "10s", "--latency-for", "10s", "--out", str(out)],
                   check=False, capture_output=True, timeout=duration + 400)
    return LabResult.model_validate_json((out / "lab.json").read_text(encoding="utf-8"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--delays", default="50,100,200")
    parser.add_argument("--duration", type=float, default=30.0)
    args = parser.parse_args()
    print(f"{'delay ms':>8} {'base p50':>9} {'in p50':>8} {'shift':>7} {'ratio':>6} {'after':>7} {'n in/base/after':>16}"
          f" {'merged=shipped':>15}")
    with tempfile.TemporaryDirectory(prefix="rig-bench-link-") as tmp:
        for delay in (float(d) for d in args.delays.split(",")):
            r = one(delay, args.duration, Path(tmp) / f"d{delay:g}")
            (window,) = r.chaos_windows
            w: dict[str, Any] = dict(window)
            inside, after = w["T4_shift_ms"], w["T4_after_ms"]
            shift = inside["delta"]["p50"]
            print(f"{delay:8.0f} {inside['baseline']['p50']:9.1f} {inside['window']['p50']:8.1f} {shift:+7.1f} "
                  f"{shift / delay:6.2f} {after['delta']['p50']:+7.1f} "
                  f"{inside['window']['n']:>5}/{inside['baseline']['n']}/{after['window']['n']:<5} "
                  f"{str(r.merged_requests == r.shipped_requests):>15}")


if __name__ == "__main__":
    main()
