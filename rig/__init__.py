"""rig: a load and reliability test rig for LLM literature assistants.

The public face (docs/extending.md): what a case author imports (`case`, `CaseContext`, `Verdict`, `TCode`,
`tcode`, `Fixture`), what a hook listens to (`events`, `Exchange`, `Item`), what an adapter author implements
against (`Adapter`, `Capabilities`, `Transport`, the errors, `AdapterContractError`), how the rig restarts a target
(`Restarter`, `RestartRecord`), the evidence store, a run's transcript, the gate runner and policy, connecting to
a target (the embedded reference target by default), and the catalog of the eval set. Each name loads its module
when first used (`rig.lazy`): `import rig` loads nothing else. The sub-namespaces `rig.gate`, `rig.load`,
`rig.quality`, `rig.results`, `rig.target`, `rig.telemetry`, `rig.browser`, `rig.adapters`, `rig.measure` and the
foundation modules (`rig.errors`, `rig.verdict`, `rig.clock` …) are public the same way; anything deeper is
internal and may move.
"""

from __future__ import annotations

import typing

from rig.lazy import exports

if typing.TYPE_CHECKING:
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

_EXPORTS = {
    "Adapter": "rig.adapters", "AdapterContractError": "rig.errors", "Capabilities": "rig.adapters",
    "CapabilityMissing": "rig.errors", "CaseContext": "rig.gate.context", "ConfigError": "rig.errors",
    "Connection": "rig.target.session", "Decision": "rig.policy", "EmbeddedWorkbench": "rig.target.embedded",
    "EvalSet": "rig.catalog", "EvidenceError": "rig.errors", "EvidenceStore": "rig.evidence",
    "Exchange": "rig.adapters", "Fixture": "rig.target.faults", "FixtureError": "rig.errors",
    "GateOptions": "rig.gate.session", "GateResult": "rig.gate.session", "HttpxTransport": "rig.adapters",
    "Item": "rig.verdict", "Measure": "rig.measure.events", "Policy": "rig.policy",
    "RestartRecord": "rig.target.restart", "Restarter": "rig.target.restart", "RigError": "rig.errors",
    "RunTranscript": "rig.measure.transcript", "TCode": "rig.measure.tcodes", "TargetError": "rig.errors",
    "TargetHTTPError": "rig.errors", "TargetProtocolError": "rig.errors", "TargetUnreachable": "rig.errors",
    "Transport": "rig.adapters", "Verdict": "rig.verdict", "WorkbenchAdapter": "rig.adapters",
    "aggregate": "rig.verdict", "case": "rig.gate.registry", "connect": "rig.target.open",
    "decide_gate": "rig.policy", "events": "rig.events", "load_eval_set": "rig.catalog", "load_policy": "rig.policy",
    "run_gate": "rig.gate.session", "tcode": "rig.measure.derive",
}
__all__ = ["Adapter", "AdapterContractError", "Capabilities", "CapabilityMissing", "CaseContext", "ConfigError",
          "Connection", "Decision", "EmbeddedWorkbench", "EvalSet", "EvidenceError", "EvidenceStore", "Exchange",
          "Fixture", "FixtureError", "GateOptions", "GateResult", "HttpxTransport", "Item", "Measure", "Policy",
          "RestartRecord", "Restarter", "RigError", "RunTranscript", "TCode", "TargetError", "TargetHTTPError",
          "TargetProtocolError", "TargetUnreachable", "Transport", "Verdict", "WorkbenchAdapter", "aggregate",
          "case", "connect", "decide_gate", "events", "load_eval_set", "load_policy", "run_gate", "tcode"]
__getattr__, __dir__ = exports(__name__, _EXPORTS)
