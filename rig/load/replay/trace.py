"""What users did, read from a trace export: sessions, each an ordered list of turns with their arrival times.

Two sources, detected from the file itself:

- **Langfuse**: pages of its public API's observations (`GET /api/public/v2/observations`: `{"data": [...],
  "meta": ...}`, a list of such pages, or a plain list), read with the Langfuse SDK's own models. Every root
  observation is a turn of its session (`sessionId`; a trace without one is a session of its own), at its
  `startTime`.
- **OTLP/JSON**: a trace dump (`{"resourceSpans": [...]}`, as an OTLP/HTTP JSON request or a collector's file
  exporter writes it). Every span without a parent is a turn; its session is the attribute `session.id`
  (or `langfuse.session.id`, `gen_ai.conversation.id`), its time `startTimeUnixNano`.

A turn is an upload when its name says so (`upload`, `ingest`), a stop when its run ended stopped by the user
(`run.end_reason` / metadata `end_reason` = `user_stop`), otherwise a question; its text is the question
asked (`input` as a string, its `question`/`content`, or its last user message; for OTLP `input.value`,
`gen_ai.prompt`, `rig.question`). A turn whose text the export does not carry keeps none (the replay maps it
onto the corpus).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from rig.errors import ConfigError
from rig.jsonvalue import ForeignJson

Kind = Literal["ask", "upload", "stop"]
UPLOAD_NAMES = ("upload", "ingest")
SESSION_ATTRIBUTES = ("session.id", "langfuse.session.id", "gen_ai.conversation.id")
TEXT_ATTRIBUTES = ("rig.question", "input.value", "gen_ai.prompt", "langfuse.observation.input")


class SourceTurn(BaseModel):
    """One thing a user did: when (seconds after the trace's first arrival), what, and with which text."""

    at_s: float
    kind: Kind
    text: str | None = None
    trace_id: str


class SourceSession(BaseModel):
    key: str
    turns: list[SourceTurn]

    @property
    def start_s(self) -> float:
        return self.turns[0].at_s


class TraceSource(BaseModel):
    """A whole export: its sessions in order of their first arrival, where it came from, and its digest."""

    format: Literal["langfuse", "otlp"]
    sha256: str
    sessions: list[SourceSession] = Field(default_factory=list)

    @property
    def span_s(self) -> float:
        return max((t.at_s for s in self.sessions for t in s.turns), default=0.0)

    @property
    def turns(self) -> int:
        return sum(len(s.turns) for s in self.sessions)


def read_trace(path: Path) -> TraceSource:
    """The sessions of a Langfuse or OTLP/JSON export; an unreadable or unknown file is a ConfigError."""
    try:
        raw = path.read_bytes()
        data = json.loads(raw)
    except OSError as exc:
        raise ConfigError(f"cannot read trace {path}: {exc.strerror}", fix="pass an existing file to --replay") from None
    except ValueError as exc:
        raise ConfigError(f"trace {path} is not JSON: {exc}", fix="export it as JSON (Langfuse or OTLP/JSON)") from None
    digest = hashlib.sha256(raw).hexdigest()
    if isinstance(data, dict) and "resourceSpans" in data:
        turns = list(_otlp_turns(data))
        fmt: Literal["langfuse", "otlp"] = "otlp"
    else:
        turns = list(_langfuse_turns(data, path))
        fmt = "langfuse"
    if not turns:
        raise ConfigError(f"trace {path} holds no turn (no root observation or root span)",
                          fix="export the observations or spans of the period to replay")
    return TraceSource(format=fmt, sha256=digest, sessions=_sessions(turns))


def _sessions(turns: list[tuple[str, float, Kind, str | None, str]]) -> list[SourceSession]:
    origin = min(t[1] for t in turns)
    by_key: dict[str, list[SourceTurn]] = {}
    for key, at, kind, text, trace_id in sorted(turns, key=lambda t: (t[1], t[4])):
        by_key.setdefault(key, []).append(SourceTurn(at_s=round(at - origin, 6), kind=kind, text=text,
                                                     trace_id=trace_id))
    sessions = [SourceSession(key=k, turns=v) for k, v in by_key.items()]
    return sorted(sessions, key=lambda s: (s.start_s, s.key))


# -- Langfuse -------------------------------------------------------------------------------------------------

def _langfuse_turns(data: Any, path: Path) -> Iterable[tuple[str, float, Kind, str | None, str]]:
    from langfuse.api import ObservationsV2Response
    from langfuse.api.core.pydantic_utilities import parse_obj_as

    pages = data if isinstance(data, list) and data and isinstance(data[0], dict) and "data" in data[0] else \
        [data if isinstance(data, dict) else {"data": data}]
    for page in pages:
        try:
            parsed = parse_obj_as(ObservationsV2Response, {"meta": {}, **page})
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ConfigError(f"trace {path} is not a Langfuse observations export: {where}: {first['msg']}",
                              fix="export GET /api/public/v2/observations pages (JSON), or an OTLP/JSON dump") from None
        for o in parsed.data:
            if not (o.is_root_observation or o.parent_observation_id is None):
                continue
            trace_id = o.trace_id or o.id
            name = (o.trace_name or o.name or "").lower()
            meta = o.metadata if isinstance(o.metadata, dict) else {}
            kind = _kind(name, str(meta.get("end_reason") or ""))
            yield (o.session_id or f"trace:{trace_id}", o.start_time.timestamp(), kind, _text(o.input), trace_id)


def _text(value: Any) -> str | None:
    """The question a turn asked, from the shapes exports use for an input."""
    if isinstance(value, str):
        return value or None
    if isinstance(value, dict):
        for key in ("question", "content", "query", "text", "input"):
            if isinstance(value.get(key), str) and value[key]:
                return str(value[key])
        if isinstance(value.get("messages"), list):
            return _text(value["messages"])
    if isinstance(value, list):
        users = [m for m in value if isinstance(m, dict) and m.get("role") == "user"]
        if users:
            return _text(users[-1].get("content"))
    return None


def _kind(name: str, end_reason: str) -> Kind:
    if any(word in name for word in UPLOAD_NAMES):
        return "upload"
    return "stop" if end_reason == "user_stop" else "ask"


# -- OTLP/JSON ------------------------------------------------------------------------------------------------

def _otlp_turns(data: ForeignJson) -> Iterable[tuple[str, float, Kind, str | None, str]]:
    for resource in data.get("resourceSpans") or []:
        for scope in resource.get("scopeSpans") or []:
            for span in scope.get("spans") or []:
                if span.get("parentSpanId"):
                    continue
                attrs = {a.get("key"): _value(a.get("value") or {}) for a in span.get("attributes") or []}
                trace_id = str(span.get("traceId") or "")
                session = next((str(attrs[k]) for k in SESSION_ATTRIBUTES if attrs.get(k)), f"trace:{trace_id}")
                text = next((str(attrs[k]) for k in TEXT_ATTRIBUTES if attrs.get(k)), None)
                at = int(span.get("startTimeUnixNano") or 0) / 1e9
                kind = _kind(str(span.get("name") or "").lower(), str(attrs.get("run.end_reason") or ""))
                yield session, at, kind, text, trace_id


def _value(v: ForeignJson) -> Any:
    for key in ("stringValue", "intValue", "doubleValue", "boolValue"):
        if key in v:
            return v[key]
    return None

