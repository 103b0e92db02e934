"""rig: a load and reliability test rig for LLM literature assistants.

What a user imports: the adapter interface and its transport, the verdicts, the evidence store, the
T-codes and a run's transcript, the gate runner and policy, connecting to a target (the embedded
reference target by default), and the catalog of the eval set.
"""

from rig.adapters import Adapter, Capabilities, HttpxTransport, Transport, WorkbenchAdapter
from rig.catalog import EvalSet, load_eval_set
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
from rig.evidence import EvidenceStore
from rig.gate.session import GateOptions, GateResult, run_gate
from rig.measure.events import Measure
from rig.measure.tcodes import TCode
from rig.measure.transcript import RunTranscript
from rig.policy import Decision, Policy, decide_gate, load_policy
from rig.target.embedded import EmbeddedWorkbench
from rig.target.open import Connection, connect
from rig.verdict import Item, Verdict, aggregate

__all__ = [
    "Adapter", "Capabilities", "CapabilityMissing", "ConfigError", "Connection", "Decision", "EmbeddedWorkbench",
    "EvalSet", "EvidenceError", "EvidenceStore", "FixtureError", "GateOptions", "GateResult", "HttpxTransport", "Item",
    "Measure", "Policy", "RigError", "RunTranscript", "TCode", "TargetError", "TargetHTTPError", "TargetProtocolError",
    "TargetUnreachable", "Transport", "Verdict", "WorkbenchAdapter", "aggregate", "connect", "decide_gate",
    "load_eval_set", "load_policy", "run_gate",
]
