"""The built-in adapter: speaks target protocol v1 (docs/API.md) over HTTP with httpx."""

from __future__ import annotations

import json
from collections.abc import Generator
from pathlib import Path
from typing import Any

import httpx

from rig.adapters.base import Adapter, Exchange
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
    make_event,
)
from rig.adapters.sse import SseParser
from rig.clock import now_ns
from rig.errors import CapabilityMissing, TargetHTTPError, TargetProtocolError, TargetUnreachable

API = "/api/v1"


class WorkbenchAdapter(Adapter):
    """Adapter for targets that implement the protocol exactly (the reference workbench among them)."""

    def __init__(self, base_url: str, *, chaos_token: str | None = None, timeout_s: float = 30.0) -> None:
        super().__init__()
        self.base_url = base_url.rstrip("/")
        self.chaos_token = chaos_token
        self._http = httpx.Client(base_url=self.base_url, timeout=timeout_s,
                                  limits=httpx.Limits(max_connections=32, max_keepalive_connections=16))
        self._caps: Capabilities | None = None

    # -- transport -----------------------------------------------------------------------------------------
    def request(self, auth: Auth | None, method: str, path: str, *, raise_for_status: bool = True,
                headers: dict[str, str] | None = None, **kwargs: Any) -> httpx.Response:
        """Send one request; records the exchange; raises TargetHTTPError on non-2xx unless told not to."""
        hdrs = dict(headers or {})
        if auth is not None:
            hdrs["authorization"] = f"Bearer {auth.token}"
        sent = now_ns()
        try:
            response = self._http.request(method, path, headers=hdrs, **kwargs)
        except httpx.TransportError as exc:
            self.record(Exchange(method, path, None, kwargs.get("json"), None, sent, now_ns(),
                                 auth.username if auth else None, error=type(exc).__name__))
            raise TargetUnreachable(self.base_url, f"{type(exc).__name__}: {exc}") from None
        received = now_ns()
        # Identity is always explicit (the Auth passed in): never let a Set-Cookie carry over to later calls.
        self._http.cookies.clear()
        self.record(Exchange(method, path, response.status_code, kwargs.get("json"), _body(response), sent,
                             received, auth.username if auth else None))
        if raise_for_status and response.status_code >= 400:
            raise _http_error(method, path, response)
        return response

    def _json(self, auth: Auth | None, method: str, path: str, **kwargs: Any) -> Any:
        response = self.request(auth, method, path, **kwargs)
        try:
            return response.json()
        except ValueError:
            raise TargetProtocolError(f"{method} {path}: expected JSON, got {response.text[:120]!r}") from None

    # -- capabilities ----------------------------------------------------------------------------------------
    def capabilities(self) -> Capabilities:
        if self._caps is None:
            declared: dict[str, Any] = {}
            response = self.request(None, "GET", f"{API}/capabilities", raise_for_status=False)
            if response.status_code == 200:
                declared = response.json()
            chaos = False
            if self.chaos_token:
                probe = self.request(None, "GET", f"{API}/_chaos/faults", raise_for_status=False,
                                     headers={"x-chaos-token": self.chaos_token})
                chaos = probe.status_code == 200
            self._caps = Capabilities(
                scope_rule=declared.get("scope_rule"), chaos=chaos,
                export=[f for f in declared.get("export", ["md", "json"]) if f in ("md", "json")],
                direct_search=declared.get("direct_search", True),
                model_config_api=declared.get("model_config", True), version=declared.get("version"),
                summaries=declared.get("summaries", True),
            )
        return self._caps

    # -- accounts --------------------------------------------------------------------------------------------
    def login(self, username: str, password: str) -> Auth:
        data = self._json(None, "POST", f"{API}/auth/login", json={"username": username, "password": password})
        return Auth(token=data["token"], user_id=data["user_id"], username=username, expires_at=data.get("expires_at"))

    def logout(self, auth: Auth) -> None:
        self.request(auth, "POST", f"{API}/auth/logout")

    def me(self, auth: Auth | None) -> Me:
        return Me.model_validate(self._json(auth, "GET", f"{API}/me"))

    # -- projects and documents ------------------------------------------------------------------------------
    def create_project(self, auth: Auth, name: str) -> str:
        return str(self._json(auth, "POST", f"{API}/projects", json={"name": name})["project_id"])

    def projects(self, auth: Auth) -> list[Project]:
        return [Project.model_validate(p) for p in self._json(auth, "GET", f"{API}/projects")]

    def add_member(self, auth: Auth, project_id: str, username: str) -> None:
        self.request(auth, "POST", f"{API}/projects/{project_id}/members", json={"username": username})

    def upload(self, auth: Auth, project_id: str, path: Path, *, paper_id: str | None = None,
               filename: str | None = None) -> Uploaded:
        with path.open("rb") as fh:
            data = self._json(auth, "POST", f"{API}/projects/{project_id}/documents",
                              files={"file": (filename or path.name, fh, "application/pdf")},
                              data={"paper_id": paper_id} if paper_id else {})
        return Uploaded.model_validate({**data, "accepted_ns": now_ns()})

    def documents(self, auth: Auth, project_id: str) -> list[Document]:
        return [Document.model_validate(d) for d in self._json(auth, "GET", f"{API}/projects/{project_id}/documents")]

    def document(self, auth: Auth | None, doc_id: str) -> Document:
        return Document.model_validate(self._json(auth, "GET", f"{API}/documents/{doc_id}"))

    def download(self, auth: Auth | None, doc_id: str) -> bytes:
        return self.request(auth, "GET", f"{API}/documents/{doc_id}/file").content

    def page_text(self, auth: Auth | None, doc_id: str, page: int) -> PageText:
        return PageText.model_validate(self._json(auth, "GET", f"{API}/documents/{doc_id}/pages/{page}"))

    # -- retrieval -------------------------------------------------------------------------------------------
    def search(self, auth: Auth, project_id: str, queries: list[str], scope: list[str] | None = None,
               history: list[dict[str, str]] | None = None) -> SearchResult:
        body: dict[str, Any] = {"project_id": project_id, "queries": queries, "scope": scope}
        if history:
            body["history"] = history
        sent = now_ns()
        data = self._json(auth, "POST", f"{API}/tools/internal_search", json=body)
        return SearchResult.model_validate({**data, "sent_ns": sent, "received_ns": now_ns()})

    # -- sessions and runs -----------------------------------------------------------------------------------
    def open_session(self, auth: Auth, project_id: str, scope: list[str],
                     attachments: list[str] | None = None) -> SessionOpened:
        return SessionOpened.model_validate(self._json(auth, "POST", f"{API}/sessions", json={
            "project_id": project_id, "scope": scope, "attachments": attachments or []}))

    def session(self, auth: Auth | None, session_id: str) -> Session:
        return Session.model_validate(self._json(auth, "GET", f"{API}/sessions/{session_id}"))

    def set_scope(self, auth: Auth, session_id: str, scope: list[str],
                  attachments: list[str] | None = None) -> ScopeSet:
        body: dict[str, Any] = {"scope": scope}
        if attachments is not None:
            body["attachments"] = attachments
        return ScopeSet.model_validate(self._json(auth, "PATCH", f"{API}/sessions/{session_id}", json=body))

    def ask(self, auth: Auth, session_id: str, content: str, *, parent_id: str | None = None,
            traceparent: str | None = None) -> Submitted:
        body: dict[str, Any] = {"content": content}
        if parent_id:
            body["parent_id"] = parent_id
        headers = {"traceparent": traceparent} if traceparent else None
        submit = now_ns()
        data = self._json(auth, "POST", f"{API}/sessions/{session_id}/messages", json=body, headers=headers)
        return Submitted.model_validate({**data, "submit_ns": submit, "accepted_ns": now_ns()})

    def events(self, auth: Auth, run_id: str, *, last_event_id: int | None = None,
               timeout_s: float = 120.0) -> Generator[Event, None, None]:
        headers = {"authorization": f"Bearer {auth.token}", "accept": "text/event-stream"}
        if last_event_id is not None:
            headers["last-event-id"] = str(last_event_id)
        parser = SseParser()
        path = f"{API}/runs/{run_id}/events"
        try:
            with self._http.stream("GET", path, headers=headers, timeout=httpx.Timeout(timeout_s)) as response:
                if response.status_code >= 400:
                    response.read()
                    raise _http_error("GET", path, response)
                for line in response.iter_lines():
                    raw = parser.feed(line)
                    if raw is None:
                        continue
                    recv = now_ns()
                    try:
                        data = json.loads(raw.data) if raw.data else {}
                    except ValueError:
                        bad = raw.data[:80]
                        raise TargetProtocolError(f"event {raw.event} carries invalid JSON: {bad!r}") from None
                    yield make_event(raw.event, int(raw.id) if raw.id else None, data, recv)
                    if raw.event in ("done", "error"):
                        return
        except httpx.TransportError as exc:
            raise TargetUnreachable(self.base_url, f"event stream broke: {type(exc).__name__}: {exc}") from None

    def run(self, auth: Auth | None, run_id: str) -> RunDetail:
        return RunDetail.model_validate(self._json(auth, "GET", f"{API}/runs/{run_id}"))

    def stop(self, auth: Auth, run_id: str, reason: str | None = None) -> None:
        self.request(auth, "POST", f"{API}/runs/{run_id}/stop", json={"reason": reason} if reason else {})

    def resume(self, auth: Auth, run_id: str) -> Resumed:
        return Resumed.model_validate(self._json(auth, "POST", f"{API}/runs/{run_id}/resume"))

    def regenerate(self, auth: Auth, message_id: str, *, traceparent: str | None = None) -> Submitted:
        submit = now_ns()
        headers = {"traceparent": traceparent} if traceparent else None
        data = self._json(auth, "POST", f"{API}/messages/{message_id}/regenerate", headers=headers)
        return Submitted.model_validate({**data, "submit_ns": submit, "accepted_ns": now_ns()})

    def export(self, auth: Auth | None, session_id: str, fmt: str = "md") -> Exported:
        if fmt not in self.capabilities().export:
            raise CapabilityMissing(f"export={fmt}")
        response = self.request(auth, "GET", f"{API}/sessions/{session_id}/export", params={"format": fmt})
        return Exported.model_validate({"format": fmt, "content_type": response.headers.get("content-type", ""),
                                        "text": response.text})

    def locate_citation(self, auth: Auth | None, citation_id: str) -> Located:
        return Located.model_validate(self._json(auth, "GET", f"{API}/citations/{citation_id}/locate"))

    # -- model configuration ---------------------------------------------------------------------------------
    def model_config(self, auth: Auth | None) -> ModelConfigView:
        return ModelConfigView.model_validate(self._json(auth, "GET", f"{API}/me/model-config"))

    def set_model_config(self, auth: Auth, provider: str, model: str, base_url: str | None = None,
                         api_key: str | None = None) -> ModelConfigView:
        body = {"provider": provider, "model": model, "base_url": base_url, "api_key": api_key}
        return ModelConfigView.model_validate(self._json(auth, "PUT", f"{API}/me/model-config", json=body))

    # -- test-only control -----------------------------------------------------------------------------------
    def chaos(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        if not self.chaos_token:
            raise CapabilityMissing("chaos", detail="no chaos token configured for this target")
        response = self.request(None, method, f"{API}/_chaos/{path.lstrip('/')}", json=body,
                                headers={"x-chaos-token": self.chaos_token})
        return response.json() if response.content else None

    # -- health ----------------------------------------------------------------------------------------------
    def ready(self) -> bool:
        try:
            return self.request(None, "GET", "/readyz", raise_for_status=False).status_code == 200
        except TargetUnreachable:
            return False

    def metrics_text(self) -> str:
        return self.request(None, "GET", "/metrics").text

    def close(self) -> None:
        self._http.close()


def _body(response: httpx.Response) -> Any:
    ctype = response.headers.get("content-type", "")
    if "json" in ctype:
        try:
            return response.json()
        except ValueError:
            return response.text[:2000]
    if ctype.startswith("text/") and "event-stream" not in ctype:
        return response.text[:4000]
    return {"bytes": len(response.content), "content_type": ctype}


def _http_error(method: str, path: str, response: httpx.Response) -> TargetHTTPError:
    code = message = None
    details: Any = None
    try:
        err = response.json().get("error", {})
        code, message, details = err.get("code"), err.get("message"), err.get("details")
    except (ValueError, AttributeError):
        message = response.text[:200]
    return TargetHTTPError(method, path, response.status_code, code, message or response.reason_phrase, details)
