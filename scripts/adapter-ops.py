"""Print, per reliability case, the adapter operations and capabilities its code uses (for docs/adapters.md).

    python scripts/adapter-ops.py
"""

from __future__ import annotations

import ast
import inspect
import textwrap

from rig.gate.registry import all_cases

HELPERS = {  # RecordingContext helpers → the adapter operations behind them
    "chat": ["ask", "events", "run"], "submit": ["ask"], "read": ["events", "run"], "finish": ["run"],
    "stream_until": ["events"], "run_detail": ["run"], "open_session": ["open_session"], "regenerate": ["regenerate"],
    "settings": ["chaos"], "fault": ["chaos"], "chaos": ["chaos"], "slow_model": ["model_proxy|chaos"],
    "model_fault": ["model_proxy|chaos"], "retrieval_fault": ["model_proxy|chaos"], "stop": ["stop"],
    "resume": ["resume", "events", "run"],
}

CAPABILITY_ARGS = {"lacks": (1, None), "require": (0, None), "declared": (1, 2)}  # which arguments name capabilities


def uses(fn: object, seen: set[object] | None = None) -> tuple[set[str], set[str]]:
    """Operations and capabilities the function uses, and those of the module's own helpers it calls."""
    seen = seen if seen is not None else set()
    seen.add(fn)
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))  # type: ignore[arg-type]
    ops: set[str] = set()
    caps: set[str] = set()
    module = inspect.getmodule(fn)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            helper = getattr(module, node.func.id, None)
            if inspect.isfunction(helper) and inspect.getmodule(helper) is module and helper not in seen:
                more_ops, more_caps = uses(helper, seen)
                ops |= more_ops
                caps |= more_caps
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) and node.value.attr == "adapter":
            ops.add(node.attr)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "ctx":
            ops.update(HELPERS.get(node.attr, []))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in CAPABILITY_ARGS:
            start, stop = CAPABILITY_ARGS[node.func.attr]
            caps.update(a.value for a in node.args[start:stop] if isinstance(a, ast.Constant) and isinstance(a.value, str))
        elif isinstance(node, ast.keyword) and node.arg == "needs" and isinstance(node.value, ast.Tuple):
            caps.update(e.value for e in node.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str))
    return ops, caps


def main() -> None:
    print("| case | module | operations | capabilities its items check |")
    print("|---|---|---|---|")
    for spec in all_cases().values():
        ops, caps = uses(spec.fn)
        print(f"| {spec.case_id} | {spec.module} | {', '.join(sorted(ops))} | {', '.join(sorted(caps)) or '—'} |")


if __name__ == "__main__":
    main()
