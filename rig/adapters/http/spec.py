"""`target.http` in rig.yaml: a target described in YAML instead of an adapter class.

Each operation of the adapter interface is a request template plus rules that read the answer:

    ask:
      request: {method: POST, path: "/api/chats/{session_id}/messages", json: {text: "{content}"}}
      result: {run_id: id, message_id: message.id}      # JMESPath, evaluated on the JSON answer

A template's `{name}` is one of the operation's variables (listed in VARIABLES; a name it does not offer is
refused when the file is read); a value that is one placeholder alone keeps its type (a list stays a list)
and is left out when it is None. `{env:NAME}` reads an environment variable (for a static key; never write
one into the file). `result` is one JMESPath expression giving the rig's shape, or a mapping of the rig's
field names to expressions; `values` translates a field's values into the rig's words. Streams are read as
SSE, NDJSON or a stream of JSON objects, and each event is sorted by `events` rules into the rig's events.
"""

from __future__ import annotations

import string
from typing import Any, Literal

import jmespath
from jmespath import functions as jp_functions
from jmespath.exceptions import JMESPathError
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from rig.adapters.capabilities import Capabilities
from rig.adapters.csv_export import CsvExportRules
from rig.adapters.http.fastpath import fast
from rig.adapters.http.functions import NAMES as RIG_FUNCTIONS
from rig.adapters.text_export import TextExportRules
from rig.jsonvalue import ForeignJson

EVENT_TYPES = ("queued", "status", "usage", "token", "tool_call", "tool_result", "citation", "checkpoint", "summary", "done",
               "error", "ignore")
ACTOR = {"user_id", "username"}  # every request may name the acting account
VARIABLES: dict[str, set[str]] = {
    "login": {"username", "password"},
    "logout": set(), "me": set(),
    "create_project": {"name"}, "projects": set(), "add_member": {"project_id", "member", "member_id"},
    "upload": {"project_id", "file", "filename", "paper_id", "sha256"},
    "documents": {"project_id"}, "document": {"doc_id", "track_id", "filename", "sha256"},
    "download": {"doc_id", "track_id", "filename"}, "page_text": {"doc_id", "page", "track_id", "filename"},
    "search": {"project_id", "queries", "query", "scope", "history"},
    "open_session": {"project_id", "scope", "attachments"},
    "session": {"session_id", "project_id"}, "set_scope": {"session_id", "project_id", "scope", "attachments"},
    "ask": {"session_id", "project_id", "scope", "content", "parent_id", "traceparent", "history"},
    "events": {"run_id", "session_id", "last_event_id"},
    "run": {"run_id", "session_id"}, "stop": {"run_id", "session_id", "reason"},
    "resume": {"run_id", "session_id"}, "regenerate": {"message_id", "session_id", "traceparent"},
    "export": {"session_id", "format"}, "locate_citation": {"citation_id"},
    "model_config": set(), "set_model_config": {"provider", "model", "base_url", "api_key"},
    "ready": set(), "metrics": set(),
}
_FORMATTER = string.Formatter()
# The capability an operation gives (an operation left out is that capability absent)
CAPABILITY_OF = {"me": "identity", "logout": "logout", "create_project": "projects", "upload": "upload",
                 "documents": "documents", "document": "document", "open_session": "sessions", "session": "sessions",
                 "ask": "ask", "add_member": "members", "download": "download", "page_text": "page_text",
                 "search": "direct_search",
                 "set_scope": "scope_change", "run": "run_detail", "stop": "stop", "resume": "resume",
                 "regenerate": "regenerate", "locate_citation": "locate_citation", "model_config": "model_config_api",
                 "set_model_config": "model_config_api", "export.md": "export=md", "export.json": "export=json",
                 "export.csv": "export=csv"}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


