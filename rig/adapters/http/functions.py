"""The JMESPath functions `target.http` rules may call besides the standard ones (docs/adapters.md lists them).

Text: `basename(path)`, `lower(s)`, `upper(s)`, `trim(s)`, `split(s, sep)`, `replace(s, old, new)`.
Context: `var(name)` — a variable of the request the answer belongs to (`doc_id`, `content`, `session_id` …);
`doc_of(name)` — the rig's id of a document it uploaded, found by its file name (or path) in the rig's upload
ledger, null when the rig uploaded no such file. Citations: `span_citations(text, items)` — citations that name
where their marker stands (`span.start`) and their source once per id (`payload`): each with `quote`, the claim
before its marker, and its id's payload. `to_number`, `join`, `contains` … are JMESPath's own.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping
from typing import Any

import jmespath
from jmespath import functions

from rig.jsonvalue import ForeignJson
from rig.measure.citations import claim_before

DocOf = Callable[[str], str | None]


class RuleFunctions(functions.Functions):
    """The extra functions, bound to one request's variables and the rig's upload ledger."""

    def __init__(self, variables: Mapping[str, Any] | None = None, doc_of: DocOf | None = None) -> None:
        super().__init__()
        self._variables = variables or {}
        self._doc_of = doc_of

    @functions.signature({"types": ["string"]})
    def _func_basename(self, path: str) -> str:
        return posixpath.basename(path.replace("\\", "/"))

    @functions.signature({"types": ["string"]})
    def _func_lower(self, text: str) -> str:
        return text.lower()

    @functions.signature({"types": ["string"]})
    def _func_upper(self, text: str) -> str:
        return text.upper()

    @functions.signature({"types": ["string"]})
    def _func_trim(self, text: str) -> str:
        return text.strip()

    @functions.signature({"types": ["string"]}, {"types": ["string"]})
    def _func_split(self, text: str, sep: str) -> list[str]:
        return text.split(sep) if sep else list(text)

    @functions.signature({"types": ["string"]}, {"types": ["string"]}, {"types": ["string"]})
    def _func_replace(self, text: str, old: str, new: str) -> str:
        return text.replace(old, new)

    @functions.signature({"types": ["string"]})
    def _func_var(self, name: str) -> Any:
        return self._variables.get(name)

    @functions.signature({"types": ["string", "null"]}, {"types": ["array", "null"]})
    def _func_span_citations(self, text: str | None, items: list[Any] | None) -> list[ForeignJson]:
        """Citations that say where their marker stands in `text` (`span.start`) and carry their source once per id
        (`payload`, null when the id repeats): each with the claim before its marker as `quote`, and its id's
        first payload."""
        content = text or ""
        out: list[ForeignJson] = []
        first: ForeignJson = {}
        for item in items or []:
            if not isinstance(item, dict):
                continue
            key = str(item.get("id"))
            payload = item.get("payload") or first.get(key)
            first.setdefault(key, payload)
            start = (item.get("span") or {}).get("start")
            quote = claim_before(content, start) if isinstance(start, int) else ""
            out.append({**item, "payload": payload, "quote": quote})
        return out

    @functions.signature({"types": ["string", "null"]})
    def _func_doc_of(self, name: str | None) -> str | None:
        if not name or self._doc_of is None:
            return None
        return self._doc_of(name) or self._doc_of(posixpath.basename(name.replace("\\", "/")))


NAMES = ("basename", "lower", "upper", "trim", "split", "replace", "var", "doc_of", "span_citations")
_PLAIN = jmespath.Options(custom_functions=RuleFunctions())


def options(variables: Mapping[str, Any] | None = None, doc_of: DocOf | None = None) -> jmespath.Options:
    """Search options with the rig's functions bound to `variables` and the ledger (shared when neither is given)."""
    if not variables and doc_of is None:
        return _PLAIN
    return jmespath.Options(custom_functions=RuleFunctions(variables, doc_of))
