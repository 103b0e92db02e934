"""The one interface between scenarios and a target.

An adapter maps a target's API onto these operations and normalises its stream into the rig's typed
events. Every operation takes the `Auth` of the account acting (or None for an anonymous call).
Operations a target lacks raise `CapabilityMissing`; `capabilities()` declares them up front.
"""

from __future__ import annotations

import functools
import hashlib
import json as _json
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from rig import events
from rig.adapters.capabilities import Capabilities
from rig.adapters.error_body import read_error_body
from rig.adapters.ledger import LedgerEntry, UploadLedger
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
from rig.adapters.pace import RatePace
from rig.adapters.transport import HttpxTransport, Reply, Transport, TransportError
from rig.clock import now_ns
from rig.errors import (
    AdapterContractError,
    CapabilityMissing,
    TargetHTTPError,
    TargetProtocolError,
    TargetStalled,
    TargetUnreachable,
)
from rig.jsonvalue import ForeignJson
from rig.measure.sse import MAX_EVENT_BYTES, RawEvent, read_events


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


SUBMITTING = ("ask", "regenerate")  # the operations whose answer starts a run: T3–T5 count from their submit_ns


def _stamped(method: Callable[..., Submitted]) -> Callable[..., Submitted]:
    """Wrap a submitting operation: `submit_ns` and `accepted_ns` are the clock around the call unless the
    adapter stamped a narrower window itself (just before the request that starts the run), and a stamp outside
    the call, or accepted before submitted, is an AdapterContractError, never a silently wrong T3–T5."""

    @functools.wraps(method)
    def submit(self: Adapter, *args: Any, **kwargs: Any) -> Submitted:
        before = now_ns()
        submitted = method(self, *args, **kwargs)
        after = now_ns()
        if not isinstance(submitted, Submitted):
            raise AdapterContractError(type(self).__name__, f"{method.__name__} returned "
                                       f"{type(submitted).__name__}, not Submitted")
        submitted.submit_ns = submitted.submit_ns or before
        submitted.accepted_ns = submitted.accepted_ns or after
        if not before <= submitted.submit_ns <= submitted.accepted_ns <= after:
            raise AdapterContractError(type(self).__name__, f"{method.__name__} stamped submit_ns/accepted_ns "
                                       "outside the call (use rig.clock.now_ns(), or leave them to the base class)")
        return submitted

    submit.stamped = True  # type: ignore[attr-defined]
    return submit


