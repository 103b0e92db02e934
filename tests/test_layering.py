"""Imports run one way: scenarios and chaos depend on rig, never the reverse; only the reference
target's own package knows the reference target; and inside rig, each sub-package imports only the layers
below its own (README, "Parts"), with no import hidden inside a function but those of named heavy optional
dependencies."""

from __future__ import annotations

import ast
import re
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
    ("jsonvalue",),  # the two names of JSON without a model of the rig's own
    ("errors",),
    ("clock", "stats", "yamlfile", "redact", "rundir", "ports", "lifeline", "waiting", "plugins", "interrupt",
     "promtext", "pdftext", "events", "lazy"),
    ("catalog",),
    ("fixtures",),
    ("measure",),  # typed events, Measure, T-codes, the one SSE framing, derivation, aggregation, thresholds
    ("verdict",),
    ("evidence",),
    ("policy",),
    ("runmanifest",),
    ("run_end",),
    ("adapters",),  # reaching any target: the adapter protocol, capabilities, the HTTP description language
    ("config", "corpus_load"),
    ("faults",),  # one fault vocabulary, the one proxy control client, the injector protocol
    ("results", "coverage"),  # the typed result of every workload (load.json, quality.json, the chaos analysis);
    # the coverage matrix of what a gate exercised
    ("telemetry",),
    ("target",),  # a connected target: open, recording, readiness, restarters
    ("report",),  # renders results, never imports a workload
    ("browser", "compare", "langfuse"),
    ("run",),  # one run lifecycle: the directory, manifest, store, telemetry, target and cleanup of every workload
    ("gate", "load", "quality"),  # the workloads: each returns a result and has one finish
    ("prerelease", "netlab", "capacity"),
    ("finish", "selftest", "schemas"),
    ("cli",),
    ("__init__",),  # the public face
)
# Imports inside a function are allowed only of these: heavy dependencies that only some runs need.
LAZY = ("docker", "playwright", "socketio", "psutil", "langfuse", "fpdf", "pypdf", "matplotlib")
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


def _public_face_offences(paths: list[Path]) -> list[str]:
    """Imports of the rig that pass by its public face: a module below a sub-namespace (`rig.gate.context`), a name a
    package does not list in its `__all__`, or a private name of a foundation module."""
    import importlib

    found = []
    for path in paths:
        where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                deep = [a.name for a in node.names if a.name.startswith("rig.") and a.name.count(".") > 1]
                found += [f"{where}:{node.lineno} imports {d}" for d in deep]
                continue
            if not (isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and
                    node.module.split(".")[0] == "rig"):
                continue
            if node.module.count(".") > 1:
                found.append(f"{where}:{node.lineno} imports from {node.module}")
                continue
            module = importlib.import_module(node.module)
            listed = getattr(module, "__all__", None) if hasattr(module, "__path__") else None
            for alias in node.names:
                name = alias.name
                is_module = (ROOT / node.module.replace(".", "/") / f"{name}.py").exists()
                if (listed is not None and name not in listed and not is_module) or name.startswith("_"):
                    found.append(f"{where}:{node.lineno} {name} is not public in {node.module}")
    return found


def test_scenarios_and_chaos_reach_the_rig_only_through_its_public_face() -> None:
    paths = [*sorted((ROOT / "scenarios").rglob("*.py")), *sorted((ROOT / "chaos").rglob("*.py"))]
    assert _public_face_offences(paths) == []


