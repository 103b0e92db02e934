"""Which cases need which capability, read from the cases' own code: every capability name a case function (or a
helper of its module it calls) passes to `lacks`, `require`, `declared`, `missing`, `part` or `needs=`.

`rig target check` uses it to say, for a capability a target lacks, which cases lose items to it.
"""

from __future__ import annotations

import ast
import inspect
from functools import cache
from pathlib import Path

from rig.adapters.capabilities import Capabilities
from rig.gate.registry import all_cases

_CALLS = {"lacks", "require", "declared", "missing"}


def needs_by_case() -> dict[int, set[str]]:
    """Case id → the capability names its code checks (`field`, without a variant)."""
    out: dict[int, set[str]] = {}
    for case_id, spec in all_cases().items():
        names = set(spec.needs)
        source = inspect.getsourcefile(spec.fn)
        if source:
            names |= _module_needs(Path(source)).get(spec.fn.__name__, set())
        out[case_id] = {n.partition("=")[0] for n in names if n.partition("=")[0] in Capabilities.model_fields}
    return out


def cases_needing() -> dict[str, list[int]]:
    """Capability → the cases whose items need it, in case order."""
    out: dict[str, list[int]] = {}
    for case_id, names in sorted(needs_by_case().items()):
        for name in names:
            out.setdefault(name, []).append(case_id)
    return out


@cache
def _module_needs(path: Path) -> dict[str, set[str]]:
    """Each module-level function's capability names, with those of the module's functions it calls."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    direct: dict[str, set[str]] = {}
    calls: dict[str, set[str]] = {}
    for name, fn in functions.items():
        direct[name], calls[name] = set(), set()
        for node in ast.walk(fn):
            if not isinstance(node, ast.Call):
                continue
            callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if callee in functions:
                calls[name].add(callee)
            if callee in _CALLS:
                direct[name] |= {a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)}
            for kw in node.keywords:
                if kw.arg == "needs" and isinstance(kw.value, ast.Tuple):
                    direct[name] |= {e.value for e in kw.value.elts if isinstance(e, ast.Constant)
                                     and isinstance(e.value, str)}
    closed: dict[str, set[str]] = {}
    for name in functions:
        seen, todo, found = {name}, [name], set()
        while todo:
            current = todo.pop()
            found |= direct[current]
            for callee in calls[current] - seen:
                seen.add(callee)
                todo.append(callee)
        closed[name] = {n for n in found if n.partition("=")[0] in Capabilities.model_fields}
    return closed
