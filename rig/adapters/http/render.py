"""Filling a request template with an operation's variables: path, query, headers and body, as bytes.

A string that is one placeholder alone (`"{scope}"`) takes the variable's value with its type and, when that
value is None, its key is left out; `"{scope?}"` is also left out when the value is empty ("", [], {}). A mapping or
list whose every entry was left out is itself left out (`filters: {document_id: {$in: "{scope?}"}}` sends no
`filters` at all without a scope, never `{"document_id": {}}`). Placeholders inside longer strings are formatted as
text. `{env:NAME}` reads the environment at send time (a missing variable is a ConfigError naming it).
"""

from __future__ import annotations

import json
import os
import re
import string
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from rig.adapters.http.spec import Request
from rig.adapters.transport import multipart
from rig.errors import ConfigError
from rig.jsonvalue import ForeignJson

_ALONE = re.compile(r"^\{([A-Za-z_][A-Za-z0-9_:]*)(\?)?\}$")
_OMIT = object()
_JSON = json.JSONEncoder(ensure_ascii=False)  # json.dumps(…, ensure_ascii=False) without making one each time


@dataclass
class Rendered:
    """A request ready for the transport."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes | None
    content_type: str | None
    record_body: Any  # what the evidence keeps of the body


def _lookup(name: str, variables: ForeignJson) -> Any:
    if name.startswith("env:"):
        value = os.environ.get(name[4:])
        if value is None:
            raise ConfigError(f"target.http names the environment variable {name[4:]}, which is not set",
                              fix=f"export {name[4:]}=... before running the rig")
        return value
    return variables.get(name)


_ENV = object()


class _Formatter(string.Formatter):
    """`{name}` from the variables (None as empty text); `{env:NAME}` (parsed as field `env`, spec `NAME`)."""

    def __init__(self, variables: ForeignJson) -> None:
        self.variables = variables

    def get_value(self, key: int | str, args: Any, kwargs: Any) -> Any:
        if key == "env":
            return _ENV
        value = _lookup(str(key).rstrip("?"), self.variables)
        return "" if value is None else value

    def format_field(self, value: Any, format_spec: str) -> Any:
        if value is _ENV:
            return _lookup(f"env:{format_spec}", self.variables)
        return super().format_field(value, format_spec)


Filler = Callable[[ForeignJson], Any]
_FILLERS: dict[tuple[int, bool], tuple[Any, Filler]] = {}  # by template value (held, so its id stays its own)


def fill(value: Any, variables: ForeignJson, *, text: bool = False) -> Any:
    """The template value with its placeholders filled (`text`: always a string, for paths and headers)."""
    key = (id(value), text)
    known = _FILLERS.get(key)
    if known is None or known[0] is not value:
        if len(_FILLERS) >= 4096:
            _FILLERS.clear()
        known = _FILLERS[key] = (value, _filler(value, text))
    return known[1](variables)


def _filler(value: Any, text: bool) -> Filler:
    """`fill` of one template value, worked out once: what is literal, what is one placeholder alone, what is
    formatted — a load fills the same request for every question it asks."""
    if isinstance(value, str):
        if "{" not in value and "}" not in value:  # a literal (most of a template): nothing to format
            return lambda variables: value
        alone = _ALONE.match(value)
        if alone and not text:
            return _alone(alone.group(1), alone.group(2) == "?")
        return lambda variables: _Formatter(variables).format(value)
    if isinstance(value, dict):
        entries = [(k, _filler(v, text)) for k, v in value.items()]

        def mapping(variables: ForeignJson) -> Any:
            kept = {}
            for k, part in entries:
                filled = part(variables)
                if filled is not _OMIT:
                    kept[k] = filled
            return _OMIT if entries and not kept else kept
        return mapping
    if isinstance(value, list):
        items = [_filler(x, text) for x in value]

        def sequence(variables: ForeignJson) -> Any:
            kept = [filled for filled in (part(variables) for part in items) if filled is not _OMIT]
            return _OMIT if items and not kept else kept
        return sequence
    return lambda variables: value


def _alone(name: str, optional: bool) -> Filler:
    """A placeholder alone: the variable with its type, left out (`_OMIT`) when None — or empty, when `optional`."""
    def one(variables: ForeignJson) -> Any:
        found = _lookup(name, variables)
        return _OMIT if found is None or (optional and found in ("", [], {})) else found
    return one


def _mapping(filled: Any) -> ForeignJson:
    return {} if filled is _OMIT else filled


def path_names(request: Request) -> set[str]:
    """The variables a request's path names (without them the request cannot be sent)."""
    return {f.rstrip("?") for _, f, _, _ in string.Formatter().parse(request.path) if f and f != "env"}


def render(request: Request, variables: ForeignJson) -> Rendered:
    """The request with `variables` in place (a path segment is URL-quoted; JSON keeps types)."""
    path = request.path
    if "{" in path or "}" in path:  # most paths name no variable: nothing to quote
        path = _Formatter({k: quote(str(v), safe="") if isinstance(v, str) else v for k, v in variables.items()}
                          ).format(path)
    query = {k: v for k, v in _mapping(fill(request.query, variables)).items() if v not in ("", None)}
    if query:
        path += ("&" if "?" in path else "?") + urlencode(query, doseq=True)
    headers = {k.lower(): str(v) for k, v in fill(request.headers, variables, text=True).items() if str(v) != ""}
    body: bytes | None = None
    content_type: str | None = None
    record: Any = None
    if request.json_body is not None:
        record = fill(request.json_body, variables)
        record = None if record is _OMIT else record
        body, content_type = _JSON.encode(record).encode(), "application/json"
    elif request.form is not None:
        record = _mapping(fill(request.form, variables))
        body, content_type = urlencode(record, doseq=True).encode(), "application/x-www-form-urlencoded"
    elif request.multipart is not None:
        body, content_type, record = _multipart(request.multipart, variables)
    return Rendered(request.method, path, headers, body, content_type, record)


def _multipart(fields: ForeignJson, variables: ForeignJson) -> tuple[bytes, str, Any]:
    texts: dict[str, str] = {}
    files: dict[str, tuple[str, bytes, str]] = {}
    for name, template in fields.items():
        if template == "{file}":
            path = Path(variables["file"])
            files[name] = (str(variables.get("filename") or path.name), path.read_bytes(), "application/pdf")
            continue
        value = fill(template, variables)
        if value is not _OMIT:
            texts[name] = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    body, ctype = multipart(texts, files)
    return body, ctype, {**texts, **{k: v[0] for k, v in files.items()}}
