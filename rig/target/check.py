"""`rig target check`: every operation the adapter declares, exercised once against the target before any gate.

Each step is one operation as the rig will use it — both accounts log in, one small file is uploaded and read back,
one question is asked, streamed and read back from the saved session, and so on — and becomes a row: the request
it sent, the status it got, what the rig extracted, the capability it gives. An operation the adapter does not offer
is a row too (absent), with the cases whose items need it. An operation that answers outside its rules (a refusal,
an answer its rules cannot read) fails the check, with the exchange that did it. The check leaves what it made on
the target (a project, a document, a session), named in its rows.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from rig import events
from rig.adapters.base import Adapter, Exchange
from rig.adapters.models import Auth, CitationEvent, Event, TerminalEvent, TokenEvent
from rig.clock import now_ns
from rig.corpus_load import upload_one, wait_final
from rig.errors import CapabilityMissing, TargetHTTPError, TargetProtocolError, TargetUnreachable
from rig.fixtures import CorpusManifest
from rig.jsonvalue import JsonObject
from rig.target.session import Connection

CHECK_PAPER = "P32"
CHECK_QUESTION = "总福利提高2.9%指什么？"


class CheckRow(BaseModel):
    """One operation as the check exercised it."""

    operation: str
    outcome: Literal["ok", "failed", "absent", "skipped"]
    gives: str = ""  # the capability it gives the rig
    request: str = ""  # METHOD path of its (first) request
    status: str = ""  # the status(es) the target answered
    extracted: str = ""  # what the rig read from the answer
    note: str = ""  # why it failed, is absent or was skipped
    exchange: JsonObject | None = None  # the failing exchange (redacted as the evidence store keeps them)


class TargetCheck(BaseModel):
    """The whole check: the rows, what is missing for which cases, and the accounts a load would use."""

    target_url: str
    adapter: str
    rows: list[CheckRow] = Field(default_factory=list)
    missing: dict[str, list[int]] = Field(default_factory=dict)  # absent capability → cases whose items need it
    load_accounts: list[str] = Field(default_factory=list)
    load_note: str = ""

    @property
    def ok(self) -> bool:
        return not any(r.outcome == "failed" for r in self.rows)


class _Checker:
    """Runs the steps in order; a step whose input an earlier step could not give is skipped, saying so."""

    def __init__(self, conn: Connection, corpus_dir: Path, manifest: CorpusManifest) -> None:
        self.conn = conn
        self.adapter: Adapter = conn.adapter
        self.corpus_dir = corpus_dir
        self.manifest = manifest
        self.result = TargetCheck(target_url=conn.adapter.base_url, adapter=conn.adapter_spec)
        self.seen: list[Exchange] = []
        self.auth: dict[str, Auth | None] = {}
        self.project = self.doc_id = self.session_id = ""
        self.answer_id: str | None = None
        self.citation_id: str | None = None

    def _listen(self, adapter: Adapter, exchange: Exchange) -> None:
        if adapter is self.adapter:
            self.seen.append(exchange)

    @contextmanager
    def listening(self) -> Iterator[None]:
        events.exchange.add_listener(self._listen)
        try:
            yield
        finally:
            events.exchange.remove_listener(self._listen)

    def step(self, operation: str, gives: str, fn: Callable[[], Any], extract: Callable[[Any], str] = str
             ) -> Any:
        """Exercise one operation; its row records the exchanges it made, and its value (None if it did not run)."""
        began = len(self.seen)
        row = CheckRow(operation=operation, outcome="ok", gives=gives)
        value = None
        try:
            value = fn()
            row.extracted = _short(extract(value))
        except CapabilityMissing as exc:
            row.outcome, row.note = "absent", f"missing capability: {exc.capability}"
        except (TargetHTTPError, TargetProtocolError, TargetUnreachable) as exc:
            row.outcome, row.note = "failed", _short(str(exc), 300)
            row.exchange = getattr(exc, "exchange", None) or _exchange_dict(self.seen[-1] if len(self.seen) > began
                                                                             else None)
        mine = self.seen[began:]
        if mine:
            row.request = f"{mine[0].method} {mine[0].path}"
            row.status = ", ".join(dict.fromkeys(str(x.status) for x in mine))
        self.result.rows.append(row)
        return value if row.outcome == "ok" else None

    def skip(self, operation: str, gives: str, why: str) -> None:
        self.result.rows.append(CheckRow(operation=operation, outcome="skipped", gives=gives, note=why))


def check_target(conn: Connection, corpus_dir: Path, manifest: CorpusManifest, *, needing: dict[str, list[int]],
                 progress: Callable[[str], None] | None = None) -> TargetCheck:
    """Exercise every operation the adapter declares once; the rows, the cases each missing capability costs
    (`needing`: capability → cases, `rig.gate.needs.cases_needing`), and the accounts a load would use."""
    c = _Checker(conn, corpus_dir, manifest)
    say = progress or (lambda _: None)
    with c.listening():
        _accounts(c, say)
        _library(c, say)
        _questions(c, say)
        _rest(c, say)
    caps = c.adapter.capabilities()
    for name in sorted(needing):
        if caps.missing(name):
            c.result.missing[name] = needing[name]
    return c.result


def _accounts(c: _Checker, say: Callable[[str], None]) -> None:
    say("logging in both accounts")
    for key in ("a", "b"):
        if key in c.conn.usernames:
            c.auth[key] = c.step(f"login ({key})", "accounts", partial(c.conn.login, key),
                                 lambda a: f"{a.username} (user id {a.user_id})")
    a = c.auth.get("a")
    if a is None:
        return
    c.step("me", "identity", lambda: c.adapter.me(a), lambda m: f"{m.username} ({m.user_id})")
    logged = [k for k, v in c.auth.items() if v is not None]
    members = not c.adapter.capabilities().missing("members")
    c.result.load_accounts = [c.conn.usernames[k] for k in (logged if members else logged[:1])]
    c.result.load_note = ("every account that logs in is given the load's project" if members else
                          "only the first account: the target offers no way to give another account the project "
                          "(members), so a load runs every user as it")


def _library(c: _Checker, say: Callable[[str], None]) -> None:
    a = c.auth.get("a")
    if a is None:
        c.skip("create_project", "projects", "account a did not log in")
        return
    say("creating a project and uploading one file")
    stamp = time.strftime("%Y%m%d-%H%M%S")
    caps = c.adapter.capabilities()
    if not caps.missing("projects"):
        c.project = c.step("create_project", "projects", lambda: c.adapter.create_project(a, f"rig target check {stamp}"),
                           lambda p: f"project {p}") or ""
        c.step("projects", "projects", lambda: c.adapter.projects(a), lambda ps: f"{len(ps)} project(s)")
    else:
        c.step("create_project", "projects", lambda: c.adapter.create_project(a, "x"))
    entry = c.manifest.paper(CHECK_PAPER)
    name = f"{Path(entry.file).stem}.check-{stamp}.pdf"
    loaded = c.step("upload", "upload", lambda: upload_one(c.adapter, a, c.project, c.corpus_dir / entry.file, entry,
                                                           name), lambda f: f"document {f.doc_id or '(none)'}"
                    + (f"; refused: {f.refused}" if f.refused else ""))
    if loaded is not None and loaded.doc_id and not loaded.refused:
        pending = {loaded.doc_id: loaded}
        c.step("documents / document (until final)", "documents",
               lambda: wait_final(c.adapter, a, c.project, pending, 60.0),
               lambda _: f"status {loaded.document.status if loaded.document else 'not final after 60 s'}")
        c.doc_id = loaded.doc_id
    elif loaded is not None and loaded.refused:
        c.result.rows[-1].outcome = "failed"
        c.result.rows[-1].note = f"the target refused a readable PDF: {loaded.refused}"
    if not c.doc_id:
        for op in ("download", "page_text", "search"):
            c.skip(op, op, "no document was uploaded")
        return
    c.step("documents", "documents", lambda: c.adapter.documents(a, c.project), lambda ds: f"{len(ds)} document(s)")
    c.step("document", "document", lambda: c.adapter.document(a, c.doc_id), lambda d: f"status {d.status}")
    c.step("download", "download", lambda: c.adapter.download(a, c.doc_id), lambda b: f"{len(b)} bytes")
    c.step("page_text", "page_text", lambda: c.adapter.page_text(a, c.doc_id, 1),
           lambda p: f"page 1: {len(p.text)} characters")
    c.step("search", "direct_search", lambda: c.adapter.search(a, c.project, ["2.9%"], [c.doc_id]),
           lambda r: f"{sum(len(x.hits) for x in r.results)} hit(s)")
    b = c.auth.get("b")
    if b is not None and c.project:
        c.step("add_member", "members", lambda: c.adapter.add_member(a, c.project, b.username, user_id=b.user_id),
               lambda _: f"{b.username} may read the project")


def _read_all(c: _Checker, a: Auth, run_id: str, stream: Iterator[Event] | None = None) -> list[Event]:
    """The run's stream to its end, as the gate reads it (past the terminal event, where the adapter reads on), within
    the target's answer budget (`target.answer_budget`): a stream that never ends is closed there."""
    budget = c.conn.answer_budget
    events = stream if stream is not None else c.adapter.events(a, run_id)
    began, out = time.monotonic(), []
    for event in events:
        out.append(event)
        if len(out) >= budget.events or time.monotonic() - began > budget.seconds:
            close = getattr(events, "close", None)
            if close is not None:
                close()
            break
    return out


