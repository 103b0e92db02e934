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


def _reader(steps: tuple[Step, ...], compare: Any) -> Any:
    """`steps` read as straight-line Python (one subscript each, a list checked before an index): the value there, or
    None where a step finds nothing, as JMESPath answers; compared with `compare` when it is given. Written out once
    per rule, as `dataclasses` writes `__init__`: a stream's rules run on every event, and a loop over the steps costs
    about twice as much."""
    body = []
    for step in steps:
        if isinstance(step, int):  # an index reads only a list (a string or an object has none in JMESPath)
            body.append("if v.__class__ is not list: v = None; raise LookupError")
        body.append(f"v = v[{step!r}]")
    lines = ["def search(v, options=None):", "  try:", *(f"    {line}" for line in body or ["pass"]),
             "  except (LookupError, TypeError):", "    v = None"]
    lines.append("  return v" if compare is _MISSING else "  return _same(v, compare)")
    scope: dict[str, object] = {"_same": _same, "compare": compare}
    exec(compile("\n".join(lines), f"<rule {'.'.join(map(str, steps))}>", "exec"), scope)  # steps written as literals
    return scope["search"]


def _may_be_same(a: Step, b: Step) -> bool:
    """Whether two steps may read the same field or element: `[0]` and `[-1]` do in a list of one."""
    if a.__class__ is int and b.__class__ is int:
        return a == b or (a < 0) != (b < 0)
    return a == b


class FastPath:
    """A plain rule, read by hand; `search(value, options=None)` as a compiled JMESPath expression is called."""

    __slots__ = ("expression", "_steps", "_literal", "_compare", "search")

    def __init__(self, expression: str, steps: tuple[Step, ...] | None, literal: Any = _MISSING,
                 compare: Any = _MISSING) -> None:
        self.expression = expression
        self._steps = steps
        self._literal = literal
        self._compare = compare
        self.search = _reader(steps, compare) if steps is not None else self._constant

    def _constant(self, value: Any, options: Any = None) -> Any:
        return self._literal

    @property
    def steps(self) -> tuple[Step, ...] | None:
        """The path it reads (None for a literal)."""
        return self._steps

    def reads_value(self) -> bool:
        """Whether it answers the value at its path (a test of what is there), not a comparison or a literal."""
        return self._steps is not None and self._compare is _MISSING

    def misses(self, path: tuple[Step, ...]) -> bool:
        """Whether its answer stays the same when a non-empty string at `path` is changed to another: a literal, a
        path apart from it or inside the string, or a test of what is there (no comparison) on the path or above."""
        if self._steps is None:
            return True
        for mine, theirs in zip(self._steps, path, strict=False):
            if not _may_be_same(mine, theirs):
                return True  # apart: another field or element
        if len(self._steps) > len(path):
            return True  # inside the string: nothing there, either way
        return self._compare is _MISSING

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
