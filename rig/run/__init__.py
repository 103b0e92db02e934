"""One run lifecycle for every workload (`open_run`, `Run`, `perform`), the option groups the run commands share,
and the `Flag` that declares a field's command-line option once. Names load their module on first use (`rig.lazy`):
an options model that imports `Flag` does not load the lifecycle."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rig.lazy import exports

if TYPE_CHECKING:
    from rig.run.flags import Flag, ModelFlag, flag_names, model_flags
    from rig.run.lifecycle import Run, claim, open_run, rig_crash
    from rig.run.options import (
        EmbeddedChoice,
        OutputChoice,
        PolicyChoice,
        PushChoice,
        Resumable,
        TargetChoice,
        TelemetryChoice,
    )
    from rig.run.workload import OnOptions, Workload, perform

_EXPORTS = {
    "Flag": "rig.run.flags", "ModelFlag": "rig.run.flags", "flag_names": "rig.run.flags",
    "model_flags": "rig.run.flags", "Run": "rig.run.lifecycle", "claim": "rig.run.lifecycle", "open_run": "rig.run.lifecycle",
    "rig_crash": "rig.run.lifecycle", "EmbeddedChoice": "rig.run.options", "OutputChoice": "rig.run.options",
    "PolicyChoice": "rig.run.options", "PushChoice": "rig.run.options", "Resumable": "rig.run.options",
    "TargetChoice": "rig.run.options", "TelemetryChoice": "rig.run.options",
    "OnOptions": "rig.run.workload", "Workload": "rig.run.workload",
    "perform": "rig.run.workload",
}
__all__ = [
    "EmbeddedChoice",
    "Flag",
    "ModelFlag",
    "OutputChoice",
    "OnOptions",
    "PolicyChoice",
    "PushChoice",
    "Resumable",
    "Run",
    "TargetChoice",
    "TelemetryChoice",
    "claim",
    "Workload",
    "flag_names",
    "model_flags",
    "open_run",
    "perform",
    "rig_crash",
]
__getattr__, __dir__ = exports(__name__, _EXPORTS)
