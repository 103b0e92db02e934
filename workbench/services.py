"""The parts a running workbench is made of, wired once at start-up and handed to the routes."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from workbench import __version__
from workbench.chaos import FaultRegistry
from workbench.config import RuntimeSettings, ServerConfig
from workbench.db import Database
from workbench.defects import Defects
from workbench.dialects import Dialects, DialectState
from workbench.index import Bm25Index
from workbench.metrics import Metrics
from workbench.security import KeyVault

if TYPE_CHECKING:
    from workbench.ingest import IngestWorker
    from workbench.langfuse_export import LangfuseExport
    from workbench.runs import RunManager
    from workbench.tracing import Tracing


@dataclass
class Services:
    config: ServerConfig
    db: Database
    files_dir: Path
    index: Bm25Index
    metrics: Metrics
    faults: FaultRegistry
    defects: Defects
    dialects: Dialects
    vault: KeyVault
    settings: RuntimeSettings
    dialect_state: DialectState = field(default_factory=DialectState)
    ingest: IngestWorker = field(init=False)
    runs: RunManager = field(init=False)
    tracing: Tracing = field(init=False)
    langfuse: LangfuseExport | None = field(init=False, default=None)

    @property
    def code_version(self) -> str:
        return self.config.code_version or __version__
