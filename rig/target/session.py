"""The one handle on a connected target: `Connection` (an adapter, the accounts it may use, how to restart it),
and `TargetSession`, the same handle once the gate or the quality workload has logged accounts A and B in and set
up the library (what every case reads through `ctx.target`)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from rig.adapters import Adapter, Capabilities
from rig.adapters.models import Auth
from rig.config import AnswerBudget, ModelChoices
from rig.errors import RigError, TargetHTTPError
from rig.fixtures import CorpusManifest
from rig.jsonvalue import ForeignJson
from rig.target.embedded import EmbeddedWorkbench
from rig.target.linking import RunLinks
from rig.target.model_proxy import ModelProxy
from rig.target.restart import Restarter
from rig.target.setup import TargetSetup
from rig.target.showings import Showings
from rig.telemetry.otlp_receiver import OtlpReceiver


@dataclass
class Connection:
    """An adapter for the target, the accounts it may use (by key: `a`, `b`, `load-1` …), how to restart it."""

    adapter: Adapter
    adapter_spec: str
    usernames: dict[str, str]
    passwords: dict[str, str] = field(repr=False)
    embedded: EmbeddedWorkbench | None = None
    restarter: Restarter | None = None
    models: ModelChoices = field(default_factory=ModelChoices)
    slots_metric: str | None = None
    ready_path: str = "/readyz"
    options: ForeignJson = field(default_factory=dict)  # what adapters built elsewhere need (options, http)
    model_proxy: ModelProxy | None = None  # the rig's LLM fault proxy in front of the target's model
    answer_budget: AnswerBudget = field(default_factory=AnswerBudget)  # one answer's stream, at most

    def login(self, key: str) -> Auth:
        """Log account `key` in; a refusal is a RigError naming the account and where its password comes from."""
        try:
            return self.adapter.login(self.usernames[key], self.passwords[key])
        except TargetHTTPError as exc:
            if exc.status >= 500:
                raise RigError(f"login of account {key} ({self.usernames[key]}) failed: the target answered "
                               f"{exc.status}" + (f": {exc.message}" if exc.message else "") + " (its own error, not "
                               "a refused password)", fix="check the target's logs; it fails on login") from None
            raise RigError(f"login of account {key} ({self.usernames[key]}) refused: {exc.status}"
                           + (f" {exc.code}" if exc.code else "") + (f": {exc.message}" if exc.message else ""),
                           fix=f"check accounts.{key} in rig.yaml: the username, and the password in its "
                               "password_env variable") from None

    def close(self) -> None:
        """Close the adapter, stop the model proxy and the embedded workbench this connection started."""
        self.adapter.close()
        if self.model_proxy is not None:
            self.model_proxy.stop()
        if self.embedded is not None:
            self.embedded.stop()


@dataclass(kw_only=True)
class TargetSession(Connection):
    """A connection set up for cases: accounts A and B logged in, the library, capabilities, the span receiver,
    the corpus, and the target's default runtime settings (restored after faults)."""

    auth: dict[str, Auth]
    setup: TargetSetup
    caps: Capabilities
    receiver: OtlpReceiver
    corpus_dir: Path = Path()
    corpus: CorpusManifest | None = None
    chaos_defaults: ForeignJson | None = None
    links: RunLinks = field(default_factory=RunLinks)  # the runs the rig read, to link saved answers without run ids
    showings: Showings = field(default_factory=Showings)  # where the target first showed each capability

    @classmethod
    def of(cls, conn: Connection, **set_up: Any) -> TargetSession:
        """The session of `conn`, with what setting it up found (`auth`, `setup`, `caps`, `receiver`, …)."""
        return cls(**{f.name: getattr(conn, f.name) for f in fields(Connection)}, **set_up)

    def relogin(self, who: str) -> Auth:
        self.auth[who] = self.adapter.login(self.setup.usernames[who], self.passwords[who])
        return self.auth[who]

    def close_fixtures(self) -> None:
        """Stop what the rig started beside an external target (its model proxy)."""
        if self.model_proxy is not None:
            self.model_proxy.stop()
