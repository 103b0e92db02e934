"""The one interface between scenarios and a target.

An adapter maps a target's API onto these operations and normalises its stream into the rig's typed
events. Every operation takes the `Auth` of the account acting (or None for an anonymous call).
Operations a target lacks raise `CapabilityMissing`; `capabilities()` declares them up front.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rig.adapters.capabilities import Capabilities
from rig.adapters.models import (
    Auth,
    Document,
    Event,
    Exported,
    Located,
    Me,
    ModelConfigView,
    PageText,
    Project,
    Resumed,
    RunDetail,
    ScopeSet,
    SearchResult,
    Session,
    SessionOpened,
    Submitted,
    Uploaded,
)
from rig.errors import CapabilityMissing


@dataclass(frozen=True)
class Exchange:
    """One request and its answer, as the rig saw them (bodies are redacted before they are stored)."""

    method: str
    path: str
    status: int | None
    request_body: Any
    response_body: Any
    sent_ns: int
    received_ns: int
    account: str | None
    error: str | None = None


Recorder = Callable[[Exchange], None]


class Adapter(ABC):
    """Operations of a literature workbench; subclass per target family."""

    base_url: str

    def __init__(self) -> None:
        self.recorders: list[Recorder] = []

    @classmethod
    def connect(cls, base_url: str, *, chaos_token: str | None = None) -> Adapter:
        """Build the adapter for a target URL (what `--adapter package.module:Class` calls)."""
        return cls(base_url, chaos_token=chaos_token)  # type: ignore[call-arg]

    def record(self, exchange: Exchange) -> None:
        for recorder in self.recorders:
            recorder(exchange)

    @abstractmethod
    def capabilities(self) -> Capabilities: ...

    # accounts
    @abstractmethod
    def login(self, username: str, password: str) -> Auth: ...
    @abstractmethod
    def logout(self, auth: Auth) -> None: ...
    @abstractmethod
    def me(self, auth: Auth | None) -> Me: ...

    # projects and documents
    @abstractmethod
    def create_project(self, auth: Auth, name: str) -> str: ...
    @abstractmethod
    def projects(self, auth: Auth) -> list[Project]: ...
    def add_member(self, auth: Auth, project_id: str, username: str) -> None:
        raise CapabilityMissing("members")
    @abstractmethod
    def upload(self, auth: Auth, project_id: str, path: Path, *, paper_id: str | None = None,
               filename: str | None = None) -> Uploaded: ...
    @abstractmethod
    def documents(self, auth: Auth, project_id: str) -> list[Document]: ...
    @abstractmethod
    def document(self, auth: Auth | None, doc_id: str) -> Document: ...
    def download(self, auth: Auth | None, doc_id: str) -> bytes:
        raise CapabilityMissing("download")
    def page_text(self, auth: Auth | None, doc_id: str, page: int) -> PageText:
        raise CapabilityMissing("page_text")

    # retrieval
    def search(self, auth: Auth, project_id: str, queries: list[str], scope: list[str] | None = None,
               history: list[dict[str, str]] | None = None) -> SearchResult:
        raise CapabilityMissing("direct_search")

    # sessions and runs
    @abstractmethod
    def open_session(self, auth: Auth, project_id: str, scope: list[str],
                     attachments: list[str] | None = None) -> SessionOpened: ...
    @abstractmethod
    def session(self, auth: Auth | None, session_id: str) -> Session: ...
    def set_scope(self, auth: Auth, session_id: str, scope: list[str],
                  attachments: list[str] | None = None) -> ScopeSet:
        raise CapabilityMissing("scope_change")
    @abstractmethod
    def ask(self, auth: Auth, session_id: str, content: str, *, parent_id: str | None = None,
            traceparent: str | None = None) -> Submitted: ...
    @abstractmethod
    def events(self, auth: Auth, run_id: str, *, last_event_id: int | None = None,
               timeout_s: float = 120.0) -> Generator[Event, None, None]: ...
    @abstractmethod
    def run(self, auth: Auth | None, run_id: str) -> RunDetail: ...
    def stop(self, auth: Auth, run_id: str, reason: str | None = None) -> None:
        raise CapabilityMissing("stop")
    def resume(self, auth: Auth, run_id: str) -> Resumed:
        raise CapabilityMissing("resume")
    def regenerate(self, auth: Auth, message_id: str, *, traceparent: str | None = None) -> Submitted:
        raise CapabilityMissing("regenerate")
    def export(self, auth: Auth | None, session_id: str, fmt: str = "md") -> Exported:
        raise CapabilityMissing(f"export={fmt}")
    def locate_citation(self, auth: Auth | None, citation_id: str) -> Located:
        raise CapabilityMissing("locate_citation")

    # model configuration
    def model_config(self, auth: Auth | None) -> ModelConfigView:
        raise CapabilityMissing("model_config_api")
    def set_model_config(self, auth: Auth, provider: str, model: str, base_url: str | None = None,
                         api_key: str | None = None) -> ModelConfigView:
        raise CapabilityMissing("model_config_api")

    # test-only control
    def chaos(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        raise CapabilityMissing("chaos")

    # health
    def wait_documents(self, auth: Auth, project_id: str, doc_ids: set[str], timeout_s: float = 120.0
                       ) -> list[Document]:
        """Poll until every named document reaches a final status."""
        import time

        deadline = time.monotonic() + timeout_s
        while True:
            docs = [d for d in self.documents(auth, project_id) if d.doc_id in doc_ids]
            if len(docs) == len(doc_ids) and all(d.final for d in docs):
                return docs
            if time.monotonic() > deadline:
                from rig.errors import TargetProtocolError

                raise TargetProtocolError(f"documents still processing after {timeout_s:.0f}s")
            time.sleep(0.05)

    @abstractmethod
    def ready(self) -> bool: ...
    def metrics_text(self) -> str:
        return ""

    def close(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Release connections."""
