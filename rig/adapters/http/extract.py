"""Reading a target's answer into the rig's shape: compiled JMESPath `result` rules and value maps.

Expressions are compiled once, when the adapter is built; a rule that finds nothing gives None, and the rig's
model then decides whether that field may be missing (a required one missing is the target's protocol error).
Rules are searched with the rig's functions (`rig.adapters.http.functions`) bound to the request's variables.
"""

from __future__ import annotations

from typing import Any

import jmespath

from rig.adapters.http.functions import options as rule_options
from rig.adapters.http.spec import Operation, compile_path
from rig.jsonvalue import ForeignJson


class Reader:
    """A compiled `result` (one expression, or field → expression, nested) with its value maps."""

    def __init__(self, result: Any, values: dict[str, ForeignJson] | None = None) -> None:
        self._rule = _compile(result) if result is not None else None
        self._values = values or {}

    def read(self, data: Any, opts: jmespath.Options | None = None) -> Any:
        """The rig's shape of `data` (the answer itself when there is no rule)."""
        out = data if self._rule is None else _apply(self._rule, data, opts or rule_options())
        if self._values and isinstance(out, dict):
            for field, mapping in self._values.items():
                if field in out and _key(out[field]) in mapping:
                    out[field] = mapping[_key(out[field])]
        return out


class OperationReader:
    """An operation's reader: `items` (where a list is) and the per-item `result`. An operation that answers one
    object may use `items` too: its object is then the list's first element (`documents[?id == var('doc_id')]`)."""

    def __init__(self, op: Operation) -> None:
        self.items = compile_path(op.items) if op.items else None
        self.one = Reader(op.result, op.values)

    def read(self, data: Any, opts: jmespath.Options | None = None) -> Any:
        if self.items is not None:
            opts = opts or rule_options()
            listed = self.items.search(data, options=opts)
            if not isinstance(listed, list) or not listed:
                return None
            data = listed[0]
        return self.one.read(data, opts)

    def read_all(self, data: Any, opts: jmespath.Options | None = None) -> list[Any]:
        opts = opts or rule_options()
        listed = self.items.search(data, options=opts) if self.items is not None else data
        if listed is None:
            return []
        if not isinstance(listed, list):
            raise ValueError(f"expected a list, got {type(listed).__name__}")
        return [self.one.read(item, opts) for item in listed]


def _key(value: Any) -> Any:
    return value if isinstance(value, (str, int, float, bool)) or value is None else str(value)


def _compile(rule: Any) -> Any:
    if isinstance(rule, str):
        return compile_path(rule)
    if isinstance(rule, dict):
        return {k: _compile(v) for k, v in rule.items()}
    if isinstance(rule, list):
        return [_compile(v) for v in rule]
    return rule  # a literal number, boolean or null


def _apply(rule: Any, data: Any, opts: jmespath.Options) -> Any:
    if isinstance(rule, dict):
        return {k: _apply(v, data, opts) for k, v in rule.items()}
    if isinstance(rule, list):
        return [_apply(v, data, opts) for v in rule]
    search = getattr(rule, "search", None)
    return search(data, options=opts) if search is not None else rule
