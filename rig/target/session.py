"""A connected target as the gate and quality workloads hold it: adapter, accounts, library, restarter."""

from __future__ import annotations

from dataclasses import dataclass, field

from rig.adapters import Adapter, Capabilities
from rig.adapters.models import Auth
from rig.config import ModelChoices
from rig.target.embedded import EmbeddedWorkbench
from rig.target.model_proxy import ModelProxy
from rig.target.restart import Restarter
from rig.target.setup import TargetSetup
from rig.telemetry.otlp_receiver import OtlpReceiver


@dataclass
class TargetSession:
    """A connected target: adapter, the two accounts, capabilities, and how to restart it."""

    adapter: Adapter
    auth: dict[str, Auth]
    passwords: dict[str, str]
    setup: TargetSetup
    caps: Capabilities
    embedded: EmbeddedWorkbench | None
    receiver: OtlpReceiver
    restarter: Restarter | None = None
    models: ModelChoices = field(default_factory=ModelChoices)
    slots_metric: str | None = None  # the run-slot gauge on the target's /metrics (None: it has none)
    model_proxy: ModelProxy | None = None  # the rig's LLM fault proxy in front of the target's model

    def relogin(self, who: str) -> Auth:
        self.auth[who] = self.adapter.login(self.setup.usernames[who], self.passwords[who])
        return self.auth[who]
