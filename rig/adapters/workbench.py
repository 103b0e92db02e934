"""The built-in adapter: speaks target protocol v1 (docs/API.md) over HTTP, through any transport."""

from __future__ import annotations

import json
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import orjson

from rig.adapters.base import Adapter
from rig.adapters.capabilities import Capabilities
from rig.adapters.models import (
    Auth,
    Document,
    Event,
    Exported,
    ExportSource,
    Located,
    Me,
    Message,
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
    make_event,
)
from rig.adapters.text_export import TextExportRules, read_text_export
from rig.adapters.transport import Transport, multipart
from rig.clock import now_ns
from rig.errors import CapabilityMissing, TargetProtocolError, TargetUnreachable
from rig.jsonvalue import ForeignJson
from rig.measure.sse import RawEvent

API = "/api/v1"
# The reference workbench's Markdown export, line by line (docs/http-target.rig.yaml gives the same rules)
MARKDOWN = TextExportRules(
    session=r"^# Session (?P<session_id>\S+)$", message=r"^## (?P<role>Question|Answer) \((?P<message_id>[^)]+)\)$",
    citation=r"^- \[(?P<marker>\d+)\] (?P<paper_id>[^,]+), (?:p\. (?P<page>\d+)|whole file): “(?P<quote>.*)”$",
    roles={"Question": "user", "Answer": "assistant"}, end=r"^## Sources$")