def placeholders(value: Any) -> set[str]:
    """Every `{name}` in a template value (strings inside mappings and lists too); `{env:…}` is not one."""
    if isinstance(value, str):
        try:
            return {f.rstrip("?") for _, f, _, _ in _FORMATTER.parse(value) if f and f != "env"}  # {env:NAME}: env
        except ValueError as exc:
            raise ValueError(f"template {value!r}: {exc}") from None
    if isinstance(value, dict):
        return set().union(*(placeholders(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(placeholders(v) for v in value)) if value else set()
    return set()


KNOWN_FUNCTIONS = {name[len("_func_"):] for name in dir(jp_functions.Functions) if name.startswith("_func_")} | set(
    RIG_FUNCTIONS)


def _functions_in(node: Any) -> set[str]:
    if not isinstance(node, dict):
        return set()
    found = {node["value"]} if node.get("type") == "function_expression" else set()
    for child in node.get("children") or ():
        found |= _functions_in(child)
    return found


def compile_path(expression: str) -> Any:
    """A compiled JMESPath expression — read by hand where it is a plain path, literal or comparison with one
    (`rig.adapters.http.fastpath`); a syntax error or an unknown function names the expression."""
    try:
        compiled = jmespath.compile(expression)
    except JMESPathError as exc:
        raise ValueError(f"JMESPath {expression!r}: {str(exc).splitlines()[0]}") from None
    unknown = sorted(_functions_in(compiled.parsed) - KNOWN_FUNCTIONS)
    if unknown:
        raise ValueError(f"JMESPath {expression!r}: unknown function {', '.join(unknown)}() "
                         f"(the rig adds {', '.join(RIG_FUNCTIONS)}; see docs/adapters.md)")
    return fast(expression, compiled.parsed) or compiled


def _compile_result(value: Any) -> Any:
    if isinstance(value, str):
        compile_path(value)
    elif isinstance(value, dict):
        for v in value.values():
            _compile_result(v)
    elif isinstance(value, list):
        for v in value:
            _compile_result(v)
    return value


class Request(_Strict):
    """One HTTP request; every string may hold `{placeholders}`."""

    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE"] = "GET"
    path: str
    query: ForeignJson = Field(default_factory=dict)
    headers: dict[str, str] = Field(default_factory=dict)
    json_body: Any = Field(None, alias="json")
    form: ForeignJson | None = None  # application/x-www-form-urlencoded
    multipart: ForeignJson | None = None  # a value "{file}" is the uploaded file, the others text fields

    @model_validator(mode="after")
    def _one_body(self) -> Request:
        if sum(b is not None for b in (self.json_body, self.form, self.multipart)) > 1:
            raise ValueError("give one body: json, form or multipart")
        if not self.path.startswith(("/", "{")):
            raise ValueError(f"path {self.path!r} must start with / (it is joined to target.url)")
        return self

    def names(self) -> set[str]:
        return placeholders([self.path, self.query, self.headers, self.json_body, self.form, self.multipart])


class Poll(_Strict):
    """Ask again until the answer is complete: `request` may name the first answer's fields (`{track_id}`), `until`
    is a JMESPath test on the polled answer, `result` reads it (merged over the first answer's)."""

    request: Request
    until: str
    result: str | ForeignJson | None = None
    values: dict[str, ForeignJson] = Field(default_factory=dict)
    interval_s: float = Field(0.2, gt=0, le=60)
    stall_s: float = Field(120.0, gt=0)  # how long the polled answer may stay the same before the rig gives up

    @field_validator("until")
    @classmethod
    def _until_compiles(cls, value: str) -> str:
        compile_path(value)
        return value

    @field_validator("result")
    @classmethod
    def _result_compiles(cls, value: Any) -> Any:
        return _compile_result(value)


class Lookup(_Strict):
    """One more request before an operation's own, whose answer gives a variable the operation's request may use:
    `value` is a JMESPath on its JSON answer (`var('member')` reads the operation's variables). A lookup that finds
    nothing is the target's protocol error, naming it."""

    request: Request
    value: str

    @field_validator("value")
    @classmethod
    def _value_compiles(cls, value: str) -> str:
        compile_path(value)
        return value


class Operation(_Strict):
    """A request and how its answer reads: `result` (JMESPath, or field → JMESPath), `items` for a list; `poll` to
    ask again until complete; `fallback`, another way to the same answer when this one cannot be sent (a variable it
    names is unknown) or finds nothing; `lookup`, requests sent first whose answers become variables."""

    lookup: dict[str, Lookup] = Field(default_factory=dict)
    request: Request
    result: str | ForeignJson | list[Any] | None = None
    items: str | None = None  # where the list is, for operations that answer several (projects, documents)
    values: dict[str, ForeignJson] = Field(default_factory=dict)  # field → {target's value: the rig's value}
    lines: TextExportRules | None = None  # a text export (Markdown …) read back line by line
    csv: CsvExportRules | None = None  # a CSV export read back by its columns
    refusal: str | None = None  # JMESPath over {status, body} of a refused request: its {code, message}, or null
    poll: Poll | None = None
    fallback: Operation | None = None

    def names(self) -> set[str]:
        """Every variable the operation's requests name (its poll's may also name the first answer's fields)."""
        return self.request.names() | (self.fallback.names() if self.fallback is not None else set())

    @field_validator("result")
    @classmethod
    def _result_compiles(cls, value: Any) -> Any:
        return _compile_result(value)

    @field_validator("items", "refusal")
    @classmethod
    def _items_compile(cls, value: str | None) -> str | None:
        if value is not None:
            compile_path(value)
        return value


class EventRule(_Strict):
    """Which stream events become which of the rig's events: `event` an SSE event name and/or `when` a JMESPath
    test on `{event, id, data}`; `data` reads the event's fields (default: the event's whole data). With `each`
    (a JMESPath giving a list) one event is made per element, `data` then reading `{event, id, data, item}`."""

    type: Literal["queued", "status", "usage", "token", "tool_call", "tool_result", "citation", "checkpoint", "summary", "done",
                  "error", "ignore"]
    event: str | None = None  # (not `on`: YAML reads a bare `on` as true)
    when: str | None = None
    each: str | None = None
    data: str | ForeignJson | None = None

    @field_validator("when", "each")
    @classmethod
    def _when_compiles(cls, value: str | None) -> str | None:
        if value is not None:
            compile_path(value)
        return value

    @field_validator("data")
    @classmethod
    def _data_compiles(cls, value: Any) -> Any:
        return _compile_result(value)


class StreamSpec(_Strict):
    """How a run's stream is framed and read; `end: close` — the stream's clean end is the end of the answer
    (completed when an answer token came, else failed/empty_answer), for targets that send no terminal event.
    `after_end: drain` — after the terminal event the rig reads on until the target closes the stream (at most
    `drain_s`), for a target that saves the answer only after it sent its end (closing at once would lose it);
    the terminal event stays the target's own."""

    format: Literal["sse", "ndjson", "json"] = "sse"
    events: list[EventRule] = Field(min_length=1)
    id: str | None = None  # JMESPath of an event's id where the framing has none (ndjson, json)
    end: Literal["event", "close"] = "event"
    after_end: Literal["close", "drain"] = "close"
    drain_s: float = Field(30.0, gt=0, le=600)

    @field_validator("id")
    @classmethod
    def _id_compiles(cls, value: str | None) -> str | None:
        if value is not None:
            compile_path(value)
        return value

    @model_validator(mode="after")
    def _ends(self) -> StreamSpec:
        if self.end == "event" and not any(r.type in ("done", "error") for r in self.events):
            raise ValueError("events needs a rule of type done (or error), or `end: close` (the stream's clean end "
                             "is the end of the answer): the rig must know where a run's stream ends")
        return self


class StreamOperation(Operation):
    """`events`: the request that reads a run's stream, and how."""

    stream: StreamSpec


class AskOperation(Operation):
    """`ask`: submit a question; with `stream`, its answer is the run's stream itself (no `events` request)."""

    stream: StreamSpec | None = None


class AuthSpec(_Strict):
    """How an account logs in and how its identity travels on each request."""

    send: Literal["bearer", "header", "cookie"] = "bearer"
    header: str = "authorization"  # send: header — the header's name …
    value: str = "Bearer {token}"  # … and its value
    cookie: str | None = None  # send: cookie — the cookie's name; login: the cookie the token comes in (token_from)
    token_from: Literal["body", "cookie"] = "body"

    @model_validator(mode="after")
    def _cookie_named(self) -> AuthSpec:
        if (self.send == "cookie" or self.token_from == "cookie") and not self.cookie:
            raise ValueError("name the cookie (auth.cookie)")
        if placeholders(self.value) - {"token"}:
            raise ValueError("auth.value may only use {token}")
        return self


def _result_fields(result: Any) -> set[str]:
    return set(result) if isinstance(result, dict) else set()


def _check_names(name: str, op: Operation, allowed: set[str]) -> None:
    """Every placeholder of an operation's requests is one of its variables (a poll's may also name the fields the
    first answer's `result` reads; the request may name what its lookups give, each lookup what those before it
    give)."""
    looked: set[str] = set()
    for key, lookup in op.lookup.items():
        unknown = sorted(lookup.request.names() - allowed - looked)
        if unknown:
            raise ValueError(f"{name}.lookup.{key}.request uses {', '.join('{' + u + '}' for u in unknown)}; "
                             f"it offers {', '.join('{' + a + '}' for a in sorted(allowed | looked))}")
        looked.add(key)
    allowed = allowed | looked
    for where, request, offered in ((f"{name}.request", op.request, allowed),
                                    (f"{name}.poll.request", op.poll.request if op.poll else None,
                                     allowed | _result_fields(op.result))):
        if request is None:
            continue
        unknown = sorted(request.names() - offered)
        if unknown:
            raise ValueError(f"{where} uses {', '.join('{' + u + '}' for u in unknown)}; "
                             f"it offers {', '.join('{' + a + '}' for a in sorted(offered))}")
    if op.fallback is not None:
        _check_names(f"{name}.fallback", op.fallback, allowed)


class HttpSpec(_Strict):
    """The whole declarative adapter. Operations left out are capabilities the target lacks (BLOCKED items)."""

    auth: AuthSpec = Field(default_factory=AuthSpec)
    login: Operation | None = None  # without it, an account's password is its API key (sent as the token)
    logout: Operation | None = None
    me: Operation | None = None  # without it, who an account is comes from what login returned
    create_project: Operation | None = None  # without projects the target is one shared namespace
    projects: Operation | None = None
    add_member: Operation | None = None
    upload: Operation | None = None
    documents: Operation | None = None
    document: Operation | None = None
    download: Operation | None = None
    page_text: Operation | None = None
    search: Operation | None = None
    open_session: Operation | None = None  # without sessions each question is its own conversation
    session: Operation | None = None
    set_scope: Operation | None = None
    ask: AskOperation | None = None
    events: StreamOperation | None = None
    run: Operation | None = None  # without run records the stream is all there is
    stop: Operation | Literal["disconnect"] | None = None  # disconnect: the only stop is closing the stream
    resume: Operation | None = None
    regenerate: Operation | None = None
    export: dict[Literal["md", "json", "csv"], Operation] = Field(default_factory=dict)
    locate_citation: Operation | None = None
    model_config_get: Operation | None = Field(None, alias="model_config")
    set_model_config: Operation | None = None
    ready: Operation | None = None
    metrics: Operation | None = None
    capabilities: ForeignJson = Field(default_factory=dict)  # what the target's records hold (run_timings …), checked
    # against Capabilities when the description loads

    @model_validator(mode="after")
    def _coherent(self) -> HttpSpec:
        for name, op in self.operations().items():
            allowed = VARIABLES[name.split(".")[0]] | ACTOR
            _check_names(name, op, allowed)
        if self.ask is None and self.events is not None:
            raise ValueError("events is configured but ask is not: the rig cannot start a run to read")
        if self.ask is not None and (self.ask.stream is None) == (self.events is None):
            raise ValueError("give the run's stream once: `events` (a request of its own) or `ask.stream` "
                             "(the answer to the question is the stream)")
        unknown_caps = sorted(set(self.capabilities) - set(Capabilities.model_fields))
        if unknown_caps:
            raise ValueError(f"capabilities: unknown {', '.join(unknown_caps)} "
                             "(see docs/adapters.md for the list)")
        configured = self.operations()
        for op_name, capability in CAPABILITY_OF.items():
            declared = self.capabilities.get(capability.split("=")[0])
            if declared not in (None, False, "none", []) and op_name not in configured and "=" not in capability \
                    and not any(o in configured for o, c in CAPABILITY_OF.items() if c == capability):
                raise ValueError(f"capabilities.{capability} is declared, but no {op_name} operation is configured")
        Capabilities.model_validate(self.capabilities)  # values of the right kind (stop: server|disconnect|none …)
        return self

    def stream_spec(self) -> StreamSpec | None:
        """How the run's stream reads, wherever it is given (None when the target takes no questions)."""
        if self.events is not None:
            return self.events.stream
        return self.ask.stream if self.ask is not None else None

    def operations(self) -> dict[str, Operation]:
        """Every configured operation by name (`export.md`, `export.json` for the exports)."""
        named = {field.alias or name: getattr(self, name) for name, field in type(self).model_fields.items()
                 if isinstance(getattr(self, name), Operation)}
        named.update({f"export.{fmt}": op for fmt, op in self.export.items()})
        return named