class Adapter(ABC):
    """Operations of a literature workbench; subclass per target family.

    The base class owns the transport and the request helpers every adapter needs: `request()` sends one
    request through the transport, records the exchange for the evidence store and translates failures
    into the rig's errors (`TargetUnreachable`, `TargetHTTPError`); `sse()` reads an event stream with
    the rig's one SSE reader. A subclass maps its target's API onto the operations below.
    """

    base_url: str
    max_event_bytes: int = MAX_EVENT_BYTES  # one streamed event (or line) past this is StreamTooLarge

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Every `ask` and `regenerate` a subclass defines is stamped on the rig's clock by the base class."""
        super().__init_subclass__(**kwargs)
        for name in SUBMITTING:
            method = cls.__dict__.get(name)
            if method is not None and not getattr(method, "stamped", False):
                setattr(cls, name, _stamped(method))

    pace: RatePace | None = None  # wait out the target's 429s (gates, quality, setups); None: a 429 stands at once

    def __init__(self, base_url: str = "", *, transport: Transport | None = None, timeout_s: float = 30.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.uploads = UploadLedger()  # what the rig put on the target (result rules and cases look it up)
        self.transport: Transport = transport or HttpxTransport(self.base_url, timeout_s)

    @classmethod
    def connect(cls, base_url: str, *, chaos_token: str | None = None, transport: Transport | None = None,
                options: ForeignJson | None = None) -> Adapter:
        """Build the adapter for a target URL (what `target.adapter` in rig.yaml names); `transport` is how its
        requests go out (Locust's client under load, httpx otherwise); `options` are `target.options`."""
        return cls(base_url, chaos_token=chaos_token, transport=transport, **(options or {}))  # type: ignore[call-arg]

    def record(self, exchange: Exchange) -> None:
        """Hand one exchange to the `rig.events.exchange` listeners."""
        events.exchange.fire(adapter=self, exchange=exchange)

    # -- requests ----------------------------------------------------------------------------------------------
    def auth_headers(self, auth: Auth | None) -> dict[str, str]:
        """How an account's identity travels (a bearer token by default)."""
        return {"authorization": f"Bearer {auth.token}"} if auth is not None else {}

    def request(self, auth: Auth | None, method: str, path: str, *, op: str | None = None,
                raise_for_status: bool = True, headers: dict[str, str] | None = None, json: Any = None,
                params: ForeignJson | None = None, content: bytes | None = None,
                content_type: str | None = None, record_body: Any = None) -> Reply:
        """Send one request as `auth`; record the exchange; raise TargetHTTPError on a 4xx/5xx unless told not to.

        `op` names the operation (it groups requests in load statistics); `record_body` is what the evidence
        keeps of a body that is not JSON (for example the names of uploaded files).
        """
        hdrs = {**self.auth_headers(auth), **(headers or {})}
        body = content
        if json is not None:
            body = _json.dumps(json, ensure_ascii=False).encode()
            hdrs.setdefault("content-type", "application/json")
        elif content_type:
            hdrs["content-type"] = content_type
        if params:
            query = urlencode({k: v for k, v in params.items() if v is not None}, doseq=True)
            path = f"{path}?{query}" if query else path
        name = op or f"{method} {path}"
        account = auth.username if auth else None
        attempt, spent = 0, 0.0
        while True:
            sent = now_ns()
            try:
                reply = self.transport.send(method, path, op=name, headers=hdrs, body=body)
            except TransportError as exc:
                if events.exchange.has_listeners:
                    self.record(Exchange(method, path, None, json if json is not None else record_body, None, sent,
                                         now_ns(), account, error=str(exc)))
                hung = "Timeout" in str(exc)  # it took the call and never answered: a hang, not a missing target
                raise TargetUnreachable(self.base_url, f"{method} {path} ({name}) got no answer: {exc}",
                                        fix="the target took the call and never answered: check its logs for a hang "
                                            "(the adapter waits target.options.timeout_s)" if hung else None) from None
            if events.exchange.has_listeners:
                self.record(Exchange(method, path, reply.status_code, json if json is not None else record_body,
                                     reply_body(reply), sent, now_ns(), account))
            wait = self.paced(name, reply, attempt, spent)
            if wait is None:
                break
            attempt, spent = attempt + 1, spent + wait
        if raise_for_status and reply.status_code >= 400:
            raise self.http_error(method, path, reply)
        return reply

    def paced(self, op: str, reply: Reply, attempt: int, spent_s: float) -> float | None:
        """After a 429 and with a pace set (`self.pace`): the seconds waited before sending again; None to go on
        with this reply."""
        if reply.status_code != 429 or self.pace is None:
            return None
        wait = self.pace.next_wait(attempt, retry_after(reply), spent_s)
        if wait is not None:
            self.pace.wait(op, wait)
        return wait

    def json(self, auth: Auth | None, method: str, path: str, **kwargs: Any) -> Any:
        """`request()` and its JSON body; a body that is not JSON is a protocol error."""
        reply = self.request(auth, method, path, **kwargs)
        try:
            return reply.json()
        except ValueError:
            raise TargetProtocolError(f"{method} {path}: expected JSON, got {reply.text[:120]!r}") from None

    def http_error(self, method: str, path: str, reply: Reply) -> TargetHTTPError:
        """The rig's error for a refused request, its body read in any common error shape (`read_error_body`)."""
        body = read_error_body(reply.content, reply.content_type)
        return TargetHTTPError(method, path, reply.status_code, body.code, body.message or reply.reason or
                               f"HTTP {reply.status_code}", body.details, retry_after_s=retry_after(reply))

    def sse(self, auth: Auth | None, path: str, *, op: str, headers: dict[str, str] | None = None,
            timeout_s: float = 120.0) -> Iterator[RawEvent]:
        """The events of an SSE stream, each stamped when it arrived; a broken stream is TargetUnreachable."""
        hdrs = {**self.auth_headers(auth), "accept": "text/event-stream", **(headers or {})}
        try:
            with self.transport.stream("GET", path, op=op, headers=hdrs, timeout_s=timeout_s) as reply:
                if reply.status_code >= 400:
                    raise self.http_error("GET", path, Reply(reply.status_code, reply.headers, reply.read(),
                                                             reply.reason))
                yield from read_events(reply.chunks(), max_event_bytes=self.max_event_bytes,
                                       max_line_bytes=self.max_event_bytes)
        except TransportError as exc:
            raise TargetUnreachable(self.base_url, f"event stream broke: {exc}") from None

    @abstractmethod
    def capabilities(self) -> Capabilities: ...

    # accounts
    @abstractmethod
    def login(self, username: str, password: str) -> Auth: ...
    def logout(self, auth: Auth) -> None:
        raise CapabilityMissing("logout")
    def me(self, auth: Auth | None) -> Me:
        raise CapabilityMissing("identity")
    def me_status_with_cookies(self, cookies: dict[str, str]) -> int:
        """The HTTP status the target's identity operation answers to a browser's cookies alone (no token):
        how a browser session is checked from outside the browser (reliability case 5)."""
        raise CapabilityMissing("cookie_session")

    # projects and documents
    def create_project(self, auth: Auth, name: str) -> str:
        raise CapabilityMissing("projects")
    def projects(self, auth: Auth) -> list[Project]:
        raise CapabilityMissing("projects")
    def add_member(self, auth: Auth, project_id: str, username: str, *, user_id: str | None = None) -> None:
        """Let account `username` read the project (`user_id`: its id, where the rig knows it from its own login)."""
        raise CapabilityMissing("members")
    def upload(self, auth: Auth, project_id: str, path: Path, *, paper_id: str | None = None,
               filename: str | None = None) -> Uploaded:
        raise CapabilityMissing("upload")
    def uploaded(self, data: bytes, name: str, doc_id: str, *, status: str = "queued", reported_sha256: str | None = None,
                 track_id: str | None = None) -> Uploaded:
        """An accepted upload as the rig keeps it: its own sha256 of the bytes it sent (the target's, where it reports
        one, kept beside it to compare), stamped now, and entered in the upload ledger."""
        sha256 = hashlib.sha256(data).hexdigest()
        self.uploads.add(LedgerEntry(doc_id=doc_id, filename=name, sha256=sha256, track_id=track_id,
                                     reported_sha256=reported_sha256 or None))
        return Uploaded(doc_id=doc_id, sha256=sha256, reported_sha256=reported_sha256 or None, status=status,
                        filename=name, accepted_ns=now_ns())

    def documents(self, auth: Auth, project_id: str) -> list[Document]:
        raise CapabilityMissing("documents")
    def document(self, auth: Auth | None, doc_id: str) -> Document:
        raise CapabilityMissing("document")
    def download(self, auth: Auth | None, doc_id: str) -> bytes:
        raise CapabilityMissing("download")
    def page_text(self, auth: Auth | None, doc_id: str, page: int) -> PageText:
        raise CapabilityMissing("page_text")

    # retrieval
    def search(self, auth: Auth, project_id: str, queries: list[str], scope: list[str] | None = None,
               history: list[dict[str, str]] | None = None, *, traceparent: str | None = None) -> SearchResult:
        raise CapabilityMissing("direct_search")

    # sessions and runs
    def open_session(self, auth: Auth, project_id: str, scope: list[str],
                     attachments: list[str] | None = None) -> SessionOpened:
        raise CapabilityMissing("sessions")
    def session(self, auth: Auth | None, session_id: str) -> Session:
        raise CapabilityMissing("sessions")
    def set_scope(self, auth: Auth, session_id: str, scope: list[str],
                  attachments: list[str] | None = None) -> ScopeSet:
        raise CapabilityMissing("scope_change")
    def ask(self, auth: Auth, session_id: str, content: str, *, parent_id: str | None = None,
            traceparent: str | None = None) -> Submitted:
        raise CapabilityMissing("ask")
    def events(self, auth: Auth | None, run_id: str, *, last_event_id: int | None = None,
               timeout_s: float = 120.0) -> Generator[Event, None, None]:
        raise CapabilityMissing("ask")
    def raw_events(self, auth: Auth | None, run_id: str, *, last_event_id: int | None = None,
                   timeout_s: float = 120.0) -> Iterator[RawEvent]:
        """The run's stream for the load path: each event stamped on arrival and kept as it came (nothing parsed
        but its name), ending after `done` or `error`; `typed()` makes the rig's event of one, later. The default
        wraps `events()` (an adapter whose stream is not SSE has typed events already). An adapter that keeps events
        unparsed names each by its kind (SSE's `event` field): a load run types the first event of each name and the
        tokens up to the first answer text (`RunTranscript.add_measured`)."""
        for event in self.events(auth, run_id, last_event_id=last_event_id, timeout_s=timeout_s):
            yield RawEvent(event.event, str(event.id) if event.id is not None else None, "", event.recv_ns, event)

    def typed(self, raw: RawEvent) -> Event:
        """The rig's typed event of a raw one (from `raw_events()`), with the same stamp."""
        if raw.parsed is None:
            raise TargetProtocolError(f"event {raw.event} was kept raw, but this adapter cannot read it")
        return raw.parsed

    def run(self, auth: Auth | None, run_id: str) -> RunDetail:
        raise CapabilityMissing("run_detail")
    def stop(self, auth: Auth, run_id: str, reason: str | None = None) -> None:
        raise CapabilityMissing("stop")
    def resume(self, auth: Auth, run_id: str) -> Resumed:
        raise CapabilityMissing("resume")
    def regenerate(self, auth: Auth, message_id: str, *, traceparent: str | None = None) -> Submitted:
        raise CapabilityMissing("regenerate")
    def export(self, auth: Auth | None, session_id: str, fmt: str = "md") -> Exported:
        raise CapabilityMissing(f"export={fmt}")
    def read_export(self, exported: Exported) -> Session:
        """The session a JSON export holds, in the rig's shape (each message may carry its own `session_id`)."""
        raise CapabilityMissing("export_reading")

    def locate_citation(self, auth: Auth | None, citation_id: str) -> Located:
        raise CapabilityMissing("locate_citation")

    # model configuration
    def model_config(self, auth: Auth | None) -> ModelConfigView:
        raise CapabilityMissing("model_config_api")
    def set_model_config(self, auth: Auth, provider: str, model: str, base_url: str | None = None,
                         api_key: str | None = None) -> ModelConfigView:
        raise CapabilityMissing("model_config_api")

    # test-only control
    def chaos(self, method: str, path: str, body: ForeignJson | None = None) -> Any:
        raise CapabilityMissing("chaos")

    # health
    def wait_documents(self, auth: Auth, project_id: str, doc_ids: set[str], timeout_s: float = 120.0
                       ) -> list[Document]:
        """Poll until every named document reaches a final status.

        `timeout_s` is how long the documents may show no progress (a status or stage change), not a total:
        a slow target that keeps moving is waited for; one that stands still raises TargetStalled."""


        seen: tuple[Any, ...] = ()
        moved = time.monotonic()
        while True:
            docs = [d for d in self.documents(auth, project_id) if d.doc_id in doc_ids]
            if len(docs) == len(doc_ids) and all(d.final for d in docs):
                return docs
            state = tuple(sorted((d.doc_id, d.status, d.pages_with_text, len(d.stages)) for d in docs))
            if state != seen:
                seen, moved = state, time.monotonic()
            elif time.monotonic() - moved > timeout_s:
                raise TargetStalled(f"documents still processing ({len(docs)} of {len(doc_ids)} listed)", timeout_s,
                                    ", ".join(f"{d.doc_id}={d.status}" for d in docs)[:200])
            time.sleep(0.05)

    @abstractmethod
    def ready(self) -> bool: ...
    def metrics_text(self) -> str:
        return ""

    def close(self) -> None:
        """Release connections."""
        self.transport.close()


def retry_after(reply: Reply) -> float | None:
    """Seconds from the reply's Retry-After header (delta-seconds only; none, an HTTP date or garbage is None)."""
    value = next((v for k, v in reply.headers.items() if k.lower() == "retry-after"), None)
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def reply_body(reply: Reply) -> Any:
    """What the evidence keeps of an answer's body: JSON as JSON, text clipped, anything else by size."""
    ctype = reply.content_type
    if "json" in ctype:
        try:
            return reply.json()
        except ValueError:
            return reply.text[:2000]
    if ctype.startswith("text/") and "event-stream" not in ctype:
        return reply.text[:4000]
    return {"bytes": len(reply.content), "content_type": ctype}
