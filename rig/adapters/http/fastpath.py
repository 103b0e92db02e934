"""Plain rules read without JMESPath: a field path with literal indices (`data.choices[0].delta.content`), a
literal (`'answer'`), or a path compared with a literal (`data == '[DONE]'`, `data.t == 'chunk'`). Most stream rules
are one of these, and a stream's rules run on every event: read by hand they give JMESPath's answer at a fraction of
its cost. Anything else (functions, projections, filters, `var()`) stays a compiled JMESPath expression."""

from __future__ import annotations

from typing import Any

from rig.jsonvalue import ForeignJson

Step = str | int
_MISSING = object()


def _path(node: ForeignJson) -> list[Step] | None:
    """The steps of a plain path node (`field`, `subexpression`, `index_expression` with a literal index, `@`)."""
    kind = node.get("type")
    if kind == "field":
        return [str(node["value"])]
    if kind == "current":
        return []
    if kind == "index":
        return [int(node["value"])]
    if kind in ("subexpression", "index_expression"):  # each child read from the one before (`a.b[0][1]`)
        steps: list[Step] = []
        for child in node["children"]:
            part = _path(child)
            if part is None:
                return None
            steps += part
        return steps
    return None


def _same(a: Any, b: Any) -> bool:
    """JMESPath's equality: a boolean equals only a boolean."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return bool(a == b)


class FastPath:
    """A plain rule, read by hand; `search(value, options=None)` as a compiled JMESPath expression is called."""

    __slots__ = ("expression", "_steps", "_literal", "_compare")

    def __init__(self, expression: str, steps: tuple[Step, ...] | None, literal: Any = _MISSING,
                 compare: Any = _MISSING) -> None:
        self.expression = expression
        self._steps = steps
        self._literal = literal
        self._compare = compare

    def search(self, value: Any, options: Any = None) -> Any:
        steps = self._steps
        if steps is None:
            return self._literal
        # the value at the steps, or None where a step finds nothing: JMESPath's answer (a field of a non-object, an
        # index of a non-list or past its end); runs for every event a stream rule tests, so Python's lookup fails
        try:
            for step in steps:
                if step.__class__ is int and value.__class__ is not list:
                    value = None
                    break
                value = value[step]
        except (KeyError, IndexError, TypeError):
            value = None
        return value if self._compare is _MISSING else _same(value, self._compare)

    def under(self, field: str) -> FastPath | None:
        """The same rule read from inside `field` (`data.a.b` under `data` is `a.b`), or None when it reads anything
        else: a stream rule that reads only the frame's data need not build the `{event, id, data}` around it."""
        if self._steps is None:
            return self
        if not self._steps or self._steps[0] != field:
            return None
        return FastPath(self.expression, self._steps[1:], self._literal, self._compare)


def fast(expression: str, parsed: Any) -> FastPath | None:
    """The by-hand reader of a parsed expression, or None where it is not a plain one."""
    kind = parsed.get("type")
    if kind == "literal":
        return FastPath(expression, None, literal=parsed["value"])
    if kind == "comparator" and parsed.get("value") == "eq":
        left, right = parsed["children"]
        if right.get("type") == "literal":
            steps = _path(left)
            return FastPath(expression, tuple(steps), compare=right["value"]) if steps is not None else None
        return None
    steps = _path(parsed)
    return FastPath(expression, tuple(steps)) if steps is not None else None