def test_the_public_face_check_sees_a_way_around_it(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("from rig.gate.context import CaseContext\nfrom rig.gate import _CASES\n"
                      "from rig.load import not_there\nfrom rig.gate import case\nimport rig.target.open\n",
                      encoding="utf-8")
    found = [line.split(" ", 1)[1] for line in _public_face_offences([module])]
    assert found == ["imports from rig.gate.context", "_CASES is not public in rig.gate",
                     "not_there is not public in rig.load", "imports rig.target.open"]


def _defines(module: str) -> set[str]:
    """The names a rig module's source binds at its top level (read, not imported: `rig.load`'s Locust side must not
    load in this process)."""
    parts = module.split(".")
    path = ROOT.joinpath(*parts).with_suffix(".py")
    path = path if path.exists() else ROOT.joinpath(*parts, "__init__.py")
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.ImportFrom | ast.Import):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def test_each_lazy_namespace_lists_what_it_loads_and_every_name_is_where_it_says() -> None:
    import importlib

    for package in ("rig", "rig.gate", "rig.load", "rig.quality", "rig.results", "rig.target", "rig.telemetry",
                    "rig.browser", "rig.cli", "rig.faults"):
        module = importlib.import_module(package)
        table: dict[str, str] = module._EXPORTS
        assert sorted(table) == sorted(module.__all__), package
        absent = [f"{name} in {where}" for name, where in table.items() if where != f"{package}.{name}" and
                  (where.partition(":")[2] or name) not in _defines(where.partition(":")[0])]
        assert absent == [], package


def test_readme_lists_the_layers_in_this_order() -> None:
    """README's Parts row for `rig/` names every unit (the foundation may be cut short with "…") in the layering
    order above: the two cannot drift apart."""
    row = next(line for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
               if line.startswith("| `rig/` |"))
    named = [t for t in (m.strip("`") for m in re.findall(r"`[\w./]+`", row)) if t in RANK]
    ranks = [RANK[u] for u in named]
    assert ranks == sorted(ranks), [u for u, r in zip(named, ranks, strict=True) if r < max(ranks[:named.index(u) + 1])]
    foundation = next(layer for layer in LAYERS if "clock" in layer)
    assert sorted(set(RANK) - set(named) - set(foundation)) == []


def test_a_measures_label_is_spelled_and_read_only_in_the_labels_module() -> None:
    """`rig.measure.labels` builds and parses every label prefix; a string constant (or an f-string's literal head)
    anywhere else in the rig that starts with one is a second reading of it that can drift."""
    from rig.measure.labels import PREFIXES

    spelled = []
    for path in _rig_files():
        if path == ROOT / "rig" / "measure" / "labels.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            text = node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else \
                node.values[0].value if isinstance(node, ast.JoinedStr) and node.values and \
                isinstance(node.values[0], ast.Constant) else None
            if isinstance(text, str) and text.startswith(PREFIXES):
                spelled.append(f"{path.relative_to(ROOT)}:{node.lineno} {text[:30]!r}")  # type: ignore[attr-defined]
    assert spelled == []


MAX_FUNCTION_LINES = 60  # a workload is prepare → execute → finish on `rig.run`; no step of it, nor anything else, longer


def _long_functions(paths: list[Path]) -> list[str]:
    out = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    out.append(f"{path.name}:{node.lineno} {node.name} ({lines} lines)")
    return out


def test_no_function_of_the_rig_is_longer_than_a_screen() -> None:
    assert _long_functions(_rig_files()) == []


def test_the_length_check_sees_a_long_function(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def f():\n" + "    x = 1\n" * MAX_FUNCTION_LINES, encoding="utf-8")
    assert _long_functions([module]) == [f"m.py:1 f ({MAX_FUNCTION_LINES + 1} lines)"]


def test_a_measure_poses_as_a_locust_request_in_one_module_only() -> None:
    """T-codes reach Prometheus and the reports from the rig's own rows; Locust's UI shows them through one adapter."""
    posing = [str(p.relative_to(ROOT)) for p in _rig_files() if "request.fire(" in p.read_text(encoding="utf-8")]
    assert posing == ["rig/load/locust_rows.py"]


def test_json_without_a_model_is_named_for_why_it_has_none() -> None:
    """`dict[str, Any]` only as `rig.jsonvalue`'s two names: JSON passed through unread, or a shape the rig does not
    own; everything the rig itself reads is a model."""
    loose = [f"{p.relative_to(ROOT)}:{n}" for p in _rig_files() if p.name != "jsonvalue.py"
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if re.search(r"dict\[str,\s*Any\]|Dict\[str,\s*Any\]", line)]
    assert loose == []
