"""`HttpAdapter`: any HTTP target from `target.http` in rig.yaml, with no Python of the user's own.

Every operation renders its request template, sends it through the adapter's transport (so exchanges are
recorded, errors translated, and under load Locust counts them), and reads the answer with its `result`
rules into the rig's models. What the spec leaves out is a capability the target lacks; `capabilities:` in
the spec declares what its records hold. See docs/adapters.md, "a new target without Python".
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Generator, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, TypeVar

import orjson
from pydantic import BaseModel

from rig.adapters.base import Adapter, Exchange
from rig.adapters.capabilities import Capabilities
from rig.adapters.http.extract import OperationReader
from rig.adapters.http.frames import DELIMITER, EventSorter
from rig.adapters.http.render import render
from rig.adapters.http.spec import CAPABILITY_OF, HttpSpec, Operation, StreamSpec
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
from rig.adapters.text_export import read_text_export
from rig.adapters.transport import Reply, StreamReply, Transport, TransportError
from rig.clock import now_ns
from rig.errors import CapabilityMissing, TargetProtocolError, TargetUnreachable
from rig.yamlfile import validate_model

M = TypeVar("M", bound=BaseModel)
SPEC_FIX = "see docs/adapters.md, 'a new target without Python', for target.http"


class HttpAdapter(Adapter):
    """A target described by `target.http` (an `HttpSpec`, or its mapping as rig.yaml holds it)."""

    def __init__(self, base_url: str, *, http: HttpSpec | dict[str, Any], chaos_token: str | None = None,
                 transport: Transport | None = None, timeout_s: float = 30.0, stream_timeout_s: float = 120.0) -> None:
        super().__init__(base_url, transport=transport, timeout_s=timeout_s)
        self.spec = http if isinstance(http, HttpSpec) else validate_model(http, HttpSpec, where="target.http",
                                                                           fix=SPEC_FIX)
        self.stream_timeout_s = stream_timeout_s
        self._ops = self.spec.operations()
        self._readers = {name: OperationReader(op) for name, op in self._ops.items()}
        stream = self.spec.events.stream if self.spec.events is not None else self.spec.ask.stream
        assert stream is not None  # the spec gives the stream once, one way or the other
        self._stream: StreamSpec = stream
        self._sorter = EventSorter(stream)
        self._sessions: dict[str, dict[str, Any]] = {}  # session id → what later requests may name (project, scope)
        self._run_sessions: dict[str, str] = {}  # run id → its session
        self._open: dict[str, tuple[AbstractContextManager[StreamReply], StreamReply]] = {}  # ask.stream answers
        self._caps: Capabilities | None = None

    @classmethod
    def connect(cls, base_url: str, *, chaos_token: str | None = None, transport: Transport | None = None,
                options: dict[str, Any] | None = None) -> Adapter:
        opts = dict(options or {})
        if "http" not in opts:
            from rig.errors import ConfigError

            raise ConfigError("target.adapter is rig.adapters.http:HttpAdapter but rig.yaml has no target.http",
                              fix=SPEC_FIX)
        return cls(base_url, chaos_token=chaos_token, transport=transport, **opts)

    # -- capabilities ----------------------------------------------------------------------------------------
    def capabilities(self) -> Capabilities:
        """What the spec configures (an operation left out is a capability absent), then what it declares."""
        if self._caps is None:
            s = self.spec
            derived: dict[str, Any] = {
                "stream": self._stream.format, "stop": "server" if s.stop else "none", "resume": s.resume is not None,
                "regenerate": s.regenerate is not None, "export": sorted(s.export), "direct_search": s.search is not None,
                "locate_citation": s.locate_citation is not None, "run_detail": s.run is not None,
                "members": s.add_member is not None, "scope_change": s.set_scope is not None,
                "model_config_api": s.model_config_get is not None and s.set_model_config is not None,
                "page_text": s.page_text is not None, "download": s.download is not None, "chaos": False,
                "export_reading": "json" in s.export and s.export["json"].result is not None,
                "event_replay": s.events is not None and "last_event_id" in s.events.request.names(),
            }
            self._caps = Capabilities(**{**derived, **s.capabilities})
        return self._caps

    # -- requests --------------------------------------------------------------------------------------------
    def auth_headers(self, auth: Auth | None) -> dict[str, str]:
        if auth is None:
            return {}
        a = self.spec.auth
        if a.send == "bearer":
            return {"authorization": f"Bearer {auth.token}"}
        if a.send == "header":
            return {a.header.lower(): a.value.format(token=auth.token)}
        return {"cookie": f"{a.cookie}={auth.token}"}

    def _op(self, name: str) -> Operation:
        op = self._ops.get(name)
        if op is None:
            raise CapabilityMissing(CAPABILITY_OF.get(name, name.replace(".", "=")),
                                    detail=f"target.http configures no {name} operation")
        return op

    def _variables(self, auth: Auth | None, values: dict[str, Any]) -> dict[str, Any]:
        actor = {"user_id": auth.user_id, "username": auth.username} if auth else {}
        return {**actor, **values}

    def call(self, name: str, auth: Auth | None, /, *, raise_for_status: bool = True,
             headers: dict[str, str] | None = None, **values: Any) -> Reply:
        """Send operation `name` as `auth` with its variables; the reply (raising on a 4xx/5xx unless told not to)."""
        rendered = render(self._op(name).request, self._variables(auth, values))
        return self.request(auth, rendered.method, rendered.path, op=name.split(".")[0],
                            raise_for_status=raise_for_status, headers={**rendered.headers, **(headers or {})},
                            content=rendered.body, content_type=rendered.content_type,
                            record_body=rendered.record_body)

    def _data(self, name: str, reply: Reply) -> Any:
        try:
            data = orjson.loads(reply.content) if reply.content else None
        except orjson.JSONDecodeError:
            raise TargetProtocolError(f"{name}: expected JSON, got {reply.text[:120]!r}") from None
        return data

    def read(self, name: str, auth: Auth | None, model: type[M], /, **values: Any) -> M:
        """Operation `name`, its answer read into `model`."""
        reply = self.call(name, auth, **values)
        return model.model_validate(self._readers[name].read(self._data(name, reply)))

    def read_all(self, name: str, auth: Auth | None, model: type[M], /, **values: Any) -> list[M]:
        reply = self.call(name, auth, **values)
        try:
            items = self._readers[name].read_all(self._data(name, reply))
        except ValueError as exc:
            raise TargetProtocolError(f"{name}: {exc}") from None
        return [model.model_validate(i) for i in items]

    def value(self, name: str, auth: Auth | None, field: str, /, **values: Any) -> str:
        """One field of an operation's answer (`project_id` of create_project …); absent is a protocol error."""
        data = self._readers[name].read(self._data(name, self.call(name, auth, **values)))
        found = data.get(field) if isinstance(data, dict) else data
        if found is None:
            raise TargetProtocolError(f"{name}: the answer has no {field} (check target.http.{name}.result)")
        return str(found)

    # -- accounts --------------------------------------------------------------------------------------------
    def login(self, username: str, password: str) -> Auth:
        if self.spec.login is None:  # an API key: the password is the token; who it is, `me` says
            probe = Auth(token=password, user_id="", username=username)
            me = self.me(probe)
            return Auth(token=password, user_id=me.user_id, username=username)
        reply = self.call("login", None, username=username, password=password)
        data = self._readers["login"].read(self._data("login", reply)) or {}
        if self.spec.auth.token_from == "cookie":
            data = {**data, "token": _cookie(reply.headers, self.spec.auth.cookie or "")}
        if not data.get("token"):
            raise TargetProtocolError("login: the answer carries no token (check target.http.login.result / auth)")
        if not data.get("user_id"):
            data["user_id"] = self.me(Auth(token=str(data["token"]), user_id="", username=username)).user_id
        return Auth(token=str(data["token"]), user_id=str(data["user_id"]), username=username,
                    expires_at=str(data["expires_at"]) if data.get("expires_at") else None)

    def logout(self, auth: Auth) -> None:
        self.call("logout", auth)

    def me(self, auth: Auth | None) -> Me:
        return self.read("me", auth, Me)

    def me_status_with_cookies(self, cookies: dict[str, str]) -> int:
        cookie = "; ".join(f"{k}={v}" for k, v in cookies.items())
        return self.call("me", None, raise_for_status=False, headers={"cookie": cookie}).status_code

    # -- projects and documents ------------------------------------------------------------------------------
    def create_project(self, auth: Auth, name: str) -> str:
        return self.value("create_project", auth, "project_id", name=name)

    def projects(self, auth: Auth) -> list[Project]:
        return self.read_all("projects", auth, Project)

    def add_member(self, auth: Auth, project_id: str, username: str) -> None:
        self.call("add_member", auth, project_id=project_id, member=username)

    def upload(self, auth: Auth, project_id: str, path: Path, *, paper_id: str | None = None,
               filename: str | None = None) -> Uploaded:
        reply = self.call("upload", auth, project_id=project_id, file=str(path), filename=filename or path.name,
                          paper_id=paper_id)
        data = self._readers["upload"].read(self._data("upload", reply))
        return Uploaded.model_validate({**(data or {}), "accepted_ns": now_ns()})

    def documents(self, auth: Auth, project_id: str) -> list[Document]:
        return self.read_all("documents", auth, Document, project_id=project_id)

    def document(self, auth: Auth | None, doc_id: str) -> Document:
        return self.read("document", auth, Document, doc_id=doc_id)

    def download(self, auth: Auth | None, doc_id: str) -> bytes:
        return self.call("download", auth, doc_id=doc_id).content

    def page_text(self, auth: Auth | None, doc_id: str, page: int) -> PageText:
        return self.read("page_text", auth, PageText, doc_id=doc_id, page=page)

    # -- retrieval -------------------------------------------------------------------------------------------
    def search(self, auth: Auth, project_id: str, queries: list[str], scope: list[str] | None = None,
               history: list[dict[str, str]] | None = None) -> SearchResult:
        sent = now_ns()
        reply = self.call("search", auth, project_id=project_id, queries=queries, query=queries[0] if queries else None,
                          scope=scope, history=history or None)
        data = self._readers["search"].read(self._data("search", reply))
        return SearchResult.model_validate({**(data or {}), "sent_ns": sent, "received_ns": now_ns()})

    # -- sessions and runs -----------------------------------------------------------------------------------
    def open_session(self, auth: Auth, project_id: str, scope: list[str],
                     attachments: list[str] | None = None) -> SessionOpened:
        opened = self.read("open_session", auth, SessionOpened, project_id=project_id, scope=scope,
                           attachments=attachments or [])
        self._sessions[opened.session_id] = {"project_id": project_id, "scope": opened.effective_scope}
        return opened

    def session(self, auth: Auth | None, session_id: str) -> Session:
        return self.read("session", auth, Session, session_id=session_id, **self._sessions.get(session_id, {}))

    def set_scope(self, auth: Auth, session_id: str, scope: list[str],
                  attachments: list[str] | None = None) -> ScopeSet:
        known = self._sessions.setdefault(session_id, {})
        changed = self.read("set_scope", auth, ScopeSet, session_id=session_id, scope=scope,
                            attachments=attachments, project_id=known.get("project_id"))
        known["scope"] = changed.effective_scope
        return changed

    def ask(self, auth: Auth, session_id: str, content: str, *, parent_id: str | None = None,
            traceparent: str | None = None) -> Submitted:
        values = {"session_id": session_id, "content": content, "parent_id": parent_id, "traceparent": traceparent,
                  **self._sessions.get(session_id, {})}
        if self.spec.ask.stream is not None:
            return self._ask_streaming(auth, session_id, values)
        submit = now_ns()
        reply = self.call("ask", auth, **values)
        data = self._readers["ask"].read(self._data("ask", reply))
        submitted = Submitted.model_validate({**(data or {}), "submit_ns": submit, "accepted_ns": now_ns()})
        self._run_sessions[submitted.run_id] = session_id
        return submitted

    def _ask_streaming(self, auth: Auth, session_id: str, values: dict[str, Any]) -> Submitted:
        """The question's answer is the stream: it is opened here and read by `events()`."""
        rendered = render(self.spec.ask.request, self._variables(auth, values))
        headers = {**self.auth_headers(auth), **rendered.headers}
        if rendered.content_type:
            headers["content-type"] = rendered.content_type
        submit = now_ns()
        cm = self.transport.stream(rendered.method, rendered.path, op="ask", headers=headers, body=rendered.body,
                                   timeout_s=self.stream_timeout_s, delimiter=DELIMITER[self._stream.format])
        try:
            reply = cm.__enter__()
        except TransportError as exc:
            raise TargetUnreachable(self.base_url, str(exc)) from None
        if reply.status_code >= 400:
            error = self.http_error(rendered.method, rendered.path, Reply(reply.status_code, reply.headers,
                                                                           reply.read(), reply.reason))
            cm.__exit__(None, None, None)
            raise error
        data = self._readers["ask"].read({"headers": reply.headers}) or {}
        run_id = str(data.get("run_id") or f"rig-{uuid.uuid4().hex}")
        self.record(Exchange(rendered.method, rendered.path, reply.status_code, rendered.record_body,
                             {"stream": self._stream.format, "run_id": run_id}, submit, now_ns(),
                             auth.username))
        self._open[run_id] = (cm, reply)
        self._run_sessions[run_id] = session_id
        return Submitted(run_id=run_id, message_id=data.get("message_id"), submit_ns=submit, accepted_ns=now_ns())

    def events(self, auth: Auth | None, run_id: str, *, last_event_id: int | None = None,
               timeout_s: float = 120.0) -> Generator[Event, None, None]:
        held = self._open.pop(run_id, None)
        if held is not None and last_event_id is None:
            cm, reply = held
            try:
                yield from self._sorted(reply)
            finally:
                cm.__exit__(None, None, None)
            return
        if held is not None:
            held[0].__exit__(None, None, None)
        if self.spec.events is None:
            raise CapabilityMissing("event_replay", detail="the run's stream is the answer to its question; it "
                                    "cannot be opened again")
        rendered = render(self.spec.events.request, self._variables(auth, {
            "run_id": run_id, "session_id": self._run_sessions.get(run_id), "last_event_id": last_event_id}))
        headers = {**self.auth_headers(auth), **rendered.headers}
        if rendered.content_type:
            headers["content-type"] = rendered.content_type
        try:
            with self.transport.stream(rendered.method, rendered.path, op="events", headers=headers,
                                       body=rendered.body, timeout_s=min(timeout_s, self.stream_timeout_s),
                                       delimiter=DELIMITER[self._stream.format]) as reply:
                if reply.status_code >= 400:
                    raise self.http_error(rendered.method, rendered.path, Reply(reply.status_code, reply.headers,
                                                                                 reply.read(), reply.reason))
                yield from self._sorted(reply)
        except TransportError as exc:
            raise TargetUnreachable(self.base_url, f"event stream broke: {exc}") from None

    def _sorted(self, reply: StreamReply) -> Iterator[Event]:
        try:
            yield from self._sorter.events(reply.chunks())
        except TransportError as exc:
            raise TargetUnreachable(self.base_url, f"event stream broke: {exc}") from None

    def run(self, auth: Auth | None, run_id: str) -> RunDetail:
        return self.read("run", auth, RunDetail, run_id=run_id, session_id=self._run_sessions.get(run_id))

    def stop(self, auth: Auth, run_id: str, reason: str | None = None) -> None:
        self.call("stop", auth, run_id=run_id, session_id=self._run_sessions.get(run_id), reason=reason)

    def resume(self, auth: Auth, run_id: str) -> Resumed:
        resumed = self.read("resume", auth, Resumed, run_id=run_id, session_id=self._run_sessions.get(run_id))
        if run_id in self._run_sessions:
            self._run_sessions[resumed.run_id] = self._run_sessions[run_id]
        return resumed

    def regenerate(self, auth: Auth, message_id: str, *, traceparent: str | None = None) -> Submitted:
        submit = now_ns()
        reply = self.call("regenerate", auth, message_id=message_id, traceparent=traceparent)
        data = self._readers["regenerate"].read(self._data("regenerate", reply))
        return Submitted.model_validate({**(data or {}), "submit_ns": submit, "accepted_ns": now_ns()})

    def export(self, auth: Auth | None, session_id: str, fmt: str = "md") -> Exported:
        reply = self.call(f"export.{fmt}", auth, session_id=session_id, format=fmt)
        return Exported.model_validate({"format": fmt, "content_type": reply.content_type, "text": reply.text})

    def read_export(self, exported: Exported) -> Session:
        op = self._ops.get(f"export.{exported.format}")
        if op is not None and op.lines is not None:
            return read_text_export(exported.text, op.lines)
        if exported.format != "json" or not self.capabilities().export_reading:
            raise CapabilityMissing(f"export_reading={exported.format}",
                                    detail=f"target.http.export.{exported.format} has no rules to read it back")
        try:
            data = orjson.loads(exported.text)
        except orjson.JSONDecodeError as exc:
            raise TargetProtocolError(f"the JSON export is not JSON: {exc}") from None
        return Session.model_validate(self._readers["export.json"].read(data))

    def locate_citation(self, auth: Auth | None, citation_id: str) -> Located:
        return self.read("locate_citation", auth, Located, citation_id=citation_id)

    # -- model configuration ---------------------------------------------------------------------------------
    def model_config(self, auth: Auth | None) -> ModelConfigView:
        return self.read("model_config", auth, ModelConfigView)

    def set_model_config(self, auth: Auth, provider: str, model: str, base_url: str | None = None,
                         api_key: str | None = None) -> ModelConfigView:
        return self.read("set_model_config", auth, ModelConfigView, provider=provider, model=model,
                         base_url=base_url, api_key=api_key)

    # -- health ----------------------------------------------------------------------------------------------
    def ready(self) -> bool:
        if self.spec.ready is None:
            return True  # readiness is the rig's `target.ready_path`, checked before the adapter is built
        try:
            return self.call("ready", None, raise_for_status=False).status_code < 300
        except TargetUnreachable:
            return False

    def metrics_text(self) -> str:
        return self.call("metrics", None).text if self.spec.metrics is not None else ""

    def close(self) -> None:
        for cm, _ in self._open.values():
            cm.__exit__(None, None, None)
        self._open.clear()
        super().close()


def _cookie(headers: dict[str, str], name: str) -> str | None:
    """A cookie's value from the answer's Set-Cookie header(s), however the transport joined them."""
    found = re.search(rf"(?:^|[,;]\s*){re.escape(name)}=([^;,\s]*)", headers.get("set-cookie", ""))
    return found.group(1) if found else None
