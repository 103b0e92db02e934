"""What a running load test hands the `rig.events` load hooks as `run` (browser users, chaos schedules)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

from rig.adapters import Adapter
from rig.evidence import EvidenceStore
from rig.load.options import LoadOptions
from rig.load.plan import LoadPlan
from rig.target.embedded import EmbeddedWorkbench
from rig.target.session import Connection


@dataclass
class LoadContext:
    """What a running load test hands the `rig.events` load hooks as `run` (browser users, chaos schedules)."""

    options: LoadOptions
    run_dir: Path
    store: EvidenceStore
    connection: Connection
    plan: LoadPlan
    passwords: dict[str, str]  # by username
    started_at: float = 0.0
    stopped: threading.Event = field(default_factory=threading.Event)  # set when the load run has ended

    @property
    def adapter(self) -> Adapter:
        return self.connection.adapter

    @property
    def target(self) -> EmbeddedWorkbench | None:
        """The embedded workbench, when this run started one."""
        return self.connection.embedded
