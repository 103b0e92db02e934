"""rig: a load and reliability test rig for LLM literature assistants.

The public face (docs/extending.md): what a case author imports (`case`, `CaseContext`, `Verdict`, `TCode`,
`tcode`, `Fixture`), what a hook listens to (`events`, `Exchange`, `Item`), what an adapter author implements
against (`Adapter`, `Capabilities`, `Transport`, the errors, `AdapterContractError`), how the rig restarts a target
(`Restarter`, `RestartRecord`), the evidence store, a run's transcript, the gate runner and policy, connecting to
a target (the embedded reference target by default), and the catalog of the eval set. Anything else is internal
and may move.
"""

from rig import events
from rig.adapters import Adapter, Capabilities, Exchange, HttpxTransport, Transport, WorkbenchAdapter
from rig.catalog import EvalSet, load_eval_set
from rig.errors import (
    AdapterContractError,
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
from rig.gate.context import CaseContext
from rig.gate.registry import case
from rig.gate.session import GateOptions, GateResult, run_gate
from rig.measure.derive import tcode
from rig.measure.events import Measure
from rig.measure.tcodes import TCode
from rig.measure.transcript import RunTranscript
from rig.policy import Decision, Policy, decide_gate, load_policy
from rig.target.embedded import EmbeddedWorkbench
from rig.target.faults import Fixture
from rig.target.open import connect
from rig.target.restart import Restarter, RestartRecord
from rig.target.session import Connection
from rig.verdict import Item, Verdict, aggregate

__all__ = [
    "Adapter", "AdapterContractError", "Capabilities", "CapabilityMissing", "CaseContext", "ConfigError",
    "Connection", "Decision", "EmbeddedWorkbench", "EvalSet", "EvidenceError", "EvidenceStore", "Exchange", "Fixture",
    "FixtureError", "GateOptions", "GateResult", "HttpxTransport", "Item", "Measure", "Policy", "RestartRecord",
    "Restarter", "RigError", "RunTranscript", "TCode", "TargetError", "TargetHTTPError", "TargetProtocolError",
    "TargetUnreachable", "Transport", "Verdict", "WorkbenchAdapter", "aggregate", "case", "connect", "decide_gate", "events",
    "load_eval_set", "load_policy", "run_gate", "tcode",
]