def _questions(c: _Checker, say: Callable[[str], None]) -> None:
    a = c.auth.get("a")
    if a is None or not c.doc_id:
        c.skip("open_session / ask", "ask", "no document to ask about")
        return
    say("asking one question and reading it back")
    opened = c.step("open_session", "sessions", lambda: c.adapter.open_session(a, c.project, [c.doc_id]),
                    lambda o: f"session {o.session_id}")
    if opened is None:
        return
    c.session_id = opened.session_id
    submitted = c.step("ask", "ask", lambda: c.adapter.ask(a, c.session_id, CHECK_QUESTION),
                       lambda s: f"run {s.run_id}")
    if submitted is None:
        return
    sent = now_ns()
    streamed = c.step("events (the answer's stream)", "stream", lambda: _read_all(c, a, submitted.run_id),
                      lambda es: _stream_summary(es, sent))
    if streamed:
        c.citation_id = next((e.citation_id for e in streamed if isinstance(e, CitationEvent)), None)
    c.step("run", "run_detail", lambda: c.adapter.run(a, submitted.run_id), lambda d: f"state {d.state}/{d.end_reason}")
    session = c.step("session (read back)", "sessions", lambda: c.adapter.session(a, c.session_id),
                     lambda s: f"{len(s.messages)} message(s); the answer names "
                               + ("its run" if any(m.run_id == submitted.run_id for m in s.messages)
                                  else "no run (the rig links it by its text)"))
    if session is not None:
        c.answer_id = next((m.message_id for m in reversed(session.messages) if m.role == "assistant"), None)
        c.citation_id = c.citation_id or next((x.citation_id for m in session.messages for x in m.citations), None)
    c.step("set_scope", "scope_change", lambda: c.adapter.set_scope(a, c.session_id, [c.doc_id]),
           lambda s: f"effective scope {len(s.effective_scope)} document(s)")


