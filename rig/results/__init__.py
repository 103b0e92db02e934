"""The typed result of every workload: results.json (`GateResults`), load.json (`LoadSummary`), quality.json
(`TurnRecord`), the chaos analysis (`ChaosAnalysis`, its windows and probes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rig.lazy import exports

if TYPE_CHECKING:
    from rig.results.chaos import ChaosAnalysis, ProbeResult, Retained, Window
    from rig.results.gate import CaseResult, GateResults, TCodeResult
    from rig.results.load import LoadSummary
    from rig.results.quality import RankedHit, TurnRecord

_EXPORTS = {
    "CaseResult": "rig.results.gate", "ChaosAnalysis": "rig.results.chaos", "GateResults": "rig.results.gate",
    "LoadSummary": "rig.results.load", "ProbeResult": "rig.results.chaos", "RankedHit": "rig.results.quality",
    "Retained": "rig.results.chaos", "TCodeResult": "rig.results.gate", "TurnRecord": "rig.results.quality",
    "Window": "rig.results.chaos",
}
__all__ = ["CaseResult", "ChaosAnalysis", "GateResults", "LoadSummary", "ProbeResult", "RankedHit", "Retained",
          "TCodeResult", "TurnRecord", "Window"]
__getattr__, __dir__ = exports(__name__, _EXPORTS)
