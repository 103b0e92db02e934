"""The eval set's 38 reliability cases, one module per reliability module, in the eval set's order.

Importing the pack registers every case (`rig.gate.registry.case`); the rig finds it through the
`rig.scenarios` entry point in pyproject.toml.
"""

from scenarios.reliability import (
    citations,
    export,
    ingest,
    input_bounds,
    login_isolation,
    model_config,
    observability,
    persistence,
    run_control,
    tool_execution,
)

__all__ = ["citations", "export", "ingest", "input_bounds", "login_isolation", "model_config", "observability",
           "persistence", "run_control", "tool_execution"]
