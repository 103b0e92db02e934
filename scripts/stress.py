"""Run the rig beside a bounded CPU hog, the way a shared CI runner treats it, and report every run's outcome.

    python scripts/stress.py --demo 5 --gate-repeat 5        # what `make stress` runs
    python scripts/stress.py --hog-only --seconds 60          # just the hog, e.g. beside your own command

The hog is one busy-looping process per core (default: every core), each ending by itself after
`--seconds` and all of them ended by PID when this script ends, however it ends. Each rig command runs
with its own run directory under --out; the table at the end gives its exit code, wall time and
verdict flips (for `gate --repeat`). Exit 1 when any run did not pass or any verdict flipped.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path


def _spin(deadline: float) -> None:
    x = 0
    while time.monotonic() < deadline:
        x = (x * 31 + 7) % 1_000_003


def start_hog(cores: int, seconds: float) -> list[subprocess.Popen[bytes]]:
    """`cores` processes that keep one core busy each for `seconds`, then exit by themselves."""
    code = f"import time, sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import stress; " \
           f"stress._spin(time.monotonic() + {seconds})"
    return [subprocess.Popen([sys.executable, "-c", code]) for _ in range(cores)]


def stop_hog(hog: list[subprocess.Popen[bytes]]) -> None:
    for p in hog:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in hog:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def _ended(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)


def run(label: str, cmd: list[str], out: Path) -> dict[str, object]:
    began = time.monotonic()
    log = out / f"{label}.log"
    with log.open("wb") as f:
        code = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT).returncode
    wall = time.monotonic() - began
    row: dict[str, object] = {"run": label, "exit": code, "wall_s": round(wall, 1), "log": str(log)}
    print(f"{label}: exit {code} in {wall:.0f} s", flush=True)
    return row


def gate_flips(run_dir: Path) -> list[str]:
    """Cases whose verdict differs between repetitions of one `rig gate --repeat` run (from its evidence store)."""
    from rig.evidence import EvidenceStore
    from rig.report.data import store_verdicts

    store = EvidenceStore(run_dir / "evidence.sqlite3")
    try:
        verdicts, flipped = store_verdicts(store)
    finally:
        store.close()
    return [f"case {v.case_id}: {v.reason}" for v in verdicts if v.case_id in flipped]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--demo", type=int, default=5, help="rig demo runs (each on its own run directory)")
    ap.add_argument("--gate-repeat", type=int, default=5, help="rig gate --browser --repeat N (0: skip)")
    ap.add_argument("--cores", type=int, default=os.cpu_count() or 2, help="hog processes (one per core)")
    ap.add_argument("--seconds", type=float, default=5400, help="the hog's own bound")
    ap.add_argument("--out", type=Path, default=Path("reports/stress"))
    ap.add_argument("--hog-only", action="store_true", help="only run the hog for --seconds")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rig = [sys.executable, "-m", "rig.cli"]
    signal.signal(signal.SIGTERM, _ended)  # so that `kill` (not only Ctrl-C) ends the hog with this script
    hog = start_hog(args.cores, args.seconds)
    print(f"hog: {args.cores} busy process(es) for at most {args.seconds:.0f} s: {[p.pid for p in hog]}", flush=True)
    rows: list[dict[str, object]] = []
    try:
        if args.hog_only:
            for p in hog:
                p.wait()
            return 0
        for i in range(1, args.demo + 1):
            rows.append(run(f"demo-{i}", [*rig, "demo", "--out", str(args.out / f"demo-{i}")], args.out))
        if args.gate_repeat:
            gate_dir = args.out / "gate-browser"
            row = run("gate-browser", [*rig, "gate", "--browser", "--repeat", str(args.gate_repeat),
                                       "--out", str(gate_dir)], args.out)
            row["flips"] = gate_flips(gate_dir) if (gate_dir / "evidence.sqlite3").exists() else ["no evidence store"]
            rows.append(row)
    finally:
        stop_hog(hog)
    (args.out / "stress.json").write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    bad = [r for r in rows if r["exit"] != 0 or r.get("flips")]
    print(f"{len(rows) - len(bad)} of {len(rows)} runs passed without a flip; details in {args.out}/stress.json")
    for r in bad:
        print(f"  {r['run']}: exit {r['exit']}, flips {r.get('flips')}, see {r['log']}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
