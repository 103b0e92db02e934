"""rig: a load and reliability test rig for LLM literature assistants.

What a user imports: the adapter interface and its typed models, the verdicts, the evidence store,
the gate runner and policy, the embedded reference target, and the catalog of the eval set.
"""

from rig.adapters import Adapter, Capabilities, WorkbenchAdapter
from rig.catalog import EvalSet, load_eval_set
from rig.embedded import EmbeddedWorkbench
from rig.errors import (
    CapabilityMissing,
    ConfigError,
    EvidenceError,
    FixtureError,
    RigError,
    TargetError,
    TargetHTTPError,
    TargetProtocolError,
    TargetUnreachable,
)
from rig.evidence import EvidenceStore, Measure
from rig.gate.session import GateOptions, GateResult, run_gate
from rig.policy import Decision, Policy, decide_gate, load_policy
from rig.transcript import RunTranscript
from rig.verdict import Item, Verdict, aggregate

__all__ = [
    "Adapter", "Capabilities", "CapabilityMissing", "ConfigError", "Decision", "EmbeddedWorkbench", "EvalSet",
    "EvidenceError", "EvidenceStore", "FixtureError", "GateOptions", "GateResult", "Item", "Measure", "Policy",
    "RigError", "RunTranscript", "TargetError", "TargetHTTPError", "TargetProtocolError", "TargetUnreachable",
    "Verdict", "WorkbenchAdapter", "aggregate", "decide_gate", "load_eval_set", "load_policy", "run_gate",
]
