"""Reaching a target: connecting (embedded or external, through the configured adapter), readiness,
accounts, the shared library of the gate and quality runs, restarting, and recording what a case does.

    rig.target.open        connect() for every command; open_target() for the gate and quality
    rig.target.embedded    the embedded reference workbench as a child process
    rig.target.readiness   waiting on the target's readiness path
    rig.target.restart     restarting a target (local process, command, container)
    rig.target.setup       the library of accounts A and B (projects, corpus, ingest ledger)
    rig.target.session     TargetSession: a connected target as cases see it
    rig.target.recording   RecordingContext: every exchange, observation, run and item to the store
    rig.target.linking     a session's saved answers linked to the runs the rig asked
    rig.target.spans       the target's spans received over OTLP
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rig.lazy import exports

if TYPE_CHECKING:
    from rig.target.embedded import EmbeddedWorkbench
    from rig.target.faults import Fixture
    from rig.target.linking import normalised
    from rig.target.open import connect
    from rig.target.readiness import wait_ready
    from rig.target.restart import (
        MISSING_RESTARTER,
        RESTART_MODES,
        CommandRestarter,
        DockerRestarter,
        Restarter,
        RestartMode,
        RestartRecord,
    )
    from rig.target.session import Connection, TargetSession
    from rig.target.setup import IngestEntry

_EXPORTS = {
    "CommandRestarter": "rig.target.restart", "Connection": "rig.target.session",
    "DockerRestarter": "rig.target.restart", "EmbeddedWorkbench": "rig.target.embedded",
    "Fixture": "rig.target.faults", "IngestEntry": "rig.target.setup", "MISSING_RESTARTER": "rig.target.restart",
    "RESTART_MODES": "rig.target.restart", "RestartMode": "rig.target.restart", "RestartRecord": "rig.target.restart",
    "Restarter": "rig.target.restart", "TargetSession": "rig.target.session", "connect": "rig.target.open",
    "normalised": "rig.target.linking", "wait_ready": "rig.target.readiness",
}
__all__ = ["CommandRestarter", "Connection", "DockerRestarter", "EmbeddedWorkbench", "Fixture", "IngestEntry",
          "MISSING_RESTARTER", "RESTART_MODES", "RestartMode", "RestartRecord", "Restarter", "TargetSession",
          "connect", "normalised", "wait_ready"]
__getattr__, __dir__ = exports(__name__, _EXPORTS)
