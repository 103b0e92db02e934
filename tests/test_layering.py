"""Imports run one way: scenarios and chaos depend on rig, never the reverse; only the reference
target's own package knows the reference target; and inside rig, each sub-package imports only the layers
below its own (README, "Parts"), with no import hidden inside a function but those of named heavy optional
dependencies."""

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


# rig's layers, lowest first; a unit (a sub-package, or a top-level module) imports only units of lower layers.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors",),
    ("clock", "stats", "yamlfile", "redact", "rundir", "ports", "lifeline", "waiting", "plugins", "interrupt",
     "promtext", "pdftext", "events"),
    ("catalog",),
    ("fixtures",),
    ("measure",),  # typed events, Measure, T-codes, the one SSE framing, derivation, aggregation, thresholds
    ("verdict", "runmanifest"),
    ("evidence",),
    ("policy",),
    ("run_end",),
    ("adapters",),  # reaching any target: the adapter protocol, capabilities, the HTTP description language
    ("config", "corpus_load"),
    ("results", "coverage"),  # the typed result of every workload (load.json, quality.json, the chaos analysis);
    # the coverage matrix of what a gate exercised
    ("telemetry",),
    ("target",),  # a connected target: open, recording, readiness, restarters
    ("report",),  # renders results, never imports a workload
    ("browser", "compare", "langfuse"),
    ("gate", "load", "quality"),  # the workloads: each returns a result and has one finish
    ("prerelease", "netlab", "capacity"),
    ("finish", "selftest", "schemas"),
    ("cli",),
    ("__init__",),  # the public face
)
# Imports inside a function are allowed only of these: heavy dependencies that only some runs need.
LAZY = ("docker", "playwright", "socketio", "psutil", "langfuse", "fpdf", "pypdf")
RANK = {unit: i for i, layer in enumerate(LAYERS) for unit in layer}


def _unit(path: Path) -> str:
    rel = path.relative_to(ROOT / "rig").with_suffix("").parts
    return "__init__" if rel == ("__init__",) else rel[0]


def _targets(node: ast.AST) -> list[str]:
    """The rig units an import statement reaches (`from rig import plugins` reaches `plugins`)."""
    if isinstance(node, ast.Import):
        mods = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        mods = [f"rig.{a.name}" for a in node.names] if node.module == "rig" else [node.module]
    else:
        return []
    out = []
    for mod in mods:
        parts = mod.split(".")
        if parts[0] == "rig":
            unit = parts[1] if len(parts) > 1 else "__init__"
            out.append(unit if unit in RANK or (ROOT / "rig" / unit).exists() or
                       (ROOT / "rig" / f"{unit}.py").exists() else "__init__")
    return out


def _rig_files() -> list[Path]:
    return sorted((ROOT / "rig").rglob("*.py"))


def test_every_rig_unit_has_a_layer() -> None:
    assert sorted({_unit(p) for p in _rig_files()} - set(RANK)) == []


def test_rig_sub_packages_import_only_the_layers_below_their_own() -> None:
    upward = []
    for path in _rig_files():
        src = _unit(path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            for unit in _targets(node):
                if unit != src and RANK[unit] >= RANK[src]:
                    upward.append(f"{path.relative_to(ROOT)}:{node.lineno} {src} imports {unit}")  # type: ignore[attr-defined]
    assert upward == []


def test_no_import_hides_inside_a_function_but_a_named_heavy_dependency() -> None:
    hidden = []
    for path in [*_rig_files(), *sorted((ROOT / "scenarios").rglob("*.py")), *sorted((ROOT / "chaos").rglob("*.py"))]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = {id(n) for n in tree.body} | {id(m) for n in tree.body if isinstance(n, ast.If) for m in ast.walk(n)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in top:
                module = node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
                if (module or "").split(".")[0] not in LAZY:
                    hidden.append(f"{path.relative_to(ROOT)}:{node.lineno} {module}")
    assert hidden == []


def test_the_layer_check_sees_an_upward_import(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("from rig import plugins\nfrom rig.cli.main import app\n", encoding="utf-8")
    assert [u for n in ast.walk(ast.parse(module.read_text())) for u in _targets(n)] == ["plugins", "cli"]


def _module_graph() -> dict[str, set[str]]:
    """rig's modules and the rig modules each imports anywhere in its file (TYPE_CHECKING blocks included); `from
    pkg import name` reaches `pkg.name` where that is a module, else `pkg` itself."""
    modules: dict[str, Path] = {}
    for path in _rig_files():
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        modules[name.removesuffix(".__init__")] = path

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                reached = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                reached = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module
                           for a in node.names]
            else:
                continue
            graph[name] |= {r for r in map(resolve, (m for m in reached if m.split(".")[0] == "rig"))
                            if r and r != name}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            nxt = next((w for w in edges if w not in index or w in on_stack), None)
            if nxt is not None and nxt not in index:
                index[nxt] = low[nxt] = len(index)
                stack.append(nxt)
                on_stack.add(nxt)
                work.append((nxt, iter(sorted(graph[nxt]))))
                continue
            if nxt is not None:
                low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def test_no_module_cycles_not_even_through_type_checking_imports() -> None:
    assert _cycles(_module_graph()) == []


def test_the_cycle_check_sees_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []
