"""`HttpAdapter`: any HTTP target from `target.http` in rig.yaml, with no Python of the user's own.

Every operation renders its request template, sends it through the adapter's transport (so exchanges are
recorded, errors translated, and under load Locust counts them), and reads the answer with its `result`
rules into the rig's models. What the spec leaves out is a capability the target lacks; `capabilities:` in
the spec declares what its records hold. See docs/adapters.md, "a new target without Python".
"""

from __future__ import annotations

import hashlib
import itertools
import os
import re
import uuid
from collections.abc import Callable, Generator, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

import orjson
from pydantic import BaseModel

from rig.adapters.base import Adapter, Exchange, reply_body
from rig.adapters.capabilities import Capabilities
from rig.adapters.csv_export import CsvExportError, read_csv_export
from rig.adapters.error_body import read_error_body
from rig.adapters.http.extract import OperationReader
from rig.adapters.http.frames import DELIMITER, Deferred, EventSorter, typed_later
from rig.adapters.http.functions import options as rule_options
from rig.adapters.http.polling import poll_answer
from rig.adapters.http.render import path_names, render
from rig.adapters.http.spec import CAPABILITY_OF, HttpSpec, Operation, Request, StreamSpec, compile_path
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
from rig.adapters.protocol import exchange_of, fit
from rig.adapters.text_export import read_text_export
from rig.adapters.transport import Reply, StreamReply, Transport, TransportError
from rig.clock import now_ns
from rig.errors import CapabilityMissing, ConfigError, TargetHTTPError, TargetProtocolError, TargetUnreachable
from rig.jsonvalue import ForeignJson
from rig.measure.sse import RawEvent
from rig.yamlfile import validate_model

M = TypeVar("M", bound=BaseModel)
SPEC_FIX = "see docs/adapters.md, 'a new target without Python', for target.http"
RECORD_FIELDS = ("end_reasons", "run_timings", "run_tool_calls", "run_model_input", "run_usage", "trace_ids",
                 "checkpoints", "summaries")  # what a run record holds: absent with the record itself
# What no operation shows by being configured: what the target's answers hold. Absent unless `capabilities:` says
# it is there (a capability assumed present would turn what the target never promised into its FAIL).
DECLARED_ONLY = (*RECORD_FIELDS, "document_hashes", "page_counts", "ingest_stages", "stream_tool_cards",
                 "search_stages", "search_calls", "hit_pages", "expansion", "export_sources", "input_budget",
                 "citation_pages", "attachments", "model_config_keys")


@dataclass(frozen=True)
class _Compiled:
    """A description, validated and compiled (operations, their readers, the stream's rules): the same for every
    adapter of it, so a load's users share one (compiling per user cost each new user tens of ms)."""

    spec: HttpSpec
    ops: dict[str, Operation]
    readers: dict[str, OperationReader]
    stream: StreamSpec | None
    sorter: EventSorter | None

    @classmethod
    def of(cls, spec: HttpSpec) -> _Compiled:
        ops = spec.operations()
        stream = spec.stream_spec()
        return cls(spec, ops, {name: OperationReader(op) for name, op in ops.items()}, stream,
                   EventSorter(stream) if stream is not None else None)


_COMPILED: dict[bytes, _Compiled] = {}


def _compiled(http: ForeignJson) -> _Compiled:
    """The compiled description of a `target.http` mapping, once per process per description."""
    key = orjson.dumps(http, option=orjson.OPT_SORT_KEYS, default=str)
    if key not in _COMPILED:
        _COMPILED[key] = _Compiled.of(validate_model(http, HttpSpec, where="target.http", fix=SPEC_FIX))
    return _COMPILED[key]


class HttpAdapter(Adapter):
    """A target described by `target.http` (an `HttpSpec`, or its mapping as rig.yaml holds it)."""

    runs_kept = 1024  # the runs whose session and question it remembers for later operations on them: the latest

    def __init__(self, base_url: str, *, http: HttpSpec | ForeignJson, chaos_token: str | None = None,
                 transport: Transport | None = None, timeout_s: float = 30.0, stream_timeout_s: float = 120.0) -> None:
        super().__init__(base_url, transport=transport, timeout_s=timeout_s)
        compiled = _compiled(http) if isinstance(http, dict) else _Compiled.of(http)
        self.spec = compiled.spec
        self.stream_timeout_s = stream_timeout_s
        self._ops = compiled.ops
        self._readers = compiled.readers
        self._stream: StreamSpec | None = compiled.stream
        self._sorter = compiled.sorter
        self._sessions: dict[str, ForeignJson] = {}  # session id → what later requests may name (project, scope)
        self._run_sessions: dict[str, str] = {}  # run id → its session
        self._run_values: dict[str, ForeignJson] = {}  # run id → the variables of the question that started it
        self._open: dict[str, tuple[AbstractContextManager[StreamReply], StreamReply]] = {}  # ask.stream answers
        self._reading: dict[str, AbstractContextManager[StreamReply]] = {}  # streams being read (stop: disconnect)
        self._disconnected: set[str] = set()
        self._fallbacks: dict[int, OperationReader] = {}
        self._caps: Capabilities | None = None

    @classmethod
    def connect(cls, base_url: str, *, chaos_token: str | None = None, transport: Transport | None = None,
                options: ForeignJson | None = None) -> Adapter:
        opts = dict(options or {})
        if "http" not in opts:

            raise ConfigError("target.adapter is rig.adapters.http:HttpAdapter but rig.yaml has no target.http",
                              fix=SPEC_FIX)
        return cls(base_url, chaos_token=chaos_token, transport=transport, **opts)

    # -- capabilities ----------------------------------------------------------------------------------------
    def capabilities(self) -> Capabilities:
        """What the spec configures (an operation left out is a capability absent), then what it declares."""
        if self._caps is None:
            s = self.spec
            records = s.run is not None
            derived: ForeignJson = {
                "identity": s.me is not None, "logout": s.logout is not None,
                "projects": s.create_project is not None and s.projects is not None,
                "sessions": s.open_session is not None and s.session is not None, "scope": self._scoped(),
                "upload": s.upload is not None, "documents": s.documents is not None, "document": s.document is not None,
                "ask": s.ask is not None, "stream": self._stream.format if self._stream is not None else "none",
                "stop": "disconnect" if s.stop == "disconnect" else "server" if s.stop else "none",
                "resume": s.resume is not None, "regenerate": s.regenerate is not None, "export": sorted(s.export),
                "direct_search": s.search is not None, "locate_citation": s.locate_citation is not None,
                "run_detail": records, "members": s.add_member is not None, "scope_change": s.set_scope is not None,
                "model_config_api": s.model_config_get is not None and s.set_model_config is not None,
                "page_text": s.page_text is not None, "download": s.download is not None, "chaos": False,
                "export_reading": "json" in s.export and s.export["json"].result is not None,  # (md, csv: their rules)
                "event_replay": s.events is not None and "last_event_id" in s.events.request.names(),
            }
            derived.update({name: False for name in DECLARED_ONLY})  # … until the description declares it
            declared = dict(s.capabilities)
            if not records:  # what a run record would hold, there is none of, whatever is declared
                declared.update({name: False for name in RECORD_FIELDS})
            self._caps = Capabilities(**{**derived, **declared})
        return self._caps

    def _scoped(self) -> bool:
        """Whether a question can be restricted to chosen documents: a session opened on them, or a question
        that names them itself."""
        s = self.spec
        return (s.open_session is not None and "scope" in s.open_session.names()) or (
            s.ask is not None and "scope" in s.ask.names())

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

    def _variables(self, auth: Auth | None, values: ForeignJson) -> ForeignJson:
        """The operation's variables, the acting account's, and what the ledger knows of a named document."""
        actor = {"user_id": auth.user_id, "username": auth.username} if auth else {}
        known: ForeignJson = {}
        entry = self.uploads.entry(str(values["doc_id"])) if values.get("doc_id") else None
        if entry is not None:
            known = {"track_id": entry.track_id, "filename": entry.filename, "sha256": entry.sha256}
        return {**actor, **known, **{k: v for k, v in values.items() if v is not None or k not in known}}

    def _options(self, variables: ForeignJson) -> Any:
        return rule_options(variables, self.uploads.doc_of)

    @property
    def doc_of(self) -> Callable[[str], str | None]:
        """The id of a document the rig uploaded, by the file name it gave it (rules call it as `doc_of`)."""
        return self.uploads.doc_of

    def send(self, name: str, request: Request, auth: Auth | None, variables: ForeignJson, *,
             raise_for_status: bool = True, headers: dict[str, str] | None = None) -> tuple[Reply, ForeignJson]:
        """One request of operation `name` (its template `request`) filled with `variables`: the reply, and the
        exchange a protocol error would carry."""
        rendered = render(request, variables)
        reply = self.request(auth, rendered.method, rendered.path, op=name.split(".")[0],
                             raise_for_status=raise_for_status, headers={**rendered.headers, **(headers or {})},
                             content=rendered.body, content_type=rendered.content_type,
                             record_body=rendered.record_body)
        return reply, exchange_of(name, rendered.method, rendered.path, reply)

    def call(self, name: str, auth: Auth | None, /, *, raise_for_status: bool = True,
             headers: dict[str, str] | None = None, **values: Any) -> Reply:
        """Send operation `name` as `auth` with its variables; the reply (raising on a 4xx/5xx unless told not to)."""
        variables = self._variables(auth, values)
        op = self._way(self._op(name), variables)
        return self.send(name, op.request, auth, self._looked_up(name, op, auth, variables),
                         raise_for_status=raise_for_status, headers=headers)[0]

    def _looked_up(self, name: str, op: Operation, auth: Auth | None, variables: ForeignJson) -> ForeignJson:
        """`variables` with what the operation's lookups give (each one request, read by its `value`)."""
        for key, lookup in op.lookup.items():
            reply, exchange = self.send(f"{name}.lookup.{key}", lookup.request, auth, variables)
            found = compile_path(lookup.value).search(self._data(name, reply, exchange), options=self._options(variables))
            if found in (None, "", []):
                raise TargetProtocolError(f"{name}: lookup {key} found nothing (check target.http.{name}.lookup."
                                          f"{key}.value)", exchange=exchange, operation=name)
            variables = {**variables, key: found}
        return variables

    def _reader(self, name: str, op: Operation) -> OperationReader:
        """The compiled rules of operation `name`, or of one of its fallbacks."""
        if op is self._ops[name]:
            return self._readers[name]
        return self._fallbacks.setdefault(id(op), OperationReader(op))

    @staticmethod
    def _way(op: Operation, variables: ForeignJson) -> Operation:
        """The operation, or its fallback when its path names a variable nobody knows (no track id for this doc)."""
        while op.fallback is not None and any(variables.get(n) in (None, "") for n in path_names(op.request)):
            op = op.fallback
        return op

    def _data(self, name: str, reply: Reply, exchange: ForeignJson) -> Any:
        try:
            return orjson.loads(reply.content) if reply.content else None
        except orjson.JSONDecodeError:
            raise TargetProtocolError(f"{name}: expected JSON, got {reply.text[:120]!r}", exchange=exchange,
                                      operation=name) from None

    def answer(self, name: str, auth: Auth | None, /, **values: Any) -> tuple[Any, ForeignJson]:
        """Operation `name`'s answer read by its rules (trying its fallback when the rules find nothing, polling
        when it has a poll), and the exchange it came from."""
        variables = self._variables(auth, values)
        op: Operation | None = self._way(self._op(name), variables)
        assert op is not None
        variables = self._looked_up(name, op, auth, variables)
        read: Any = None
        exchange: ForeignJson = {}
        while op is not None:
            reply, exchange = self.send(name, op.request, auth, variables, raise_for_status=op.refusal is None)
            if reply.status_code >= 400:
                raise self._refused(op, reply, exchange, variables)
            read = self._reader(name, op).read(self._data(name, reply, exchange), self._options(variables))
            if read is not None and op.poll is not None:
                read = poll_answer(self, name, op.poll, auth, variables, read)
            if read is not None or op.fallback is None:
                break
            op = op.fallback
        return read, exchange

    def _refused(self, op: Operation, reply: Reply, exchange: ForeignJson, variables: ForeignJson
                 ) -> TargetHTTPError:
        """A refused request, its outcome named by the operation's `refusal` rule where the rule names one (a code,
        or `{code, message}`), else the plain HTTP error."""
        error = self.http_error(exchange["method"], exchange["path"], reply)
        try:
            body: Any = orjson.loads(reply.content) if reply.content else None
        except orjson.JSONDecodeError:
            body = reply.text
        assert op.refusal is not None
        named = compile_path(op.refusal).search({"status": reply.status_code, "body": body},
                                                options=self._options(variables))
        code, message = (named, None) if isinstance(named, str) else \
            (named.get("code"), named.get("message")) if isinstance(named, dict) else (None, None)
        if not code:
            return error
        said = message or read_error_body(reply.content, reply.content_type).message or f"HTTP {reply.status_code}"
        return TargetHTTPError(error.method, error.path, error.status, str(code), str(said), error.details,
                               retry_after_s=error.retry_after_s)

    def read(self, name: str, auth: Auth | None, model: type[M], /, **values: Any) -> M:
        """Operation `name`, its answer read into `model` (an answer that does not fit is a protocol error)."""
        data, exchange = self.answer(name, auth, **values)
        return fit(model, data, operation=name, exchange=exchange, fix=f"check target.http.{name}.result")

    def read_all(self, name: str, auth: Auth | None, model: type[M], /, **values: Any) -> list[M]:
        variables = self._variables(auth, values)
        op = self._way(self._op(name), variables)
        variables = self._looked_up(name, op, auth, variables)
        reply, exchange = self.send(name, op.request, auth, variables)
        try:
            items = self._reader(name, op).read_all(self._data(name, reply, exchange), self._options(variables))
        except ValueError as exc:
            raise TargetProtocolError(f"{name}: {exc} (check target.http.{name}.items)", exchange=exchange,
                                      operation=name) from None
        return [fit(model, i, operation=name, exchange=exchange, fix=f"check target.http.{name}.result")
                for i in items]

    def value(self, name: str, auth: Auth | None, field: str, /, **values: Any) -> str:
        """One field of an operation's answer (`project_id` of create_project …); absent is a protocol error."""
        data, exchange = self.answer(name, auth, **values)
        found = data.get(field) if isinstance(data, dict) else data
        if found is None:
            raise TargetProtocolError(f"{name}: the answer has no {field} (check target.http.{name}.result)",
                                      exchange=exchange, operation=name)
        return str(found)

    # -- accounts --------------------------------------------------------------------------------------------
    def login(self, username: str, password: str) -> Auth:
        if self.spec.login is None:  # an API key: the password is the token; who it is, `me` says (else the name)
            probe = Auth(token=password, user_id=username, username=username)
            return Auth(token=password, user_id=self.me(probe).user_id if self.spec.me else username,
                        username=username)
        reply, exchange = self.send("login", self.spec.login.request, None,
                                    self._variables(None, {"username": username, "password": password}))
        data = self._readers["login"].read(self._data("login", reply, exchange)) or {}
        if not isinstance(data, dict):
            raise TargetProtocolError("login: the answer is not an object (check target.http.login.result)",
                                      exchange=exchange, operation="login")
        if self.spec.auth.token_from == "cookie":
            data = {**data, "token": _cookie(reply.headers, self.spec.auth.cookie or "")}
        if not data.get("token"):
            raise TargetProtocolError("login: the answer carries no token (check target.http.login.result / auth)",
                                      exchange=exchange, operation="login")
        if not data.get("user_id"):  # who it is: `me` where the target says, else the name logged in with
            probe = Auth(token=str(data["token"]), user_id=username, username=username)
            data["user_id"] = self.me(probe).user_id if self.spec.me is not None else username
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

    def add_member(self, auth: Auth, project_id: str, username: str, *, user_id: str | None = None) -> None:
        self.call("add_member", auth, project_id=project_id, member=username, member_id=user_id)

    def upload(self, auth: Auth, project_id: str, path: Path, *, paper_id: str | None = None,
               filename: str | None = None) -> Uploaded:
        """Upload a file; its sha256 is the rig's own (a target's is kept as `reported_sha256` and compared)."""
        name = filename or path.name
        raw = path.read_bytes()
        data, exchange = self.answer("upload", auth, project_id=project_id, file=str(path), filename=name,
                                     paper_id=paper_id, sha256=hashlib.sha256(raw).hexdigest())
        if not isinstance(data, dict) or not data.get("doc_id"):
            raise TargetProtocolError("upload: the answer names no document id (check target.http.upload.result, "
                                      "or add a poll that reads it)", exchange=exchange, operation="upload")
        status = data.get("status") or "queued"
        if not isinstance(status, str):
            raise TargetProtocolError(f"upload: the answer's status is not a word: {status!r}", exchange=exchange,
                                      operation="upload")
        reported = data.get("sha256")
        return self.uploaded(raw, name, str(data["doc_id"]), status=status,
                             reported_sha256=str(reported) if reported else None,
                             track_id=str(data["track_id"]) if data.get("track_id") else None)

    def documents(self, auth: Auth | None, project_id: str) -> list[Document]:
        return self.read_all("documents", auth, Document, project_id=project_id)

    def document(self, auth: Auth | None, doc_id: str) -> Document:
        return self.read("document", auth, Document, doc_id=doc_id)

    def download(self, auth: Auth | None, doc_id: str) -> bytes:
        return self.call("download", auth, doc_id=doc_id).content

    def page_text(self, auth: Auth | None, doc_id: str, page: int) -> PageText:
        return self.read("page_text", auth, PageText, doc_id=doc_id, page=page)

    # -- retrieval -------------------------------------------------------------------------------------------
    def search(self, auth: Auth, project_id: str, queries: list[str], scope: list[str] | None = None,
               history: list[dict[str, str]] | None = None, *, traceparent: str | None = None) -> SearchResult:
        sent = now_ns()
        data, exchange = self.answer("search", auth, project_id=project_id, queries=queries,
                                     query=queries[0] if queries else None, scope=scope, history=history or None,
                                     traceparent=traceparent)
        return fit(SearchResult, {**(data or {}), "sent_ns": sent, "received_ns": now_ns()}, operation="search",
                   exchange=exchange, fix="check target.http.search.result")

    # -- sessions and runs -----------------------------------------------------------------------------------
    def open_session(self, auth: Auth, project_id: str, scope: list[str],
                     attachments: list[str] | None = None) -> SessionOpened:
        """A session on the target; on a target without sessions, a conversation the rig keeps itself (each
        question then stands alone, sent with the scope where the target takes one)."""
        if self.spec.open_session is None:
            opened = SessionOpened(session_id=f"rig-conversation-{uuid.uuid4().hex[:12]}", effective_scope=scope,
                                   local=True)
        else:
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

    def ask(self, auth: Auth | None, session_id: str, content: str, *, parent_id: str | None = None,
            traceparent: str | None = None) -> Submitted:
        ask = self._op("ask")
        values = {"session_id": session_id, "content": content, "parent_id": parent_id, "traceparent": traceparent,
                  **self._sessions.get(session_id, {})}
        if self.spec.ask is not None and self.spec.ask.stream is not None:
            return self._ask_streaming(auth, session_id, values)
        submit = now_ns()
        data, exchange = self.answer("ask", auth, **values)
        submitted = fit(Submitted, {**(data or {}), "submit_ns": submit, "accepted_ns": now_ns()}, operation="ask",
                        exchange=exchange, fix="check target.http.ask.result")
        assert ask is not None
        self._remember(submitted.run_id, session_id, values)
        return submitted

    def _ask_streaming(self, auth: Auth | None, session_id: str, values: ForeignJson) -> Submitted:
        """The question's answer is the stream: it is opened here and read by `events()`."""
        assert self.spec.ask is not None and self._stream is not None
        variables = self._variables(auth, values)
        rendered = render(self.spec.ask.request, variables)
        headers = {**self.auth_headers(auth), **rendered.headers}
        if rendered.content_type:
            headers["content-type"] = rendered.content_type
        account = auth.username if auth else None
        attempt, spent = 0, 0.0
        while True:  # a question the target refuses for its rate limit is asked again once it allows (self.pace)
            submit = now_ns()  # the run starts with the attempt the target took
            cm = self.transport.stream(rendered.method, rendered.path, op="ask", headers=headers, body=rendered.body,
                                       timeout_s=self.stream_timeout_s, delimiter=DELIMITER[self._stream.format])
            try:
                reply = cm.__enter__()
            except TransportError as exc:
                raise TargetUnreachable(self.base_url, str(exc)) from None
            if reply.status_code < 400:
                break
            body = reply.read()
            cm.__exit__(None, None, None)
            answer = Reply(reply.status_code, reply.headers, body, reply.reason)
            self.record(Exchange(rendered.method, rendered.path, reply.status_code, rendered.record_body,
                                 reply_body(answer), submit, now_ns(), account))
            wait = self.paced("ask", answer, attempt, spent)
            if wait is None:
                raise self.http_error(rendered.method, rendered.path, answer)
            attempt, spent = attempt + 1, spent + wait
        data = self._readers["ask"].read({"headers": reply.headers}, self._options(variables)) or {}
        run_id = str(data.get("run_id") or _own_run_id())
        self.record(Exchange(rendered.method, rendered.path, reply.status_code, rendered.record_body,
                             {"stream": self._stream.format, "run_id": run_id}, submit, now_ns(), account))
        self._open[run_id] = (cm, reply)
        self._remember(run_id, session_id, variables)
        return Submitted(run_id=run_id, message_id=data.get("message_id"), submit_ns=submit, accepted_ns=now_ns())

    def events(self, auth: Auth | None, run_id: str, *, last_event_id: int | None = None,
               timeout_s: float = 120.0) -> Generator[Event, None, None]:
        yield from cast(Iterator[Event], self._run_stream(auth, run_id, last_event_id, timeout_s, lazy=False))

    def raw_events(self, auth: Auth | None, run_id: str, *, last_event_id: int | None = None,
                   timeout_s: float = 120.0) -> Iterator[RawEvent]:
        """The load path's stream: each frame sorted to its rule as it arrives, its data read only when `typed()`
        asks (`EventSorter.raw`): a load types the events its measures read, not every token."""
        return cast(Iterator[RawEvent], self._run_stream(auth, run_id, last_event_id, timeout_s, lazy=True))

    def typed(self, raw: RawEvent) -> Event:
        if raw.parsed is None and isinstance(raw.deferred, Deferred):
            raw.parsed = typed_later(raw)
        return super().typed(raw)

    def _run_stream(self, auth: Auth | None, run_id: str, last_event_id: int | None, timeout_s: float, *,
                    lazy: bool) -> Iterator[Event | RawEvent]:
        """The run's events as the rules sort them (raw, typed later, when `lazy`); after a stop by disconnect, the
        stream is left and the run ends with the rig's own terminal event (`derived: client_disconnect`). One
        generator between the sorter and its reader: a load resumes it for every token."""
        opened = self._opened(auth, run_id, last_event_id, timeout_s)
        if opened is None:  # stopped before anyone read it
            yield _raw(_disconnect_end()) if lazy else _disconnect_end()
            return
        cm, reply = opened
        assert self._sorter is not None
        self._reading[run_id] = cm
        read = self._sorter.raw if lazy else self._sorter.events
        sorted_events: Generator[Event | RawEvent, None, None] = read(
            reply.chunks(), self._options(self._run_values.get(run_id, {})), max_event_bytes=self.max_event_bytes)
        disconnected = self._disconnected  # looked at after every event: a stop by disconnect ends the read
        try:
            if run_id not in disconnected:
                try:
                    for event in sorted_events:
                        yield event
                        if run_id in disconnected:
                            break
                    else:
                        return
                except TransportError as exc:
                    if run_id not in disconnected:
                        raise TargetUnreachable(self.base_url, f"event stream broke: {exc}") from None
            yield _raw(_disconnect_end()) if lazy else _disconnect_end()
        finally:
            sorted_events.close()
            self._reading.pop(run_id, None)
            disconnected.discard(run_id)
            cm.__exit__(None, None, None)

    def _opened(self, auth: Auth | None, run_id: str, last_event_id: int | None, timeout_s: float
                ) -> tuple[AbstractContextManager[StreamReply], StreamReply] | None:
        """The run's stream: the one its question opened, or the run's events opened again (from `last_event_id`);
        None for a run stopped before anyone read it."""
        if self._sorter is None:
            raise CapabilityMissing("ask", detail="target.http configures no stream to read")
        if run_id in self._disconnected and run_id not in self._reading:
            self._disconnected.discard(run_id)
            return None
        held = self._open.pop(run_id, None)
        if held is not None and last_event_id is None:
            return held
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
        assert self._stream is not None
        try:
            cm = self.transport.stream(rendered.method, rendered.path, op="events", headers=headers,
                                       body=rendered.body, timeout_s=min(timeout_s, self.stream_timeout_s),
                                       delimiter=DELIMITER[self._stream.format])
            reply = cm.__enter__()
        except TransportError as exc:
            raise TargetUnreachable(self.base_url, f"event stream broke: {exc}") from None
        if reply.status_code >= 400:
            body = reply.read()
            cm.__exit__(None, None, None)
            raise self.http_error(rendered.method, rendered.path, Reply(reply.status_code, reply.headers, body,
                                                                        reply.reason))
        return cm, reply

    def run(self, auth: Auth | None, run_id: str) -> RunDetail:
        return self.read("run", auth, RunDetail, run_id=run_id, session_id=self._run_sessions.get(run_id))

    def stop(self, auth: Auth, run_id: str, reason: str | None = None) -> None:
        """A stop request; for `stop: disconnect`, the run's stream closed (its reader then ends the run)."""
        if self.spec.stop != "disconnect":
            self.call("stop", auth, run_id=run_id, session_id=self._run_sessions.get(run_id), reason=reason)
            return
        self._disconnected.add(run_id)
        held = self._open.pop(run_id, None)
        if held is not None:  # nobody reads it yet
            held[0].__exit__(None, None, None)
        elif run_id in self._reading:
            self._reading[run_id].__exit__(None, None, None)

    def resume(self, auth: Auth, run_id: str) -> Resumed:
        resumed = self.read("resume", auth, Resumed, run_id=run_id, session_id=self._run_sessions.get(run_id))
        if run_id in self._run_sessions:
            self._remember(resumed.run_id, self._run_sessions[run_id])
        return resumed

    def _remember(self, run_id: str, session_id: str, values: ForeignJson | None = None) -> None:
        """Keep a run's session (and the question's variables) for later operations on it; past `runs_kept`, the
        oldest is forgotten, so a user that asks for hours holds a bounded memory (and the collector a bounded heap)."""
        self._run_sessions[run_id] = session_id
        if values is not None:
            self._run_values[run_id] = values
        for kept in (self._run_sessions, self._run_values):
            if len(kept) > self.runs_kept:
                del kept[next(iter(kept))]

    def regenerate(self, auth: Auth, message_id: str, *, traceparent: str | None = None) -> Submitted:
        submit = now_ns()
        data, exchange = self.answer("regenerate", auth, message_id=message_id, traceparent=traceparent)
        return fit(Submitted, {**(data or {}), "submit_ns": submit, "accepted_ns": now_ns()}, operation="regenerate",
                   exchange=exchange, fix="check target.http.regenerate.result")

    def export(self, auth: Auth | None, session_id: str, fmt: str = "md") -> Exported:
        reply = self.call(f"export.{fmt}", auth, session_id=session_id, format=fmt)
        return Exported.model_validate({"format": fmt, "content_type": reply.content_type, "text": reply.text})

    def read_export(self, exported: Exported) -> Session:
        op = self._ops.get(f"export.{exported.format}")
        if op is not None and op.lines is not None:
            return read_text_export(exported.text, op.lines)
        if op is not None and op.csv is not None:
            try:
                return read_csv_export(exported.text, op.csv)
            except CsvExportError as exc:
                raise TargetProtocolError(f"export.csv: {exc}", operation="export.csv", exchange={
                    "operation": "export.csv", "response": exported.text[:4000]}) from None
        if exported.format != "json" or not self.capabilities().export_reading:
            raise CapabilityMissing(f"export_reading={exported.format}",
                                    detail=f"target.http.export.{exported.format} has no rules to read it back")
        try:
            data = orjson.loads(exported.text)
        except orjson.JSONDecodeError as exc:
            raise TargetProtocolError(f"the JSON export is not JSON: {exc}", operation="export.json",
                                      exchange={"operation": "export.json", "response": exported.text[:4000]}) from None
        return fit(Session, self._readers["export.json"].read(data), operation="export.json",
                   exchange={"operation": "export.json", "response": exported.text[:4000]},
                   fix="check target.http.export.json.result")

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
        for reading in list(self._reading.values()):
            reading.__exit__(None, None, None)
        self._reading.clear()
        super().close()


_PROCESS_ID = uuid.uuid4().hex[:16]  # this process's mark on the run ids it makes, beside its pid (a fork keeps the mark)
_RUN_NUMBERS = itertools.count(1)


def _own_run_id() -> str:
    """A run id for a target that gives none: unique across processes and runs, made without a random draw per run
    (a load makes one for every question)."""
    return f"rig-{_PROCESS_ID}-{os.getpid():x}-{next(_RUN_NUMBERS):x}"


def _disconnect_end() -> Event:
    """The end the rig writes for a run it stopped by closing its stream (the target keeps no record of it)."""
    return make_event("error", None, {"state": "stopped", "reason": "user_stop", "derived": "client_disconnect"},
                      now_ns())


def _raw(event: Event) -> RawEvent:
    """A typed event as the load path's raw one."""
    return RawEvent(event.event, None, "", event.recv_ns, event)


def _cookie(headers: dict[str, str], name: str) -> str | None:
    """A cookie's value from the answer's Set-Cookie header(s), however the transport joined them."""
    found = re.search(rf"(?:^|[,;]\s*){re.escape(name)}=([^;,\s]*)", headers.get("set-cookie", ""))
    return found.group(1) if found else None
