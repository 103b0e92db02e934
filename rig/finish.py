"""`rig report DIR`: finish a run from its evidence store — a gate, load, quality or demo run that was killed, or one
whose reports should be written again. Nothing is run against a target.

Each workload finishes through the same function its live run ends with (`finish_gate`, `finish_load`,
`write_quality_reports`, the demo's report), so `rig report` reproduces a finished run's decision and reasons exactly.
A run whose manifest has no end time ended early: it is marked so (the time of its last evidence) and decides at best
"undecided", since what it did not do cannot pass.
"""

from __future__ import annotations

from pathlib import Path

from rig.errors import ConfigError
from rig.gate.finish import finish_gate_dir
from rig.load.finish import finish_load_dir
from rig.prerelease.finish import finish_demo_dir, is_demo
from rig.quality.session import finish_quality_dir
from rig.run_end import Finished
from rig.runmanifest import read_manifest

FINISH = {"gate": finish_gate_dir, "load": finish_load_dir, "capacity": finish_load_dir,
          "quality": finish_quality_dir}

__all__ = ["Finished", "finish_run"]


def finish_run(run_dir: Path) -> Finished:
    """Rebuild the run's outputs (results.json, load.json, quality.json, prerelease.json and the reports)."""
    if is_demo(run_dir):
        return finish_demo_dir(run_dir)
    if not (run_dir / "manifest.json").exists() or not (run_dir / "evidence.sqlite3").exists():
        raise ConfigError(f"{run_dir} has no manifest.json and evidence.sqlite3: not a rig run directory",
                          fix="pass the directory a rig gate, load, quality or demo run wrote")
    kind = read_manifest(run_dir).kind
    if kind not in FINISH:
        raise ConfigError(f"{run_dir} is a {kind!r} run; rig report finishes gate, load, quality and demo runs")
    return FINISH[kind](run_dir)
