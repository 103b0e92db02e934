"""Browser timing at 1, 4, 8 … concurrent browser users: lag behind the server, memory, contexts per core.

    python bench/browser_contexts.py [--levels 1,4,8] [--turns 8] [--sane-ms 100]

Each level is one `rig browser` run (its own embedded workbench, one Chromium, that many contexts asking
`--turns` questions each). Printed per level: browser T4 − the server's first-token stamp for the same
runs (median, p95), turns per second, and PSS per context (all Chromium processes, shared pages counted
once, peak minus before the first context). A level is "sustained" when every turn completed and the
p95 lag stayed under `--sane-ms`; the result is the largest sustained level ÷ CPU cores.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

from rig.load.browser_run import BrowserRunOptions, run_browser


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--levels", default="1,4,8")
    parser.add_argument("--turns", type=int, default=8)
    parser.add_argument("--sane-ms", type=float, default=100.0)
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    results = {}
    sustained = 0
    with tempfile.TemporaryDirectory() as tmp:
        for level in [int(x) for x in args.levels.split(",")]:
            summary, result = run_browser(BrowserRunOptions(users=level, turns=args.turns, out=Path(tmp) / f"u{level}"))
            lag, per_ctx = summary.T4_browser_minus_server, summary.rss_per_context_mb or 0.0
            row = {"turns": summary.turns, "errors": len(result.errors), "lag_p50_ms": lag.p50,
                   "lag_p95_ms": lag.p95, "turns_per_s": summary.turns / result.wall_s, "pss_per_context_mb": per_ctx}
            results[level] = row
            ok = not result.errors and summary.turns == level * args.turns and (lag.p95 or 1e9) < args.sane_ms
            sustained = level if ok else sustained
            print(f"{level:>3} users: {row['turns']} turns, {row['errors']} errors; browser T4 − server first token "
                  f"median {lag.p50 or 0:.1f} ms, p95 {lag.p95 or 0:.1f} ms; {summary.turns / result.wall_s:.2f} "
                  f"turns/s; PSS {per_ctx:.0f} MiB per context{'' if ok else '  (not sustained)'}")
    print(f"sustained: {sustained} contexts on {cores} cores = {sustained / cores:.1f} per core "
          f"(p95 lag < {args.sane_ms:.0f} ms, every turn completed; target and browser share the cores)")
    print(json.dumps({"levels": results, "sustained_per_core": sustained / cores}))


if __name__ == "__main__":
    main()
