"""Imports run one way: scenarios and chaos depend on rig, never the reverse; only the reference
target's own package knows the reference target."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _imports(path: Path, *, top_level_only: bool = False) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    out: list[tuple[int, str]] = []
    for node in nodes:
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.lineno, node.module))
    return out


def _offenders(package: str, banned: tuple[str, ...], *, top_level_only: bool = False) -> list[str]:
    found = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for line, module in _imports(path, top_level_only=top_level_only):
            if module.split(".")[0] in banned:
                found.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    return found


def test_rig_never_imports_scenarios_chaos_or_the_reference_target() -> None:
    assert _offenders("rig", ("scenarios", "chaos", "workbench")) == []


def test_scenarios_and_chaos_never_import_the_reference_target() -> None:
    assert _offenders("scenarios", ("workbench",)) == [] and _offenders("chaos", ("workbench",)) == []


def test_the_check_sees_a_nested_import(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from scenarios.load import ResearcherUser\n", encoding="utf-8")
    assert _imports(module) == [(2, "scenarios.load")] and _imports(module, top_level_only=True) == []