class WorkbenchAdapter(Adapter):
    """Adapter for targets that implement the protocol exactly (the reference workbench among them)."""

    def __init__(self, base_url: str, *, chaos_token: str | None = None, timeout_s: float = 30.0,
                 transport: Transport | None = None) -> None:
        super().__init__(base_url, transport=transport, timeout_s=timeout_s)
        self.chaos_token = chaos_token
        self._caps: Capabilities | None = None

    # -- capabilities ----------------------------------------------------------------------------------------
    def capabilities(self) -> Capabilities:
        if self._caps is None:
            declared: ForeignJson = {}
            reply = self.request(None, "GET", f"{API}/capabilities", op="capabilities", raise_for_status=False)
            if reply.status_code == 200:
                declared = reply.json()
            chaos = False
            if self.chaos_token:
                probe = self.request(None, "GET", f"{API}/_chaos/faults", op="chaos", raise_for_status=False,
                                     headers={"x-chaos-token": self.chaos_token})
                chaos = probe.status_code == 200
            self._caps = Capabilities(
                scope_rule=declared.get("scope_rule"), chaos=chaos,
                export=[f for f in declared.get("export", ["md", "json"]) if f in ("md", "json")],
                direct_search=declared.get("direct_search", True),
                model_config_api=declared.get("model_config", True), version=declared.get("version"),
                summaries=declared.get("summaries", True), slots_metric="workbench_run_slots_in_use",
            )
        return self._caps

    # -- accounts --------------------------------------------------------------------------------------------
    def login(self, username: str, password: str) -> Auth:
        data = self.json(None, "POST", f"{API}/auth/login", op="login",
                         json={"username": username, "password": password})
        try:
            return Auth(token=data["token"], user_id=data["user_id"], username=username,
                        expires_at=data.get("expires_at"))
        except (KeyError, TypeError, ValueError):
            raise TargetProtocolError(f"login answered {str(data)[:160]!r}: no token and user_id (API.md, POST "
                                      f"{API}/auth/login)", operation="login") from None

    def logout(self, auth: Auth) -> None:
        self.request(auth, "POST", f"{API}/auth/logout", op="logout")

    def me(self, auth: Auth | None) -> Me:
        return Me.model_validate(self.json(auth, "GET", f"{API}/me", op="me"))

    def me_status_with_cookies(self, cookies: dict[str, str]) -> int:
        cookie = "; ".join(f"{k}={v}" for k, v in cookies.items())
        return self.request(None, "GET", f"{API}/me", op="me", raise_for_status=False, headers={"cookie": cookie}).status_code

    # -- projects and documents ------------------------------------------------------------------------------
    def create_project(self, auth: Auth, name: str) -> str:
        return str(self.json(auth, "POST", f"{API}/projects", op="create_project", json={"name": name})["project_id"])

    def projects(self, auth: Auth) -> list[Project]:
        return [Project.model_validate(p) for p in self.json(auth, "GET", f"{API}/projects", op="projects")]

    def add_member(self, auth: Auth, project_id: str, username: str, *, user_id: str | None = None) -> None:
        self.request(auth, "POST", f"{API}/projects/{project_id}/members", op="add_member", json={"username": username})

    def upload(self, auth: Auth, project_id: str, path: Path, *, paper_id: str | None = None,
               filename: str | None = None) -> Uploaded:
        name = filename or path.name
        raw = path.read_bytes()
        body, ctype = multipart({"paper_id": paper_id} if paper_id else {}, {"file": (name, raw, "application/pdf")})
        data = self.json(auth, "POST", f"{API}/projects/{project_id}/documents", op="upload", content=body,
                         content_type=ctype, record_body={"file": name, "paper_id": paper_id})
        return self.uploaded(raw, name, str(data["doc_id"]), status=str(data.get("status") or "queued"),
                             reported_sha256=data.get("sha256"))

    def documents(self, auth: Auth, project_id: str) -> list[Document]:
        return [Document.model_validate(d)
                for d in self.json(auth, "GET", f"{API}/projects/{project_id}/documents", op="documents")]

    def document(self, auth: Auth | None, doc_id: str) -> Document:
        return Document.model_validate(self.json(auth, "GET", f"{API}/documents/{doc_id}", op="document"))

    def download(self, auth: Auth | None, doc_id: str) -> bytes:
        return self.request(auth, "GET", f"{API}/documents/{doc_id}/file", op="download").content

    def page_text(self, auth: Auth | None, doc_id: str, page: int) -> PageText:
        return PageText.model_validate(self.json(auth, "GET", f"{API}/documents/{doc_id}/pages/{page}",
                                                 op="page_text"))

    # -- retrieval -------------------------------------------------------------------------------------------
    def search(self, auth: Auth, project_id: str, queries: list[str], scope: list[str] | None = None,
               history: list[dict[str, str]] | None = None, *, traceparent: str | None = None) -> SearchResult:
        body: ForeignJson = {"project_id": project_id, "queries": queries, "scope": scope}
        if history:
            body["history"] = history
        sent = now_ns()
        data = self.json(auth, "POST", f"{API}/tools/internal_search", op="search", json=body,
                         headers={"traceparent": traceparent} if traceparent else None)
        return SearchResult.model_validate({**data, "sent_ns": sent, "received_ns": now_ns()})

    # -- sessions and runs -----------------------------------------------------------------------------------
    def open_session(self, auth: Auth, project_id: str, scope: list[str],
                     attachments: list[str] | None = None) -> SessionOpened:
        return SessionOpened.model_validate(self.json(auth, "POST", f"{API}/sessions", op="open_session", json={
            "project_id": project_id, "scope": scope, "attachments": attachments or []}))

    def session(self, auth: Auth | None, session_id: str) -> Session:
        return Session.model_validate(self.json(auth, "GET", f"{API}/sessions/{session_id}", op="session"))

    def set_scope(self, auth: Auth, session_id: str, scope: list[str],
                  attachments: list[str] | None = None) -> ScopeSet:
        body: ForeignJson = {"scope": scope}
        if attachments is not None:
            body["attachments"] = attachments
        return ScopeSet.model_validate(self.json(auth, "PATCH", f"{API}/sessions/{session_id}", op="set_scope",
                                                 json=body))

    def ask(self, auth: Auth, session_id: str, content: str, *, parent_id: str | None = None,
            traceparent: str | None = None) -> Submitted:
        body: ForeignJson = {"content": content}
        if parent_id:
            body["parent_id"] = parent_id
        headers = {"traceparent": traceparent} if traceparent else None
        data = self.json(auth, "POST", f"{API}/sessions/{session_id}/messages", op="ask", json=body, headers=headers)
        return Submitted.model_validate(data)  # the base class stamps submit_ns and accepted_ns around the call

    def events(self, auth: Auth | None, run_id: str, *, last_event_id: int | None = None,
               timeout_s: float = 120.0) -> Generator[Event, None, None]:
        for raw in self.raw_events(auth, run_id, last_event_id=last_event_id, timeout_s=timeout_s):
            yield self.typed(raw)

    def raw_events(self, auth: Auth | None, run_id: str, *, last_event_id: int | None = None,
                   timeout_s: float = 120.0) -> Iterator[RawEvent]:
        headers = {"last-event-id": str(last_event_id)} if last_event_id is not None else None
        for raw in self.sse(auth, f"{API}/runs/{run_id}/events", op="events", headers=headers, timeout_s=timeout_s):
            yield raw
            if raw.event in ("done", "error"):
                return

    def typed(self, raw: RawEvent) -> Event:
        try:
            data = orjson.loads(raw.data) if raw.data else {}
        except orjson.JSONDecodeError:
            raise TargetProtocolError(f"event {raw.event} carries invalid JSON: {raw.data[:80]!r}") from None
        return make_event(raw.event, int(raw.id) if raw.id else None, data, raw.recv_ns)

    def run(self, auth: Auth | None, run_id: str) -> RunDetail:
        return RunDetail.model_validate(self.json(auth, "GET", f"{API}/runs/{run_id}", op="run"))

    def stop(self, auth: Auth, run_id: str, reason: str | None = None) -> None:
        self.request(auth, "POST", f"{API}/runs/{run_id}/stop", op="stop", json={"reason": reason} if reason else {})

    def resume(self, auth: Auth, run_id: str) -> Resumed:
        return Resumed.model_validate(self.json(auth, "POST", f"{API}/runs/{run_id}/resume", op="resume"))

    def regenerate(self, auth: Auth, message_id: str, *, traceparent: str | None = None) -> Submitted:
        headers = {"traceparent": traceparent} if traceparent else None
        data = self.json(auth, "POST", f"{API}/messages/{message_id}/regenerate", op="regenerate", headers=headers)
        return Submitted.model_validate(data)

    def export(self, auth: Auth | None, session_id: str, fmt: str = "md") -> Exported:
        if fmt not in self.capabilities().export:
            raise CapabilityMissing(f"export={fmt}")
        reply = self.request(auth, "GET", f"{API}/sessions/{session_id}/export", op="export", params={"format": fmt})
        return Exported.model_validate({"format": fmt, "content_type": reply.content_type, "text": reply.text})

    def read_export(self, exported: Exported) -> Session:
        if exported.format == "md":
            return read_text_export(exported.text, MARKDOWN)
        try:
            data = json.loads(exported.text)
            return Session(session_id=data["session_id"], project_id=data.get("project_id", ""),
                           scope=data.get("scope", []), messages=[Message.model_validate(m) for m in data["messages"]],
                           sources=[ExportSource.model_validate(x) for x in data.get("sources", [])])
        except (ValueError, KeyError, TypeError) as exc:
            raise TargetProtocolError(f"the JSON export is not protocol v1: {exc}") from None

    def locate_citation(self, auth: Auth | None, citation_id: str) -> Located:
        return Located.model_validate(self.json(auth, "GET", f"{API}/citations/{citation_id}/locate",
                                                op="locate_citation"))

    # -- model configuration ---------------------------------------------------------------------------------
    def model_config(self, auth: Auth | None) -> ModelConfigView:
        return ModelConfigView.model_validate(self.json(auth, "GET", f"{API}/me/model-config", op="model_config"))

    def set_model_config(self, auth: Auth, provider: str, model: str, base_url: str | None = None,
                         api_key: str | None = None) -> ModelConfigView:
        body = {"provider": provider, "model": model, "base_url": base_url, "api_key": api_key}
        return ModelConfigView.model_validate(self.json(auth, "PUT", f"{API}/me/model-config", op="set_model_config",
                                                        json=body))

    # -- test-only control -----------------------------------------------------------------------------------
    def chaos(self, method: str, path: str, body: ForeignJson | None = None) -> Any:
        if not self.chaos_token:
            raise CapabilityMissing("chaos", detail="no chaos token configured for this target")
        reply = self.request(None, method, f"{API}/_chaos/{path.lstrip('/')}", op="chaos", json=body,
                             headers={"x-chaos-token": self.chaos_token})
        return reply.json() if reply.content else None

    # -- health ----------------------------------------------------------------------------------------------
    def ready(self) -> bool:
        try:
            return self.request(None, "GET", "/readyz", op="ready", raise_for_status=False).status_code == 200
        except TargetUnreachable:
            return False

    def metrics_text(self) -> str:
        return self.request(None, "GET", "/metrics", op="metrics").text