def _rest(c: _Checker, say: Callable[[str], None]) -> None:
    a = c.auth.get("a")
    if a is None:
        return
    say("exports, citations, run control and the rest")
    caps = c.adapter.capabilities()
    for fmt in ("md", "json"):
        if c.session_id:
            c.step(f"export ({fmt})", f"export={fmt}", partial(c.adapter.export, a, c.session_id, fmt),
                   lambda e: f"{len(e.text)} characters ({e.content_type})")
    if c.citation_id:
        c.step("locate_citation", "locate_citation", lambda: c.adapter.locate_citation(a, str(c.citation_id)),
               lambda loc: f"page {loc.page}, match {loc.match}")
    elif not caps.missing("locate_citation"):
        c.skip("locate_citation", "locate_citation", "the answer carried no citation to locate")
    if c.answer_id:
        regen = c.step("regenerate", "regenerate", lambda: c.adapter.regenerate(a, str(c.answer_id)),
                       lambda s: f"run {s.run_id}")
        if regen is not None:
            _read_all(c, a, regen.run_id)
    if c.session_id and not caps.missing("stop"):
        _stop_and_resume(c, a)
    c.step("model_config", "model_config_api", lambda: c.adapter.model_config(a), lambda m: f"{m.provider}/{m.model}")
    if not caps.missing("model_config_api"):
        c.skip("set_model_config", "model_config_api", "not exercised: it would change the account's model")
    c.step("metrics", "slots_metric", lambda: c.adapter.metrics_text(), lambda t: f"{len(t.splitlines())} line(s)")
    c.step("logout", "logout", lambda: c.adapter.logout(a), lambda _: "token revoked")


