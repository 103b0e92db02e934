"""What a pre-release run (`rig demo`) ends with: its three parts' results and how long each took."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rig.gate.session import GateResult
from rig.load.session import LoadResult
from rig.policy import Decision
from rig.quality.session import QualityResult


@dataclass
class PrereleaseResult:
    run_dir: Path
    load: LoadResult
    gate: GateResult
    quality: QualityResult
    timings_s: dict[str, float] = field(default_factory=dict)

    @property
    def decision(self) -> Decision:
        return self.gate.decision
