"""The reliability gate: what a case author works with (`case`, `CaseContext`, `browser_step`, the saved-state
checks) and the gate's run (`run_gate`). Scenario packs import these from here, never from the modules below.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rig.lazy import exports

if TYPE_CHECKING:
    from rig.gate.browser_kit import BrowserKit, BrowserStep, browser_step
    from rig.gate.context import CaseContext
    from rig.gate.registry import CaseSpec, all_cases, case
    from rig.gate.saved import kept, snapshot
    from rig.gate.session import GateOptions, GateResult, run_gate

_EXPORTS = {
    "BrowserKit": "rig.gate.browser_kit", "BrowserStep": "rig.gate.browser_kit", "CaseContext": "rig.gate.context",
    "CaseSpec": "rig.gate.registry", "GateOptions": "rig.gate.session", "GateResult": "rig.gate.session",
    "all_cases": "rig.gate.registry", "browser_step": "rig.gate.browser_kit", "case": "rig.gate.registry",
    "kept": "rig.gate.saved", "run_gate": "rig.gate.session", "snapshot": "rig.gate.saved",
}
__all__ = ["BrowserKit", "BrowserStep", "CaseContext", "CaseSpec", "GateOptions", "GateResult", "all_cases",
          "browser_step", "case", "kept", "run_gate", "snapshot"]
__getattr__, __dir__ = exports(__name__, _EXPORTS)