def _stop_and_resume(c: _Checker, a: Auth) -> None:
    submitted = c.step("ask (to stop)", "ask", lambda: c.adapter.ask(a, c.session_id, CHECK_QUESTION),
                       lambda s: f"run {s.run_id}")
    if submitted is None:
        return
    stream = c.adapter.events(a, submitted.run_id)
    first = next(stream, None)
    c.step("stop", f"stop={c.adapter.capabilities().stop}", lambda: c.adapter.stop(a, submitted.run_id),
           lambda _: f"stop asked after {first.event if first else 'no event'}")
    rest = _read_all(c, a, submitted.run_id, stream)
    end = next((e for e in reversed(rest) if isinstance(e, TerminalEvent)), None)
    c.result.rows[-1].extracted += f"; the run ended {end.state}/{end.reason}" if end else "; no end seen"
    if not c.adapter.capabilities().missing("resume"):
        c.step("resume", "resume", lambda: _resume(c, a, submitted.run_id), lambda r: r)


def _resume(c: _Checker, a: Auth, run_id: str) -> str:
    """A resume of the stopped run: a new run, or the contract's 409 (nothing to resume from)."""
    try:
        resumed = c.adapter.resume(a, run_id)
    except TargetHTTPError as exc:
        if exc.status == 409:
            return f"409 {exc.code or ''}: nothing to resume from (the contract's answer)".replace("  ", " ")
        raise
    _read_all(c, a, resumed.run_id)
    return f"run {resumed.run_id} resumes {run_id}"


def _stream_summary(streamed: list[Event], sent: int) -> str:
    names = list(dict.fromkeys(e.event for e in streamed))
    answer = "".join(e.text for e in streamed if isinstance(e, TokenEvent) and e.kind == "answer")
    end = next((e for e in reversed(streamed) if isinstance(e, TerminalEvent)), None)
    return (f"{len(streamed)} event(s) ({', '.join(names[:8])}); answer {len(answer)} characters; "
            + (f"ended {end.state}/{end.reason}" if end else "no end"))


def _exchange_dict(exchange: Exchange | None) -> JsonObject | None:
    if exchange is None:
        return None
    return {"method": exchange.method, "path": exchange.path, "status": exchange.status, "error": exchange.error,
            "response": _short(str(exchange.response_body), 600)}


def _short(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


__all__ = ["CheckRow", "TargetCheck", "check_target"]
